/**
 * A scripted OpenAI-compatible endpoint on 127.0.0.1 for tests (CI has no model): `POST
 * /v1/chat/completions` answers each request with the script's next step — a JSON completion, an
 * SSE stream of chunks, or an HTTP error with headers — and records every request (body, headers,
 * time) so a test can assert what the loop sent. A step may be a function of the request (to echo
 * a tool result back, or to wait for a signal). Anything else, or a request past the end of the
 * script, gets an error the loop reports, so a test cannot pass by accident.
 *
 * A streamed request (`stream: true`) answered by a JSON completion step (`reply.text`,
 * `reply.toolCalls`) gets that completion as an SSE stream (`asStream`), so one script serves a
 * client that streams and one that does not; error steps stay JSON, as real endpoints answer them.
 */

import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface RecordedRequest {
  index: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Json;
  /** The body as received, byte for byte (for prefix comparisons). */
  raw: string;
  receivedAt: number;
}

export type Step =
  | { kind: "json"; body: Json; status?: number; headers?: Record<string, string>; delayMs?: number }
  | { kind: "sse"; chunks: Json[]; chunkDelayMs?: number; delayMs?: number; /** Stop after this many chunks without ending the stream (destroy the socket). */ breakAfter?: number }
  | { kind: "hang" };

export type ScriptEntry = Step | ((request: RecordedRequest) => Step | Promise<Step>);

export interface ScriptedOpenAI {
  /** `http://127.0.0.1:PORT/v1` */
  baseURL: string;
  requests: RecordedRequest[];
  /** Script entries not used yet. */
  remaining(): number;
  close(): Promise<void>;
}

let nextId = 0;

export interface ToolCallSpec {
  id?: string;
  name: string;
  args: unknown;
}

const usage = (input = 10, output = 5, cached = 0) => ({
  prompt_tokens: input,
  completion_tokens: output,
  total_tokens: input + output,
  prompt_tokens_details: { cached_tokens: cached },
});

/** Steps for the script. */
export const reply = {
  text(content: string, tokens?: { input?: number; output?: number; cached?: number }): Step {
    return {
      kind: "json",
      body: {
        id: `chatcmpl-${++nextId}`,
        object: "chat.completion",
        created: 0,
        model: "scripted",
        choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content } }],
        usage: usage(tokens?.input, tokens?.output, tokens?.cached),
      },
    };
  },
  toolCalls(calls: ToolCallSpec[], content: string | null = null, tokens?: { input?: number; output?: number }): Step {
    return {
      kind: "json",
      body: {
        id: `chatcmpl-${++nextId}`,
        object: "chat.completion",
        created: 0,
        model: "scripted",
        choices: [
          {
            index: 0,
            finish_reason: "tool_calls",
            message: {
              role: "assistant",
              content,
              tool_calls: calls.map((call, i) => ({
                id: call.id ?? `call_${nextId}_${i}`,
                type: "function",
                function: { name: call.name, arguments: typeof call.args === "string" ? call.args : JSON.stringify(call.args) },
              })),
            },
          },
        ],
        usage: usage(tokens?.input, tokens?.output),
      },
    };
  },
  error(status: number, message: string, headers?: Record<string, string>): Step {
    return { kind: "json", status, headers, body: { error: { message, type: "scripted_error", code: null } } };
  },
  /** The text streamed in `parts`, then a usage chunk. */
  streamText(parts: string[], tokens?: { input?: number; output?: number }, chunkDelayMs = 0): Step {
    const id = `chatcmpl-${++nextId}`;
    const base = { id, object: "chat.completion.chunk", created: 0, model: "scripted" };
    return {
      kind: "sse",
      chunkDelayMs,
      chunks: [
        { ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] },
        ...parts.map((part) => ({ ...base, choices: [{ index: 0, delta: { content: part }, finish_reason: null }] })),
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
        { ...base, choices: [], usage: usage(tokens?.input, tokens?.output) },
      ],
    };
  },
  /** Tool calls streamed as the API does: name and id first, arguments in pieces. */
  streamToolCalls(calls: ToolCallSpec[]): Step {
    const id = `chatcmpl-${++nextId}`;
    const base = { id, object: "chat.completion.chunk", created: 0, model: "scripted" };
    const chunks: Json[] = [{ ...base, choices: [{ index: 0, delta: { role: "assistant", content: null }, finish_reason: null }] }];
    calls.forEach((call, index) => {
      const args = typeof call.args === "string" ? call.args : JSON.stringify(call.args);
      chunks.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, id: call.id ?? `call_s${nextId}_${index}`, type: "function", function: { name: call.name, arguments: "" } }] }, finish_reason: null }] });
      const half = Math.ceil(args.length / 2);
      for (const piece of [args.slice(0, half), args.slice(half)]) {
        chunks.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: piece } }] }, finish_reason: null }] });
      }
    });
    chunks.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] });
    chunks.push({ ...base, choices: [], usage: usage() });
    return { kind: "sse", chunks };
  },
  hang(): Step {
    return { kind: "hang" };
  },
};

