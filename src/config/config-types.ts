/** The typed configuration: what `validateConfig` builds from `config.yaml` (camelCase keys). */


/** `plugins.entries.<id>` */
export interface PluginEntryConfig {
  /** Load the plugin (`false` keeps it installed but off). */
  enabled?: boolean;
  /** Let the plugin's tools replace tools of the same name registered earlier. */
  allowToolOverride?: boolean;
}

export interface PluginsConfig {
  /** Plugin keys to load; nothing loads unless listed (docs/plugins.md). */
  enabled?: string[];
  /** Plugin keys never to load, even when listed in `enabled`. */
  disabled?: string[];
  /** Per-plugin settings, keyed by plugin key exactly as written. */
  entries: Record<string, PluginEntryConfig>;
}

/** `mcp_servers.<name>.tools`: which of the server's tools are offered. */
export interface McpToolFilterConfig {
  /** Raw MCP tool names to offer (exact match); when given, only these. A single string is one name. */
  include?: string | string[];
  /** Raw MCP tool names never to offer; `include` wins when both name a tool. */
  exclude?: string | string[];
  /** Offer `list_resources` / `read_resource` when the server has resources (default true). */
  resources?: boolean;
  /** Offer `list_prompts` / `get_prompt` when the server has prompts (default true). */
  prompts?: boolean;
}

/** `mcp_servers.<name>`: one MCP server, over stdio (`command`) or HTTP (`url`). Values may use `${VAR}`. */
export interface McpServerConfig {
  /** Program to start for a stdio server. */
  command?: string;
  args?: string[];
  /** Variables added to the stdio server's minimal environment. */
  env?: Record<string, string>;
  cwd?: string;
  /** Endpoint of an HTTP server (Streamable HTTP, with SSE fallback). */
  url?: string;
  headers?: Record<string, string>;
  /** `http` (Streamable HTTP, falling back to SSE) or `sse` (SSE only). Default `http` when `url` is set. */
  transport?: "http" | "sse";
  /** `oauth`: authorise through the SDK's OAuth client; tokens kept under the profile home. */
  auth?: "oauth";
  /** `false`, `no` or `off` keeps the entry but neither starts nor connects it. */
  enabled?: boolean | string;
  /** Per-call time limit in seconds (progress notifications extend it). */
  timeout?: number;
  /** Limit on connecting and initialising, in seconds. */
  connectTimeout?: number;
  tools?: McpToolFilterConfig;
  /** Calls to this server's tools may run at the same time as other parallel-safe calls. */
  supportsParallelToolCalls?: boolean;
}

/** `hooks.<event>[]`: a shell command run on an event, with the event as JSON on stdin. */
export interface ShellHookConfig {
  /** Regular expression over the tool name (tool events only); absent matches every tool. */
  matcher?: string;
  /** Command line, split into words (no shell). */
  command: string;
  /** Seconds (default 60, at most 300). */
  timeout?: number;
}

/** `hooks`: shell hooks by event (docs/plugins.md, "Shell hooks"). */
export interface HooksConfig {
  preToolCall?: ShellHookConfig[];
  postToolCall?: ShellHookConfig[];
  transformToolResult?: ShellHookConfig[];
  onSessionStart?: ShellHookConfig[];
  onSessionEnd?: ShellHookConfig[];
  /** A delegate_task child starts / ends (docs/delegation.md). */
  subagentStart?: ShellHookConfig[];
  subagentStop?: ShellHookConfig[];
}

export interface ToolsetsConfig {
  /** Toolsets to turn on (in addition to the defaults). */
  enabled?: string[];
  /** Toolsets to turn off. */
  disabled?: string[];
}

export interface ToolsConfig {
  /** Results longer than this many characters are truncated before reaching the model. */
  maxResultChars?: number;
  /** Default time limit per tool call, in seconds (0 disables). */
  timeoutSeconds?: number;
  /** How many tool calls of one batch may run at once. */
  maxConcurrency?: number;
  /** How long an availability check's answer is reused, in seconds (0: never cached). */
  availabilityTtlSeconds?: number;
}

