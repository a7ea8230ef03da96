import { type AutoReason, autoPolicy, planAuto } from "./auto.js";
import { PRICE_SHEETS } from "./cost.js";
import type { Entry, PassDecision, ReplaceReason } from "./ledger.js";
import {
	budgetPolicy,
	clearPolicy,
	maskPolicy,
	offPolicy,
	type Policy,
	type PolicyState,
	ratioPolicy,
	roundsPolicy,
} from "./policies.js";
import { currentDecisions, liveToolResultBytes, originalBytes, placeholderBytes } from "./project.js";
import type { ContextPolicy } from "./settings.js";
import { skillDecisions } from "./skill-markers.js";

const POLICIES: Record<ContextPolicy, Policy> = {
	off: offPolicy,
	rounds: roundsPolicy,
	budget: budgetPolicy,
	ratio: ratioPolicy,
	mask: maskPolicy,
	clear: clearPolicy,
	auto: autoPolicy,
};

/** What one pass changed, for the logs. Bytes are UTF-8 bytes of tool-result text unless said otherwise. */
export interface PolicyReport {
	/** The reason of the results replaced (one policy, one reason); "prune" when only arguments were elided. */
	kind: ReplaceReason;
	/** How many results were replaced. */
	count: number;
	/** Tool-result bytes the request got smaller by. */
	reclaimedBytes: number;
	/** How many assistant messages had long call arguments elided, and the argument bytes that saved. */
	argumentMessages: number;
	argumentBytes: number;
	/** Live tool-result bytes with the new decisions applied. */
	toolResultBytesAfter: number;
	/** "auto" only: the figures the rewrite was priced with. */
	auto?: AutoReason;
}

/**
 * Runs the policy `state.settings.policy` once. The caller appends `decisions` to the ledger (after writing their
 * spill files) and then projects. A pass with nothing new to do returns no decisions and no report: it changes
 * nothing and logs nothing. Pure; never throws on a well-formed state.
 */
export function runPolicy(state: PolicyState): { decisions: PassDecision[]; report: PolicyReport | undefined } {
	let auto: AutoReason | undefined;
	let decisions: PassDecision[];
	if (state.settings.policy === "auto") {
		const plan = planAuto(state, state.economy ?? { sheet: PRICE_SHEETS.anthropic, idleSeconds: 0 });
		decisions = plan.decisions;
		auto = plan.reason;
	} else {
		decisions = (POLICIES[state.settings.policy] ?? offPolicy)(state);
	}
	// skill bodies follow their own lifecycle whatever the policy (a policy never touches an exempt skill_view)
	decisions = [
		...decisions,
		...skillDecisions(state.entries, state.ledger, state.round, state.settings.skillViewsKept),
	];
	if (decisions.length === 0) return { decisions, report: undefined };
	const current = currentDecisions(state.entries, state.ledger, state.round);
	let reclaimedBytes = 0;
	let count = 0;
	let argumentMessages = 0;
	let argumentBytes = 0;
	let kind: ReplaceReason = "prune";
	for (const decision of decisions) {
		if (decision.kind === "arguments") {
			argumentMessages++;
			argumentBytes += decision.bytesBefore - decision.bytesAfter;
			continue;
		}
		if (count++ === 0) kind = decision.reason;
		const shown = current[decision.entry];
		const before = shown ? placeholderBytes(shown) : originalBytes(state.entries[decision.entry] as Entry);
		reclaimedBytes += before - decision.bytesAfter;
	}
	const toolResultBytesAfter = liveToolResultBytes(state.entries, state.ledger, state.round) - reclaimedBytes;
	return {
		decisions,
		report: {
			kind,
			count,
			reclaimedBytes,
			argumentMessages,
			argumentBytes,
			toolResultBytesAfter,
			...(auto ? { auto } : {}),
		},
	};
}
