/**
 * mibyan-tools: the public API. Everything a library user needs is exported
 * from here; deeper module paths are internal.
 */
export type {
  CallOptions,
  CallSurface,
  CheckFn,
  CommonToolOptions,
  FunctionSchema,
  JsonSchema,
  Logger,
  MibyanToolOptions,
  OpenAIToolDefinition,
  ParsedToolCall,
  PostHook,
  PreHook,
  RegisterInput,
  SchemaPatcher,
  SessionToolHandler,
  StandardSchemaLike,
  ToolCall,
  ToolContext,
  ToolDefinitionOptions,
  ToolEntry,
  ToolError,
  ToolErrorKind,
  ToolHandler,
  ToolParameter,
  ToolResult,
  ToolSource,
  ValidationIssue,
} from "./registry/types.js";
export { ToolRegistry, type DispatchOutcome, type ListToolsFilter, type ToolRegistryOptions } from "./registry/tool-registry.js";
export { registry } from "./registry/singleton.js";
export { ToolDefinitionError } from "./registry/errors.js";
export { SCHEMA_LIMITS } from "./schema/limits.js";
export { defineTool, type InferArguments } from "./registry/define-tool.js";
export { ToolUnavailableError, type Availability, type AvailabilityOptions, type UnavailableCode } from "./registry/availability.js";
export type { RegistryChange, RegistryChangeListener } from "./registry/changes.js";

export { ok, fail, isToolResult } from "./dispatch/result.js";
export type { HookKind } from "./dispatch/hooks.js";
export { AGENT_LOOP_TOOLS, type AgentLoopContext, type AgentLoopHandler } from "./dispatch/agent-loop.js";
export {
  InMemoryTodoStore,
  MAX_TODO_CONTENT_CHARS,
  MAX_TODO_ITEMS,
  TODO_INJECTION_HEADER,
  TODO_STATUSES,
  type TodoItem,
  type TodoStatus,
  type TodoStore,
  type TodoSummary,
} from "./agent/stores/todo-store.js";
export { hydrateTodosFromHistory, isTodoInjection, withTodoInjection, type HistoryMessage } from "./agent/stores/todo-history.js";
export { createTodoHandler, TODO_SCHEMA, TODO_TOOL, type TodoHandler } from "./agent/tools/todo.js";
export {
  ENTRY_DELIMITER,
  FileMemoryStore,
  MEMORY_TARGETS,
  MemoryFileError,
  memoryStoreOptionsFromConfig,
  scanForThreats,
  type FileMemoryStoreOptions,
  type MemoryResult,
  type MemoryResultBody,
  type MemorySnapshot,
  type MemoryStore,
  type MemoryTarget,
  type ThreatFinding,
} from "./agent/stores/memory/index.js";
export { createMemoryHandler, MEMORY_SCHEMA, MEMORY_TOOL, type MemoryHandlerOptions, type MemoryToolHandler, type MemoryWriteRequest } from "./agent/tools/memory.js";
export {
  COMPACTION_END_REASON,
  DEMOTED_SESSION_SOURCES,
  HIDDEN_SESSION_SOURCES,
  MESSAGE_ROLES,
  type ListSessionsOptions,
  type MessageInput,
  type MessageRole,
  type MessageWindow,
  type NewSession,
  type SearchHit,
  type SearchOptions,
  type SearchResult,
  type SessionRecord,
  type SessionStore,
  type SessionSummary,
  type StoredMessage,
  type StoredToolCall,
  type TokenUsage,
} from "./agent/stores/sessions/types.js";
export { SessionStoreError, type SessionStoreErrorKind } from "./agent/stores/sessions/errors.js";
export { sessionStorePath, type OpenDatabaseOptions } from "./agent/stores/sessions/location.js";
export { openSessionStore, SqliteSessionStore, type SqliteSessionStoreOptions } from "./agent/stores/sessions/sqlite-store.js";
export { sessionRecorder, type RecordedMessage, type RecordedToolCall, type RecorderUsage, type StoreSessionRecorder } from "./agent/stores/sessions/recorder.js";
export { createSessionSearchHandler, SESSION_SEARCH_SCHEMA, SESSION_SEARCH_TOOL } from "./agent/tools/session-search.js";
export {
  handleFunctionCall,
  handleFunctionCallDetailed,
  type FunctionCallOutcome,
  type HandleFunctionCallOptions,
} from "./dispatch/handle-function-call.js";
export { executeToolCalls, type ExecuteToolCallsOptions, type ToolCallOutcome } from "./dispatch/execute-tool-calls.js";
export { CANCEL_GRACE_MS } from "./dispatch/pipeline.js";
// The agent loop (docs/agent-loop.md); the loop itself loads on the first run, see agent/loop/public.ts.
export { runAgent, AgentConfigError, AgentEndpointError, type AgentEndpointErrorKind } from "./agent/loop/public.js";
// What `mibyan chat` hands the loop, for applications that want the same: the stores of a profile home, and the model settings.
export { addDelegation, openSessionWiring, type SessionWiring, type SessionWiringOptions } from "./agent/session-wiring.js";
export { ModelSettingsError, resolveModel, type ModelFlags, type ResolvedModel } from "./agent/model-endpoint.js";
export type {
  AgentAssistantMessage,
  AgentEvent,
  AgentLoopHandlers,
  AgentLoopToolHandler,
  AgentLoopToolName,
  AgentMessage,
  AgentSystemMessage,
  AgentToolCall,
  AgentToolCallRecord,
  AgentToolMessage,
  AgentToolStatus,
  AgentUsage,
  AgentUserMessage,
  CompactionOptions,
  MemorySnapshotSource,
  PromptOptions,
  RetryOptions,
  RunAgentOptions,
  RunAgentResult,
  RunAgentStatus,
  SessionContinuationAware,
  SessionRecorder,
} from "./agent/types.js";
// delegate_task: subagents with their own context, run by the agent loop (docs/delegation.md).
export {
  createDelegateHandler,
  delegateTaskSchema,
  delegateTaskTool,
  DELEGATE_TASK_TOOL,
  DELEGATE_BLOCKED_TOOLS,
  DELEGATE_BLOCKED_TOOLSETS,
  childEndpoint,
  delegationSettings,
  type ChildEndpoint,
  type DelegateExitReason,
  type DelegateHandlerOptions,
  type DelegateTaskOutput,
  type DelegateTaskResult,
  type DelegateTaskStatus,
  type DelegateToolTrace,
  type DelegationSettings,
  type SessionSurfaceGate,
  type SubagentStartEvent,
  type SubagentStopEvent,
} from "./agent/delegation/index.js";
// Tool search: MCP and plugin tools deferred behind tool_search / tool_describe / tool_call (docs/tool-search.md).
export {
  planToolDefinitions,
  executeToolCallsWithToolSearch,
  resolveToolSearchConfig,
  ToolSearchBridge,
  ToolSearchState,
  BRIDGE_TOOL_NAMES,
  type PlanToolDefinitionsOptions,
  type ToolDefinitionsPlan,
  type DeferredTool,
  type ToolSearchConfig,
  type ToolSearchMode,
} from "./agent/tool-search/index.js";

