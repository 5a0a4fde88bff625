import type {
  CallOptions,
  CheckFn,
  Logger,
  MibyanToolOptions,
  OpenAIToolDefinition,
  PostHook,
  PreHook,
  RegisterInput,
  ToolCall,
  ToolDefinitionOptions,
  ToolEntry,
  ToolResult,
  ToolSource,
} from "./types.js";
import { toRaw, type RawToolSchema } from "../adapters/raw.js";
import { AvailabilityCache, type Availability, type AvailabilityOptions } from "./availability.js";
import { normalizeRegistration } from "./normalize.js";
import { AGENT_LOOP_TOOLS } from "../dispatch/agent-loop.js";
import { HookSet, type HookKind } from "../dispatch/hooks.js";
import type { CallOutcome, DispatchHost } from "../dispatch/pipeline.js";
import { describeThrown } from "../util/text.js";
import { compileJsonSchemaValidator, compileStandardSchemaValidator, type ArgumentValidator } from "../schema/validator.js";
import { ToolsetCatalog } from "../toolsets/catalog.js";
import type { ToolIndex } from "../toolsets/types.js";
import { createStderrLogger } from "../util/logger.js";
import { registrationRefusal } from "./registration-rules.js";
import { describeSource, sameSource } from "./source.js";
import { RegistryChanges, type RegistryChangeListener } from "./changes.js";

export interface ToolRegistryOptions {
  logger?: Logger | undefined;
  /** Default cap on a result's length in characters (default 100,000). */
  maxResultChars?: number | undefined;
  /** Cap on error text sent to the model (default 2,000). */
  maxErrorChars?: number | undefined;
  /** Default per-call time limit in ms for tools without their own (default 0: none). */
  defaultTimeoutMs?: number | undefined;
  /** Most parallel-safe calls `executeToolCalls` runs at once through this registry, unless a batch says otherwise (default 8). */
  maxConcurrency?: number | undefined;
  availability?: AvailabilityOptions | undefined;
  /** Tool names only the agent loop may run (default: todo, memory, session_search, delegate_task). */
  agentLoopTools?: readonly string[] | undefined;
  /**
   * Whether plugin `id` may override built-in tools: the operator's
   * `plugins.entries.<id>.allow_tool_override` in config.yaml. Default: deny.
   */
  allowPluginOverride?: ((pluginId: string) => boolean) | undefined;
}

/** Per-registration grants, for callers that decide the registration rules themselves (the plugin loader). */
export interface RegisterGrants {
  /**
   * The operator allowed this plugin to replace built-in tools (`plugins.entries.<id>.allow_tool_override`),
   * as the caller read it; used instead of the registry's `allowPluginOverride`. `override: true` is still needed.
   */
  pluginOverrideAllowed?: boolean | undefined;
  /** Receives the reason when the rules refuse the registration, instead of the logger. */
  onRefused?: ((reason: string) => void) | undefined;
}

export interface ListToolsFilter {
  category?: string | undefined;
  toolset?: string | undefined;
}

/**
 * The dispatch pipeline and result rendering, loaded on the first call: listing tools
 * (`mibyan tools`, `getToolDefinitions`) never needs them. Once loaded, calls use them
 * synchronously, as before.
 */
interface Dispatch {
  runToolCall: typeof import("../dispatch/pipeline.js").runToolCall;
  fail: typeof import("../dispatch/result.js").fail;
  renderResult: typeof import("../dispatch/result.js").renderResult;
}
let dispatchModules: Dispatch | undefined;
let loadingDispatch: Promise<Dispatch> | undefined;

function loadDispatch(): Promise<Dispatch> {
  loadingDispatch ??= Promise.all([import("../dispatch/pipeline.js"), import("../dispatch/result.js")]).then(
    ([{ runToolCall }, { fail, renderResult }]) => (dispatchModules = { runToolCall, fail, renderResult }),
    (err: unknown) => {
      loadingDispatch = undefined; // not remembered: the next call tries again
      throw err;
    },
  );
  return loadingDispatch;
}

/** The outcome of one call, with the string the model receives. */
export interface DispatchOutcome extends CallOutcome {
  content: string;
}

/**
 * Holds every tool and runs calls. One instance (`registry`) serves the
 * process; tests and embedders create their own.
 */
export class ToolRegistry implements DispatchHost {
  private readonly tools = new Map<string, ToolEntry>();
  private readonly validators = new WeakMap<ToolEntry, ArgumentValidator>();
  private sortedNamesCache: { generation: number; names: readonly string[] } = { generation: -1, names: [] };
  private generationCounter = 0;

