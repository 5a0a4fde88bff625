export type { ResolveResult, SelectOptions, ToolIndex, ToolsetDefinition, ToolsetOrigin } from "./types.js";
export { BUILTIN_TOOLSETS } from "./builtin-toolsets.js";
export { LEGACY_TOOLSETS } from "./legacy.js";
export { closeMatches } from "./suggest.js";
export { ToolsetCatalog } from "./catalog.js";
export {
  UnknownToolsetError,
  describeUnknownToolset,
  findUnknownToolsets,
  type ToolsetListName,
  type ToolsetNames,
  type UnknownToolset,
} from "./unknown-toolset.js";
export { unregisteredTools, describeUnregistered, type ToolsetRegistration } from "./unregistered-tools.js";