export interface TerminalConfig {
  /** Which terminal backend runs commands. */
  backend: string;
  /** Default time limit per command, in seconds. */
  timeoutSeconds?: number;
  /** Command output longer than this many characters is truncated. */
  maxOutputChars?: number;
  /** Working directory for new terminal sessions, as written. */
  cwd?: string;
  /** Seconds an unused task environment is kept before it is closed (0: never). Built-in default 600. */
  idleTimeoutSeconds?: number;
  /** Replace secrets in command output before the model sees it. Default true. */
  redactOutput?: boolean;
  /**
   * Each backend's own options, as written (snake_case keys), checked by the
   * backend when it creates a task's environment (docs/backends/<name>.md).
   * `local` holds the OS sandbox of the local backend (docs/sandbox.md).
   */
  local?: Record<string, unknown>;
  ssh?: Record<string, unknown>;
  docker?: Record<string, unknown>;
  singularity?: Record<string, unknown>;
  modal?: Record<string, unknown>;
  daytona?: Record<string, unknown>;
  vercelSandbox?: Record<string, unknown>;
}

/** `approvals.allowlist[n]`: one approval kept for good (scope `always`). Fields as written in the file. */
export interface ApprovalAllowlistEntryConfig {
  /** Rule id (`recursive-delete`). */
  rule: string;
  /** The normalised command prefix the rule matched (`rm -f -r node_modules`), compared exactly. */
  prefix: string;
  /** Terminal backend the approval holds for; `local` when absent. */
  backend?: string;
  /** When it was added (ISO 8601), informational. */
  added?: string;
}

/** `approvals.deny[n]`: a user deny rule. At least one of `rule`, `prefix`, `category`. */
export interface ApprovalDenyEntryConfig {
  /** Rule id or glob over rule ids (`git-*`). */
  rule?: string;
  /** Glob (`*`, `?`) or word prefix over a match's normalised prefix (and over the command text). */
  prefix?: string;
  /** Rule category (`infrastructure_teardown`). */
  category?: string;
  /** Only on this backend. */
  backend?: string;
  /** Told to the model when the rule denies a command. */
  reason?: string;
}

/** `approvals.smart`: the auxiliary reviewer of smart mode. */
export interface ApprovalsSmartConfig {
  /** OpenAI-compatible base URL (`http://127.0.0.1:11434/v1`). */
  baseUrl?: string;
  model?: string;
  /** Name of the environment variable holding the API key. */
  apiKeyEnv?: string;
  timeoutSeconds?: number;
  /** Consecutive reviewer denials in one session after which smart review stops for that session. */
  breakerThreshold?: number;
}

/** `approvals`: the dangerous-command approval flow (see docs/approvals.md). */
export interface ApprovalsConfig {
  mode: "manual" | "smart" | "off";
  allowlist?: ApprovalAllowlistEntryConfig[];
  deny?: ApprovalDenyEntryConfig[];
  /** What a run without a person to ask does with a command that needs approval. */
  nonInteractive: "deny" | "allow";
  /** Terminal prompt time limit, seconds. */
  timeoutSeconds: number;
  /** How long a gateway (chat / web) approval stays pending, seconds. */
  gatewayTimeoutSeconds: number;
  isolatedBackendsNeedApproval: boolean;
  smart: ApprovalsSmartConfig;
}

/** The validated configuration. Sections are always present; keys not set in the file are absent unless they have a default. */
/** `processes`: the background process registry (docs/processes.md). */
export interface ProcessesConfig {
  results?: {
    /** Receipts of ended processes older than this many days are removed. Default 7. */
    maxAgeDays?: number;
    /** At most this many receipts are kept (the newest). Default 1,000. */
    maxCount?: number;
  };
}