export {
  getToolDefinitions,
  selectTools,
  type GetToolDefinitionsOptions,
  type SelectedTools,
  type ToolSelection,
} from "./definitions/get-tool-definitions.js";
export { exportTools, EXPORT_FORMATS, type ExportFormat, type ExportableTool } from "./adapters/index.js";
export { toOpenAI, toResponses, toAnthropic, toGemini, toOpenAIStrict, toRaw, isExportFormat } from "./adapters/index.js";
export type {
  ExportFormatDefinitions,
  ToolDefinitionFor,
  ResponsesToolDefinition,
  AnthropicToolDefinition,
  GeminiFunctionDeclaration,
  OpenAIStrictToolDefinition,
  RawToolSchema,
} from "./adapters/index.js";

export {
  ToolsetCatalog,
  BUILTIN_TOOLSETS,
  LEGACY_TOOLSETS,
  UnknownToolsetError,
  closeMatches,
  describeUnknownToolset,
  findUnknownToolsets,
} from "./toolsets/index.js";
export type { ResolveResult, SelectOptions, ToolIndex, ToolsetDefinition, ToolsetListName, ToolsetNames, UnknownToolset } from "./toolsets/index.js";

export {
  discoverBuiltinTools,
  discoverTools,
  type DiscoveryOptions,
  type DiscoveryReport,
  type FailedModule,
} from "./discovery/discover.js";

export { loadConfig, getConfig, clearConfigCache, type LoadedConfig } from "./config/load-config.js";
export { mibyanHome, configPath } from "./config/home.js";
export { ConfigError, type ConfigErrorDetails, type ConfigErrorKind } from "./config/config-error.js";
export { validateConfig, type ConfigValidation, type MibyanConfig, type ValidateConfigOptions } from "./config/config-schema.js";
export { applyConfig } from "./config/apply-config.js";

export { createMemoryLogger, createStderrLogger, type MemoryLogger } from "./util/logger.js";
export type { EnvVars } from "./util/env-vars.js";

