import { ToolRegistry } from "./tool-registry.js";
import { getConfig } from "../config/load-config.js";
import { describeThrown } from "../util/text.js";

/**
 * The process-wide registry that built-in tool modules register into at
 * import. Plugin overrides of built-ins consult the operator's config.yaml
 * (`plugins.entries.<id>.allow_tool_override`) at the moment one is attempted.
 */
export const registry: ToolRegistry = new ToolRegistry({
  allowPluginOverride: (pluginId) => {
    try {
      return getConfig().config.plugins.entries[pluginId]?.allowToolOverride === true;
    } catch (thrown) {
      registry.logger.error(`cannot read config.yaml to decide plugin "${pluginId}"'s override: ${describeThrown(thrown)}`);
      return false;
    }
  },
});
