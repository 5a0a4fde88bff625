/**
 * `elicitation/create`: a server asks the person for input in the middle of a tool call.
 *
 * The request goes to the application's `onElicitation` callback (an approval prompt, a form), which
 * answers `accept` with content, `decline` or `cancel`. Everything else fails closed as `decline`
 * (hermes `request_elicitation_consent`): no callback, the callback throwing or not answering within
 * the time limit (default 300 s), an answer that is not one of the three actions or an `accept`
 * without an object, and URL mode (it would send the person to a page the server chose; no surface
 * here can show that safely).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";

import type { JsonSchema, Logger } from "../../registry/types.js";
import type { McpClock, McpElicitationAnswer, McpElicitationHandler } from "./types.js";

export type { McpElicitationAnswer, McpElicitationHandler, McpElicitationRequest } from "./types.js";

const DECLINE: ElicitResult = { action: "decline" };

export function installElicitation(
  client: Client,
  server: string,
  handler: McpElicitationHandler | undefined,
  options: { timeoutMs: number; clock: McpClock; logger: Logger },
): void {
  client.setRequestHandler(ElicitRequestSchema, async (request, extra): Promise<ElicitResult> => {
    const params = request.params;
    if (params.mode === "url") {
      options.logger.warn(`MCP server '${server}' asked to send the user to a URL (elicitation); declined`);
      return DECLINE;
    }
    if (handler === undefined) return DECLINE;
    const abort = new AbortController();
    const onServerAbort = (): void => abort.abort(extra.signal.reason);
    extra.signal.addEventListener("abort", onServerAbort, { once: true });
    let timer: unknown;
    const timedOut = new Promise<undefined>((resolve) => {
      timer = options.clock.setTimeout(() => {
        abort.abort(new Error("elicitation timed out"));
        resolve(undefined);
      }, options.timeoutMs);
    });
    try {
      const answer = await Promise.race([
        Promise.resolve(handler({ server, message: params.message, requestedSchema: params.requestedSchema as JsonSchema }, abort.signal)),
        timedOut,
      ]);
      return checked(answer);
    } catch (error) {
      options.logger.warn(`MCP server '${server}': the elicitation callback failed (${error instanceof Error ? error.message : String(error)}); declined`);
      return DECLINE;
    } finally {
      options.clock.clearTimeout(timer);
      extra.signal.removeEventListener("abort", onServerAbort);
    }
  });
}

function checked(answer: McpElicitationAnswer | undefined): ElicitResult {
  if (answer === undefined || answer === null || typeof answer !== "object") return DECLINE;
  if (answer.action === "decline" || answer.action === "cancel") return { action: answer.action };
  if (answer.action !== "accept") return DECLINE;
  const content = answer.content;
  if (content === null || typeof content !== "object" || Array.isArray(content)) return DECLINE;
  return { action: "accept", content: content as ElicitResult["content"] };
}
