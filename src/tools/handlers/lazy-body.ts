/**
 * A tool handler whose body is loaded on its first call. Listing tools
 * (`mibyan tools`, `getToolDefinitions`) imports every built-in tool module for
 * its schema, toolset, availability check and metadata; what a handler needs
 * to run (environments, process groups, the code runner) is loaded only when
 * the tool is first called.
 */

import type { ToolContext } from "../../registry/types.js";

export type ToolBody = (args: Record<string, unknown>, ctx: ToolContext) => Promise<string>;

/**
 * A handler that loads its body with `load` on the first call and reuses it.
 * A failed load is not remembered: the next call tries again.
 */
export function lazyToolBody(load: () => Promise<ToolBody>): ToolBody {
  let body: Promise<ToolBody> | undefined;
  return async (args, ctx) => {
    body ??= load().catch((err: unknown) => {
      body = undefined;
      throw err;
    });
    return (await body)(args, ctx);
  };
}
