/**
 * One tool set's side of the approvals a framework asks for: which calls a person must approve
 * before they run (a framework's `needsApproval`), and the scope each call runs in (what the
 * person approved, and where the gate's questions go).
 *
 * - Foreseen: the `terminal` command and the `execute_code` program are previewed from the
 *   arguments (approval-preview.ts).
 * - Learned: anything else the gate would put to a person during a call (a file tool's write to
 *   a system file, a plugin's `approve` directive, a command the preview did not flag) is denied
 *   for now and remembered under the tool and its exact arguments; the model is told to call
 *   again, and that next call with the same arguments asks the person through the framework first.
 * - Granted: a call the person approved runs with a one-shot grant of exactly the texts that were
 *   put to them (src/approval/flow/call-approval.ts): the ones recorded when the approval was requested, or, for a
 *   request another process made, the ones foreseen and learned for the input being run.
 */

import type { ApprovalAnswer, CallApprovalScope } from "../approval/flow/types.js";
import type { ToolRegistry } from "../registry/tool-registry.js";
import { registry as defaultRegistry } from "../registry/singleton.js";
import { foreseenApprovals, gatedText, type PreviewScope } from "./approval-preview.js";

/** Entries kept per map (requests never answered, questions never repeated): the oldest go first. */
const KEPT = 1_000;

/** Built-in tools that put something to the gate during a call (a command, a program, a write). */
const ASKING_TOOLS: ReadonlySet<string> = new Set(["terminal", "execute_code", "write_file", "patch"]);

export interface ApprovalBridge {
  /**
   * The texts a person must approve before this call runs (none: it runs unasked), remembered
   * for `toolCallId` on the first request: a later request for the same call id keeps the first
   * answer (the AI SDK asks again, with the input it is about to run, before it runs an approved
   * call), unless `fresh` says the framework holds no answer for this call id yet (a provider that
   * reuses call ids across turns): then the request starts over. Never throws.
   */
  requestFor(name: string, args: unknown, toolCallId: string | undefined, fresh?: boolean): Promise<string[]>;
  /**
   * The scope a call runs in: with `approved`, grants of the texts put to the person; always,
   * the route of the gate's questions back to the framework. Undefined for a call that cannot
   * reach the gate (no scope, no cost).
   */
  scopeFor(name: string, args: unknown, toolCallId: string | undefined, approved: boolean): CallApprovalScope | undefined;
  /** Whether a call of `name` may reach the gate (a built-in that asks, or any tool while a pre-hook such as a plugin's is installed). */
  mayAsk(name: string): boolean;
}

function remember<K, V>(map: Map<K, V>, key: K, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > KEPT) map.delete(map.keys().next().value as K);
}

function argsKey(name: string, args: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(args);
  } catch {
    json = undefined;
  }
  return `${name}\u0000${json ?? ""}`;
}

export function createApprovalBridge(preview: PreviewScope, registry: ToolRegistry | undefined): ApprovalBridge {
  const target = registry ?? defaultRegistry;
  /** Texts the gate asked about during a call and a person has not yet approved, by tool and exact arguments. */
  const learned = new Map<string, Set<string>>();
  /** What each approval request put to the person, by tool call id. */
  const requested = new Map<string, readonly string[]>();

  const mayAsk = (name: string): boolean => ASKING_TOOLS.has(name) || target.hooks.pre.length > 0;

  const askFor = (name: string, key: string) => {
    return (request: { command: string }): ApprovalAnswer => {
      const texts = learned.get(key) ?? new Set<string>();
      texts.add(request.command);
      remember(learned, key, texts);
      return { scope: "deny", by: "framework", reason: `call ${name} again with the same arguments to ask the user` };
    };
  };

  return {
    mayAsk,
    async requestFor(name, args, toolCallId, fresh = false) {
      if (toolCallId !== undefined) {
        const earlier = requested.get(toolCallId);
        if (earlier !== undefined && !fresh) return [...earlier];
        requested.delete(toolCallId);
      }
      const texts = new Set(await foreseenApprovals(name, args, preview, { reviewerFirst: true }));
      const known = learned.get(argsKey(name, args));
      if (known !== undefined) for (const text of known) texts.add(text);
      const out = [...texts];
      if (out.length > 0 && toolCallId !== undefined) remember(requested, toolCallId, out);
      return out;
    },
    scopeFor(name, args, toolCallId, approved) {
      if (!approved && !mayAsk(name)) return undefined;
      const key = argsKey(name, args);
      const grants = new Set<string>();
      if (approved) {
        const asked = toolCallId === undefined ? undefined : requested.get(toolCallId);
        if (toolCallId !== undefined) requested.delete(toolCallId);
        if (asked !== undefined) {
          // Exactly what the person was asked about: an input edited since then gets no grant.
          for (const text of asked) grants.add(text);
        } else {
          // Requested elsewhere (another process, a RunState string): the input being run.
          const foreseen = gatedText(name, args);
          if (foreseen !== undefined) grants.add(foreseen);
          for (const text of learned.get(key) ?? []) grants.add(text);
        }
        learned.delete(key);
      }
      return { sessionId: preview.sessionId, grants, toolCallId, ask: askFor(name, key) };
    },
  };
}
