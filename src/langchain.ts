/**
 * mibyan-tools/langchain: the registry's tools for LangChain (`@langchain/core` 1.x, with
 * `langchain@1`'s `createAgent` or LangGraph).
 *
 * A subpath of its own (package.json `exports`), with `@langchain/core` an optional peer
 * dependency: the main entry never loads it, and importing this subpath without it fails with the
 * package and version to install. Every call goes through `handleFunctionCall`; what our gate
 * would ask a person about goes to LangChain's human-in-the-loop middleware (`langChainInterruptOn`). See
 * docs/integrations/langchain.md.
 */

export { MibyanToolError, langChainInterruptOn, toLangChainTools, type LangChainToolsOptions } from "./integrations/langchain.js";
export type { LangChainInterruptOnEntry, LangChainInterruptRequest, LangChainRuntime, LangChainToolCall } from "./integrations/langchain-approvals.js";
export { IntegrationSelectionError } from "./integrations/select-tools.js";
export type { IntegrationPart } from "./integrations/result-parts.js";
export type { IntegrationOptions, IntegrationSession } from "./integrations/types.js";
