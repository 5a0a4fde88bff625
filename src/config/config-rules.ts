/** Every key `config.yaml` understands, as data: one row per key. The validator (config-schema.ts) only evaluates the table. */

import {
  boolishType,
  ConfigTypes,
  envNameType,
  httpUrlType,
  integerRangeType,
  mcpUrlType,
  oneOfType,
  recordListType,
  RULE_CATEGORIES,
  shellHookListType,
  stringMapType,
  stringOrListType,
  scalarType,
  type ConfigValueType,
} from "./value-types.js";

/** `tool_search.enabled`: auto, on or off (a boolean means on/off). */
const toolSearchModeType = scalarType("one of auto, on, off (or a boolean)", (v) => typeof v === "boolean" || v === "auto" || v === "on" || v === "off");

/**
 * `model.api_key`: always refused, and the message never shows the value (a key pasted into
 * config.yaml must not be echoed to a terminal or a log by the error that refuses it).
 */
const secretRefusedType: ConfigValueType = {
  expected: "left out: an API key is never read from config.yaml; put it in an environment variable and name that variable in model.api_key_env",
  check: (value) => ({ at: [], expected: secretRefusedType.expected, got: value, gotText: "a value, not shown" }),
};

/** A number from `min` to `max` (both included). */
function numberRangeType(min: number, max: number): ConfigValueType {
  return scalarType(`a number from ${min} to ${max}`, (v) => typeof v === "number" && Number.isFinite(v) && v >= min && v <= max);
}

/** Shell hook events `hooks:` accepts (the plugin hook names a shell command can serve). */
export const SHELL_HOOK_EVENTS = ["pre_tool_call", "post_tool_call", "transform_tool_result", "on_session_start", "on_session_end", "subagent_start", "subagent_stop"] as const;


/**
 * The largest `memory.*_char_limit`: the whole store goes into every system prompt, and the threat
 * scan reads at most 65,536 characters of an entry (docs/memory.md).
 */
export const MEMORY_CHAR_LIMIT_MAX = 60_000;

export interface ConfigRule {
  /** Dotted key path as written in the file; `*` stands for any one key (a plugin id). */
  readonly path: string;
  readonly type: ConfigValueType;
  /** Filled in when the key is absent. Only for paths without `*`. */
  readonly default?: unknown;
  readonly description: string;
}

/**
 * Every key `config.yaml` understands. Sections (`plugins`, `plugins.entries.*`, ...) are
 * implied by the leaves below them and must be mappings. The typed key is the camelCase
 * form of each literal segment; `*` segments are kept as written.
 */
