/**
 * User text → a query the session store can run, such that no input can break FTS5's syntax.
 *
 * The text is not patched (stripping some characters, escaping others) but re-written: it is cut
 * into terms and operators, and the query is built only from those, every term emitted as a
 * double-quoted FTS5 string (a literal: inside quotes, `NEAR`, `:`, `(`, `^`, `-`, `+` mean nothing).
 * So the only syntax that reaches FTS5 is `"term"`, `"term" *`, `AND`, `OR` and `NOT` between terms.
 *
 * What the user can still express: balanced `"phrases"`, a trailing `*` for a prefix, and the
 * uppercase operators AND, OR, NOT between terms (AND is implied between adjacent terms). Dropped:
 * unbalanced quotes, operators with nothing on one side, terms with no letter or digit, control
 * characters; text past MAX_QUERY_CHARS and terms past MAX_QUERY_TERMS (with a note saying so).
 *
 * The word index (unicode61) cannot find CJK or Thai text, which has no spaces between words: a
 * query with such characters runs on the trigram index (substring match), and when one of its terms
 * is shorter than three characters (too short for a trigram) as LIKE conditions over the messages.
 */

export const MAX_QUERY_CHARS = 2048;
export const MAX_QUERY_TERMS = 32;

type Item = { kind: "term"; text: string; prefix: boolean } | { kind: "op"; op: "AND" | "OR" | "NOT" };

export interface QueryPlan {
  /** `none`: nothing searchable was left. */
  kind: "none" | "fts" | "trigram" | "like";
  /** The FTS5 MATCH expression (`fts`, `trigram`); for `like`, a readable form of the conditions. */
  expression: string;
  /** `like`: a SQL boolean expression over `column` with one `?` per term, and its parameters. */
  likeSql?: string;
  likeParams?: string[];
  /** The terms' texts (for snippets made outside FTS5). */
  terms: string[];
  notes: string[];
}

const SEARCHABLE = /[\p{L}\p{N}]/u;
/** Scripts written without spaces between words, which unicode61 would keep as one token per run. */
export const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/g;

function quote(text: string): string {
  return `"${text.replace(/"/g, '""')}"`;
}

/** Cuts `text` into terms and operators, in order. */
function tokenize(text: string): Item[] {
  const items: Item[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (/[\s()]/.test(c)) {
      i++;
      continue;
    }
    if (c === '"') {
      const end = text.indexOf('"', i + 1);
      if (end < 0) {
        i++; // an unbalanced quote: dropped, the words after it stay words
        continue;
      }
      let j = end + 1;
      let prefix = false;
      while (text[j] === "*") {
        prefix = true;
        j++;
      }
      items.push({ kind: "term", text: text.slice(i + 1, end).trim().replace(/\s+/g, " "), prefix });
      i = j;
      continue;
    }
    let j = i;
    // Parentheses end a word too: `NEAR(a b)` or `(a OR b)` are read as the words inside them.
    while (j < n && !/[\s()]/.test(text[j]!) && text[j] !== '"') j++;
    const word = text.slice(i, j);
    i = j;
    if (word === "AND" || word === "OR" || word === "NOT") {
      items.push({ kind: "op", op: word });
      continue;
    }
    items.push({ kind: "term", text: word.replace(/\*/g, ""), prefix: /\*$/.test(word) });
  }
  return items;
}

/** Operators only between two terms: leading and trailing ones dropped, a run kept as its first. */
function normalize(items: Item[], notes: string[]): Item[] {
  const out: Item[] = [];
  let terms = 0;
  let cut = false;
  for (const item of items) {
    if (item.kind === "term") {
      if (!SEARCHABLE.test(item.text)) continue;
      if (terms === MAX_QUERY_TERMS) {
        cut = true;
        break;
      }
      terms++;
      out.push(item);
    } else {
      const last = out[out.length - 1];
      if (last === undefined || last.kind === "op") continue;
      out.push(item);
    }
  }
  while (out.length > 0 && out[out.length - 1]!.kind === "op") out.pop();
  if (cut) notes.push(`Only the first ${MAX_QUERY_TERMS} terms of the query were used.`);
  return out;
}

function render(items: Item[], term: (item: Extract<Item, { kind: "term" }>) => string, ops: Record<"AND" | "OR" | "NOT" | "implied", string>): string {
  let out = "";
  let previous: Item | undefined;
  for (const item of items) {
    if (item.kind === "op") out += ops[item.op];
    else {
      if (previous?.kind === "term") out += ops.implied;
      out += term(item);
    }
    previous = item;
  }
  return out;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Plans the search for user text `query`; `column` is the SQL column LIKE conditions test. */
export function planQuery(query: string, column = "search_text"): QueryPlan {
  const notes: string[] = [];
  let text = typeof query === "string" ? query : "";
  if (text.length > MAX_QUERY_CHARS) {
    text = text.slice(0, MAX_QUERY_CHARS);
    notes.push(`The query was cut to its first ${MAX_QUERY_CHARS} characters.`);
  }
  text = text.replace(CONTROL, " ");
  const items = normalize(tokenize(text), notes);
  const terms = items.flatMap((item) => (item.kind === "term" ? [item.text] : []));
  if (terms.length === 0) return { kind: "none", expression: "", terms, notes };
  if (!terms.some((t) => UNSPACED.test(t))) {
    const expression = render(items, (t) => (t.prefix ? `${quote(t.text)} *` : quote(t.text)), { AND: " AND ", OR: " OR ", NOT: " NOT ", implied: " " });
    return { kind: "fts", expression, terms, notes };
  }
  if (terms.every((t) => [...t].length >= 3)) {
    const expression = render(items, (t) => quote(t.text), { AND: " AND ", OR: " OR ", NOT: " NOT ", implied: " " });
    return { kind: "trigram", expression, terms, notes };
  }
  const likeParams: string[] = [];
  const likeSql = render(
    items,
    (t) => {
      likeParams.push(`%${escapeLike(t.text)}%`);
      return `${column} LIKE ? ESCAPE '\\'`;
    },
    { AND: " AND ", OR: " OR ", NOT: " AND NOT ", implied: " AND " },
  );
  const expression = render(items, (t) => quote(t.text), { AND: " AND ", OR: " OR ", NOT: " NOT ", implied: " " });
  return { kind: "like", expression, likeSql: `(${likeSql})`, likeParams, terms, notes };
}

/**
 * A `>>>match<<<` snippet of `text` around the first occurrence of any of `terms` (for matches
 * made without FTS5, which has its own `snippet()`): up to `width` characters each side.
 */
export function snippetAround(text: string, terms: readonly string[], width = 60): string {
  const lower = text.toLowerCase();
  let best = -1;
  let length = 0;
  for (const term of terms) {
    const at = lower.indexOf(term.toLowerCase());
    if (at >= 0 && (best < 0 || at < best)) {
      best = at;
      length = term.length;
    }
  }
  if (best < 0) return text.length > 2 * width ? `${text.slice(0, 2 * width)}...` : text;
  const start = Math.max(0, best - width);
  const end = Math.min(text.length, best + length + width);
  return `${start > 0 ? "..." : ""}${text.slice(start, best)}>>>${text.slice(best, best + length)}<<<${text.slice(best + length, end)}${end < text.length ? "..." : ""}`;
}