  readonly hooks = new HookSet();
  readonly availability: AvailabilityCache;
  readonly toolsets: ToolsetCatalog;
  logger: Logger;
  maxResultChars: number;
  maxErrorChars: number;
  defaultTimeoutMs: number;
  maxConcurrency: number;
  allowPluginOverride: (pluginId: string) => boolean;
  /** Source stamped on registrations that name none (discovery sets `builtin` while importing built-ins). */
  defaultSource: ToolSource = { kind: "user" };
  private readonly agentLoopTools: Set<string>;
  private builtinsSeen = false;
  /** Present only while someone listens (`onChange`): registration pays one field read otherwise. */
  private changes: RegistryChanges | undefined;

  constructor(options: ToolRegistryOptions = {}) {
    this.logger = options.logger ?? createStderrLogger();
    this.maxResultChars = options.maxResultChars ?? 100_000;
    this.maxErrorChars = options.maxErrorChars ?? 2_000;
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? 0;
    this.maxConcurrency = options.maxConcurrency ?? 8;
    this.allowPluginOverride = options.allowPluginOverride ?? (() => false);
    this.agentLoopTools = new Set(options.agentLoopTools ?? AGENT_LOOP_TOOLS);
    this.availability = new AvailabilityCache(() => this.logger, options.availability);
    const index: ToolIndex = {
      toolNames: () => this.names,
      toolsInToolset: (toolset) => this.listTools({ toolset }).map((entry) => entry.name),
      registeredToolsets: () => new Set([...this.tools.values()].map((entry) => entry.toolset)),
      generation: () => this.generationCounter,
    };
    this.toolsets = new ToolsetCatalog(index);
  }

  // ---- registration -------------------------------------------------------

  /**
   * Registers a tool. A malformed definition throws `ToolDefinitionError`.
   * A registration the rules refuse (shadowing another toolset's tool without
   * `override`, a plugin replacing a built-in without the operator's opt-in)
   * is logged as an error and returns `undefined`.
   */
  register(input: MibyanToolOptions, grants?: RegisterGrants): ToolEntry | undefined;
  register(input: ToolDefinitionOptions, grants?: RegisterGrants): ToolEntry | undefined;
  register(input: RegisterInput, grants?: RegisterGrants): ToolEntry | undefined;
  register(input: RegisterInput, grants?: RegisterGrants): ToolEntry | undefined {
    const normalized = normalizeRegistration(input as RegisterInput);
    const entry = input.source === undefined ? { ...normalized, source: this.defaultSource } : normalized;
    const refusal = this.refusal(entry, input.override === true, grants?.pluginOverrideAllowed);
    if (refusal !== undefined) {
      if (grants?.onRefused !== undefined) grants.onRefused(refusal);
      else this.logger.error(refusal);
      return undefined;
    }
    const replaced = this.tools.get(entry.name);
    if (replaced !== undefined && !sameSource(replaced.source, entry.source)) {
      // Replacing within a toolset is allowed, but never silently when it swaps a built-in
      // (its approval gate, say) or another party's tool for this one; a source replacing its own tool is routine.
      this.logger.warn(
        `Tool "${entry.name}" (${describeSource(replaced.source)}, toolset "${replaced.toolset}") was replaced by a registration from ${describeSource(entry.source)}`,
      );
    }
    const frozen = Object.freeze(entry);
    this.tools.set(frozen.name, frozen);
    if (frozen.source.kind === "builtin") this.builtinsSeen = true;
    this.generationCounter++;
    if (this.changes !== undefined) this.changes.registered(frozen.name, replaced !== undefined);
    return frozen;
  }

  /** Whether a built-in tool was ever registered here (by `discoverBuiltinTools()`); unknown-tool answers hint at it otherwise. */
  get builtinsRegistered(): boolean {
    return this.builtinsSeen;
  }

  registerMany(inputs: readonly RegisterInput[]): (ToolEntry | undefined)[] {
    return inputs.map((input) => this.register(input));
  }

  private refusal(entry: ToolEntry, override: boolean, pluginOverrideAllowed: boolean | undefined): string | undefined {
    return registrationRefusal(this.tools.get(entry.name), entry, override, () => pluginOverrideAllowed ?? this.allowPluginOverride(entry.source.kind === "plugin" ? entry.source.id : ""));
  }

  /**
   * Puts back a tool entry exactly as `register` returned it, replacing whatever holds its name now,
   * without the registration rules: the plugin loader uses it to undo a failed or removed plugin's
   * replacement of another tool (a built-in it was allowed to override, say).
   */
  reinstate(entry: ToolEntry): void {
    const replaced = this.tools.has(entry.name);
    this.tools.set(entry.name, entry);
    if (entry.source.kind === "builtin") this.builtinsSeen = true;
    this.generationCounter++;
    if (this.changes !== undefined) this.changes.registered(entry.name, replaced);
  }

