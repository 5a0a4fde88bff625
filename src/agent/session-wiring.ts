/**
 * The agent state of one chat session, built from the profile home: the SQLite session store
 * behind the loop's `SessionRecorder`, the memory files as its `MemorySnapshotSource`, and the
 * todo / memory / session_search handlers, with their schemas registered so the model sees them.
 * What `mibyan chat` (and an embedding application) hands to `runAgent`; `close()` closes the store.
 *
 * The loop knows none of these classes (types.ts): this file is the one place they meet it.
 */

import type { MemoryConfig } from "../config/config-types.js";
import type { ToolRegistry } from "../registry/tool-registry.js";
import { FileMemoryStore, memoryStoreOptionsFromConfig } from "./stores/memory/file-memory-store.js";
import { SessionStoreError } from "./stores/sessions/errors.js";
import { COMPACTION_END_REASON } from "./stores/sessions/types.js";
import { openSessionStore } from "./stores/sessions/sqlite-store.js";
import type { SqliteSessionStore } from "./stores/sessions/sqlite-store.js";
import { sessionRecorder } from "./stores/sessions/recorder.js";
import { hydrateTodosFromHistory } from "./stores/todo-history.js";
import { InMemoryTodoStore } from "./stores/todo-store.js";
import { createMemoryHandler, MEMORY_TOOL, type MemoryHandlerOptions } from "./tools/memory.js";
import { createSessionSearchHandler, SESSION_SEARCH_TOOL } from "./tools/session-search.js";
import { createTodoHandler, TODO_TOOL } from "./tools/todo.js";
import type { AgentLoopHandlers, MemorySnapshotSource, SessionRecorder } from "./types.js";
import { createDelegateHandler, type DelegateHandlerOptions } from "./delegation/handler.js";
import { delegateTaskTool } from "./delegation/schema.js";
import { delegationSettings } from "./delegation/settings.js";

export interface SessionWiringOptions {
  /** The profile home (stores live under it). */
  home: string;
  /** Where the agent-loop tools' schemas are registered (skipped for a name already registered). */
  registry: ToolRegistry;
  /** config.yaml's `memory` section. */
  memory: Partial<MemoryConfig>;
  /** The model name, stored with a new session. */
  model?: string | undefined;
  /** Continue this stored session instead of starting one. */
  resume?: string | undefined;
  /** With `resume`: a session of that id that is not stored yet is started under that id (not an error). */
  createIfMissing?: boolean | undefined;
  /** The new session's source (default `cli`). */
  source?: string | undefined;
  /** Asks whether a memory write may happen when `memory.write_approval` is on (without it such writes are refused). */
  approveMemoryWrite?: MemoryHandlerOptions["approveWrite"];
}

export interface SessionWiring {
  sessionId: string;
  /** True when the session was resumed. */
  resumed: boolean;
  session: SessionRecorder;
  memory: MemorySnapshotSource | undefined;
  handlers: AgentLoopHandlers;
  store: SqliteSessionStore;
  close(): void;
}

/** Registers the agent-loop tools' schemas once (discovery does not: only an agent loop can run them). */
function registerAgentLoopTools(registry: ToolRegistry, memoryOn: boolean): void {
  for (const tool of [TODO_TOOL, SESSION_SEARCH_TOOL, ...(memoryOn ? [MEMORY_TOOL] : [])]) {
    if (!registry.has(tool.name)) registry.register(tool);
  }
}

/** Opens the stores and builds the session; throws `SessionStoreError` (kind `not_found` for an unknown `resume` id). */
export async function openSessionWiring(options: SessionWiringOptions): Promise<SessionWiring> {
  const store = openSessionStore({ home: options.home });
  try {
    let resumed = false;
    let sessionId: string;
    if (options.resume !== undefined) {
      // A session ended by compaction lives on in its continuation: resuming it resumes the continuation
      // (the old id is what a chat printed before it compacted), not the uncompacted transcript.
      const asked = store.getSession(options.resume);
      const existing = asked?.end_reason === COMPACTION_END_REASON ? store.getSession(store.compactionTip(asked.id)) : asked;
      if (existing === undefined && options.createIfMissing === true) {
        sessionId = store.createSession({ id: options.resume, source: options.source ?? "cli", model: options.model ?? null }).id;
      } else {
        if (existing === undefined) throw new SessionStoreError("not_found", `no session ${JSON.stringify(options.resume)} (mibyan sessions list shows the stored ones)`);
        sessionId = existing.id;
        resumed = true;
        if (options.model !== undefined && existing.model !== options.model) store.updateSession(sessionId, { model: options.model });
      }
    } else {
      sessionId = store.createSession({ source: options.source ?? "cli", model: options.model ?? null }).id;
    }
    const recorder = await sessionRecorder(store, { id: sessionId, resume: true });
    // The store's recorder is typed structurally (the store does not depend on the loop); it is the loop's.
    const session: SessionRecorder = recorder;

    const memoryStore = new FileMemoryStore(memoryStoreOptionsFromConfig(options.memory, options.home));
    const memoryOn = memoryStore.enabledTargets.length > 0;
    const todos = new InMemoryTodoStore();
    // The todo list lives in memory: a resumed session gets it back from its last todo result.
    if (resumed) await hydrateTodosFromHistory(todos, sessionId, await recorder.history());

    const handlers: AgentLoopHandlers = {
      todo: createTodoHandler(todos),
      session_search: createSessionSearchHandler(store),
    };
    if (memoryOn) handlers.memory = createMemoryHandler(memoryStore, { writeApproval: options.memory.writeApproval === true, approveWrite: options.approveMemoryWrite });
    registerAgentLoopTools(options.registry, memoryOn);

    return {
      sessionId,
      resumed,
      session,
      memory: memoryOn ? memoryStore : undefined,
      handlers,
      store,
      close: () => store.close(),
    };
  } catch (thrown) {
    store.close();
    throw thrown;
  }
}

/**
 * Adds `delegate_task` to a session (docs/delegation.md): its schema registered (stating the limits of
 * `options.delegation`), and a handler whose children are stored in this session's store (source
 * `subagent`, parent = the delegating session) and get its todo and session_search handlers (todo
 * lists are per session, so each child has its own). `options` are the parent run's endpoint,
 * toolsets and settings. Read the children's key before it leaves the environment: pass `child`
 * (`childEndpoint`) when the key variable is about to be deleted.
 */
export function addDelegation(wiring: SessionWiring, registry: ToolRegistry, options: Omit<DelegateHandlerOptions, "registry" | "sessions" | "handlers">): void {
  const settings = { ...delegationSettings(options.delegation, options.env ?? process.env), ...options.settings };
  if (!registry.has("delegate_task")) registry.register(delegateTaskTool(() => settings));
  const { todo, session_search } = wiring.handlers;
  wiring.handlers.delegate_task = createDelegateHandler({ ...options, registry, sessions: wiring.store, handlers: { todo, session_search } });
}
