/**
 * @module The built-in models.yaml shipped inside the bundle (DECISIONS §2): models of the three adapters at
 * their public list prices in USD per million tokens. Claude Opus 5.5, Sonnet 5.5 and Fable 5.1 (their
 * platform.claude.com model pages and pricing page, November 2026) have a 1M-token window at the standard
 * rates and price one-hour cache writes themselves (Opus 5.5's and Sonnet 5.5's cache reads are 0.05x input,
 * Fable 5.1's 0.025x); the older Claude models stay (stored traces and keys' allow-lists name them) though
 * Anthropic retired Opus 4, 4.1 and Sonnet 4 and retires Sonnet 4.5 on 2026-11-30. Claude Haiku 5.5 (its
 * overview page: 0.10 / 0.50, every rate 5x above a 100,000-token prompt) and GPT-6.2 Sol (its model page: 2 /
 * 10, cached 0.10, cache writes 2.50; above 272,000 input tokens input and cache rates 2x, output 1.5x) price
 * their step as `long_context` without a beta; GPT-6.2 Sol's 12-hour cache writes are not modelled (the
 * OpenAI usage does not tell them apart). Claude Sonnet 4 and 4.5 take
 * Anthropic's 1M-token window with `anthropic-beta: context-1m-2025-08-07`. The built-in table states no
 * long-context rates: a price depends on the tokens alone, so a table that doubled them above 200,000 input
 * tokens would re-price every such row (synthetic or imported usage included) whether or not its call ran
 * under the beta; a models.yaml that wants Anthropic's long-context bill sets `long_context.prices` ($6 /
 * $22.50 on Sonnet, the cache rates scaled alike). `SVC_MODELS` / `--models`
 * replaces the whole table. OpenRouter prices are the router's listed prices on `pricing_version`.
 */

export const DEFAULT_MODELS_SOURCE = 'built-in models.yaml';

