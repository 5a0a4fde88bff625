/**
 * mibyan-tools/tools: the built-in tools' schemas and handler factories, for a handler with
 * other options than the registered one (another environment provider, another approval gate,
 * a time limit per command) registered under a registry of your own.
 *
 * A subpath of its own because importing a tool module registers that tool with the shared
 * `registry` (the same registration `discoverBuiltinTools()` makes): the main entry must not
 * do that as a side effect. See docs/packaging.md.
 */

export type { FileToolHandlerOptions } from "./files/tool-runtime.js";
export type { EnvironmentProvider } from "./environments/types.js";
export { READ_FILE_SCHEMA, createReadFileHandler, type ReadFileHandlerOptions } from "./tools/read-file.js";
export { WRITE_FILE_SCHEMA, createWriteFileHandler, type WriteFileHandlerOptions } from "./tools/write-file.js";
export { PATCH_SCHEMA, createPatchHandler, type PatchHandlerOptions } from "./tools/patch.js";
export { SEARCH_FILES_SCHEMA, createSearchFilesHandler, type SearchFilesHandlerOptions } from "./tools/search-files.js";
export {
  TERMINAL_SCHEMA,
  createTerminalHandler,
  type CommandGate,
  type TerminalHandlerOptions,
  type TerminalToolResult,
} from "./tools/terminal.js";
export {
  EXECUTE_CODE_SCHEMA,
  createExecuteCodeHandler,
  type ActionGate,
  type ExecuteCodeHandlerOptions,
  type ExecuteCodeToolResult,
} from "./tools/execute-code.js";
export { PROCESS_ACTIONS, PROCESS_SCHEMA, createProcessHandler, type ProcessAction, type ProcessHandlerOptions } from "./tools/process.js";
