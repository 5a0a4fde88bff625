/**
 * The model-facing schema of `execute_code`, and the patcher that rebuilds it
 * from the tools a program can actually call.
 *
 * The description names the tools available inside programs, so it must be
 * rebuilt once toolset filtering and availability checks have decided which
 * tools the model has: a description that lists a tool the model cannot call
 * invites the model to call it. Everything here is a pure function of the list
 * of `{ name, summary }` it is given; looking the summaries up is the tool
 * module's business.
 *
 * The fixed text deliberately avoids the bare words that are also tool names
 * (a tool name appears only where that tool is listed).
 */

import type { FunctionSchema, JsonSchema } from "../registry/types.js";
import { groupDigits } from "../util/format.js";
import {
  DEFAULT_CODE_OUTPUT_CHARS,
  DEFAULT_CODE_TIMEOUT_SECONDS,
  DEFAULT_MAX_TOOL_CALLS,
  EXECUTE_CODE_TOOL,
  MAX_CODE_TIMEOUT_SECONDS,
  SANDBOX_TOOLS,
} from "./limits.js";

/** One tool callable from programs, as the description lists it. */
export interface SandboxToolSummary {
  name: string;
  /** One line; empty when nothing is known about the tool. */
  summary: string;
}

/** Used when a tool's registered description is unknown (or unusable) to the patcher. */
export const FALLBACK_SUMMARIES: Readonly<Record<string, string>> = Object.freeze({
  terminal: "Run a shell command and get back its output and exit code.",
  read_file: "Read a text file.",
  write_file: "Write content to a file.",
  patch: "Edit a file by replacing text in it.",
  search_files: "Search file names or file contents.",
  web_search: "Search the web.",
  web_extract: "Extract the readable content of web pages.",
});

/** Longest summary kept (characters). */
export const MAX_SUMMARY_CHARS = 160;

const ABBREVIATIONS = /(?:^|[\s(])(?:e\.g|i\.e|etc|vs|cf|approx|incl|resp)\.$/i;

/** The first sentence of a description's first paragraph, on one line, cut to `maxChars`. */
export function firstSentence(text: string, maxChars = MAX_SUMMARY_CHARS): string {
  const paragraph = (text.trim().split(/\n\s*\n/)[0] ?? "").replace(/\s+/g, " ").trim();
  let sentence = paragraph;
  const ends = /[.!?](?=\s|$)/g;
  for (let match = ends.exec(paragraph); match !== null; match = ends.exec(paragraph)) {
    const candidate = paragraph.slice(0, match.index + 1);
    if (match[0] === "." && ABBREVIATIONS.test(candidate)) continue;
    sentence = candidate;
    break;
  }
  if (sentence.length <= maxChars) return sentence;
  const cut = sentence.slice(0, maxChars - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > maxChars / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:]+$/, "")}…`;
}

function example(tools: readonly SandboxToolSummary[]): string {
  const names = tools.map((tool) => tool.name);
  if (names.includes("terminal")) {
    return [
      'const listing = JSON.parse(await tools.terminal({ command: "ls -1" }));',
      'const entries = listing.output.split("\\n").filter(Boolean);',
      'console.log(entries.length, "entries; first:", entries[0]);',
    ].join("\n");
  }
  const first = names[0];
  if (first !== undefined) {
    return [
      `const result = await tools.${first}({ /* the arguments of ${first} */ });`,
      "console.log(result.slice(0, 500));",
    ].join("\n");
  }
  return [
    'const { createHash } = await import("node:crypto");',
    'const digests = ["a", "b"].map((s) => createHash("sha256").update(s).digest("hex"));',
    "console.log(digests);",
  ].join("\n");
}

/** The description for a given list of callable tools (in the order given). */
export function buildExecuteCodeDescription(tools: readonly SandboxToolSummary[]): string {
  const intro =
    "Run a JavaScript program (an ES module; top-level await works) in a separate Node.js process and get back what it printed (stdout and stderr, in order) and its exit code.";
  const paragraphs = [
    tools.length > 0
      ? `${intro} Use it for computation, or to chain several tool calls with logic between them (loops, filtering, parsing, aggregating) in one step instead of many round trips: ` +
        "only what the program prints comes back, so large intermediate results never reach the conversation."
      : `${intro} Use it for computation: parsing, transforming or checking data, arithmetic, generating text.`,
  ];
  if (tools.length > 0) {
    const lines = tools.map((tool) => (tool.summary === "" ? `- tools.${tool.name}(args)` : `- tools.${tool.name}(args): ${tool.summary}`));
    paragraphs.push(
      "Inside the program, the global `tools` object exposes these tools as async functions. Each takes the tool's arguments as one object (the same arguments as a direct call) " +
        "and resolves to the tool's result string, exactly what a direct call returns (parse JSON results with JSON.parse; an error of the tool comes back as its result, not as a throw):\n" +
        lines.join("\n"),
      `Only the tools listed above can be called; any other name rejects, and so does ${EXECUTE_CODE_TOOL} itself. ` +
        `A program may make at most ${DEFAULT_MAX_TOOL_CALLS} tool calls; they run one at a time, in the working directory and with the permissions a direct call would have.`,
    );
  } else {
    paragraphs.push(
      "No tools can be called from code in this session: the global `tools` object is empty and any call on it rejects. Use this for computation only.",
    );
  }
  paragraphs.push(
    `Print what you need with console.log; the program's return value is not shown. Output is capped at ${groupDigits(DEFAULT_CODE_OUTPUT_CHARS)} characters: when it is longer, the beginning and the end are kept.`,
    `The program is killed after \`timeout\` seconds (default ${DEFAULT_CODE_TIMEOUT_SECONDS}, maximum ${MAX_CODE_TIMEOUT_SECONDS}), together with every process it started.`,
    "It starts in an empty temporary directory that is deleted afterwards (use absolute paths for files that must stay), with a minimal environment (no API keys). " +
      "Only Node.js built-in modules can be imported (node:fs, node:path, node:crypto, ...); npm packages are not available and `require` is not defined.",
    `Example:\n\`\`\`js\n${example(tools)}\n\`\`\``,
    'Returns JSON: {"output": "...", "exit_code": 0, "tool_calls": 1, "error": null}. An uncaught exception gives a non-zero exit_code with its stack in output; ' +
      'a timeout, a cancellation or a program that was not approved to run adds "status" ("timeout", "cancelled" or "blocked") and "error" says what happened; do not try to get a blocked program past the approval another way.',
  );
  return paragraphs.join("\n\n");
}