// Aliases never equal a bare provider model name: a bare name must fall through to the global
// default (spec 1 §Model identifiers), so `gpt-5` is not an alias and `gpt` is.
export const DEFAULT_MODELS_YAML = `# svc built-in model registry
pricing_version: builtin-2025-11-01
models:
  - id: anthropic:claude-opus-5-5
    tier: deep
    aliases: [deep, opus, opus-5.5]
    can_delegate: true
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 1000000, max_output_tokens: 128000 }
    prices: { input: 4, output: 20, cache_read: 0.20, cache_write: 5, cache_write_1h: 8, web_search: 10 }
  - id: anthropic:claude-fable-5-1
    tier: deep
    aliases: [fable, fable-5.1]
    can_delegate: true
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 1000000, max_output_tokens: 128000 }
    prices: { input: 10, output: 50, cache_read: 0.25, cache_write: 12.50, cache_write_1h: 20, web_search: 10 }
  - id: anthropic:claude-opus-4-1
    tier: deep
    aliases: [opus-4.1]
    can_delegate: true
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 32000 }
    prices: { input: 15, output: 75, cache_read: 1.50, cache_write: 18.75, web_search: 10 }
  - id: anthropic:claude-opus-4-5
    tier: deep
    aliases: [opus-4.5]
    can_delegate: true
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 64000 }
    prices: { input: 5, output: 25, cache_read: 0.50, cache_write: 6.25, web_search: 10 }
  - id: anthropic:claude-sonnet-4-5
    tier: balanced
    aliases: [balanced, sonnet-4.5]
    can_delegate: true
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 64000 }
    prices: { input: 3, output: 15, cache_read: 0.30, cache_write: 3.75, web_search: 10 }
    long_context: { max_context_tokens: 1000000, beta: context-1m-2025-08-07 }
  - id: anthropic:claude-sonnet-4
    tier: balanced
    aliases: [sonnet-4]
    can_delegate: true
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 64000 }
    prices: { input: 3, output: 15, cache_read: 0.30, cache_write: 3.75, web_search: 10 }
    long_context: { max_context_tokens: 1000000, beta: context-1m-2025-08-07 }
  - id: anthropic:claude-sonnet-5-5
    tier: balanced
    aliases: [sonnet, sonnet-5.5]
    can_delegate: true
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 1000000, max_output_tokens: 128000 }
    prices: { input: 2, output: 10, cache_read: 0.10, cache_write: 2.50, cache_write_1h: 4, web_search: 10 }
  - id: anthropic:claude-haiku-4-5
    tier: fast
    aliases: [fast, haiku, haiku-4.5]
    can_delegate: true
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 64000 }
    prices: { input: 1, output: 5, cache_read: 0.10, cache_write: 1.25, web_search: 10 }
  - id: anthropic:claude-haiku-5-5
    tier: fast
    aliases: [haiku-5.5]
    can_delegate: true
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 1000000, max_output_tokens: 128000 }
    prices: { input: 0.10, output: 0.50, cache_read: 0.01, cache_write: 0.125, cache_write_1h: 0.20, web_search: 10 }
    long_context: { above_input_tokens: 100000, prices: { input: 0.50, output: 2.50, cache_read: 0.05, cache_write: 0.625, cache_write_1h: 1 } }
  - id: openai:gpt-5
    tier: deep
    aliases: [gpt]
    can_delegate: true
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 400000, max_output_tokens: 128000 }
    prices: { input: 1.25, output: 10, cache_read: 0.125, web_search: 10 }
  - id: openai:gpt-5-mini
    tier: fast
    aliases: [mini, gpt-mini]
    can_delegate: true
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 400000, max_output_tokens: 128000 }
    prices: { input: 0.25, output: 2, cache_read: 0.025, web_search: 10 }
  - id: openai:gpt-5-nano
    tier: fast
    aliases: [nano, gpt-nano]
    can_delegate: false
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 400000, max_output_tokens: 128000 }
    prices: { input: 0.05, output: 0.40, cache_read: 0.005, web_search: 10 }
  - id: openai:gpt-6.2-sol
    tier: balanced
    aliases: [sol]
    can_delegate: true
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 1050000, max_output_tokens: 128000 }
    prices: { input: 2, output: 10, cache_read: 0.10, cache_write: 2.50, web_search: 10 }
    long_context: { above_input_tokens: 272000, prices: { input: 4, output: 15, cache_read: 0.20, cache_write: 5 } }
  - id: openai:gpt-4.1
    tier: balanced
    aliases: []
    can_delegate: true
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 1047576, max_output_tokens: 32768 }
    prices: { input: 2, output: 8, cache_read: 0.50, web_search: 10 }
  - id: openai:gpt-4.1-mini
    tier: fast
    aliases: []
    can_delegate: false
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 1047576, max_output_tokens: 32768 }
    prices: { input: 0.40, output: 1.60, cache_read: 0.10, web_search: 10 }
  - id: openai:gpt-4o
    tier: balanced
    aliases: []
    can_delegate: false
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 128000, max_output_tokens: 16384 }
    prices: { input: 2.50, output: 10, cache_read: 1.25, web_search: 10 }
  - id: openai:gpt-4o-mini
    tier: fast
    aliases: []
    can_delegate: false
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 128000, max_output_tokens: 16384 }
    prices: { input: 0.15, output: 0.60, cache_read: 0.075, web_search: 10 }
  - id: openrouter:anthropic/claude-sonnet-4.5
    tier: balanced
    aliases: []
    can_delegate: true
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 200000, max_output_tokens: 64000 }
    prices: { input: 3, output: 15, cache_read: 0.30, cache_write: 3.75 }
  - id: openrouter:meta-llama/llama-3.3-70b-instruct
    tier: fast
    aliases: [llama]
    can_delegate: false
    capabilities: { supports_images: false, supports_tools: true, max_context_tokens: 131072, max_output_tokens: 16384 }
    prices: { input: 0.13, output: 0.40 }
  - id: openrouter:google/gemini-2.5-flash
    tier: fast
    aliases: [gemini-flash]
    can_delegate: false
    capabilities: { supports_images: true, supports_tools: true, max_context_tokens: 1048576, max_output_tokens: 65535 }
    prices: { input: 0.30, output: 2.50, cache_read: 0.075 }
`;
