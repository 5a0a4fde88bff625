/** Cuts `text` to at most `max` characters, saying how much was dropped. */
export function capText(text: string, max: number): string {
  if (text.length <= max) return text;
  const dropped = text.length - max;
  return `${text.slice(0, max)}… [${dropped} more characters]`;
}

/** `Error: message` for errors, the string form for anything else a `throw` can carry. */
export function describeThrown(thrown: unknown): string {
  if (thrown instanceof Error) {
    const name = thrown.name || thrown.constructor?.name || "Error";
    return thrown.message ? `${name}: ${thrown.message}` : name;
  }
  if (typeof thrown === "string") return thrown;
  try {
    return JSON.stringify(thrown) ?? String(thrown);
  } catch {
    return String(thrown);
  }
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}
