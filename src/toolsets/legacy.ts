/**
 * Legacy toolset names (the `_tools` suffix era), mapped to the modern tool
 * names for backward compatibility (the Python original's `_LEGACY_TOOLSET_MAP`).
 * Each maps to the tools of the modern toolset it became.
 */
export const LEGACY_TOOLSETS: Readonly<Record<string, readonly string[]>> = {
  web_tools: ["web_search", "web_extract"],
  terminal_tools: ["terminal", "process"],
  file_tools: ["read_file", "write_file", "patch", "search_files"],
  browser_tools: [
    "browser_navigate",
    "browser_snapshot",
    "browser_click",
    "browser_type",
    "browser_scroll",
    "browser_back",
    "browser_press",
    "browser_close",
    "browser_get_images",
    "browser_vision",
  ],
  vision_tools: ["vision_analyze"],
  image_tools: ["image_generate"],
  moa_tools: ["mixture_of_agents"],
  skills_tools: ["skills_list", "skill_view", "skill_manage"],
  cronjob_tools: ["cronjob"],
  tts_tools: ["text_to_speech"],
  memory_tools: ["memory"],
  todo_tools: ["todo"],
  delegation_tools: ["delegate_task"],
  code_execution_tools: ["execute_code"],
  session_search_tools: ["session_search"],
  clarify_tools: ["clarify"],
};
