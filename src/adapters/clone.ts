/**
 * Every adapter hands its output to code we do not control (SDKs, the CLI's
 * JSON printer, user code that patches definitions). A JSON round trip both
 * detaches the output from the registry's own schema objects and guarantees
 * the result is JSON-serialisable, which `structuredClone` would not
 * (it keeps `undefined`, Dates, Maps...). A copy nested deeper than V8's
 * JSON.stringify can go (a few thousand levels) is still made, without
 * recursion, but cannot be serialised; the rewriting adapters cut such
 * schemas well before that (see walk.ts).
 */
export function cloneJson<T>(value: T): T {
  if (value === undefined) return value;
  try {
    return JSON.parse(JSON.stringify(value)) as T;
  } catch (error) {
    // V8's JSON.stringify recurses and gives up a few thousand levels down,
    // while JSON.parse does not, so a schema received as JSON can be too deep
    // to stringify. Copy it without recursion instead.
    if (!(error instanceof RangeError)) throw error;
    return copyAsJson(value) as T;
  }
}

/**
 * `object[key] = value` for a key that came from the input. A property named
 * `__proto__` is legal JSON (and `JSON.parse` makes it an own property), but
 * plain assignment would set the object's prototype instead, dropping the
 * property while `required` still names it. Defining it keeps it a property.
 */
export function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

type Container = Record<string, unknown> | unknown[];

/** Copy `value` to `into[at]`; `key` is what `toJSON` is called with. */
interface CopyTask {
  readonly value: unknown;
  readonly key: string;
  readonly into: Container;
  readonly at: string | number;
}

/**
 * What `JSON.parse(JSON.stringify(value))` gives, at any depth: `toJSON` is
 * called, wrapper objects are unwrapped, non-finite numbers become `null`,
 * `undefined`/functions/symbols are left out of objects and become `null` in
 * arrays, and a cycle or a BigInt throws the same `TypeError`.
 */
function copyAsJson(value: unknown): unknown {
  const top: unknown[] = [];
  const ancestors = new Set<object>();
  // A `leave` entry pops an object off the ancestors once all its members are copied.
  const pending: (CopyTask | { readonly leave: object })[] = [{ value, key: "", into: top, at: 0 }];
  while (pending.length > 0) {
    const task = pending.pop() as CopyTask | { leave: object };
    if ("leave" in task) {
      ancestors.delete(task.leave);
      continue;
    }
    let v = task.value;
    if ((typeof v === "object" && v !== null) || typeof v === "bigint") {
      const toJSON = (v as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === "function") v = (toJSON as (key: string) => unknown).call(v, task.key);
    }
    if (v instanceof Number) v = Number(v);
    else if (v instanceof String) v = String(v);
    else if (v instanceof Boolean) v = v.valueOf();

    let copy: unknown;
    if (v === null || typeof v === "string" || typeof v === "boolean") copy = v;
    else if (typeof v === "number") copy = Number.isFinite(v) ? v + 0 : null; // `+ 0` turns -0 into 0, as JSON does
    else if (typeof v === "bigint") throw new TypeError("Do not know how to serialize a BigInt");
    else if (typeof v === "object") {
      if (ancestors.has(v)) throw new TypeError("Converting circular structure to JSON");
      ancestors.add(v);
      pending.push({ leave: v });
      // Members are pushed last-first so they are copied in order, which keeps the key order.
      if (Array.isArray(v)) {
        const array: unknown[] = [];
        for (let i = v.length - 1; i >= 0; i--) pending.push({ value: v[i], key: String(i), into: array, at: i });
        copy = array;
      } else {
        const object: Record<string, unknown> = {};
        const keys = Object.keys(v);
        for (let i = keys.length - 1; i >= 0; i--) {
          const key = keys[i] as string;
          pending.push({ value: (v as Record<string, unknown>)[key], key, into: object, at: key });
        }
        copy = object;
      }
    }
    // Anything else (undefined, a function, a symbol) has no JSON form.
    if (Array.isArray(task.into)) task.into[task.at as number] = copy === undefined ? null : copy;
    else if (copy !== undefined) setOwn(task.into, task.at as string, copy);
  }
  return top[0];
}
