/**
 * The shapes shared by every part of the runtime: what a tool is, what a call
 * is, what a call returns. Kept free of behaviour so that any module can
 * import it without pulling in the registry.
 */

import type { CallApprovalScope } from "../approval/flow/types.js";

/** A JSON Schema object (draft 2020-12 or draft-07 subset). */
export type JsonSchema = { [key: string]: unknown };

/** The model-facing schema of a tool, in the OpenAI function shape. */
export interface FunctionSchema {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** A tool definition in the OpenAI chat-completions format (the default export format). */
export interface OpenAIToolDefinition {
  type: "function";
  function: FunctionSchema;
}

/** One tool call as the model produced it. `arguments` may still be the raw JSON string. */
export interface ToolCall {
  id?: string | undefined;
  name: string;
  arguments?: Record<string, unknown> | string | null | undefined;
}

/** A tool call after its arguments were parsed into an object. */
export interface ParsedToolCall {
  id?: string | undefined;
  name: string;
  arguments: Record<string, unknown>;
}

export type ToolErrorKind =
  /** No tool of that name is registered. */
  | "unknown_tool"
  /** Arguments were malformed JSON, not an object, or failed schema validation. */
  | "invalid_args"
  /** The tool's availability check failed, or a required env var is missing. */
  | "unavailable"
  /** A pre-hook (or policy) refused the call. */
  | "blocked"
  /** The tool's time limit elapsed. */
  | "timeout"
  /** The caller's AbortSignal fired. */
  | "cancelled"
  /** The call belongs to the agent loop and no agent-loop handler took it. */
  | "agent_loop"
  /** The handler returned a value that cannot be sent to the model. */
  | "invalid_result"
  /** A post-hook threw; the tool ran but its result was withheld. */
  | "hook_failed"
  /** The handler threw or returned a failed result. */
  | "failed";

/** One reason a tool call's arguments were rejected, phrased so the model can fix it. */
export interface ValidationIssue {
  /** Dotted path to the offending parameter ("" for the arguments object itself). */
  path: string;
  message: string;
  /** The JSON Schema keyword that failed (`required`, `type`, `enum`, ...). */
  keyword?: string | undefined;
}

export interface ToolError {
  kind: ToolErrorKind;
  message: string;
  issues?: ValidationIssue[] | undefined;
}

/** The typed outcome of a tool call (the second design document's `ToolResult`). */
export interface ToolResult<T = unknown> {
  success: boolean;
  data?: T | undefined;
  error?: ToolError | undefined;
  /** Free-form data for hooks and loggers; never sent to the model. */
  metadata?: Record<string, unknown> | undefined;
}

/**
 * Where a call came from, as hooks see it (`ctx.surface`, a plugin hook's `event.surface`): `library` (a
 * program calling the registry or `handleFunctionCall`; the default), `cli` (`mibyan call`), `mcp` (a client
 * of `mibyan mcp serve` / `createMcpServer`), or a framework adapter (`ai-sdk`, `openai-agents`, `langchain`).
 * Any other string names a surface of the embedder's own.
 */
export type CallSurface = "library" | "cli" | "mcp" | "ai-sdk" | "openai-agents" | "langchain" | (string & {});

/** Everything a handler learns about the call it serves. */
export interface ToolContext {
  /** Aborted when the caller cancels or the tool's time limit elapses. */
  readonly signal: AbortSignal;
  /** The durable session the call belongs to (ownership of results is keyed on it). */
  readonly sessionId?: string | undefined;
  /** The task (sub-conversation) the call belongs to; per-task state such as the working directory keys on it. */
  readonly taskId?: string | undefined;
  /** The id the model gave the call. */
  readonly toolCallId?: string | undefined;
  /** The embedder's session object (the second document's `AgentSession`). */
  readonly session?: unknown;
  /** When set, the only tools this call (and calls it makes on the model's behalf) may reach. */
  readonly allowedTools?: ReadonlySet<string> | undefined;
  /** The name of the tool being called. */
  readonly toolName: string;
  /**
   * Where the call came from: always set for calls through the registry (`library` unless the caller said
   * otherwise); optional only so a context built by hand (a test calling a handler) need not name one.
   */
  readonly surface?: CallSurface | undefined;
  /**
   * What a person approved for this call through a framework, and where the gate's questions go
   * (src/approval/flow/call-approval.ts). A handler that asks the approval gate passes it in the
   * check's options; one that calls tools (execute_code) passes it on to them.
   */
  readonly approvalScope?: CallApprovalScope | undefined;
}

/** What a caller passes into dispatch: every field optional; `signal` is created when absent. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
  sessionId?: string | undefined;
  taskId?: string | undefined;
  toolCallId?: string | undefined;
  session?: unknown;
  /**
   * The tools the model was offered (from `getToolDefinitions`). A call to any
   * other tool is refused as `unavailable`, and tools that call tools (such as
   * `execute_code`) pass the restriction on.
   */
  allowedTools?: ReadonlySet<string> | readonly string[] | undefined;
  /** Overrides the tool's own time limit for this call (milliseconds; 0 disables). */
  timeoutMs?: number | undefined;
  /** Where the call came from, for hooks (default `library`). */
  surface?: CallSurface | undefined;
  /** The call's approval scope (a framework adapter's: `ToolContext.approvalScope`); none by default. */
  approvalScope?: CallApprovalScope | undefined;
}

