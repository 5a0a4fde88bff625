import type { StandardSchemaLike, ToolDefinitionOptions } from "./types.js";

/** The parsed type of a Standard Schema (zod's `z.infer`), or a plain record for anything else. */
export type InferArguments<P> = P extends { readonly "~standard": { readonly types?: infer T } }
  ? NonNullable<T> extends { readonly output: infer O }
    ? O
    : Record<string, unknown>
  : Record<string, unknown>;

/**
 * Declares a tool in the ToolRegistry shape with its handler's arguments typed
 * from its parameters: `defineTool({ parameters: z.object({ city: z.string() }),
 * handler: (session, args) => args.city })` types `args.city` as a string.
 * The handler receives what the schema parsed (zod defaults and transforms applied).
 */
export function defineTool<P extends StandardSchemaLike>(
  definition: Omit<ToolDefinitionOptions<InferArguments<P>>, "parameters"> & { parameters: P },
): ToolDefinitionOptions;
export function defineTool<A extends Record<string, unknown>>(definition: ToolDefinitionOptions<A>): ToolDefinitionOptions;
export function defineTool(definition: ToolDefinitionOptions<never>): ToolDefinitionOptions {
  return definition as unknown as ToolDefinitionOptions;
}
