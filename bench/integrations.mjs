/**
 * What a framework adapter adds to a tool call, against `handleFunctionCall` of the same tool in
 * the same run (target ≤ 1.1×):
 *
 * - `integrations.aiSdk`: the AI SDK tool's `execute` (mibyan-tools/ai-sdk), as `generateText` calls
 *   it: the approval lookup in the messages, the call, the result mapping;
 * - `integrations.openaiAgents`: the Agents SDK `FunctionTool.invoke` (mibyan-tools/openai-agents), as
 *   the runner calls it: the SDK's JSON parse of the arguments, then the same;
 * - `integrations.langchain`: the LangChain tool's `invoke` (mibyan-tools/langchain) with a tool call, as
 *   `ToolNode` calls it: LangChain's own wrapper (config, callbacks, the ToolMessage), then the same;
 *   `integrations.langchain.plainTool` is a plain `tool()` of @langchain/core calling handleFunctionCall,
 *   invoked the same way: LangChain's own cost, without the adapter (reported, no target).
 *
 * A trivial tool (returns "ok"), so the figures are the adapters' cost, not a tool's; the baseline
 * passes the same call options the adapters pass (session, task, call id, the offered tools). Imports the
 * build. `node bench/integrations.mjs [--quick]` runs it alone.
 */
import { pathToFileURL } from "node:url";
import { Bench } from "tinybench";
import { round } from "./common.mjs";

const BATCH = 1000;

export async function benchIntegrations({ quick, note }) {
  note("integrations: a call through the AI SDK and OpenAI Agents adapters vs handleFunctionCall ...");
  const { ToolRegistry, createMemoryLogger, handleFunctionCall } = await import("../dist/index.js");
  const { toAiSdkTools } = await import("../dist/ai-sdk.js");
  const { toOpenAIAgentsTools } = await import("../dist/openai-agents.js");
  const { RunContext } = await import("@openai/agents-core");
  const { toLangChainTools } = await import("../dist/langchain.js");
  const { tool: langChainTool } = await import("@langchain/core/tools");
  const settings = quick ? { time: 150, warmupTime: 50 } : { time: 1500, warmupTime: 300 };
  const registry = new ToolRegistry({ logger: createMemoryLogger() });
  registry.register({ name: "trivial", toolset: "bench", schema: { description: "trivial", parameters: { type: "object", properties: { a: { type: "string" } } } }, handler: () => "ok" });
  const args = { a: "x" };
  const aiTool = toAiSdkTools({ registry }).trivial;
  const [agentsTool] = toOpenAIAgentsTools({ registry });
  const context = new RunContext({});
  // The baseline passes what the adapters pass (session, task, call id, the offered tools), so the ratio is the adapters' own cost.
  const direct = { registry, sessionId: "default", taskId: "default", toolCallId: "c1", allowedTools: new Set(["trivial"]) };
  const [langChainTrivial] = toLangChainTools({ registry });
  const schema = registry.lookup("trivial").schema.parameters;
  const plainLangChain = langChainTool((input, config) => handleFunctionCall("trivial", input, { ...direct, toolCallId: config?.toolCall?.id }), { name: "trivial", description: "trivial", schema });
  const toolCall = { type: "tool_call", id: "c1", name: "trivial", args };
  const aiOptions = { toolCallId: "c1", messages: [] };
  const json = JSON.stringify(args);
  if ((await handleFunctionCall("trivial", args, { registry })) !== "ok") throw new Error("integrations bench: baseline sanity check failed");
  if ((await aiTool.execute(args, aiOptions)) !== "ok") throw new Error("integrations bench: ai-sdk sanity check failed");
  if ((await agentsTool.invoke(context, json)) !== "ok") throw new Error("integrations bench: openai-agents sanity check failed");
  if ((await langChainTrivial.invoke(toolCall)).content !== "ok") throw new Error("integrations bench: langchain sanity check failed");
  if ((await plainLangChain.invoke(toolCall)).content !== "ok") throw new Error("integrations bench: plain langchain tool sanity check failed");
  const bench = new Bench(settings);
  // The baseline is measured first and last, and their mean is used: a later task measures slower on this machine whatever it runs.
  bench.add("direct", async () => {
    for (let i = 0; i < BATCH; i++) await handleFunctionCall("trivial", args, direct);
  });
  bench.add("aiSdk", async () => {
    for (let i = 0; i < BATCH; i++) await aiTool.execute(args, aiOptions);
  });
  bench.add("openaiAgents", async () => {
    for (let i = 0; i < BATCH; i++) await agentsTool.invoke(context, json);
  });
  bench.add("langchain", async () => {
    for (let i = 0; i < BATCH; i++) await langChainTrivial.invoke(toolCall);
  });
  bench.add("langchainPlain", async () => {
    for (let i = 0; i < BATCH; i++) await plainLangChain.invoke(toolCall);
  });
  bench.add("directAgain", async () => {
    for (let i = 0; i < BATCH; i++) await handleFunctionCall("trivial", args, direct);
  });
  await bench.run();
  const ns = (name) => {
    const result = bench.getTask(name)?.result;
    if (result?.latency === undefined) throw new Error(`benchmark task "${name}" did not complete`);
    return { ns: (result.latency.p50 * 1e6) / BATCH, samples: result.latency.samples?.length ?? 0 };
  };
  const baseline = (ns("direct").ns + ns("directAgain").ns) / 2;
  const row = (name, label, value, target = 1.1) => {
    const ratio = round(value.ns / baseline, 2);
    return {
      name,
      label,
      value: round(value.ns, 0),
      unit: "ns",
      baseline: round(baseline, 0),
      baselineLabel: "handleFunctionCall, same tool and options",
      ratio,
      samples: value.samples,
      target: target ?? null,
      targetOn: target === null ? null : "ratio",
      targetText: target === null ? "(reported: LangChain's own cost)" : `≤ ${target}× handleFunctionCall`,
      met: target === null ? true : ratio <= target,
    };
  };
  return [
    row("integrations.aiSdk", "AI SDK tool execute (mibyan-tools/ai-sdk)", ns("aiSdk")),
    row("integrations.openaiAgents", "Agents SDK FunctionTool.invoke (mibyan-tools/openai-agents)", ns("openaiAgents")),
    row("integrations.langchain", "LangChain tool.invoke(toolCall) (mibyan-tools/langchain)", ns("langchain")),
    row("integrations.langchain.plainTool", "a plain LangChain tool() around handleFunctionCall, invoke(toolCall)", ns("langchainPlain"), null),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const rows = await benchIntegrations({ quick: process.argv.includes("--quick"), note: (m) => process.stderr.write(`${m}\n`) });
  for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
}
