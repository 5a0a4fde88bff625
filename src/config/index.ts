/** The profile home and `config.yaml`. */

export { CONFIG_FILE_NAME, configPath, displayPath, expandTilde, mibyanHome, userHomeDir } from "./home.js";
export { ConfigError, formatLocation, type ConfigErrorDetails, type ConfigErrorKind } from "./config-error.js";
export {
  CONFIG_RULES,
  ConfigTypes,
  emptyConfig,
  formatKeyPath,
  snakeToCamel,
  validateConfig,
  type ConfigLocator,
  type ConfigPathSegment,
  type ConfigRule,
  type ConfigTypeProblem,
  type ConfigValidation,
  type ConfigValueType,
  type ConfigWarning,
  type HooksConfig,
  type McpServerConfig,
  type MemoryConfig,
  type McpToolFilterConfig,
  type MibyanConfig,
  type PluginEntryConfig,
  type ShellHookConfig,
  type PluginsConfig,
  type SourceLocation,
  type TerminalConfig,
  type ToolsConfig,
  type ToolsetsConfig,
  type ToolSearchSectionConfig,
  type ValidateConfigOptions,
} from "./config-schema.js";
export {
  clearConfigCache,
  configValueError,
  getConfig,
  loadConfig,
  locateConfigKey,
  parseConfig,
  type LoadConfigOptions,
  type LoadedConfig,
  type ParsedConfig,
} from "./load-config.js";
