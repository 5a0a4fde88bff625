/**
 * Roughly what a pattern costs the linear-time engine to compile. Matching is
 * linear, but compiling is not free: counted repetitions are expanded, so
 * `\w{1000}` written 100 times (800 characters) takes half a second to compile.
 * RE2 refuses a nested repetition over 1,000 on its own; this counts the rest.
 *
 * The count: every atom (a character, an escape, a class) is 1, a group is
 * the sum of its contents, `{n}`/`{n,m}` multiplies the atom before it by its
 * largest count, and every pattern costs 10 more for the fixed work of
 * compiling (about 120 µs on this machine; one unit is about 11 µs).
 */
export function patternCost(pattern: string): number {
  const frames: { total: number; last: number }[] = [{ total: 0, last: 0 }];
  let i = 0;
  while (i < pattern.length) {
    const frame = frames[frames.length - 1] as { total: number; last: number };
    const c = pattern[i] as string;
    if (c === "\\") {
      const next = pattern[i + 1];
      i += 2;
      // \p{L}, \u{1F600}, \x{41}: the braces belong to the escape, not a repetition.
      if ((next === "p" || next === "P" || next === "u" || next === "x") && pattern[i] === "{") {
        const close = pattern.indexOf("}", i);
        i = close < 0 ? pattern.length : close + 1;
      }
      atom(frame, 1);
    } else if (c === "[") {
      i = classEnd(pattern, i + 1);
      atom(frame, 1);
    } else if (c === "(") {
      frames.push({ total: 0, last: 0 });
      i++;
    } else if (c === ")") {
      i++;
      if (frames.length > 1) {
        const group = frames.pop() as { total: number; last: number };
        atom(frames[frames.length - 1] as { total: number; last: number }, group.total);
      }
    } else if (c === "{") {
      const counted = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i, i + 24));
      if (counted === null) {
        atom(frame, 1);
        i++;
        continue;
      }
      const low = Number(counted[1]);
      const high = counted[3] === undefined ? low : counted[3] === "" ? low + 1 : Number(counted[3]);
      const times = Math.max(low, high, 1);
      frame.total += frame.last * (times - 1);
      frame.last *= times;
      i += counted[0].length;
    } else if (c === "|" || c === "*" || c === "+" || c === "?" || c === "^" || c === "$") {
      i++;
    } else {
      atom(frame, 1);
      i++;
    }
  }
  // Unclosed groups (the engine will refuse the pattern anyway) still count.
  let total = 0;
  for (const frame of frames) total += frame.total;
  return total + 10;
}

function atom(frame: { total: number; last: number }, size: number): void {
  frame.total += size;
  frame.last = size;
}

/** Index just past the `]` closing a class whose contents start at `start` (a `]` first in the class is literal). */
function classEnd(pattern: string, start: number): number {
  let i = start;
  if (pattern[i] === "^") i++;
  if (pattern[i] === "]") i++;
  while (i < pattern.length && pattern[i] !== "]") i += pattern[i] === "\\" ? 2 : 1;
  return i + 1;
}
