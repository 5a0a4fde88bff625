/**
 * The LangChain adapter (`mibyan-tools/langchain`, for `@langchain/core` 1.x): the registry's
 * tools as `DynamicStructuredTool`s (`tool()` of `@langchain/core/tools`), usable with
 * `langchain@1`'s `createAgent`, LangGraph's `ToolNode` or `model.bindTools`. Each tool's
 * `schema` is the registry's JSON Schema as it is, every call goes through `handleFunctionCall`
 * with the run's AbortSignal and tool call id, a failure comes back as the text the model reads
 * (or, with `errors: "throw"`, as an Error carrying that text), and a multimodal result as
 * content (its text) and artifact (its media parts). What our gate would put to a person goes to
 * LangChain's own human-in-the-loop: `langChainInterruptOn(tools)` gives
 * `humanInTheLoopMiddleware` its `interruptOn` (langchain-approvals.ts). See
 * docs/integrations/langchain.md.
 *
 * Arguments are validated by our dispatch only, not by LangChain: LangChain checks a JSON Schema
 * with `@cfworker/json-schema`, which runs a schema's `pattern` on the built-in backtracking
 * RegExp engine. Tool schemas come from MCP servers and plugins; the registry accepts a pattern
 * such as `^(a+)+$` because our validator runs it in linear time (src/schema/linear-regexp.ts),
 * and on LangChain's a 30-character argument would block the process for minutes. So a bad
 * argument gets our `Invalid arguments for …` text, not a `ToolInputParsingException`.
 *
 * `@langchain/core` is an optional peer: imported here, at load, so that `import "mibyan-tools"`
 * never loads it.
 */

import type { DynamicStructuredTool, ToolRunnableConfig } from "@langchain/core/tools";

import { createApprovalBridge } from "./approval-bridge.js";
import { importPeer } from "./peer-import.js";
import { InterruptGrants, interruptOnEntry, type LangChainInterruptOnEntry } from "./langchain-approvals.js";
import type { IntegrationPart, IntegrationResult } from "./result-parts.js";
import { callScope, createCallRunner } from "./run-call.js";
import { planIntegrationTools } from "./select-tools.js";
import type { IntegrationOptions } from "./types.js";

const [lcTools, lcMessages] = await importPeer("@langchain/core", "mibyan-tools/langchain", () =>
  Promise.all([import("@langchain/core/tools"), import("@langchain/core/messages")]),
);

export interface LangChainToolsOptions extends IntegrationOptions {
  /**
   * How a failed call (an `{"error": ...}` result) reaches LangChain:
   * - `"return"` (default): as the tool's output, the text the model reads. Called with a tool
   *   call (as `ToolNode` and `createAgent` call it) the tool returns a `ToolMessage` with that
   *   text and `status: "error"`;
   * - `"throw"`: an `Error` whose message is that text, for LangGraph's `ToolNode`
   *   (`handleToolErrors`), `toolRetryMiddleware` or your own handling.
   */
  errors?: "return" | "throw" | undefined;
  /**
   * Where a multimodal result's media go:
   * - `"artifact"` (default): the content is the text (media as `[image: ...]` placeholders) and the
   *   artifact the media parts; LangChain gives the artifact to the application, not the model;
   * - `"content"`: the content is LangChain's standard content blocks in order (`text`, and `image`
   *   / `audio` / `file` with base64 `data` and `mimeType`), so a provider that takes media in tool
   *   results (Anthropic, OpenAI's Responses API, Gemini) shows them to the model; the artifact is
   *   the same media parts.
   */
  media?: "artifact" | "content" | undefined;
}

/** What a tool call ends with, as `responseFormat: "content_and_artifact"` wants it. */
type ContentAndArtifact = [content: unknown, artifact: IntegrationPart[] | undefined];

/** Thrown with `errors: "throw"`: the message is exactly the text the model would have read. */
export class MibyanToolError extends Error {
  readonly toolName: string;
  constructor(toolName: string, text: string) {
    super(text);
    this.name = "MibyanToolError";
    this.toolName = toolName;
  }
}

/** The interrupt records of each tool set, found from any of its tools (`langChainInterruptOn`). */
const grantsOf = new WeakMap<object, InterruptGrants>();

