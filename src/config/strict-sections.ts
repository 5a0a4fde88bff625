/**
 * Sections of config.yaml where an unknown key is an error, not a warning.
 *
 * Unknown keys are warnings elsewhere, so an older runtime still starts with a newer file. In
 * these sections a misspelt key is silently a weaker setting: `terminal: {bakend: docker}` runs
 * every command on `local` instead of in a container, `approvals: {mod: manual}` or a misspelt
 * `non_interactive` leaves the gate at a default the user meant to change. There, refusing to
 * start (exit 2, with the close match) is the safe failure; a newer release adding a key to one of
 * these sections is a reason to upgrade, not to run with part of the setting ignored.
 * `mcp_servers` and `hooks` are strict for the same reason: `tools: {exlude: [delete_repo]}` would offer
 * the tool the user meant to hide, and `hooks: {pre_tool_cal: ...}` would never run a guard.
 * `memory` is strict because its switches are privacy settings: `memory: {user_profle_enabled: false}` would
 * go on writing what the agent learns about the user into USER.md and every prompt.
 * `model` is strict because a misspelt `base_url` would send the prompt, and the key, to the endpoint of
 * `OPENAI_BASE_URL` instead of the one the user named.
 * `delegation` is strict for the same reason as `model` (its endpoint settings), and because a misspelt
 * `subagent_auto_approve` or `max_spawn_depth` would silently run subagents under other rules than written.
 * The backends' own option mappings (`terminal.docker`, ...) are checked by each backend.
 */
export const STRICT_SECTIONS: readonly string[] = Object.freeze(["terminal", "approvals", "mcp_servers", "hooks", "memory", "model", "delegation"]);

/** Whether an unknown key at `path` (as written in the file) is an error. Top-level keys never are. */
export function isStrictKeyPath(path: readonly string[]): boolean {
  return path.length >= 2 && STRICT_SECTIONS.includes(path[0]!);
}