export const CONFIG_RULES: readonly ConfigRule[] = [
  // plugins (docs/plugins.md)
  { path: "plugins.enabled", type: ConfigTypes.stringList, description: "Plugin keys to load; nothing loads unless listed." },
  { path: "plugins.disabled", type: ConfigTypes.stringList, description: "Plugin keys never to load (wins over enabled)." },
  { path: "plugins.entries.*.enabled", type: ConfigTypes.boolean, description: "Load this plugin." },
  {
    path: "plugins.entries.*.allow_tool_override",
    type: ConfigTypes.boolean,
    description: "Let this plugin's tools replace tools of the same name.",
  },
  // mcp_servers (docs/mcp.md)
  { path: "mcp_servers.*.command", type: ConfigTypes.string, description: "Program that runs a stdio server." },
  { path: "mcp_servers.*.args", type: ConfigTypes.stringList, description: "Its arguments." },
  { path: "mcp_servers.*.env", type: stringMapType, description: "Variables added to the server's minimal environment." },
  { path: "mcp_servers.*.cwd", type: ConfigTypes.string, description: "Working directory of a stdio server." },
  { path: "mcp_servers.*.url", type: mcpUrlType, description: "Endpoint of an HTTP server." },
  { path: "mcp_servers.*.headers", type: stringMapType, description: "HTTP headers sent with every request." },
  { path: "mcp_servers.*.transport", type: oneOfType(["http", "sse"]), description: "http: Streamable HTTP with SSE fallback; sse: SSE only." },
  { path: "mcp_servers.*.auth", type: oneOfType(["oauth"]), description: "oauth: authorise through OAuth (tokens under the profile home)." },
  { path: "mcp_servers.*.enabled", type: boolishType, description: "false keeps the entry but never starts the server." },
  { path: "mcp_servers.*.timeout", type: ConfigTypes.positiveNumber, description: "Per-call time limit in seconds (default 300; progress extends it)." },
  { path: "mcp_servers.*.connect_timeout", type: ConfigTypes.positiveNumber, description: "Connect and initialise time limit in seconds (default 60)." },
  { path: "mcp_servers.*.tools.include", type: stringOrListType, description: "Only these raw tool names." },
  { path: "mcp_servers.*.tools.exclude", type: stringOrListType, description: "Never these raw tool names (include wins)." },
  { path: "mcp_servers.*.tools.resources", type: ConfigTypes.boolean, description: "Offer list_resources / read_resource (default true)." },
  { path: "mcp_servers.*.tools.prompts", type: ConfigTypes.boolean, description: "Offer list_prompts / get_prompt (default true)." },
  {
    path: "mcp_servers.*.supports_parallel_tool_calls",
    type: ConfigTypes.boolean,
    description: "This server's tools may run alongside other parallel-safe calls (default false).",
  },
  // hooks: shell hooks (docs/plugins.md, "Shell hooks")
  ...SHELL_HOOK_EVENTS.map((event) => ({
    path: `hooks.${event}`,
    type: shellHookListType,
    description: `Shell commands run on ${event} (JSON on stdin).`,
  })),
  { path: "toolsets.enabled", type: ConfigTypes.stringList, description: "Toolsets to turn on." },
  { path: "toolsets.disabled", type: ConfigTypes.stringList, description: "Toolsets to turn off." },
  {
    path: "tools.max_result_chars",
    type: ConfigTypes.positiveInteger,
    description: "Truncate tool results longer than this.",
  },
  {
    path: "tools.timeout_seconds",
    type: ConfigTypes.nonNegativeNumber,
    description: "Default per-call time limit (0 disables).",
  },
  {
    path: "tools.max_concurrency",
    type: ConfigTypes.positiveInteger,
    description: "Tool calls of one batch run at once.",
  },
  {
    path: "tools.availability_ttl_seconds",
    type: ConfigTypes.nonNegativeNumber,
    description: "Reuse availability answers this long (0: never).",
  },
  { path: "terminal.backend", type: ConfigTypes.string, default: "local", description: "Terminal backend." },
  {
    path: "terminal.timeout_seconds",
    type: ConfigTypes.positiveNumber,
    description: "Default per-command time limit.",
  },
  {
    path: "terminal.max_output_chars",
    type: ConfigTypes.positiveInteger,
    description: "Truncate command output longer than this.",
  },
  { path: "terminal.cwd", type: ConfigTypes.string, description: "Working directory for new sessions." },
  {
    path: "terminal.idle_timeout_seconds",
    type: ConfigTypes.nonNegativeNumber,
    description: "Close a task's environment after this long unused (0: never; default 600).",
  },
  {
    path: "terminal.redact_output",
    type: ConfigTypes.boolean,
    description: "Replace secrets (API keys, tokens, passwords, private keys) in command output with [REDACTED] (default true).",
  },
  // Each backend's options; the backend checks their keys when it starts a task (docs/backends/).
  ...["local", "ssh", "docker", "singularity", "modal", "daytona", "vercel_sandbox"].map((backend) => ({
    path: `terminal.${backend}`,
    type: ConfigTypes.mapping,
    description: `Options of the ${backend} backend (docs/backends/${backend.replace("_", "-")}.md).`,
  })),
  // processes: the background process registry (docs/processes.md)
  {
    path: "processes.results.max_age_days",
    type: ConfigTypes.positiveNumber,
    description: "Remove receipts of ended background processes older than this many days (default 7).",
  },
  {
    path: "processes.results.max_count",
    type: ConfigTypes.positiveInteger,
    description: "Keep at most this many receipts of ended background processes, the newest (default 1000).",
  },
  // memory: the agent's persistent memory files (docs/memory.md)
  { path: "memory.memory_enabled", type: ConfigTypes.boolean, default: true, description: "Offer the memory tool's 'memory' target (MEMORY.md) and put its snapshot in the system prompt." },
  { path: "memory.user_profile_enabled", type: ConfigTypes.boolean, default: true, description: "The same for the 'user' target (USER.md)." },
  {
    path: "memory.memory_char_limit",
    type: integerRangeType(100, MEMORY_CHAR_LIMIT_MAX),
    default: 2200,
    description: "Characters MEMORY.md's entries may take, joined by the entry delimiter.",
  },
  {
    path: "memory.user_char_limit",
    type: integerRangeType(100, MEMORY_CHAR_LIMIT_MAX),
    default: 1375,
    description: "Characters USER.md's entries may take, joined by the entry delimiter.",
  },
  {
    path: "memory.write_approval",
    type: ConfigTypes.boolean,
    default: false,
    description: "Every memory write needs an approval from the embedding application; without an approver, writes are refused.",
  },
  // tool_search: deferring MCP and plugin tools behind tool_search / tool_describe / tool_call (docs/tool-search.md)
  {
    path: "tool_search.enabled",
    type: toolSearchModeType,
    default: "auto",
    description: "auto: defer MCP and plugin tools when their schemas take threshold_pct of the context; on: always when one is deferrable; off: never.",
  },
  {
    path: "tool_search.threshold_pct",
    type: numberRangeType(0, 100),
    default: 10,
    description: "Share of the context window (percent) the deferrable tools' schemas may take before auto mode defers them.",
  },
  {
    path: "tool_search.context_tokens",
    type: ConfigTypes.positiveInteger,
    description: "The model's context window in tokens (unknown: auto mode defers from 20,000 schema tokens).",
  },
  {
    path: "tool_search.search_default_limit",
    type: integerRangeType(1, 50),
    default: 5,
    description: "Matches tool_search returns when the model asks for no number (capped at max_search_limit).",
  },
  {
    path: "tool_search.max_search_limit",
    type: integerRangeType(1, 50),
    default: 20,
    description: "The most matches one tool_search returns.",
  },
  // delegation: delegate_task's subagents (docs/delegation.md)
  {
    path: "delegation.max_iterations",
    type: integerRangeType(1, 10_000),
    default: 50,
    description: "Requests a subagent may make that end in tool calls (its own budget; the model cannot choose it).",
  },
  {
    path: "delegation.max_concurrent_children",
    type: integerRangeType(1, 100),
    description: "Most tasks one delegate_task call may run (all at once); default 3, or DELEGATION_MAX_CONCURRENT_CHILDREN.",
  },
  {
    path: "delegation.max_spawn_depth",
    type: ConfigTypes.positiveInteger,
    default: 1,
    description: "Levels of delegation: 1 lets only the top-level agent delegate; 2 lets an orchestrator child delegate once more.",
  },
  {
    path: "delegation.orchestrator_enabled",
    type: ConfigTypes.boolean,
    default: true,
    description: "Honour role: orchestrator (when max_spawn_depth allows); false makes every child a leaf.",
  },
  {
    path: "delegation.subagent_auto_approve",
    type: ConfigTypes.boolean,
    default: false,
    description: "A subagent's command that needs approval runs once without asking (false: denied; hardline and deny rules block either way).",
  },
  {
    path: "delegation.child_timeout_seconds",
    type: numberRangeType(30, 86_400),
    description: "Time limit of one subagent (off when absent); at the limit it is stopped and its task reported as timeout.",
  },
  {
    path: "delegation.max_summary_chars",
    type: integerRangeType(2000, 1_000_000),
    default: 24_000,
    description: "Characters of a subagent's answer handed back; a longer one is cut with a marker.",
  },
  { path: "delegation.model", type: ConfigTypes.string, description: "The subagents' model (default: the parent's)." },
  { path: "delegation.base_url", type: httpUrlType, description: "The subagents' endpoint (default: the parent's)." },
  { path: "delegation.api_key_env", type: envNameType, description: "Environment variable holding the subagents' API key (default: the parent's key, unless base_url names another endpoint)." },
  { path: "delegation.api_key", type: secretRefusedType, description: "Never read: name the key's environment variable in delegation.api_key_env." },
  // compaction: context compaction in the agent loop (docs/compaction.md)
  { path: "compaction.enabled", type: ConfigTypes.boolean, default: true, description: "Compact a long conversation: summarise its middle when the prompt passes threshold of the context window." },
  {
    path: "compaction.threshold",
    type: scalarType("a number more than 0 and at most 1 (a share of the context window)", (v) => typeof v === "number" && Number.isFinite(v) && v > 0 && v <= 1),
    default: 0.5,
    description: "Share of the context window the prompt may take before the loop compacts (0.5 = half).",
  },
  { path: "compaction.keep_first", type: integerRangeType(0, 10_000), default: 3, description: "Messages kept verbatim at the start of the conversation." },
  { path: "compaction.keep_last", type: integerRangeType(1, 10_000), default: 20, description: "Messages kept verbatim at the end (tool rounds are never split)." },
  { path: "compaction.model", type: ConfigTypes.string, description: "The model that writes the summary (same endpoint); default: the chat's model." },
  {
    path: "compaction.context_tokens",
    type: ConfigTypes.positiveInteger,
    description: "The model's context window in tokens (default: tool_search.context_tokens, else 128,000).",
  },
  // model: the endpoint `mibyan chat` talks to (docs/chat.md); the key itself only ever comes from the environment
  { path: "model.base_url", type: httpUrlType, description: "OpenAI-compatible Chat Completions endpoint (e.g. https://api.openai.com/v1); --base-url wins, OPENAI_BASE_URL is the fallback." },
  { path: "model.name", type: ConfigTypes.string, description: "The model name the endpoint knows; --model wins." },
  { path: "model.api_key_env", type: envNameType, description: "Environment variable holding the API key; --api-key-env wins, OPENAI_API_KEY is the fallback." },
  { path: "model.api_key", type: secretRefusedType, description: "Never read: an API key is not kept in config.yaml (name its environment variable in model.api_key_env)." },
  // approvals: the dangerous-command approval flow (docs/approvals.md)
  {
    path: "approvals.mode",
    type: oneOfType(["manual", "smart", "off"]),
    default: "manual",
    description: "manual: ask a person; smart: an auxiliary model reviews first; off: no approval (hardline rules still block).",
  },
  {
    path: "approvals.allowlist",
    type: recordListType({ required: ["rule", "prefix"], optional: ["backend", "added"] }),
    description: "Approvals kept for good: (rule, prefix, backend) keys.",
  },
  {
    path: "approvals.deny",
    type: recordListType({
      optional: ["rule", "prefix", "category", "backend", "reason"],
      anyOf: ["rule", "prefix", "category"],
      oneOf: { category: RULE_CATEGORIES },
    }),
    description: "User deny rules, checked right after the hardline rules.",
  },
  {
    path: "approvals.non_interactive",
    type: oneOfType(["deny", "allow"]),
    default: "deny",
    description: "What a run with nobody to ask does with a command that needs approval.",
  },
  {
    path: "approvals.timeout_seconds",
    type: ConfigTypes.positiveNumber,
    default: 60,
    description: "Terminal prompt time limit; no answer denies.",
  },
  {
    path: "approvals.gateway_timeout_seconds",
    type: ConfigTypes.positiveNumber,
    default: 300,
    description: "How long a gateway approval stays pending; expiry denies.",
  },
  {
    path: "approvals.isolated_backends_need_approval",
    type: ConfigTypes.boolean,
    default: false,
    description: "Also ask for commands on isolated sandboxes (hardline rules block there regardless).",
  },
  { path: "approvals.smart.base_url", type: httpUrlType, description: "OpenAI-compatible endpoint of the reviewer." },
  { path: "approvals.smart.model", type: ConfigTypes.string, description: "Reviewer model." },
  { path: "approvals.smart.api_key_env", type: envNameType, description: "Environment variable holding the reviewer's API key." },
  {
    path: "approvals.smart.timeout_seconds",
    type: ConfigTypes.positiveNumber,
    description: "Reviewer time limit; a timeout escalates to a person.",
  },
  {
    path: "approvals.smart.breaker_threshold",
    type: ConfigTypes.positiveInteger,
    description: "Consecutive reviewer denials in a session that stop smart review for it.",
  },
];