/** The registry's tools as LangChain `DynamicStructuredTool`s, in name order. */
export function toLangChainTools(options: LangChainToolsOptions = {}): DynamicStructuredTool[] {
  const { tools: selected, allowedTools: allowed, bridge: search } = planIntegrationTools(options);
  const grants = new InterruptGrants(createApprovalBridge(callScope(options), options.registry));
  const runCall = createCallRunner(options, allowed, "langchain", search);
  const throwErrors = options.errors === "throw";
  const mediaInContent = options.media === "content";
  return selected.map(({ name, description, parameters }) => {
    const func = (input: unknown, config?: ToolRunnableConfig): Promise<ContentAndArtifact> => {
      // Invoked with a ToolCall, LangChain puts it on the config; ToolNode also passes `toolCallId`.
      const toolCallId = config?.toolCall?.id ?? (config as { toolCallId?: unknown } | undefined)?.toolCallId;
      const id = typeof toolCallId === "string" && toolCallId !== "" ? toolCallId : undefined;
      const scope = grants.scopeFor(name, input, id, config?.configurable?.thread_id);
      return runCall({ name, args: input, toolCallId: id, signal: config?.signal, scope }).then((result) => toOutput(name, id, result, throwErrors, mediaInContent));
    };
    const made = lcTools.tool(func, {
      name,
      description,
      // The JSON Schema itself: `bindTools` sends it to the provider unchanged.
      schema: parameters as Record<string, unknown>,
      responseFormat: "content_and_artifact",
    });
    if (!(made instanceof lcTools.DynamicStructuredTool)) {
      // tool() makes a string-input DynamicTool for a schema that only admits strings; the registry's parameters are objects.
      throw new TypeError(`${name}: LangChain did not make a structured tool of its parameters`);
    }
    skipFrameworkValidation(made);
    grantsOf.set(made, grants);
    return made;
  });
}

/**
 * The `interruptOn` option of `humanInTheLoopMiddleware` for these tools (made by
 * `toLangChainTools`): an entry for each of them, with `approve` and `reject`, whose `when`
 * interrupts only for a call our gate would put to a person (a flagged command, an
 * `execute_code` program, what the gate asked about during an earlier call with the same
 * arguments). A tool made elsewhere gets no entry.
 */
export function langChainInterruptOn(tools: readonly unknown[]): Record<string, LangChainInterruptOnEntry> {
  const entries: Record<string, LangChainInterruptOnEntry> = {};
  for (const t of tools) {
    if (typeof t !== "object" || t === null) continue;
    const grants = grantsOf.get(t);
    const name = (t as { name?: unknown }).name;
    if (grants !== undefined && typeof name === "string") entries[name] = interruptOnEntry(grants);
  }
  return entries;
}

function toOutput(name: string, toolCallId: string | undefined, result: IntegrationResult, throwErrors: boolean, mediaInContent: boolean): ContentAndArtifact {
  if (result.isError) {
    if (throwErrors) throw new MibyanToolError(name, result.content);
    // A ToolMessage is passed through as it is: the same text, marked as an error for providers that carry it (Anthropic's is_error).
    if (toolCallId !== undefined) return [new lcMessages.ToolMessage({ content: result.content, tool_call_id: toolCallId, name, status: "error" }), undefined];
    return [result.content, undefined];
  }
  if (result.parts === undefined) return [result.content, undefined];
  const media = result.parts.filter((part) => part.type === "media");
  return [mediaInContent ? result.parts.map(contentBlock) : result.content, media.length > 0 ? media : undefined];
}

/** LangChain's standard content block for one part (base64 data with its MIME type). */
function contentBlock(part: IntegrationPart): Record<string, string> {
  if (part.type === "text") return { type: "text", text: part.text };
  const type = part.mediaType.startsWith("image/") ? "image" : part.mediaType.startsWith("audio/") ? "audio" : "file";
  return { type, mimeType: part.mediaType, data: part.data };
}

/**
 * Our dispatch validates the arguments (with its own errors and a linear-time regex engine);
 * LangChain's `call` validates `this.schema` first. The tool keeps its real `schema` for
 * everything else (`bindTools`, `toJSON`), and its `call` runs LangChain's own `call` on a view
 * of the tool whose schema admits anything. `invoke`, `batch` and `stream` all go through `call`.
 * (It also keeps the validator from writing its marks into the registry's schema objects.)
 */
function skipFrameworkValidation(made: DynamicStructuredTool): void {
  // `{}` admits anything. One per tool, not frozen: the validator marks the schema it is given (`__absolute_uri__`).
  const view: DynamicStructuredTool = Object.create(made, { schema: { value: {} } });
  const call = made.call;
  Object.defineProperty(made, "call", {
    value: (arg: unknown, config?: unknown, tags?: string[]) => call.call(view, arg as never, config as never, tags),
    configurable: true,
    writable: true,
  });
}
