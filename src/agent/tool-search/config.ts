/**
 * The `tool_search:` settings, resolved. Two ways in: config.yaml's section, which the config validator
 * already checked (wrong types are located errors there), and a library caller's raw value
 * (`toolSearch: true | {...}` of an adapter), which follows the Python original's lenient parsing:
 * `true` → auto, `false` → off, `enabled: "yes"` → on, numbers clamped, bad values → defaults; it never throws.
 */

export type ToolSearchMode = "auto" | "on" | "off";

export interface ToolSearchConfig {
  /** auto: defer when the deferrable tools' schemas take at least `thresholdPct` of the context; on: whenever one is deferrable; off: never. */
  enabled: ToolSearchMode;
  /** Share of the context window (0..100) the deferrable schemas may take before they are deferred (auto). */
  thresholdPct: number;
  /** The model's context window in tokens; unknown → a fixed cutoff of `UNKNOWN_CONTEXT_CUTOFF_TOKENS`. */
  contextTokens?: number | undefined;
  /** Matches `tool_search` returns when the model gives no `limit` (1..maxSearchLimit). */
  searchDefaultLimit: number;
  /** The most matches one `tool_search` returns (1..50). */
  maxSearchLimit: number;
}

export const TOOL_SEARCH_DEFAULTS: Readonly<ToolSearchConfig> = Object.freeze({
  enabled: "auto",
  thresholdPct: 10,
  contextTokens: undefined,
  searchDefaultLimit: 5,
  maxSearchLimit: 20,
});

/** The cutoff (tokens) auto mode uses when the context window is unknown (the Python original's figure). */
export const UNKNOWN_CONTEXT_CUTOFF_TOKENS = 20_000;
/** The hard ceiling of `max_search_limit`. */
export const MAX_SEARCH_LIMIT_CEILING = 50;

const TRUE_WORDS = new Set(["true", "1", "yes", "on"]);
const FALSE_WORDS = new Set(["false", "0", "no", "off"]);

/** `enabled` as written (a string or a boolean) → a mode; unknown → auto. */
export function parseToolSearchMode(value: unknown): ToolSearchMode {
  if (value === true) return "on";
  if (value === false) return "off";
  if (typeof value !== "string") return "auto";
  const word = value.trim().toLowerCase();
  if (word === "auto") return "auto";
  if (TRUE_WORDS.has(word)) return "on";
  if (FALSE_WORDS.has(word)) return "off";
  return "auto";
}

function finiteNumber(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) return Number(value);
  return undefined;
}

const clamp = (value: number, min: number, max: number): number => Math.min(max, Math.max(min, value));

/**
 * A raw setting (config.yaml's typed section, a library caller's `true`/`false`/object) → the settings.
 * Never throws: what cannot be read falls back to the default.
 */
export function resolveToolSearchConfig(raw: unknown): ToolSearchConfig {
  if (raw === true || raw === undefined || raw === null) return { ...TOOL_SEARCH_DEFAULTS };
  if (raw === false) return { ...TOOL_SEARCH_DEFAULTS, enabled: "off" };
  if (typeof raw !== "object" || Array.isArray(raw)) return { ...TOOL_SEARCH_DEFAULTS };
  const input = raw as Record<string, unknown>;
  const pick = (camel: string, snake: string): unknown => (input[camel] !== undefined ? input[camel] : input[snake]);
  const enabled = pick("enabled", "enabled") === undefined ? "auto" : parseToolSearchMode(pick("enabled", "enabled"));
  const pct = finiteNumber(pick("thresholdPct", "threshold_pct"));
  const thresholdPct = pct === undefined ? TOOL_SEARCH_DEFAULTS.thresholdPct : clamp(pct, 0, 100);
  const context = finiteNumber(pick("contextTokens", "context_tokens"));
  const contextTokens = context !== undefined && context > 0 ? Math.floor(context) : undefined;
  const max = finiteNumber(pick("maxSearchLimit", "max_search_limit"));
  const maxSearchLimit = max === undefined ? TOOL_SEARCH_DEFAULTS.maxSearchLimit : clamp(Math.floor(max), 1, MAX_SEARCH_LIMIT_CEILING);
  const def = finiteNumber(pick("searchDefaultLimit", "search_default_limit"));
  const searchDefaultLimit = clamp(def === undefined ? TOOL_SEARCH_DEFAULTS.searchDefaultLimit : Math.floor(def), 1, maxSearchLimit);
  return { enabled, thresholdPct, contextTokens, searchDefaultLimit, maxSearchLimit };
}
