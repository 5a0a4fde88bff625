/**
 * mibyan-tools/openai-agents: the registry's tools for the OpenAI Agents SDK (`@openai/agents-core`
 * 0.20, which `@openai/agents` brings).
 *
 * A subpath of its own (package.json `exports`), with the SDK an optional peer dependency: the main
 * entry never loads it, and importing this subpath without it fails with the package and version
 * to install. Every call goes through `handleFunctionCall`; flagged commands use the SDK's own
 * approvals (interruptions). See docs/integrations/openai-agents.md.
 */

export { toOpenAIAgentsTools, type OpenAIAgentsToolsOptions } from "./integrations/openai-agents.js";
export { IntegrationSelectionError } from "./integrations/select-tools.js";
export type { IntegrationOptions, IntegrationSession } from "./integrations/types.js";
