import type { PriceSheet } from "../../context/cost.js";
import type { Usage } from "../../llm/types.js";

// What a session's requests cost, from their recorded usage. Pure.

/** One request's billed figures. Tokens are prompt/output tokens; cost is USD. */
export interface RoundCost {
	round: number;
	/** Every prompt token (cached and written included). */
	input: number;
	cached: number;
	written: number;
	output: number;
	cost: number;
}

type Counts = Pick<Usage, "input" | "output" | "cacheRead" | "cacheWrite">;

/**
 * USD for one response: uncached prompt tokens at the input price, cache reads and writes at the input price times
 * their multipliers, output at the output price.
 */
export function priceUsage(
	usage: Counts,
	sheet: Pick<PriceSheet, "input" | "output" | "cacheReadMultiplier" | "cacheWriteMultiplier">,
): number {
	const uncached = Math.max(0, usage.input - usage.cacheRead - usage.cacheWrite);
	const prompt = uncached + usage.cacheRead * sheet.cacheReadMultiplier + usage.cacheWrite * sheet.cacheWriteMultiplier;
	return (prompt * sheet.input + usage.output * sheet.output) / 1e6;
}

/** One row per recorded usage, in order, priced with `sheet`. */
export function costRows(
	usages: readonly { round: number; usage: Counts }[],
	sheet: Parameters<typeof priceUsage>[1],
): RoundCost[] {
	return usages.map(({ round, usage }) => ({
		round,
		input: usage.input,
		cached: usage.cacheRead,
		written: usage.cacheWrite,
		output: usage.output,
		cost: priceUsage(usage, sheet),
	}));
}

/** The rows' sums (round 0). */
export function costTotal(rows: readonly RoundCost[]): RoundCost {
	return rows.reduce(
		(sum, row) => ({
			round: 0,
			input: sum.input + row.input,
			cached: sum.cached + row.cached,
			written: sum.written + row.written,
			output: sum.output + row.output,
			cost: sum.cost + row.cost,
		}),
		{ round: 0, input: 0, cached: 0, written: 0, output: 0, cost: 0 },
	);
}

/** "$0.0123": four decimals under a dollar, two above. */
export function formatDollars(cost: number): string {
	return cost >= 1 ? `$${cost.toFixed(2)}` : `$${cost.toFixed(4)}`;
}

/** The /cost table: a header, one line per request, a total line. */
export function formatCostTable(rows: readonly RoundCost[], sheetName: string): string {
	if (rows.length === 0) return "no requests yet in this session";
	const number = (value: number) => value.toLocaleString("en-US");
	const header = ["round", "input", "cached", "written", "output", "cost"];
	const body = rows.map((row) => [
		String(row.round),
		number(row.input),
		number(row.cached),
		number(row.written),
		number(row.output),
		formatDollars(row.cost),
	]);
	const total = costTotal(rows);
	const footer = [
		"total",
		number(total.input),
		number(total.cached),
		number(total.written),
		number(total.output),
		formatDollars(total.cost),
	];
	const table = [header, ...body, footer];
	const widths = header.map((_, column) => Math.max(...table.map((line) => (line[column] as string).length)));
	const render = (line: string[]) =>
		line
			.map((cell, column) =>
				column === 0 ? cell.padEnd(widths[0] as number) : cell.padStart(widths[column] as number),
			)
			.join("  ");
	const cacheShare = total.input > 0 ? Math.round((100 * total.cached) / total.input) : 0;
	return [
		render(header),
		...body.map(render),
		render(footer),
		`${rows.length} request${rows.length === 1 ? "" : "s"}, ${cacheShare}% of prompt tokens from cache, prices: ${sheetName}`,
	].join("\n");
}
