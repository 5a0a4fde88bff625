/**
 * Every provider wants the top level of a tool's parameters to be an object
 * schema; OpenAI documents `{type:"object", properties:{}}` as the shape of
 * "no parameters". Registrations may omit parameters entirely or leave out
 * `type` next to `properties`, so each adapter starts from this.
 */
import type { JsonSchema } from "../registry/types.js";
import { cloneJson, isPlainObject } from "./clone.js";

const INDIRECTIONS = ["$ref", "allOf", "anyOf", "oneOf"] as const;

export function objectParameters(parameters: JsonSchema | undefined | null): JsonSchema {
  const copy: JsonSchema = isPlainObject(parameters) ? cloneJson(parameters) : {};
  copy.type ??= "object";
  // When the properties live behind a $ref or combinator, an empty `properties`
  // sibling would override them once the reference is inlined.
  const indirect = INDIRECTIONS.some((key) => copy[key] !== undefined);
  if (copy.type === "object" && !indirect && !isPlainObject(copy.properties)) copy.properties = {};
  return copy;
}

/** True when the parameters declare no properties at all (nothing for the model to fill in). */
export function hasNoProperties(parameters: JsonSchema): boolean {
  const props = parameters.properties;
  return !isPlainObject(props) || Object.keys(props).length === 0;
}