/** A Mibyan-style handler: parsed arguments first, context second. */
export type ToolHandler<A = Record<string, unknown>> = (args: A, ctx: ToolContext) => unknown;

/** A second-document-style handler: session first, arguments second. */
export type SessionToolHandler<A = Record<string, unknown>> = (
  session: unknown,
  args: A,
  ctx: ToolContext,
) => unknown;

/** An availability check. Must be synchronous; a throw counts as unavailable. */
export type CheckFn = () => boolean;

/** Rebuilds a tool's schema from the set of tools that survived filtering. */
export type SchemaPatcher = (schema: FunctionSchema, availableTools: ReadonlySet<string>) => FunctionSchema;

/** Where a registration came from; plugin overrides of built-ins need an operator opt-in. */
export type ToolSource =
  | { kind: "builtin" }
  | { kind: "plugin"; id: string }
  | { kind: "mcp"; server: string }
  | { kind: "user" };

/** A typed parameter of the second design document's `ToolDefinition`. */
export interface ToolParameter {
  name: string;
  type: "string" | "number" | "integer" | "boolean" | "object" | "array" | "null";
  description?: string | undefined;
  /** Defaults to `true` unless a `default` is given. */
  required?: boolean | undefined;
  enum?: readonly unknown[] | undefined;
  default?: unknown;
  /** Item schema for `array` parameters. */
  items?: JsonSchema | undefined;
  /** Property schemas for `object` parameters. */
  properties?: Record<string, JsonSchema> | undefined;
}

/** Options shared by both registration shapes. */
export interface CommonToolOptions {
  name: string;
  /** Toolset the tool belongs to. Defaults to the category, then to the tool name. */
  toolset?: string | undefined;
  /** Grouping for `listTools({ category })`. Defaults to the toolset. */
  category?: string | undefined;
  checkFn?: CheckFn | undefined;
  /** Environment variables the tool needs; a missing one makes the tool unavailable. */
  requiresEnv?: readonly string[] | undefined;
  emoji?: string | undefined;
  /** Allow replacing a tool of another toolset. */
  override?: boolean | undefined;
  /** Results longer than this are cut (head and tail kept). */
  maxResultChars?: number | undefined;
  /** Time limit in milliseconds (0 = none). */
  timeoutMs?: number | undefined;
  /** Safe to run at the same time as other parallel-safe calls of one model turn. */
  parallelSafe?: boolean | undefined;
  /** Rebuilds the schema from the surviving tool set at definition time. */
  patchSchema?: SchemaPatcher | undefined;
  /**
   * JSON Schema (`type: "object"`) of the tool's successful result. The MCP server lists it as the tool's
   * `outputSchema` and sends each successful result as `structuredContent` checked against it; dispatch and
   * the model-facing text do not change.
   */
  outputSchema?: JsonSchema | undefined;
  source?: ToolSource | undefined;
  /**
   * Redact secrets from the tool's successful output before the model sees it. Default: `true` for
   * plugin and MCP tools, `false` for tools registered in code (their output is the application's
   * own data, and the name rules would rewrite fields such as `key` or `total_tokens`); built-in tools
   * redact their own output. Error texts are redacted for every tool regardless.
   */
  redactOutput?: boolean | undefined;
  /** Accepted for parity with the Python original; async handlers are detected at run time. */
  isAsync?: boolean | undefined;
}

