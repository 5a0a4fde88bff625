/**
 * The output of chat's own line reader, which can be silenced while a turn runs.
 *
 * On a terminal, chat's readline interface stays open during a turn (it reads Ctrl-C as a key in raw
 * mode) and echoes whatever is typed. During a turn that echo has no place: it lands on the activity
 * line, and while a question is open (approval, memory write) the question's own reader echoes the
 * same keys, so every character showed twice. Silenced, chat's reader still reads keys (Ctrl-C still
 * interrupts); only its writes are dropped, and the next prompt redraws its line whole.
 */

export interface QuietOutput {
  /** What to give readline as `output`: the stream itself in every respect but `write` while quiet. */
  readonly stream: NodeJS.WriteStream;
  quiet(on: boolean): void;
}

export function quietOutput(target: NodeJS.WriteStream): QuietOutput {
  let quiet = false;
  const dropped = (_chunk: unknown, encoding?: unknown, callback?: unknown): boolean => {
    const done = typeof encoding === "function" ? encoding : callback;
    if (typeof done === "function") queueMicrotask(() => (done as () => void)());
    return true;
  };
  // A proxy, not a wrapper stream: readline reads `columns`, `isTTY` and listens for `resize` on it,
  // and all of that must be the terminal's own (methods are bound to it, so listeners land on it).
  const stream = new Proxy(target, {
    get(object, property) {
      if (property === "write" && quiet) return dropped;
      const value: unknown = Reflect.get(object, property, object);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(object) : value;
    },
  });
  return {
    stream,
    quiet: (on) => {
      quiet = on;
    },
  };
}
