/**
 * Legacy toolset names (the `_tools` suffix era), for backward compatibility
 * (the Python original's `_LEGACY_TOOLSET_MAP`). Each names the modern toolset
 * it became; the catalog resolves it to that toolset's tools, so the tool
 * lists live in one place (builtin-toolsets.ts).
 */
export const LEGACY_TOOLSETS: Readonly<Record<string, string>> = {
  web_tools: "web",
  terminal_tools: "terminal",
  file_tools: "file",
  browser_tools: "browser",
  vision_tools: "vision",
  image_tools: "image_gen",
  moa_tools: "moa",
  skills_tools: "skills",
  cronjob_tools: "cronjob",
  tts_tools: "tts",
  memory_tools: "memory",
  todo_tools: "todo",
  delegation_tools: "delegation",
  code_execution_tools: "code_execution",
  session_search_tools: "session_search",
  clarify_tools: "clarify",
};
