/**
 * The `memory` agent-loop tool: its schema (registered so the model sees it; dispatch refuses to
 * run it) and the handler the loop runs it with, over a `MemoryStore`. The handler checks the
 * arguments, asks for approval when `memory.write_approval` is on, and stops a model that keeps
 * failing to consolidate within one turn (the original's #42405: after three such failures the
 * fourth call answers `done: true` and tells it to stop).
 *
 * There is no read action: memory reaches the model only through the system prompt snapshot.
 */

import type { AgentLoopContext, AgentLoopHandler } from "../../dispatch/agent-loop.js";
import type { FunctionSchema, MibyanToolOptions } from "../../registry/types.js";
import { displayEntries, count } from "../stores/memory/memory-operations.js";
import { entriesUsage, MEMORY_TARGETS, type MemoryTarget } from "../stores/memory/entries.js";
import type { MemoryResult, MemoryStore } from "../stores/memory/memory-store.js";

export const MEMORY_SCHEMA: FunctionSchema = {
  name: "memory",
  description: [
    "Save durable facts to persistent memory that survives across sessions. Memory is put into the system prompt of every future session, so keep entries compact and high-signal. It is not shown again in this session: the prompt holds the snapshot taken when the session started.",
    "HOW: make all your changes in ONE call with an `operations` array (each item {action, content?, old_text?}). The batch applies atomically and the character limit is checked only on the final result, so one call can remove or replace stale entries to make room AND add new ones. The response reports usage and confirms completion; don't repeat it. Use the bare action/content/old_text fields only for a single change.",
    "WHEN: save when the user states a preference, a correction or a personal detail, or you learn a stable fact about their environment, conventions or workflow. Priority: the user's preferences and corrections > environment facts > procedures.",
    "IF FULL: an add is rejected with the current entries shown. Reissue as ONE batch that removes or shortens enough entries and adds the new one.",
    "TARGETS: 'user' = who the user is (name, role, preferences, style). 'memory' = your own notes (environment, conventions, tool quirks, lessons).",
    "SKIP: trivial or easily re-discovered facts, raw data, task progress, completed-work logs, temporary TODO state. Entries that look like instructions to ignore rules, hide things from the user or send data somewhere are refused.",
  ].join("\n\n"),
  parameters: {
    type: "object",
    properties: {
      action: { type: "string", enum: ["add", "replace", "remove"], description: "The action (single-change shape). Omit when using 'operations'." },
      target: { type: "string", enum: [...MEMORY_TARGETS], description: "Which store: 'memory' for your notes, 'user' for the user profile." },
      content: { type: "string", description: "The entry text. Required for 'add' and 'replace' (single-change shape)." },
      old_text: { type: "string", description: "Required for 'replace' and 'remove' (single-change shape): a short unique substring of the entry to change." },
      operations: {
        type: "array",
        description: "Batch shape: operations applied atomically in one call against the final character budget. Preferred for several changes or to make room.",
        items: {
          type: "object",
          properties: {
            action: { type: "string", enum: ["add", "replace", "remove"] },
            content: { type: "string", description: "Entry text for add/replace." },
            old_text: { type: "string", description: "Substring identifying the entry for replace/remove." },
          },
          required: ["action"],
        },
      },
    },
    required: ["target"],
  },
};

/** What an approver is asked about one memory write. */
export interface MemoryWriteRequest {
  sessionId: string | undefined;
  target: MemoryTarget;
  /** `add to memory`, `apply 3 op(s) to user profile`, ... */
  summary: string;
  /** The content, old text and operations, one per line. */
  detail: string;
}

export interface MemoryHandlerOptions {
  /** Every write needs `approveWrite` to say yes (`memory.write_approval`). Without an approver, writes are refused. */
  writeApproval?: boolean | undefined;
  approveWrite?: ((request: MemoryWriteRequest, ctx: AgentLoopContext) => boolean | Promise<boolean>) | undefined;
  /** Consolidation failures allowed per turn before the tool tells the model to stop (default 3). */
  maxConsolidationFailures?: number | undefined;
}

/** The memory handler, with the turn boundary the loop marks. */
export interface MemoryToolHandler extends AgentLoopHandler {
  /** Call at the start of each user turn: resets the session's consolidation-failure count. */
  beginTurn(sessionId?: string): void;
}

const json = (body: object): string => JSON.stringify(body);
const fail = (error: string): string => json({ success: false, error });
const str = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

const LABELS: Record<MemoryTarget, string> = { memory: "memory", user: "user profile" };