  /** Removes a tool. */
  deregister(name: string): boolean {
    if (!this.tools.delete(name)) return false;
    this.generationCounter++;
    if (this.changes !== undefined) this.changes.deregistered(name);
    return true;
  }

  // ---- change events ------------------------------------------------------

  /**
   * Calls `listener` after every registration, replacement and removal, and when a tool's availability
   * is found changed (docs/registry-events.md). Returns a function that removes the listener. A listener
   * that throws (or rejects) is logged and ignored: registration never fails because of one.
   */
  onChange(listener: RegistryChangeListener): () => void {
    if (typeof listener !== "function") throw new TypeError("a registry change listener must be a function");
    if (this.changes === undefined) {
      const changes = new RegistryChanges(() => this.logger, () => this.generationCounter, (name) => this.tools.get(name));
      this.changes = changes;
      this.availability.observer = changes.observe;
    }
    const changes = this.changes;
    const remove = changes.add(listener);
    return () => {
      if (!remove() || changes.size > 0 || this.changes !== changes) return;
      this.changes = undefined;
      this.availability.observer = undefined;
    };
  }

  /**
   * Evaluates every tool's availability now: its environment variables, and its check run again (cached
   * answers are made stale). While someone listens, tools found changed are announced (an `availability`
   * event) before this returns. Call it after changing what availability depends on (setting an
   * environment variable, installing a dependency) to have the change seen at once.
   */
  refreshAvailability(): void {
    this.availability.expireAll();
    const memo = new Map<CheckFn, Availability>();
    for (const entry of this.tools.values()) {
      if (entry.checkFn !== undefined || entry.requiresEnv.length > 0) this.availability.ofEntry(entry, memo);
    }
    this.changes?.flush();
  }

  // ---- lookup -------------------------------------------------------------

