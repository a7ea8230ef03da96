import { createAnthropicProvider } from "./anthropic.js";
import { parseModelId } from "./models.js";
import { createOpenAIProvider } from "./openai.js";
import type { RetryPolicy } from "./retry.js";
import type { Provider } from "./types.js";

/** Connection settings for one provider; environment variables fill what is absent. */
export interface ProviderSettings {
	apiKey?: string;
	baseURL?: string;
}

export interface ProviderConfig {
	openai?: ProviderSettings;
	anthropic?: ProviderSettings;
	retry?: RetryPolicy;
	maxOutputTokens?: number;
}

/**
 * The provider for "openai:<model>" or "anthropic:<model>".
 * Returns an error line (not a throw) for an id without a known provider prefix.
 */
export function createProvider(id: string, config: ProviderConfig = {}): Provider | { error: string } {
	const parsed = parseModelId(id);
	if (!parsed) {
		return {
			error: `unknown model "${id}": write it as provider:model, e.g. openai:gpt-4o or anthropic:claude-sonnet-4-5`,
		};
	}
	if (parsed.provider === "anthropic") {
		return createAnthropicProvider({
			model: parsed.model,
			apiKey: config.anthropic?.apiKey,
			baseURL: config.anthropic?.baseURL,
			retry: config.retry,
			maxOutputTokens: config.maxOutputTokens,
		});
	}
	return createOpenAIProvider({
		model: parsed.model,
		apiKey: config.openai?.apiKey,
		baseURL: config.openai?.baseURL,
		retry: config.retry,
		maxOutputTokens: config.maxOutputTokens,
	});
}
