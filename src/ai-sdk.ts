/**
 * mibyan-tools/ai-sdk: the registry's tools for the Vercel AI SDK (`ai@6`).
 *
 * A subpath of its own (package.json `exports`), with `ai` an optional peer dependency: the main
 * entry never loads `ai`, and importing this subpath without it fails with the package and
 * version to install. Every call goes through `handleFunctionCall` (validation, hooks, approvals,
 * time limits, redaction); flagged commands use the SDK's own approval flow. See
 * docs/integrations/ai-sdk.md.
 */

export { approvedInMessages, toAiSdkTools, type AiSdkToolOutput, type AiSdkToolsOptions } from "./integrations/ai-sdk.js";
export { IntegrationSelectionError } from "./integrations/select-tools.js";
export type { IntegrationPart } from "./integrations/result-parts.js";
export type { IntegrationOptions, IntegrationSession } from "./integrations/types.js";
