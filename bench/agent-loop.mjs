/**
 * What the agent loop adds to a conversation, against the same conversation driven by hand in the
 * same run: one user turn of two requests to a local OpenAI-compatible server (the first answers with
 * a tool call, the second with text) and one tool round between them.
 *
 * - baseline ("by hand"): one `openai` client made once, `chat.completions.create` with the same
 *   system message and tools, `executeToolCalls` on the calls, the tool messages appended, the second
 *   request; what a program without `runAgent` would write;
 * - `agentLoop.run`: `runAgent` with the same system prompt as a string (target ≤ 1.1×);
 * - `agentLoop.perTurnOverhead`: (loop − baseline) ÷ 2 requests, in µs (the fixed cost reported);
 * - `agentLoop.assembledPrompt`: `runAgent` assembling the tiers itself (identity, guidance, an
 *   AGENTS.md read, fenced and scanned, the date), against the same baseline (reported).
 *
 * The server answers from the last message's role, so every run is the same two requests. Runs are
 * interleaved in rotating order; figures are medians. `node bench/agent-loop.mjs [--quick]` runs it alone.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { median, round } from "./common.mjs";

const SYSTEM = "You are a benchmark agent. Use the echo tool once, then answer.";

function startServer() {
  let n = 0;
  const usage = { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 };
  const server = createServer((req, res) => {
    const parts = [];
    req.on("data", (part) => parts.push(part));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(parts).toString("utf8"));
      const last = body.messages.at(-1);
      const message =
        last.role === "tool"
          ? { role: "assistant", content: "done" }
          : { role: "assistant", content: null, tool_calls: [{ id: `call_${++n}`, type: "function", function: { name: "bench_echo", arguments: '{"text":"hi"}' } }] };
      const text = JSON.stringify({ id: `c${n}`, object: "chat.completion", created: 0, model: body.model, choices: [{ index: 0, finish_reason: "stop", message }], usage });
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      res.end(text);
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

export async function benchAgentLoop({ quick, note }) {
  note("agent loop: runAgent over a local endpoint vs the same turn by hand (openai client + executeToolCalls) ...");
  const { ToolRegistry, createMemoryLogger, executeToolCalls, getToolDefinitions, runAgent } = await import("../dist/index.js");
  const { OpenAI } = await import("openai");
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  registry.register({
    name: "bench_echo",
    toolset: "bench",
    parallelSafe: true,
    schema: { description: "echo", parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } },
    handler: ({ text }) => String(text),
  });
  const server = await startServer();
  const baseURL = `http://127.0.0.1:${server.address().port}/v1`;
  const cwd = mkdtempSync(path.join(tmpdir(), "mibyan-bench-loop-"));
  writeFileSync(path.join(cwd, "AGENTS.md"), "# Project\nUse pnpm. Run the tests before committing.\n".repeat(20));
  try {
    const client = new OpenAI({ baseURL, apiKey: "k", maxRetries: 0 });
    const tools = getToolDefinitions({ registry, quiet: true });
    const allowedTools = new Set(tools.map((t) => t.function.name));
    const byHand = async () => {
      const messages = [
        { role: "system", content: SYSTEM },
        { role: "user", content: "go" },
      ];
      const first = await client.chat.completions.create({ model: "m", messages, tools });
      const assistant = first.choices[0].message;
      messages.push({ role: "assistant", content: assistant.content, tool_calls: assistant.tool_calls });
      const calls = assistant.tool_calls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
      const outcomes = await executeToolCalls(calls, { registry, allowedTools });
      outcomes.forEach((o, i) => messages.push({ role: "tool", tool_call_id: calls[i].id, content: o.content }));
      const second = await client.chat.completions.create({ model: "m", messages, tools });
      if (second.choices[0].message.content !== "done") throw new Error("baseline sanity check failed");
    };
    const loop = async () => {
      const result = await runAgent({ model: "m", baseURL, apiKey: "k", registry, prompt: "go", systemPrompt: SYSTEM });
      if (result.finalText !== "done" || result.turns !== 2) throw new Error(`loop sanity check failed: ${result.status} ${result.finalText}`);
    };
    const assembled = async () => {
      const result = await runAgent({ model: "m", baseURL, apiKey: "k", registry, prompt: "go", systemPrompt: { cwd } });
      if (result.finalText !== "done" || !result.systemPrompt.includes("Use pnpm")) throw new Error("assembled sanity check failed");
    };

    const jobs = { byHand, loop, assembled };
    const samples = { byHand: [], loop: [], assembled: [] };
    // CPU time of this process (client, loop and the in-process server alike): steadier than wall time on a shared box.
    const cpu = { byHand: [], loop: [], assembled: [] };
    const names = Object.keys(jobs);
    const warmups = quick ? 20 : 60;
    const rounds = quick ? 60 : 400;
    for (let i = 0; i < warmups; i++) for (const name of names) await jobs[name]();
    for (let i = 0; i < rounds; i++) {
      for (let j = 0; j < names.length; j++) {
        const name = names[(i + j) % names.length];
        const cpuStart = process.cpuUsage();
        const started = performance.now();
        await jobs[name]();
        samples[name].push(performance.now() - started);
        const used = process.cpuUsage(cpuStart);
        cpu[name].push((used.user + used.system) / 1000);
      }
    }
    const byHandMs = median(samples.byHand);
    const loopMs = median(samples.loop);
    const assembledMs = median(samples.assembled);
    const cpuRatio = (name) => round(median(cpu[name]) / median(cpu.byHand), 2);
    const BASE = "the same turn by hand (openai client + executeToolCalls)";
    return [
      {
        name: "agentLoop.run",
        label: "runAgent, one turn: 2 requests + 1 tool round",
        value: round(loopMs, 3),
        unit: "ms",
        baseline: round(byHandMs, 3),
        baselineLabel: BASE,
        ratio: round(loopMs / byHandMs, 2),
        cpuRatio: cpuRatio("loop"),
        samples: rounds,
        target: 1.1,
        targetOn: "ratio",
        targetText: "≤ 1.1× by hand",
        met: loopMs / byHandMs <= 1.1,
      },
      {
        name: "agentLoop.perTurnOverhead",
        label: "runAgent overhead per request ((loop − by hand) ÷ 2)",
        value: round(((loopMs - byHandMs) / 2) * 1000, 0),
        unit: "µs",
        baseline: round((byHandMs / 2) * 1000, 0),
        baselineLabel: "by hand, per request",
        ratio: round(loopMs / byHandMs, 2),
        samples: rounds,
        target: null,
        targetOn: null,
        targetText: "(reported)",
        met: true,
      },
      {
        name: "agentLoop.assembledPrompt",
        label: "runAgent assembling the prompt tiers (AGENTS.md read and scanned)",
        value: round(assembledMs, 3),
        unit: "ms",
        baseline: round(byHandMs, 3),
        baselineLabel: BASE,
        ratio: round(assembledMs / byHandMs, 2),
        cpuRatio: cpuRatio("assembled"),
        samples: rounds,
        target: null,
        targetOn: null,
        targetText: "(reported)",
        met: true,
      },
    ];
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    rmSync(cwd, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const rows = await benchAgentLoop({ quick: process.argv.includes("--quick"), note: (m) => process.stderr.write(`${m}\n`) });
  for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
}