/** The first design document's registration shape. */
export interface MibyanToolOptions<A = Record<string, unknown>> extends CommonToolOptions {
  /** Model-facing schema; its description is the one the model sees. `name` defaults to the tool name. */
  schema: { name?: string | undefined; description: string; parameters?: JsonSchema | StandardSchemaLike | undefined };
  handler: ToolHandler<A>;
  /** Marks this as the Mibyan shape (parameters live inside `schema`). */
  parameters?: undefined;
  /** Registry metadata only; the model sees `schema.description`. */
  description?: string | undefined;
}

/** The second design document's `ToolDefinition` shape. */
export interface ToolDefinitionOptions<A = Record<string, unknown>> extends CommonToolOptions {
  description: string;
  parameters?: readonly ToolParameter[] | JsonSchema | StandardSchemaLike | undefined;
  handler: SessionToolHandler<A>;
  /** Marks this as the ToolDefinition shape (no separate `schema`). */
  schema?: undefined;
}

export type RegisterInput<A = Record<string, unknown>> = MibyanToolOptions<A> | ToolDefinitionOptions<A>;

/**
 * The subset of the Standard Schema spec (zod 4, valibot, arktype) the registry uses:
 * validation, and the JSON Schema the model sees.
 */
export interface StandardSchemaLike {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown) => StandardResult | Promise<StandardResult>;
    readonly jsonSchema?: { readonly input: (options: { target: string }) => Record<string, unknown> } | undefined;
    /** Type-level only: what the schema accepts and what it parses into. */
    readonly types?: { readonly input: unknown; readonly output: unknown } | undefined;
  };
}

// Optional members say `| undefined`: schema libraries declare them that way, and a project
// with `exactOptionalPropertyTypes` must still be able to pass their schemas (zod's, say).
export type StandardResult =
  | { readonly value: unknown; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined }> };

/** A registered tool, as the registry keeps it. */
export interface ToolEntry {
  readonly name: string;
  readonly toolset: string;
  readonly category: string;
  /** Registry metadata; falls back to the schema description. */
  readonly description: string;
  readonly schema: FunctionSchema;
  /** The OpenAI-format definition, built once at registration. */
  readonly definition: OpenAIToolDefinition;
  readonly checkFn?: CheckFn;
  readonly requiresEnv: readonly string[];
  readonly emoji: string;
  readonly maxResultChars?: number;
  readonly timeoutMs?: number;
  readonly parallelSafe: boolean;
  readonly patchSchema?: SchemaPatcher;
  /** The JSON Schema of a successful result, when the tool declared one. */
  readonly outputSchema?: JsonSchema;
  readonly source: ToolSource;
  /** Whether dispatch redacts the tool's successful output for the model (see `CommonToolOptions.redactOutput`). */
  readonly redactOutput: boolean;
  /** Calls the user's handler with the arguments in the order its registration shape expects. */
  readonly invokeHandler: (args: Record<string, unknown>, ctx: ToolContext) => unknown;
  /** Present when parameters came from a Standard Schema (zod, ...), which then also validates. */
  readonly standardSchema?: StandardSchemaLike;
}

/** Logs go through this; the default writes warnings and errors to stderr. */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * Runs before a call: `undefined` passes, a call rewrites, `null` (or a throw) blocks, and a failed
 * `ToolResult` blocks with exactly that error (kind `blocked` is the convention).
 */
export type PreHook = (
  call: ParsedToolCall,
  ctx: ToolContext,
) => ParsedToolCall | ToolResult | null | undefined | void | Promise<ParsedToolCall | ToolResult | null | undefined | void>;

export type PostHook = (
  call: ParsedToolCall,
  result: ToolResult,
  ctx: ToolContext,
) => ToolResult | null | undefined | void | Promise<ToolResult | null | undefined | void>;