/** The `code` parameter's description for a given list of callable tools. */
export function buildCodeParameterDescription(tools: readonly SandboxToolSummary[]): string {
  if (tools.length === 0) {
    return "The JavaScript program to run (an ES module). No tools can be called from it in this session. Print results with console.log.";
  }
  return (
    "The JavaScript program to run (an ES module). Call tools as `await tools.<name>({ ...arguments })`; callable here: " +
    `${tools.map((tool) => tool.name).join(", ")}. Print results with console.log.`
  );
}

function buildParameters(tools: readonly SandboxToolSummary[]): JsonSchema {
  return {
    type: "object",
    properties: {
      code: { type: "string", description: buildCodeParameterDescription(tools) },
      timeout: {
        type: "integer",
        description: `Seconds before the program is killed. Default ${DEFAULT_CODE_TIMEOUT_SECONDS}, maximum ${MAX_CODE_TIMEOUT_SECONDS}.`,
        minimum: 1,
        maximum: MAX_CODE_TIMEOUT_SECONDS,
        default: DEFAULT_CODE_TIMEOUT_SECONDS,
      },
    },
    required: ["code"],
    additionalProperties: false,
  };
}

/** A schema for a given list of callable tools. */
export function buildExecuteCodeSchema(tools: readonly SandboxToolSummary[]): FunctionSchema {
  return { name: EXECUTE_CODE_TOOL, description: buildExecuteCodeDescription(tools), parameters: buildParameters(tools) };
}

/** The static schema: every allow-listed tool, with the fallback summaries. */
export const EXECUTE_CODE_SCHEMA: FunctionSchema = buildExecuteCodeSchema(
  SANDBOX_TOOLS.map((name) => ({ name, summary: FALLBACK_SUMMARIES[name] ?? "" })),
);

/**
 * Rebuilds `schema` for the tools in `tools`: a new description, and a copy of
 * the parameters whose `code` description names only those tools. The input
 * schema is not modified.
 */
export function patchExecuteCodeSchema(schema: FunctionSchema, tools: readonly SandboxToolSummary[]): FunctionSchema {
  const parameters = structuredClone(schema.parameters) as JsonSchema & { properties?: Record<string, JsonSchema> };
  const properties = parameters.properties;
  if (properties !== undefined && typeof properties === "object" && properties.code !== undefined) {
    properties.code = { ...properties.code, description: buildCodeParameterDescription(tools) };
  }
  return { name: schema.name, description: buildExecuteCodeDescription(tools), parameters };
}