/** A step that hangs, and a promise that resolves once a request has reached it (to interrupt it then). */
export function hangWhenReached(): { step: ScriptEntry; reached: Promise<void> } {
  let arrived!: () => void;
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  return {
    step: () => {
      arrived();
      return reply.hang();
    },
    reached,
  };
}

/** A JSON completion as the SSE chunks a streaming endpoint sends: the message in one delta, the finish reason, the usage. */
export function asStream(completion: Json): Extract<Step, { kind: "sse" }> {
  const base = { id: completion.id, object: "chat.completion.chunk", created: 0, model: completion.model };
  const choice = completion.choices[0];
  const message = choice.message ?? {};
  const delta: Json = { role: "assistant", content: message.content ?? null };
  if (message.tool_calls) delta.tool_calls = message.tool_calls.map((call: Json, index: number) => ({ index, ...call }));
  return {
    kind: "sse",
    chunks: [
      { ...base, choices: [{ index: 0, delta, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: choice.finish_reason }] },
      ...(completion.usage ? [{ ...base, choices: [], usage: completion.usage }] : []),
    ],
  };
}

function send(res: ServerResponse, status: number, body: Json, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startScriptedOpenAI(script: ScriptEntry[]): Promise<ScriptedOpenAI> {
  const requests: RecordedRequest[] = [];
  let cursor = 0;
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      void (async () => {
        const raw = Buffer.concat(parts).toString("utf8");
        let body: Json;
        try {
          body = raw === "" ? undefined : JSON.parse(raw);
        } catch {
          body = undefined;
        }
        const recorded: RecordedRequest = { index: requests.length, method: req.method ?? "", path: req.url ?? "", headers: req.headers, body, raw, receivedAt: Date.now() };
        requests.push(recorded);
        if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
          send(res, 404, { error: { message: `no route ${req.method} ${req.url}`, type: "not_found" } });
          return;
        }
        const entry = script[cursor++];
        if (entry === undefined) {
          send(res, 500, { error: { message: `the script has no step for request #${recorded.index + 1}`, type: "script_exhausted" } });
          return;
        }
        let step = typeof entry === "function" ? await entry(recorded) : entry;
        if (body?.stream === true && step.kind === "json" && (step.status ?? 200) === 200 && Array.isArray(step.body?.choices)) step = { ...asStream(step.body), delayMs: step.delayMs };
        if (step.kind === "hang") {
          hanging.add(res);
          res.on("close", () => hanging.delete(res));
          return;
        }
        if (step.delayMs) await sleep(step.delayMs);
        if (step.kind === "json") {
          send(res, step.status ?? 200, step.body, step.headers);
          return;
        }
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
        let sent = 0;
        for (const chunk of step.chunks) {
          if (step.breakAfter !== undefined && sent >= step.breakAfter) {
            res.socket?.destroy();
            return;
          }
          res.write(`data: ${JSON.stringify(chunk)}\n\n`);
          sent++;
          if (step.chunkDelayMs) await sleep(step.chunkDelayMs);
        }
        res.end("data: [DONE]\n\n");
      })().catch((thrown: unknown) => {
        if (!res.headersSent) send(res, 500, { error: { message: `script step failed: ${String(thrown)}`, type: "script_error" } });
        else res.destroy();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    remaining: () => script.length - cursor,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