/** `memory`: the agent's memory files under the profile home (docs/memory.md). */
export interface MemoryConfig {
  /** The 'memory' target (MEMORY.md): the tool accepts it and its snapshot goes into the prompt. Default true. */
  memoryEnabled: boolean;
  /** The 'user' target (USER.md). Default true. */
  userProfileEnabled: boolean;
  /** Characters MEMORY.md's entries may take (joined by the delimiter). Default 2200. */
  memoryCharLimit: number;
  /** Characters USER.md's entries may take. Default 1375. */
  userCharLimit: number;
  /** Every write needs the embedding application's approval; without an approver writes are refused. Default false. */
  writeApproval: boolean;
}

/** `tool_search`: deferring MCP and plugin tools behind the bridge tools (docs/tool-search.md); read with `resolveToolSearchConfig`. */
export interface ToolSearchSectionConfig {
  /** auto (default), on, off; a boolean means on/off. */
  enabled: "auto" | "on" | "off" | boolean;
  /** Percent of the context window, 0-100. Default 10. */
  thresholdPct: number;
  /** The model's context window in tokens; absent: unknown. */
  contextTokens?: number;
  /** 1-50, default 5 (capped at maxSearchLimit when read). */
  searchDefaultLimit: number;
  /** 1-50, default 20. */
  maxSearchLimit: number;
}

/** `delegation`: delegate_task's subagents (docs/delegation.md); read with `delegationSettings`. */
export interface DelegationConfig {
  /** A subagent's request budget. Default 50. */
  maxIterations: number;
  /** Tasks per call, 1-100; absent: DELEGATION_MAX_CONCURRENT_CHILDREN, else 3. */
  maxConcurrentChildren?: number;
  /** Default 1 (only the top-level agent delegates). */
  maxSpawnDepth: number;
  /** Default true. */
  orchestratorEnabled: boolean;
  /** Default false: a subagent's flagged command is denied. */
  subagentAutoApprove: boolean;
  /** Seconds, 30 or more; absent: no limit. */
  childTimeoutSeconds?: number;
  /** Default 24,000. */
  maxSummaryChars: number;
  model?: string;
  baseUrl?: string;
  apiKeyEnv?: string;
}

/** `compaction`: context compaction in the agent loop (docs/compaction.md); `mibyan chat` passes it as `RunAgentOptions.compaction`. */
export interface CompactionSectionConfig {
  /** Default true. */
  enabled: boolean;
  /** Share of the context window (more than 0, at most 1) the prompt may take. Default 0.5. */
  threshold: number;
  /** Messages kept verbatim at the start. Default 3. */
  keepFirst: number;
  /** Messages kept verbatim at the end. Default 20. */
  keepLast: number;
  /** The summary request's model (same endpoint); absent: the chat's. */
  model?: string;
  /** The model's context window in tokens; absent: tool_search.context_tokens, else 128,000. */
  contextTokens?: number;
}

/** `model`: the endpoint `mibyan chat` uses (docs/chat.md). Flags win over these; the API key is only ever read from the environment. */
export interface ModelConfig {
  /** OpenAI-compatible base URL (`https://api.openai.com/v1`). */
  baseUrl?: string;
  /** The model name the endpoint knows. */
  name?: string;
  /** The environment variable that holds the API key. */
  apiKeyEnv?: string;
}

export interface MibyanConfig {
  plugins: PluginsConfig;
  /** MCP servers by name (docs/mcp.md). */
  mcpServers: Record<string, McpServerConfig>;
  hooks: HooksConfig;
  toolsets: ToolsetsConfig;
  tools: ToolsConfig;
  terminal: TerminalConfig;
  approvals: ApprovalsConfig;
  processes: ProcessesConfig;
  memory: MemoryConfig;
  toolSearch: ToolSearchSectionConfig;
  compaction: CompactionSectionConfig;
  delegation: DelegationConfig;
  model: ModelConfig;
}