function describeWrite(action: string, target: MemoryTarget, content: string | undefined, oldText: string | undefined, operations: readonly unknown[] | undefined): Omit<MemoryWriteRequest, "sessionId"> {
  if (operations !== undefined) {
    const detail = operations.map((raw) => {
      const op = (raw ?? {}) as { action?: unknown; content?: unknown; old_text?: unknown };
      if (op.action === "remove") return `- remove: ${String(op.old_text ?? "")}`;
      if (op.action === "replace") return `- replace: ${String(op.old_text ?? "")} -> ${String(op.content ?? "")}`;
      return `- ${String(op.action ?? "?")}: ${String(op.content ?? "")}`;
    });
    return { target, summary: `apply ${operations.length} op(s) to ${LABELS[target]}`, detail: detail.join("\n") };
  }
  if (action === "add") return { target, summary: `add to ${LABELS[target]}`, detail: content ?? "" };
  if (action === "replace") return { target, summary: `replace in ${LABELS[target]}`, detail: `old: ${oldText ?? ""}\nnew: ${content ?? ""}` };
  return { target, summary: `remove from ${LABELS[target]}`, detail: oldText ?? "" };
}

/**
 * The loop's `memory` handler over `store`. `store` may be undefined (memory turned off or not
 * set up): every call then says memory is not available.
 */
export function createMemoryHandler(store: MemoryStore | undefined, options: MemoryHandlerOptions = {}): MemoryToolHandler {
  const maxFailures = options.maxConsolidationFailures ?? 3;
  const failures = new Map<string, number>();

  const settle = (sessionId: string, result: MemoryResult): string => {
    if (result.body.success) {
      failures.delete(sessionId);
      return json(result.body);
    }
    if (!result.consolidationFailure) return json(result.body);
    const n = (failures.get(sessionId) ?? 0) + 1;
    failures.set(sessionId, n);
    if (n <= maxFailures) return json(result.body);
    return json({
      success: false,
      done: true,
      error: `Memory consolidation failed ${n} times this turn. Stop retrying memory calls — leave memory unchanged for now and continue with your reply to the user. The fact can be saved in a later turn.`,
    });
  };

  const missingOldText = async (target: MemoryTarget, action: string): Promise<string> => {
    const entries = await store!.entries(target).catch(() => []);
    return json({
      success: false,
      error: `'${action}' needs old_text -- a short unique substring of the entry to ${action}. None was provided. Reissue the ${action} with old_text set to part of one of the current_entries below.`,
      current_entries: displayEntries(entries, target),
      usage: `${count(entriesUsage(entries))}/${count(store!.limits[target])}`,
    });
  };

  const handler = async function memory(args: Record<string, unknown>, ctx: AgentLoopContext): Promise<string> {
    if (store === undefined) return fail("Memory is not available. It may be disabled in config or this environment.");
    const sessionId = ctx.sessionId ?? "";
    const target = (args.target ?? "memory") as unknown;
    if (target !== "memory" && target !== "user") return fail(`Invalid target '${String(target)}'. Use 'memory' or 'user'.`);
    const action = typeof args.action === "string" ? args.action : "";
    const content = str(args.content);
    const oldText = str(args.old_text);
    let operations: readonly unknown[] | undefined;
    const rawOps = args.operations;
    if (rawOps !== undefined && rawOps !== null && !(Array.isArray(rawOps) && rawOps.length === 0)) {
      if (!Array.isArray(rawOps)) return fail("operations must be a list of {action, content?, old_text?} objects.");
      operations = rawOps;
    } else if (action === "add" && content === undefined) {
      return fail("Content is required for 'add' action.");
    } else if (action === "replace" && oldText === undefined) {
      return missingOldText(target, "replace");
    } else if (action === "replace" && content === undefined) {
      return fail("content is required for 'replace' action.");
    } else if (action === "remove" && oldText === undefined) {
      return missingOldText(target, "remove");
    } else if (action !== "add" && action !== "replace" && action !== "remove") {
      return fail(`Unknown action '${action}'. Use: add, replace, remove`);
    }

    if (options.writeApproval) {
      const request: MemoryWriteRequest = { sessionId: ctx.sessionId, ...describeWrite(action, target, content, oldText, operations) };
      if (options.approveWrite === undefined) {
        return fail("Memory writes need approval (memory.write_approval is on) and nobody can be asked in this session; nothing was written.");
      }
      let approved = false;
      try {
        approved = await options.approveWrite(request, ctx);
      } catch (err) {
        return fail(`The memory write could not be approved (${(err as Error).message}); nothing was written.`);
      }
      if (!approved) return fail("The memory write was not approved; nothing was written. Do not retry it in this turn.");
    }

    let result: MemoryResult;
    if (operations !== undefined) result = await store.applyBatch(target, operations);
    else if (action === "add") result = await store.add(target, content!);
    else if (action === "replace") result = await store.replace(target, oldText!, content!);
    else result = await store.remove(target, oldText!);
    return settle(sessionId, result);
  };

  return Object.assign(handler, {
    beginTurn(sessionId?: string): void {
      failures.delete(sessionId ?? "");
    },
  });
}

/**
 * The registration that lists `memory` among the model's tools (toolset `memory`). Dispatch
 * refuses agent-loop tools before calling a handler; the one here only explains that.
 */
export const MEMORY_TOOL: MibyanToolOptions = {
  name: "memory",
  toolset: "memory",
  emoji: "🧠",
  schema: MEMORY_SCHEMA,
  handler: () => JSON.stringify({ error: "memory is an agent-loop tool: run it through the agent loop (createMemoryHandler)" }),
};
