import type {
  FunctionSchema,
  JsonSchema,
  MibyanToolOptions,
  RegisterInput,
  StandardSchemaLike,
  ToolContext,
  ToolDefinitionOptions,
  ToolEntry,
  ToolParameter,
  ToolSource,
} from "./types.js";
import { ToolDefinitionError } from "./errors.js";
import { parametersToJsonSchema } from "../schema/parameters.js";
import { isStandardSchema, standardSchemaToJsonSchema } from "../schema/standard-schema.js";
import { checkSchemaLimits } from "../schema/limits.js";

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const EMPTY_PARAMETERS: JsonSchema = Object.freeze({ type: "object", properties: {} });

/**
 * Turns either document's registration shape into one frozen `ToolEntry`.
 * The first document's shape has `schema` + `handler(args, ctx)`; the second
 * document's `ToolDefinition` has `description` + `parameters` + `handler(session, args)`.
 */
export function normalizeRegistration(input: RegisterInput): ToolEntry {
  if (input === null || typeof input !== "object") {
    throw new ToolDefinitionError("", "register() takes an object");
  }
  const name = input.name;
  if (typeof name !== "string" || !TOOL_NAME.test(name)) {
    throw new ToolDefinitionError(
      typeof name === "string" ? name : "",
      "name must be 1-64 characters of letters, digits, _ or - (what every provider accepts)",
    );
  }
  if (typeof input.handler !== "function") throw new ToolDefinitionError(name, "handler must be a function");
  const hasSchema = "schema" in input && input.schema !== undefined;
  const hasParameters = "parameters" in input && input.parameters !== undefined;
  if (hasSchema && hasParameters) {
    throw new ToolDefinitionError(name, "give either `schema` (Mibyan shape) or `parameters` (ToolDefinition shape), not both");
  }
  return hasSchema ? fromMibyanShape(input as MibyanToolOptions) : fromDefinitionShape(input as ToolDefinitionOptions);
}

function fromMibyanShape(input: MibyanToolOptions): ToolEntry {
  const { name, schema } = input;
  if (schema === null || typeof schema !== "object") throw new ToolDefinitionError(name, "schema must be an object");
  if (schema.name !== undefined && schema.name !== name) {
    throw new ToolDefinitionError(name, `schema.name "${schema.name}" differs from the tool name`);
  }
  if (typeof schema.description !== "string" || schema.description.trim() === "") {
    throw new ToolDefinitionError(name, "schema.description is the model-facing description and must be a non-empty string");
  }
  const { parameters, standardSchema } = checkedParameters(name, schema.parameters);
  const handler = input.handler;
  return buildEntry(input, {
    description: input.description ?? schema.description,
    schema: { name, description: schema.description, parameters },
    standardSchema,
    invokeHandler: (args, ctx) => handler(args, ctx),
  });
}

function fromDefinitionShape(input: ToolDefinitionOptions): ToolEntry {
  const { name } = input;
  if (typeof input.description !== "string" || input.description.trim() === "") {
    throw new ToolDefinitionError(name, "description must be a non-empty string (the model reads it)");
  }
  const { parameters, standardSchema } = checkedParameters(name, input.parameters);
  const handler = input.handler;
  return buildEntry(input, {
    description: input.description,
    schema: { name, description: input.description, parameters },
    standardSchema,
    invokeHandler: (args, ctx: ToolContext) => handler(ctx.session, args, ctx),
  });
}

/** The parameters schema, refused when it is cyclic or too large for validation and export to stay bounded (schemas are untrusted). */
function checkedParameters(
  name: string,
  parameters: readonly ToolParameter[] | JsonSchema | StandardSchemaLike | undefined,
): { parameters: JsonSchema; standardSchema?: StandardSchemaLike } {
  const resolved = resolveParameters(name, parameters);
  checkSchemaLimits(name, resolved.parameters, { patterns: resolved.standardSchema === undefined });
  return resolved;
}

