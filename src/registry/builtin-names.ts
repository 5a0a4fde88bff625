/**
 * The names of the tools `discoverBuiltinTools()` registers (the modules in
 * src/tools/). Kept as a static list so that an unknown-tool answer can say
 * "call discoverBuiltinTools()" without importing or scanning the tools;
 * test/unknown-tool-hints.test.ts checks it against a real discovery.
 */
export const BUILTIN_TOOL_NAMES: ReadonlySet<string> = new Set([
  "execute_code",
  "patch",
  "process",
  "read_file",
  "search_files",
  "terminal",
  "write_file",
]);

/**
 * The tool search bridge's names (docs/tool-search.md): the runtime answers them itself while tool search
 * is active, so a plugin or MCP server may not register a tool under one (it could never be reached, and a
 * model reading the list would take it for the bridge).
 */
export const BRIDGE_TOOL_NAMES: ReadonlySet<string> = new Set(["tool_search", "tool_describe", "tool_call"]);
