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