function resolveParameters(
  name: string,
  parameters: readonly ToolParameter[] | JsonSchema | StandardSchemaLike | undefined,
): { parameters: JsonSchema; standardSchema?: StandardSchemaLike } {
  if (parameters === undefined) return { parameters: EMPTY_PARAMETERS };
  if (Array.isArray(parameters)) return { parameters: parametersToJsonSchema(name, parameters as readonly ToolParameter[]) };
  if (isStandardSchema(parameters)) {
    return { parameters: standardSchemaToJsonSchema(name, parameters), standardSchema: parameters };
  }
  if (parameters === null || typeof parameters !== "object") {
    throw new ToolDefinitionError(name, "parameters must be a JSON Schema object, a list of parameters, or a Standard Schema (zod, ...)");
  }
  const schema = parameters as JsonSchema;
  if (schema.type !== undefined && schema.type !== "object") {
    throw new ToolDefinitionError(name, `parameters must describe an object (got type ${JSON.stringify(schema.type)})`);
  }
  if (schema.properties !== undefined && (schema.properties === null || typeof schema.properties !== "object")) {
    throw new ToolDefinitionError(name, "parameters.properties must be an object");
  }
  if (schema.required !== undefined && !Array.isArray(schema.required)) {
    throw new ToolDefinitionError(name, "parameters.required must be an array of property names");
  }
  if (schema.type !== undefined) return { parameters: schema };
  // `type` first (the order the model sees), and set after the spread: an explicit `type: undefined` must not erase it.
  const withType: JsonSchema = { type: "object", ...schema };
  withType.type = "object";
  return { parameters: withType };
}

function buildEntry(
  input: RegisterInput,
  parts: {
    description: string;
    schema: FunctionSchema;
    standardSchema: StandardSchemaLike | undefined;
    invokeHandler: ToolEntry["invokeHandler"];
  },
): ToolEntry {
  const { name } = input;
  if (input.checkFn !== undefined && typeof input.checkFn !== "function") {
    throw new ToolDefinitionError(name, "checkFn must be a function");
  }
  if (input.requiresEnv !== undefined && !(Array.isArray(input.requiresEnv) && input.requiresEnv.every((v) => typeof v === "string"))) {
    throw new ToolDefinitionError(name, "requiresEnv must be a list of environment variable names");
  }
  for (const key of ["maxResultChars", "timeoutMs"] as const) {
    const value = input[key];
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) {
      throw new ToolDefinitionError(name, `${key} must be a non-negative number`);
    }
  }
  const outputSchema = checkedOutputSchema(name, input.outputSchema);
  const toolset = input.toolset ?? input.category ?? name;
  const schema = Object.freeze({ ...parts.schema });
  const source: ToolSource = input.source ?? { kind: "user" };
  const entry: ToolEntry = {
    name,
    toolset,
    category: input.category ?? toolset,
    description: parts.description,
    schema,
    definition: Object.freeze({ type: "function" as const, function: schema }),
    checkFn: input.checkFn,
    requiresEnv: Object.freeze([...(input.requiresEnv ?? [])]),
    emoji: input.emoji ?? "🔧",
    maxResultChars: input.maxResultChars,
    timeoutMs: input.timeoutMs,
    parallelSafe: input.parallelSafe ?? false,
    patchSchema: input.patchSchema,
    source,
    redactOutput: input.redactOutput ?? (source.kind === "plugin" || source.kind === "mcp"),
    invokeHandler: parts.invokeHandler,
    standardSchema: parts.standardSchema,
  };
  if (outputSchema !== undefined) (entry as { outputSchema?: JsonSchema }).outputSchema = outputSchema;
  return Object.freeze(entry);
}

/** An output schema is an object schema (MCP's rule for `outputSchema`), within the same limits as parameters. */
function checkedOutputSchema(name: string, schema: unknown): JsonSchema | undefined {
  if (schema === undefined) return undefined;
  if (schema === null || typeof schema !== "object" || Array.isArray(schema) || (schema as { type?: unknown }).type !== "object") {
    throw new ToolDefinitionError(name, 'outputSchema must be a JSON Schema object with type "object"');
  }
  try {
    checkSchemaLimits(name, schema);
  } catch (err) {
    // The limits name what they check "the parameters"; here it is the output schema.
    if (err instanceof ToolDefinitionError) {
      const detail = err.message.slice(err.message.indexOf(": ") + 2).replace(/\bthe parameters\b|\bparameters\b/, "outputSchema");
      throw new ToolDefinitionError(name, detail);
    }
    throw err;
  }
  return schema as JsonSchema;
}
