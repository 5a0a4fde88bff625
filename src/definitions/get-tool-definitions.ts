import type { FunctionSchema, OpenAIToolDefinition, ToolEntry } from "../registry/types.js";
import type { ToolRegistry } from "../registry/tool-registry.js";
import { registry as defaultRegistry } from "../registry/singleton.js";
import { exportTools, type ExportFormat, type ToolDefinitionFor } from "../adapters/index.js";
import { checkSchemaLimits } from "../schema/limits.js";
import { describeThrown } from "../util/text.js";
import { findUnknownToolsets, UnknownToolsetError } from "../toolsets/unknown-toolset.js";

export interface ToolSelection {
  /** Only tools of these toolsets (composites, presets and legacy names expand). */
  enabledToolsets?: readonly string[] | undefined;
  /** Tools of these toolsets are removed (from the enabled ones, or from all tools). */
  disabledToolsets?: readonly string[] | undefined;
}

export interface GetToolDefinitionsOptions extends ToolSelection {
  registry?: ToolRegistry | undefined;
  /** Output format (default `openai`). */
  format?: ExportFormat | undefined;
  /** Do not log selection warnings (they are still returned by `selectTools`). A tool left out is always logged. */
  quiet?: boolean | undefined;
  /**
   * What a name in `enabledToolsets`/`disabledToolsets` that matches no toolset does.
   * `"error"` (default): throw `UnknownToolsetError` (with close matches) before selecting anything, so a typo
   * cannot silently empty the list or keep a toolset meant to be removed. `"warn"`: the earlier behaviour,
   * the name is skipped with a warning; for selections naming dynamic toolsets that may be absent (an MCP
   * server that did not connect).
   */
  unknownToolsets?: "error" | "warn" | undefined;
}

export interface SelectedTools {
  /** The available tools that survived selection, sorted by name, with schemas patched. */
  tools: { entry: ToolEntry; schema: FunctionSchema }[];
  warnings: string[];
  /** The warnings about tools left out (a schema patch that failed); also in `warnings`. */
  leftOut: string[];
}

/**
 * The model's tool list: resolve the toolsets, keep the registered tools whose
 * checks pass, then let tools that mention other tools rebuild their schema
 * from the survivors (no schema may name a tool the model cannot call).
 * Throws `UnknownToolsetError` for a selection naming an unknown toolset (see `unknownToolsets`).
 */
export function selectTools(options: GetToolDefinitionsOptions = {}): SelectedTools {
  const target = options.registry ?? defaultRegistry;
  // Copied: a one-shot iterable would be used up by the check below.
  const enabled = options.enabledToolsets == null ? options.enabledToolsets : [...options.enabledToolsets];
  const disabled = options.disabledToolsets == null ? options.disabledToolsets : [...options.disabledToolsets];
  if (options.unknownToolsets !== "warn") {
    const unknown = findUnknownToolsets(target.toolsets, { enabled, disabled });
    if (unknown.length > 0) throw new UnknownToolsetError(unknown);
  }
  const selection = target.toolsets.select({ enabled, disabled });
  const entries = target.availableEntries(selection.tools);
  const warnings = [...selection.warnings];
  const leftOut: string[] = [];
  let survivors: Set<string> | undefined;
  const tools: SelectedTools["tools"] = [];
  for (const entry of entries) {
    if (entry.patchSchema === undefined) {
      tools.push({ entry, schema: entry.schema });
      continue;
    }
    try {
      survivors ??= new Set(entries.map((e) => e.name));
      const schema = entry.patchSchema(entry.schema, survivors);
      // A patched schema never went through registration's checks: a cycle or a 3,000-level nest would break every exporter.
      checkSchemaLimits(entry.name, schema?.parameters, { patterns: false });
      tools.push({ entry, schema });
    } catch (thrown) {
      // Its static schema might name tools the model cannot call, so the tool is left out.
      const warning = `schema patch of ${entry.name} failed (${describeThrown(thrown)}); the tool is left out`;
      warnings.push(warning);
      leftOut.push(warning);
    }
  }
  return { tools, warnings, leftOut };
}

/**
 * Typed by `format`: no format (or `"openai"`) gives `OpenAIToolDefinition[]`, `"anthropic"` gives
 * `AnthropicToolDefinition[]`, and so on (`ExportFormatDefinitions`); a format known only at run time
 * gives the union.
 */
export function getToolDefinitions(options?: GetToolDefinitionsOptions & { format?: "openai" | undefined }): OpenAIToolDefinition[];
export function getToolDefinitions<F extends ExportFormat>(options: GetToolDefinitionsOptions & { format: F }): ToolDefinitionFor<F>[];
export function getToolDefinitions(options: GetToolDefinitionsOptions): ToolDefinitionFor<ExportFormat>[];
export function getToolDefinitions(options: GetToolDefinitionsOptions = {}): unknown[] {
  const target = options.registry ?? defaultRegistry;
  const { tools, warnings, leftOut } = selectTools(options);
  for (const warning of options.quiet ? leftOut : warnings) target.logger.warn(warning);
  const format = options.format ?? "openai";
  exportTools([], format); // an unknown format is the caller's error, thrown, not a tool's
  const definitions: unknown[] = [];
  for (const { entry, schema } of tools) {
    // A registered schema passed registration's checks; OpenAI takes it as it is.
    if (format === "openai" && schema === entry.schema) {
      definitions.push(entry.definition);
      continue;
    }
    // One tool whose schema an exporter cannot convert is left out, with the reason logged; the rest are listed.
    try {
      definitions.push(exportTools([{ schema, category: entry.category, toolset: entry.toolset }], format)[0]);
    } catch (thrown) {
      target.logger.warn(`${format} export of ${entry.name} failed (${describeThrown(thrown)}); the tool is left out`);
    }
  }
  return definitions;
}
