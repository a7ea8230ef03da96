import { countTokens } from "gpt-tokenizer";

/**
 * Estimated tokens of a text with a real BPE tokenizer (o200k). Providers tokenize differently: this is an
 * estimate for budgets and reports, never a billing figure.
 */
export function estimateTokens(text: string): number {
	return text.length === 0 ? 0 : countTokens(text);
}
