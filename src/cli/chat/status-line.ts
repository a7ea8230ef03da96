import type { PermissionMode } from "../../agent/permissions.js";
import { formatDollars } from "./cost-table.js";

// The status line shown above every prompt. Pure.

export interface StatusFacts {
	modelId: string;
	/** Tokens the conversation holds (the last request's prompt plus its answer); undefined before any request. */
	contextTokens?: number;
	contextWindow: number;
	/** Share of the last request's prompt tokens read from the provider's cache, 0–1; undefined before any. */
	cacheHitShare?: number;
	/** USD spent in this session so far. */
	costUsd: number;
	mode: PermissionMode;
}

/** "12.3k", "950", "1.2M". */
export function formatTokens(tokens: number): string {
	if (tokens >= 1_000_000) return `${trim((tokens / 1_000_000).toFixed(1))}M`;
	if (tokens >= 1_000) return `${trim((tokens / 1_000).toFixed(1))}k`;
	return String(Math.round(tokens));
}

const trim = (text: string) => text.replace(/\.0$/, "");

/** "openai:gpt-4o · context 12.3k/128k (9.6%) · cache 87% · $0.0123 · mode accept". */
export function statusLine(facts: StatusFacts): string {
	const context =
		facts.contextTokens === undefined
			? `context –/${formatTokens(facts.contextWindow)}`
			: `context ${formatTokens(facts.contextTokens)}/${formatTokens(facts.contextWindow)} (${percent(facts.contextTokens / facts.contextWindow)})`;
	const cache = facts.cacheHitShare === undefined ? "cache –" : `cache ${Math.round(facts.cacheHitShare * 100)}%`;
	return [facts.modelId, context, cache, formatDollars(facts.costUsd), `mode ${facts.mode}`].join(" · ");
}

function percent(share: number): string {
	const value = share * 100;
	return `${value < 10 ? value.toFixed(1) : Math.round(value)}%`;
}