// Command safety: the parsed shell model, dangerous-command detection, and the approval flow.
export type { Detection, RuleCategory, RuleMatch } from "./approval/types.js";
export { clearDetectionCache, detect, detectAsync, type DetectOptions } from "./approval/detection/index.js";
export { RULES } from "./approval/rules/index.js";
export type { Rule } from "./approval/rules/types.js";
export { EXECUTE_CODE_RULE } from "./approval/rules/code-execution.js";
export { initShellParser, isShellParserReady, parseShell, parseShellAsync } from "./shell/index.js";
export type { Command, CompoundCommand, ParseOptions, ParseResult, Pipeline, Redirect, Script, SimpleCommand, Word } from "./shell/types.js";
export {
  ApprovalGate,
  ConfigAllowlist,
  FilePendingStore,
  GatewaySurface,
  MemoryAllowlist,
  MemoryPendingStore,
  NonInteractiveSurface,
  SubagentSurface,
  OpenAISmartReviewer,
  TerminalSurface,
  actionDisplay,
  listApprovals,
  parsePendingApproval,
  redactSecrets,
  revokeApproval,
  type ActionRule,
  type ApprovalAnswer,
  type ApprovalEntry,
  type ApprovalGateOptions,
  type ApprovalKey,
  type ApprovalMode,
  type ApprovalObserver,
  type ApprovalRequest,
  type ApprovalScope,
  type ApprovalSurface,
  type BackendInfo,
  type CallApprovalScope,
  type CheckOptions,
  type DecisionSource,
  type GateAction,
  type GateDecision,
  type GatewaySurfaceOptions,
  type PendingApproval,
  type PendingApprovalStore,
  type ResolveResult as PendingResolveResult,
  type SmartReviewer,
} from "./approval/flow/index.js";
export { getApprovalGate, setApprovalGate } from "./approval/default-gate.js";

// Where commands run: one Environment interface, a backend per module, per-task state.
export type { Environment, EnvironmentFactory, ExecOptions, ExecResult } from "./environments/types.js";
export {
  EnvironmentManager,
  EnvironmentUnavailableError,
  getEnvironmentManager,
  setEnvironmentManager,
  type EnvironmentManagerOptions,
} from "./environments/manager.js";
export { LocalEnvironment, createLocalFactory, localFactory, type LocalEnvironmentOptions } from "./environments/local.js";
// One stateless local command, without task state (the other backends: the "mibyan-tools/backends" subpath).
export { runLocal, type CommandRunner, type RunLocalOptions, type RunResult } from "./terminal/local-runner.js";
export { SANDBOX_MODES, parseSandboxSetting, type SandboxMode, type SandboxPolicy } from "./sandbox/policy.js";
export { sandboxStatus, type SandboxStatus } from "./sandbox/command-sandbox.js";
export { SandboxConfigError, SandboxUnavailableError } from "./sandbox/errors.js";
export { BACKENDS, BACKEND_NAMES, UnknownBackendError, isBackendName, type BackendName } from "./environments/backends.js";
export type { SandboxCommand, SandboxCommandEnd, SandboxTransport } from "./environments/sandbox-transport.js";
export { SandboxEnvironment, createSandboxFactory, type SandboxBackendSpec, type SandboxEnvironmentOptions } from "./environments/sandbox-environment.js";

// Background processes started by `terminal` (background: true) and managed by the `process` tool.
export {
  ProcessNotFoundError,
  ProcessRegistry,
  ProcessStateError,
  type ProcessInfo,
  type ProcessRegistryOptions,
  type ProcessStatus,
  type StartProcessOptions,
} from "./process/process-registry.js";
export { getProcessRegistry, setProcessRegistry } from "./process/default-registry.js";
export type { LogLines } from "./process/process-registry.js";
export type { ProcessNotification, WatchLimits } from "./process/process-watch.js";
export type { CheckpointEntry, ProcessEnding, ProcessReceipt, WriterIdentity } from "./process/types.js";
export type { ReceiptRetention } from "./process/receipts.js";
export { InvalidSessionIdError } from "./process/session-lineage.js";

// MCP servers' tools in the registry (docs/mcp.md). The client loads on first use: see mcp/client/public.ts.
export {
  discoverMcpTools,
  testMcpServer,
  UnknownMcpServerError,
  type DiscoverMcpOptions,
  type McpClock,
  type McpElicitationAnswer,
  type McpElicitationHandler,
  type McpElicitationRequest,
  type McpHandle,
  type McpServerStatus,
  type McpServerTestResult,
  type McpState,
  type McpTimings,
  type TestMcpServerOptions,
} from "./mcp/client/public.js";
// The registry as an MCP server (docs/integrations/mcp-server.md); the SDK loads on first use, see mcp/server/public.ts.
export { createMcpServer, type McpAgentLoopBinding, type McpHttpOptions, type McpHttpServer, type McpServedTool, type McpServerConnection, type McpServerOptions, type McpServerTransportLike, type McpToolAnnotations, type MibyanMcpServer } from "./mcp/server/public.js";

// Plugins: discovery, gating, loading with rollback, hooks, shell hooks (docs/plugins.md).
export {
  loadPlugins,
  PluginManager,
  PluginLoadError,
  PluginManifestError,
  PluginOwnershipError,
  PluginRegistrationError,
  PluginToolOverrideError,
  PLUGIN_APPROVAL_RULE,
  VALID_HOOKS,
  type ActionApprovalGate,
  type HookName,
  type LoadPluginsOptions,
  type PluginContext,
  type PluginKind,
  type PluginManifest,
  type PluginSource,
  type PluginState,
  type PluginStatus,
  type PostToolCallEvent,
  type PreToolCallDirective,
  type ReloadOptions,
  type SessionEvent,
  type SessionInfo,
  type ToolCallEvent,
  type ToolCallStatus,
  type TransformToolResultEvent,
} from "./plugins/index.js";
