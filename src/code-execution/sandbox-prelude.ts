/**
 * The module that runs inside the child process before the model's program and
 * defines `globalThis.tools`.
 *
 * Every `tools.<name>(args)` call sends one request over the child's IPC
 * channel and waits for the answer:
 *
 *   child → parent  { type: "mibyan:tool_call",   id, name, args }
 *   parent → child  { type: "mibyan:tool_result", id, ok: true,  result: string }
 *                   { type: "mibyan:tool_result", id, ok: false, error: string }
 *
 * `ok: true` carries the tool's result string (the same string the model would
 * get from a direct call, errors of the tool included); `ok: false` means the
 * parent refused to run the call (tool not callable here, call limit reached,
 * run ending) and the promise rejects with that message.
 *
 * The IPC channel keeps a process alive while someone listens on it, so the
 * `message` listener is attached only while a call is pending: a program that
 * has finished its work exits on its own.
 *
 * The parent still checks every request itself: a program can bypass this
 * module and call `process.send` directly.
 */

/** Message type of a request from the program. */
export const TOOL_CALL_MESSAGE = "mibyan:tool_call";
/** Message type of the parent's answer. */
export const TOOL_RESULT_MESSAGE = "mibyan:tool_result";

/** A request from the program. */
export interface ToolCallMessage {
  type: typeof TOOL_CALL_MESSAGE;
  id: number;
  name: string;
  args: Record<string, unknown>;
}

/** The parent's answer to one request. */
export type ToolResultMessage =
  | { type: typeof TOOL_RESULT_MESSAGE; id: number; ok: true; result: string }
  | { type: typeof TOOL_RESULT_MESSAGE; id: number; ok: false; error: string };

/** What the prelude says when a name outside `callable` is used. */
export interface PreludeOptions {
  /** Tools the program may call (already filtered by the parent). */
  callable: readonly string[];
  /** Name of the tool running the program (it cannot call itself). */
  selfName: string;
}

/**
 * The prelude's source (an ES module). The callable names are embedded as JSON
 * literals, so nothing the model wrote is ever spliced into it.
 */
export function buildSandboxPrelude(options: PreludeOptions): string {
  const callable = JSON.stringify([...options.callable]);
  const selfName = JSON.stringify(options.selfName);
  return `// mibyan-tools: defines globalThis.tools (generated; see src/code-execution/sandbox-prelude.ts)
const CALLABLE = Object.freeze(${callable});
const SELF = ${selfName};
const CALL = ${JSON.stringify(TOOL_CALL_MESSAGE)};
const RESULT = ${JSON.stringify(TOOL_RESULT_MESSAGE)};
const pending = new Map();
let nextId = 0;

function onMessage(message) {
  if (message === null || typeof message !== "object" || message.type !== RESULT) return;
  const call = pending.get(message.id);
  if (call === undefined) return;
  pending.delete(message.id);
  if (pending.size === 0) process.off("message", onMessage);
  if (message.ok === true) call.resolve(typeof message.result === "string" ? message.result : String(message.result));
  else call.reject(failure(String(message.error), call.trace));
}

function failure(message, trace) {
  const error = new Error(message);
  // Point the stack at the program's call, not at this module's message handler.
  const frames = typeof trace.stack === "string" ? trace.stack.slice(trace.stack.indexOf("\\n")) : "";
  if (frames.startsWith("\\n")) error.stack = "Error: " + message + frames;
  return error;
}

function notCallable(name) {
  if (name === SELF) return SELF + " cannot call itself from inside a program.";
  const listed = CALLABLE.length === 0
    ? "no tools can be called from code in this run"
    : "callable tools: " + CALLABLE.join(", ");
  return "tools." + name + " is not available in this run (" + listed + ").";
}

function callTool(name, args) {
  const trace = {};
  Error.captureStackTrace(trace, callTool);
  if (!CALLABLE.includes(name)) return Promise.reject(failure(notCallable(name), trace));
  if (args === undefined) args = {};
  if (args === null || typeof args !== "object" || Array.isArray(args)) {
    return Promise.reject(failure("tools." + name + "() takes one object of arguments, e.g. tools." + name + "({ ... }).", trace));
  }
  if (typeof process.send !== "function" || !process.connected) {
    return Promise.reject(failure("the channel to the tool runtime is closed; tools." + name + " cannot be called.", trace));
  }
  const id = ++nextId;
  return new Promise((resolve, reject) => {
    if (pending.size === 0) process.on("message", onMessage);
    pending.set(id, { resolve, reject, trace });
    try {
      process.send({ type: CALL, id, name, args });
    } catch (thrown) {
      pending.delete(id);
      if (pending.size === 0) process.off("message", onMessage);
      reject(failure("the arguments of tools." + name + " cannot be sent (they must be JSON-serialisable): " + (thrown && thrown.message ? thrown.message : String(thrown)), trace));
    }
  });
}

const target = {};
for (const name of CALLABLE) {
  Object.defineProperty(target, name, {
    value: { [name]: (args) => callTool(name, args) }[name],
    enumerable: true,
  });
}
Object.freeze(target);

// Unknown names give a function that rejects with a clear message instead of
// "tools.x is not a function". "then" stays undefined so \`await tools\` works.
globalThis.tools = new Proxy(target, {
  get(object, key, receiver) {
    if (typeof key !== "string" || key in object || key === "then" || key === "toJSON") return Reflect.get(object, key, receiver);
    return (args) => callTool(key, args);
  },
});
`;
}
