/**
 * A tool's `outputSchema`, checked as a warning, never as a failure.
 *
 * The SDK's `Client.callTool` throws when a tool that declares an `outputSchema` returns no
 * `structuredContent` or content that does not match, and `listTools` compiles every output schema
 * with Ajv (a schema Ajv rejects fails the whole listing). Both discard a result the model could use
 * (hermes #101330: the content was lost and the failure tripped the circuit breaker). So:
 *
 * - the client gets `permissiveSchemaValidator`, which compiles nothing and accepts everything, and
 *   calls go through `client.request("tools/call")` rather than `callTool` (call.ts), so the SDK never
 *   refuses a result;
 * - `checkStructuredContent` compiles the schema with the registry's own validator (linear-time
 *   patterns, size limits: the schema comes from the server) and returns a warning to log.
 */
import type { jsonSchemaValidator, JsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";

import type { JsonSchema } from "../../registry/types.js";
import { checkSchemaLimits } from "../../schema/limits.js";
import { compileJsonSchemaValidator, describeIssues, type ArgumentValidator } from "../../schema/validator.js";

export const permissiveSchemaValidator: jsonSchemaValidator = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input: unknown) => ({ valid: true, data: input as T, errorMessage: undefined });
  },
};

const compiled = new WeakMap<object, ArgumentValidator | string>();

function validatorFor(schema: JsonSchema): ArgumentValidator | string {
  let found = compiled.get(schema);
  if (found === undefined) {
    try {
      checkSchemaLimits("outputSchema", schema);
      found = compileJsonSchemaValidator(schema);
    } catch (error) {
      found = `its outputSchema cannot be used (${error instanceof Error ? error.message : String(error)})`;
    }
    compiled.set(schema, found);
  }
  return found;
}

/**
 * Why a result does not fit the tool's `outputSchema`, or `undefined` when it does (or the tool
 * declares none, or the result is an error, which the spec exempts).
 */
export function checkStructuredContent(outputSchema: JsonSchema | undefined, result: { structuredContent?: unknown; isError?: unknown }): string | undefined {
  if (outputSchema === undefined || result.isError === true) return undefined;
  if (result.structuredContent === undefined) return "it declares an outputSchema but returned no structuredContent";
  const validator = validatorFor(outputSchema);
  if (typeof validator === "string") return validator;
  const content = result.structuredContent;
  if (content === null || typeof content !== "object" || Array.isArray(content)) return "its structuredContent is not an object";
  const outcome = validator(content as Record<string, unknown>);
  if (Array.isArray(outcome) && outcome.length > 0) return `its structuredContent does not match its outputSchema: ${describeIssues(outcome)}`;
  return undefined;
}