  get(name: string): ToolEntry | undefined {
    return this.tools.get(name);
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  get size(): number {
    return this.tools.size;
  }

  /** Bumped on every registration and removal; caches key on it. */
  get generation(): number {
    return this.generationCounter;
  }

  /** Every tool name, sorted (the order definitions are emitted in, stable for prompt caching). */
  get names(): readonly string[] {
    if (this.sortedNamesCache.generation !== this.generationCounter) {
      this.sortedNamesCache = { generation: this.generationCounter, names: Object.freeze([...this.tools.keys()].sort()) };
    }
    return this.sortedNamesCache.names;
  }

  listTools(filter: ListToolsFilter = {}): ToolEntry[] {
    const out: ToolEntry[] = [];
    for (const name of this.names) {
      const entry = this.tools.get(name)!;
      if (filter.category !== undefined && entry.category !== filter.category) continue;
      if (filter.toolset !== undefined && entry.toolset !== filter.toolset) continue;
      out.push(entry);
    }
    return out;
  }

  // ---- availability -------------------------------------------------------

  availabilityOf(entryOrName: ToolEntry | string): Availability {
    const entry = typeof entryOrName === "string" ? this.tools.get(entryOrName) : entryOrName;
    if (entry === undefined) return { available: false, code: "not_registered", reason: "not registered" };
    return this.availability.ofEntry(entry);
  }

  /**
   * Whether any tool of the toolset is available (its environment variables set, its check passing):
   * judging by one tool's check would call a toolset dead while another of its tools works.
   * Never throws; a toolset with no registered tools is unavailable.
   */
  isToolsetAvailable(toolset: string): boolean {
    try {
      const memo = new Map<CheckFn, Availability>();
      for (const entry of this.tools.values()) {
        if (entry.toolset === toolset && this.availability.ofEntry(entry, memo).available) return true;
      }
      return false;
    } catch {
      return false;
    }
  }

  /**
   * The available tools among `names`, sorted by name. Each distinct check
   * runs at most once per call (and its answer is reused across calls for the TTL).
   */
  availableEntries(names: Iterable<string>): ToolEntry[] {
    const wanted = names instanceof Set ? (names as ReadonlySet<string>) : new Set(names);
    const memo = new Map<CheckFn, Availability>();
    const out: ToolEntry[] = [];
    for (const name of this.names) {
      if (!wanted.has(name)) continue;
      const entry = this.tools.get(name)!;
      if ((entry.checkFn !== undefined || entry.requiresEnv.length > 0) && !this.availability.ofEntry(entry, memo).available) continue;
      out.push(entry);
    }
    return out;
  }

  /** OpenAI-format definitions of the available tools among `names`. */
  getDefinitions(names: Iterable<string>): OpenAIToolDefinition[] {
    return this.availableEntries(names).map((entry) => entry.definition);
  }

  /**
   * The second document's `export_schemas()`: every registered tool as a
   * JSON-serialisable `{ name, description, category, toolset, parameters }`,
   * sorted by name, for provider adapters to translate further.
   */
  exportSchemas(): RawToolSchema[] {
    return this.listTools().map((entry) => toRaw({ schema: entry.schema, category: entry.category, toolset: entry.toolset }));
  }

  // ---- validation ---------------------------------------------------------

  validatorFor(entry: ToolEntry): ArgumentValidator {
    let validator = this.validators.get(entry);
    if (validator === undefined) {
      validator =
        entry.standardSchema !== undefined
          ? compileStandardSchemaValidator(entry.standardSchema)
          : compileJsonSchemaValidator(entry.schema.parameters);
      this.validators.set(entry, validator);
    }
    return validator;
  }

  lookup(name: string): ToolEntry | undefined {
    return this.tools.get(name);
  }

  isAgentLoopTool(name: string): boolean {
    return this.agentLoopTools.has(name);
  }

  // ---- calls --------------------------------------------------------------

  /** Runs one call and returns the model-facing string (always well-formed; never rejects). */
  async dispatch(name: string, args?: unknown, options?: CallOptions): Promise<string> {
    return this.render(await this.settle(name, args, options));
  }

  /** Runs one call and returns both the typed result and the model-facing string. */
  async run(name: string, args?: unknown, options?: CallOptions): Promise<DispatchOutcome> {
    const outcome = await this.settle(name, args, options);
    // Fields written out: a spread here costs more than the rest of the dispatch on Node 20.
    return { call: outcome.call, result: outcome.result, entry: outcome.entry, content: this.render(outcome) };
  }

  /** The second document's `invoke(call, session)`: a typed ToolResult. */
  async invoke(call: ToolCall, session?: unknown, options?: CallOptions): Promise<ToolResult> {
    const callOptions: CallOptions = {
      signal: options?.signal,
      sessionId: options?.sessionId,
      taskId: options?.taskId,
      toolCallId: call.id ?? options?.toolCallId,
      session: session ?? options?.session,
      allowedTools: options?.allowedTools,
      timeoutMs: options?.timeoutMs,
      surface: options?.surface,
      approvalScope: options?.approvalScope,
    };
    return (await this.settle(call.name, call.arguments, callOptions)).result;
  }

  private settle(name: string, args: unknown, options: CallOptions | undefined): CallOutcome | Promise<CallOutcome> {
    const dispatch = dispatchModules;
    if (dispatch === undefined) return loadDispatch().then(() => this.settle(name, args, options));
    try {
      return dispatch.runToolCall(this, name, args, options);
    } catch (thrown) {
      // The pipeline turns every fault into a result; this only guards against a defect in it.
      this.logger.error(`dispatch of ${name} failed inside the runtime: ${describeThrown(thrown)}`);
      return { call: { name, arguments: {} }, result: dispatch.fail(`Tool execution failed: ${describeThrown(thrown)}`) };
    }
  }

  /** Only after `settle`, which loaded the dispatch modules. */
  private render(outcome: CallOutcome): string {
    const maxResultChars = outcome.entry?.maxResultChars ?? this.maxResultChars;
    return dispatchModules!.renderResult(outcome.call.name, outcome.result, { maxResultChars, maxErrorChars: this.maxErrorChars });
  }

  // ---- hooks --------------------------------------------------------------

  /** Runs before every call: return undefined to pass, a (rewritten) call to proceed, null or throw to block, a failed ToolResult to block with exactly its error. */
  addPreHook(hook: PreHook): () => boolean {
    this.hooks.addPre(hook);
    return () => this.hooks.remove(hook, "pre");
  }

  /** Runs after every call that passed the pre-hooks: return undefined/null to keep the result, a ToolResult to replace it. */
  addPostHook(hook: PostHook): () => boolean {
    this.hooks.addPost(hook);
    return () => this.hooks.remove(hook, "post");
  }

  /** The second document's names. */
  registerPreHook(hook: PreHook): () => boolean {
    return this.addPreHook(hook);
  }

  registerPostHook(hook: PostHook): () => boolean {
    return this.addPostHook(hook);
  }

  removeHook(hook: PreHook | PostHook, kind?: HookKind): boolean {
    return this.hooks.remove(hook, kind);
  }
}
