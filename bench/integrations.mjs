/**
 * What a framework adapter adds to a tool call, against `handleFunctionCall` of the same tool in
 * the same run (target ≤ 1.1×), and against the same framework tool written by hand around
 * `handleFunctionCall` (what a user would write without us: the framework's own cost is in both):
 *
 * - `integrations.aiSdk`: the AI SDK tool's `execute` (mibyan-tools/ai-sdk), as `generateText` calls
 *   it: the approval lookup, the call, the result mapping;
 * - `integrations.openaiAgents`: the Agents SDK `FunctionTool.invoke` (mibyan-tools/openai-agents), as
 *   the runner calls it: the SDK's wrapper (JSON parse, strict-schema normalisation, debug log lines),
 *   then the same;
 * - `integrations.langchain`: the LangChain tool's `invoke` with a tool call (mibyan-tools/langchain), as
 *   `ToolNode` calls it: LangChain's wrapper (config, callbacks, the ToolMessage), then the same;
 * - `*.vsHandWritten`: the adapter against a hand-written tool of the same framework (`tool()` /
 *   a ToolSet entry whose execute calls `handleFunctionCall` with the same options), same run;
 * - `*.handWritten`: the hand-written tool against `handleFunctionCall` (the framework's own cost, reported);
 * - `integrations.openaiAgents.quiet*`: the same after `setSensitiveDataLoggingEnabled(false)`, the SDK's
 *   own switch, which spares two environment-variable reads per call (process.env is slow) and changes
 *   nothing else by default (tool data is not logged either way). Measured after the default rows: it
 *   cannot be switched back to "unset".
 *
 * A trivial tool (returns "ok"), so the figures are the adapters' cost, not a tool's; the baseline
 * passes the same call options the adapters pass (session, task, call id, the offered tools). Tracing
 * plays no part: `invoke` opens no span (the runner does, around it). Imports the build.
 * `node bench/integrations.mjs [--quick]` runs it alone.
 */
import { pathToFileURL } from "node:url";
import { Bench } from "tinybench";
import { round } from "./common.mjs";

const BATCH = 1000;

