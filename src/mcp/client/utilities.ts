/**
 * The generated utility tools of a server with resources or prompts (hermes
 * `_build_utility_schemas`): `list_resources {}`, `read_resource {uri}`, `list_prompts {}`,
 * `get_prompt {name, arguments}`. Results as hermes shapes them:
 * `{"resources":[{uri,name,description?,mimeType?}]}`, the texts joined "\n" as plain text, like a
 * tool's text result (a blob as `[binary data, N bytes]`), `{"prompts":[…]}`, `{"messages":[{role,content}]}`.
 */
import type { JsonSchema, ToolHandler } from "../../registry/types.js";
import { fail, ok } from "../../dispatch/result.js";
import { withSession } from "./call.js";
import type { McpConnection } from "./connection.js";

export type UtilityKind = "listResources" | "readResource" | "listPrompts" | "getPrompt";

const MAX_PAGES = 100;

export const UTILITY_SCHEMAS: Record<UtilityKind, { description: (server: string) => string; parameters: JsonSchema }> = {
  listResources: {
    description: (server) => `List the resources MCP server ${server} offers (uri, name, description, mimeType).`,
    parameters: { type: "object", properties: {} },
  },
  readResource: {
    description: (server) => `Read one resource of MCP server ${server} by its URI.`,
    parameters: { type: "object", properties: { uri: { type: "string", description: "The resource URI" } }, required: ["uri"] },
  },
  listPrompts: {
    description: (server) => `List the prompts MCP server ${server} offers.`,
    parameters: { type: "object", properties: {} },
  },
  getPrompt: {
    description: (server) => `Get one prompt of MCP server ${server}, filled in with its arguments.`,
    parameters: {
      type: "object",
      properties: {
        name: { type: "string", description: "The prompt name" },
        arguments: { type: "object", description: "The prompt's arguments", additionalProperties: { type: "string" } },
      },
      required: ["name"],
    },
  },
};

export function utilityHandler(connection: McpConnection, kind: UtilityKind): ToolHandler {
  switch (kind) {
    case "listResources":
      return async (_args, ctx) => {
        const outcome = await withSession(connection, ctx, "list_resources", async (client, options) => {
          const resources: Record<string, unknown>[] = [];
          let cursor: string | undefined;
          for (let page = 0; page < MAX_PAGES; page++) {
            const result = await client.listResources(cursor === undefined ? undefined : { cursor }, options);
            for (const r of result.resources) {
              resources.push({ uri: r.uri, name: r.name, ...(r.description ? { description: r.description } : {}), ...(r.mimeType ? { mimeType: r.mimeType } : {}) });
            }
            cursor = result.nextCursor;
            if (!cursor) break;
          }
          return resources;
        });
        return outcome.ok ? ok({ resources: outcome.value }) : outcome.result;
      };
    case "readResource":
      return async (args, ctx) => {
        const uri = args.uri;
        if (typeof uri !== "string" || uri === "") return fail("read_resource needs a uri", "invalid_args");
        const outcome = await withSession(connection, ctx, "read_resource", (client, options) => client.readResource({ uri }, options));
        if (!outcome.ok) return outcome.result;
        const parts = outcome.value.contents.map((item) =>
          "text" in item && typeof item.text === "string" ? item.text : `[binary data, ${Buffer.byteLength(String((item as { blob?: string }).blob ?? ""), "base64")} bytes]`,
        );
        // Plain text, as a tool's text result is (results.ts).
        return ok(parts.join("\n"));
      };
    case "listPrompts":
      return async (_args, ctx) => {
        const outcome = await withSession(connection, ctx, "list_prompts", (client, options) => client.listPrompts(undefined, options));
        if (!outcome.ok) return outcome.result;
        return ok({
          prompts: outcome.value.prompts.map((p) => ({ name: p.name, ...(p.description ? { description: p.description } : {}), ...(p.arguments ? { arguments: p.arguments } : {}) })),
        });
      };
    case "getPrompt":
      return async (args, ctx) => {
        const name = args.name;
        if (typeof name !== "string" || name === "") return fail("get_prompt needs a name", "invalid_args");
        const raw = args.arguments;
        const promptArgs: Record<string, string> = {};
        if (raw !== null && typeof raw === "object" && !Array.isArray(raw)) {
          for (const [key, value] of Object.entries(raw)) promptArgs[key] = typeof value === "string" ? value : JSON.stringify(value);
        }
        const outcome = await withSession(connection, ctx, "get_prompt", (client, options) => client.getPrompt({ name, arguments: promptArgs }, options));
        if (!outcome.ok) return outcome.result;
        return ok({ messages: outcome.value.messages.map((m) => ({ role: m.role, content: m.content })) });
      };
  }
}
