/** The three bridge tools as the model sees them (OpenAI format). */

import type { OpenAIToolDefinition } from "../../registry/types.js";
import { TOOL_CALL_NAME, TOOL_DESCRIBE_NAME, TOOL_SEARCH_NAME } from "./names.js";

/** `tool_search`, `tool_describe`, `tool_call`, in that order; `deferredCount` goes into `tool_search`'s description. */
export function bridgeToolDefinitions(deferredCount: number, maxSearchLimit: number): OpenAIToolDefinition[] {
  return [
    {
      type: "function",
      function: {
        name: TOOL_SEARCH_NAME,
        description:
          `Search ${deferredCount} additional tools that are loaded on demand (tools of MCP servers and plugins). ` +
          "Returns the names and short descriptions of the best matches; call tool_describe for a tool's parameters, then tool_call to run it. " +
          "Tools already in your tools list are available directly and do not need to be searched.",
        parameters: {
          type: "object",
          properties: {
            query: { type: "string", description: "What the tool should do, in a few words (e.g. 'create github issue')." },
            limit: { type: "integer", minimum: 1, maximum: maxSearchLimit, description: `How many matches to return (1-${maxSearchLimit}).` },
          },
          required: ["query"],
        },
      },
    },
    {
      type: "function",
      function: {
        name: TOOL_DESCRIBE_NAME,
        description: "Show the full description and parameter schema of a tool found with tool_search.",
        parameters: {
          type: "object",
          properties: { name: { type: "string", description: "The tool's exact name, as tool_search returned it." } },
          required: ["name"],
        },
      },
    },
    {
      type: "function",
      function: {
        name: TOOL_CALL_NAME,
        description: "Run a tool found with tool_search. Its approvals and limits apply as if it were called directly.",
        parameters: {
          type: "object",
          properties: {
            name: { type: "string", description: "The tool's exact name, as tool_search returned it." },
            arguments: { type: "object", description: "The tool's arguments, matching the parameters tool_describe showed ({} when it takes none)." },
          },
          required: ["name", "arguments"],
        },
      },
    },
  ];
}