export async function benchIntegrations({ quick, note }) {
  note("integrations: a call through the AI SDK and OpenAI Agents adapters vs handleFunctionCall and hand-written tools ...");
  const { ToolRegistry, createMemoryLogger, handleFunctionCall } = await import("../dist/index.js");
  const { toAiSdkTools } = await import("../dist/ai-sdk.js");
  const { toOpenAIAgentsTools } = await import("../dist/openai-agents.js");
  const { RunContext, setSensitiveDataLoggingEnabled, tool: agentsTool } = await import("@openai/agents-core");
  const { jsonSchema } = await import("ai");
  const { toLangChainTools } = await import("../dist/langchain.js");
  const { tool: langChainTool } = await import("@langchain/core/tools");
  const settings = quick ? { time: 150, warmupTime: 50 } : { time: 1500, warmupTime: 300 };
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  const parameters = { type: "object", properties: { a: { type: "string" } } };
  registry.register({ name: "trivial", toolset: "bench", schema: { description: "trivial", parameters }, handler: () => "ok" });
  const args = { a: "x" };
  const aiTool = toAiSdkTools({ registry }).trivial;
  const [agentsAdapter] = toOpenAIAgentsTools({ registry });
  const context = new RunContext({});
  const aiOptions = { toolCallId: "c1", messages: [] };
  const json = JSON.stringify(args);
  // The baseline passes what the adapters pass (session, task, call id, the offered tools), so the ratio is the adapters' own cost.
  const allowedTools = new Set(["trivial"]);
  const direct = { registry, sessionId: "default", taskId: "default", toolCallId: "c1", allowedTools };
  // What a user writes without us: the framework's tool around handleFunctionCall, the same options, the same schema.
  const aiHand = {
    description: "trivial",
    inputSchema: jsonSchema(parameters),
    execute: (input, call) => handleFunctionCall("trivial", input, { registry, sessionId: "default", taskId: "default", toolCallId: call.toolCallId, signal: call.abortSignal, allowedTools }),
  };
  const agentsHand = agentsTool({
    name: "trivial",
    description: "trivial",
    strict: true,
    parameters: agentsAdapter.parameters,
    errorFunction: null,
    execute: (input, _ctx, details) =>
      handleFunctionCall("trivial", input, { registry, sessionId: "default", taskId: "default", toolCallId: details?.toolCall?.callId, signal: details?.signal, allowedTools }),
  });
  const [langChainAdapter] = toLangChainTools({ registry });
  const langChainHand = langChainTool(
    (input, config) => handleFunctionCall("trivial", input, { registry, sessionId: "default", taskId: "default", toolCallId: config?.toolCall?.id, signal: config?.signal, allowedTools }),
    { name: "trivial", description: "trivial", schema: parameters },
  );
  const toolCall = { type: "tool_call", id: "c1", name: "trivial", args };
  if ((await langChainAdapter.invoke(toolCall)).content !== "ok") throw new Error("integrations bench: langchain sanity check failed");
  if ((await langChainHand.invoke(toolCall)).content !== "ok") throw new Error("integrations bench: hand-written langchain sanity check failed");
  if ((await handleFunctionCall("trivial", args, { registry })) !== "ok") throw new Error("integrations bench: baseline sanity check failed");
  if ((await aiTool.execute(args, aiOptions)) !== "ok") throw new Error("integrations bench: ai-sdk sanity check failed");
  if ((await aiHand.execute(args, aiOptions)) !== "ok") throw new Error("integrations bench: hand-written ai-sdk sanity check failed");
  if ((await agentsAdapter.invoke(context, json)) !== "ok") throw new Error("integrations bench: openai-agents sanity check failed");
  if ((await agentsHand.invoke(context, json)) !== "ok") throw new Error("integrations bench: hand-written openai-agents sanity check failed");
  const bench = new Bench(settings);
  const batch = (fn) => async () => {
    for (let i = 0; i < BATCH; i++) await fn();
  };
  // The baseline is measured first and last, and their mean is used: a later task measures slower on this machine whatever it runs.
  bench.add("direct", batch(() => handleFunctionCall("trivial", args, direct)));
  bench.add("aiSdk", batch(() => aiTool.execute(args, aiOptions)));
  bench.add("aiSdkHand", batch(() => aiHand.execute(args, aiOptions)));
  bench.add("openaiAgents", batch(() => agentsAdapter.invoke(context, json)));
  bench.add("openaiAgentsHand", batch(() => agentsHand.invoke(context, json)));
  bench.add("langchain", batch(() => langChainAdapter.invoke(toolCall)));
  bench.add("langchainHand", batch(() => langChainHand.invoke(toolCall)));
  await bench.run();
  // A second run, after the switch: tinybench warms every task up before it measures any, so a switch in a task's hook would reach the rows above.
  setSensitiveDataLoggingEnabled(false);
  const quietBench = new Bench(settings);
  quietBench.add("openaiAgentsQuiet", batch(() => agentsAdapter.invoke(context, json)));
  quietBench.add("openaiAgentsHandQuiet", batch(() => agentsHand.invoke(context, json)));
  quietBench.add("directAgain", batch(() => handleFunctionCall("trivial", args, direct)));
  await quietBench.run();
  const ns = (name) => {
    const result = (bench.getTask(name) ?? quietBench.getTask(name))?.result;
    if (result?.latency === undefined) throw new Error(`benchmark task "${name}" did not complete`);
    return { ns: (result.latency.p50 * 1e6) / BATCH, samples: result.latency.samples?.length ?? 0 };
  };
  const baseline = { ns: (ns("direct").ns + ns("directAgain").ns) / 2 };
  const row = (name, label, value, against, againstLabel, target) => {
    const ratio = round(value.ns / against.ns, 2);
    return {
      name,
      label,
      value: round(value.ns, 0),
      unit: "ns",
      baseline: round(against.ns, 0),
      baselineLabel: againstLabel,
      ratio,
      samples: value.samples,
      target: target ?? null,
      targetOn: target === undefined ? null : "ratio",
      targetText: target === undefined ? "(reported)" : `≤ ${target}× ${againstLabel.split(",")[0]}`,
      met: target === undefined ? true : ratio <= target,
    };
  };
  const DIRECT = "handleFunctionCall, same tool and options";
  return [
    row("integrations.aiSdk", "AI SDK tool execute (mibyan-tools/ai-sdk)", ns("aiSdk"), baseline, DIRECT, 1.1),
    row("integrations.aiSdk.vsHandWritten", "AI SDK execute: adapter vs hand-written tool", ns("aiSdk"), ns("aiSdkHand"), "hand-written AI SDK tool, same run", 1.1),
    row("integrations.aiSdk.handWritten", "AI SDK execute, hand-written around handleFunctionCall", ns("aiSdkHand"), baseline, DIRECT),
    row("integrations.openaiAgents", "Agents SDK FunctionTool.invoke (mibyan-tools/openai-agents)", ns("openaiAgents"), baseline, DIRECT, 1.1),
    row("integrations.openaiAgents.vsHandWritten", "Agents invoke: adapter vs hand-written tool()", ns("openaiAgents"), ns("openaiAgentsHand"), "hand-written Agents tool(), same run", 1.1),
    row("integrations.openaiAgents.handWritten", "Agents invoke, hand-written tool() around handleFunctionCall", ns("openaiAgentsHand"), baseline, DIRECT),
    row("integrations.langchain", "LangChain tool.invoke(toolCall) (mibyan-tools/langchain)", ns("langchain"), baseline, DIRECT, 1.1),
    row("integrations.langchain.vsHandWritten", "LangChain invoke: adapter vs hand-written tool()", ns("langchain"), ns("langchainHand"), "hand-written LangChain tool(), same run", 1.1),
    row("integrations.langchain.handWritten", "LangChain invoke, hand-written tool() around handleFunctionCall", ns("langchainHand"), baseline, DIRECT),
    row("integrations.openaiAgents.quiet", "Agents invoke, setSensitiveDataLoggingEnabled(false)", ns("openaiAgentsQuiet"), baseline, DIRECT, 1.1),
    row("integrations.openaiAgents.quiet.vsHandWritten", "Agents invoke, quiet: adapter vs hand-written", ns("openaiAgentsQuiet"), ns("openaiAgentsHandQuiet"), "hand-written Agents tool(), quiet, same run", 1.1),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const rows = await benchIntegrations({ quick: process.argv.includes("--quick"), note: (m) => process.stderr.write(`${m}\n`) });
  for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
}
