/**
 * `mibyan chat`'s options and help (commander). The command itself (chat.ts: the loop, the session
 * store, the openai client) is imported only when it runs.
 */
import { type Command, InvalidArgumentError } from "commander";

function toolsetList(value: string): string[] {
  const items = value.split(",").map((item) => item.trim()).filter((item) => item !== "");
  if (items.length === 0) throw new InvalidArgumentError("expected a comma-separated list of toolset names");
  return items;
}

function maxTurns(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1 || n > 10_000) throw new InvalidArgumentError(`--max-turns ${value}: expected a whole number from 1 to 10000`);
  return n;
}

/** Adds `mibyan chat` to the program. */
export function registerChatCommand(program: Command): void {
  program
    .command("chat")
    .description("Run the agent loop for one prompt (-q), or interactively, against an OpenAI-compatible endpoint: tools run, the answer goes to stdout, the session is stored (docs/chat.md). Exit 0 answered, 1 endpoint or store failure, 2 settings error.")
    .option("-q, --query <prompt>", "the prompt; without it, prompts are read line by line (interactive: /exit ends, Ctrl-C interrupts a turn)")
    .option("-m, --model <name>", "the model name (default: model.name in config.yaml)")
    .option("--base-url <url>", "the endpoint, e.g. https://api.openai.com/v1 (default: model.base_url, then OPENAI_BASE_URL)")
    .option("--api-key-env <var>", "the environment variable holding the API key (default: model.api_key_env, then OPENAI_API_KEY)")
    .option("-t, --toolsets <names>", "only these toolsets (comma-separated)", toolsetList)
    .option("--max-turns <n>", "requests that may end in tool calls before a summary is asked for (default 90)", maxTurns)
    .option("-r, --resume <id>", "continue this stored session (mibyan sessions list)")
    .option("--json", "print one JSON object: {answer,sessionId,status,turns,toolCalls:[{turn,id,name,status,elapsedMs,argsChars,resultChars}],usage,refused:[{command,reason,rules}],resumed}")
    .action(async (options: { query?: string; model?: string; baseUrl?: string; apiKeyEnv?: string; toolsets?: string[]; maxTurns?: number; resume?: string; json?: boolean }) => {
      const { runChatCommand } = await import("./commands/chat.js");
      process.exitCode = await runChatCommand(options);
    });
}
