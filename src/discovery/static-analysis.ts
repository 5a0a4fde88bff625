import type { Node, Program, Options } from "acorn";

/** What static analysis learned about one module without running it. */
export interface ModuleAnalysis {
  /** The module has at least one top-level `registry.register(...)` call. */
  registers: boolean;
  /** Name and toolset of each registration, when written as string literals (for reporting a module that failed to import). */
  tools: { name?: string; toolset?: string }[];
}

type Parser = { parse(input: string, options: Options): Program };
let jsParser: Parser | undefined;
let tsParser: Parser | undefined;

// acorn (and its TypeScript plugin) are loaded only when a module is not in the scan cache.
async function parserFor(file: string): Promise<Parser> {
  const acorn = await import("acorn");
  if (!/\.(c|m)?tsx?$/.test(file)) return (jsParser ??= acorn.Parser);
  if (tsParser === undefined) {
    const { tsPlugin } = await import("@sveltejs/acorn-typescript");
    tsParser = acorn.Parser.extend(tsPlugin() as never) as unknown as Parser;
  }
  return tsParser;
}

/**
 * Parses a module (JavaScript or TypeScript) and looks for `registry.register(...)`
 * calls at the top level only: a call inside a function is a helper's business
 * and does not make the module a tool module. A module that does not parse is
 * reported as an error by the caller.
 */
export async function analyzeModule(source: string, file: string): Promise<ModuleAnalysis> {
  const parser = await parserFor(file);
  // The TypeScript plugin needs locations on.
  const program = parser.parse(source, { ecmaVersion: "latest", sourceType: "module", locations: true });
  const tools: ModuleAnalysis["tools"] = [];
  for (const statement of program.body) {
    for (const call of topLevelCalls(statement)) {
      if (isRegistryRegister(call.callee)) tools.push(literalFields(call.arguments[0]));
    }
  }
  return { registers: tools.length > 0, tools };
}

type AnyNode = Node & Record<string, unknown>;
type CallNode = AnyNode & { callee: AnyNode; arguments: AnyNode[] };

/** The calls a top-level statement makes directly: `f()`, `await f()`, `void f()`, `const x = f()`, `export const x = f()`. */
function topLevelCalls(statement: Node): CallNode[] {
  const node = statement as AnyNode;
  if (node.type === "ExpressionStatement") return callsOf(node.expression as AnyNode);
  if (node.type === "ExportNamedDeclaration" && node.declaration) return topLevelCalls(node.declaration as Node);
  if (node.type === "VariableDeclaration") {
    return (node.declarations as AnyNode[]).flatMap((declaration) => (declaration.init ? callsOf(declaration.init as AnyNode) : []));
  }
  return [];
}

function callsOf(expression: AnyNode): CallNode[] {
  switch (expression.type) {
    case "CallExpression":
      return [expression as CallNode];
    case "AwaitExpression":
    case "UnaryExpression":
    case "ChainExpression":
      return callsOf((expression.argument ?? expression.expression) as AnyNode);
    case "SequenceExpression":
      return (expression.expressions as AnyNode[]).flatMap(callsOf);
    default:
      return [];
  }
}

function isRegistryRegister(callee: AnyNode): boolean {
  if (callee.type !== "MemberExpression" || callee.computed) return false;
  const object = callee.object as AnyNode;
  const property = callee.property as AnyNode;
  return object.type === "Identifier" && object.name === "registry" && property.type === "Identifier" && property.name === "register";
}

function literalFields(argument: AnyNode | undefined): { name?: string; toolset?: string } {
  const fields: { name?: string; toolset?: string } = {};
  if (argument?.type !== "ObjectExpression") return fields;
  for (const property of argument.properties as AnyNode[]) {
    if (property.type !== "Property") continue;
    const key = property.key as AnyNode;
    const value = property.value as AnyNode;
    const keyName = key.type === "Identifier" ? key.name : key.type === "Literal" ? key.value : undefined;
    if ((keyName === "name" || keyName === "toolset") && value.type === "Literal" && typeof value.value === "string") {
      fields[keyName] = value.value;
    }
  }
  return fields;
}
