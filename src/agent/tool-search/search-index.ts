/**
 * The catalog's full-text index: BM25 (k1 1.5, b 0.75, idf `ln(1 + (N - df + 0.5) / (df + 0.5))`, the
 * Python original's parameters) over the lowercased `[a-z0-9]+` tokens of a tool's name (with `_ . - :`
 * as separators), its description and its top-level parameter names. An inverted index, so a query costs
 * the postings of its own terms, not a pass over every tool. Hand-written rather than a search library:
 * the scoring must match the original's exactly, and it is sixty lines.
 */

export interface IndexedTool {
  readonly name: string;
  readonly description: string;
  /** Top-level parameter names. */
  readonly parameterNames: readonly string[];
}

export interface SearchHit {
  readonly index: number;
  readonly score: number;
}

const K1 = 1.5;
const B = 0.75;
/** A query longer than this is cut: no tool search needs more, and the cost stays bounded. */
export const MAX_QUERY_CHARS = 500;
const MAX_QUERY_TERMS = 32;
/** The score a name-substring match gets when no term scored (the original's 0.1). */
const SUBSTRING_SCORE = 0.1;

const TOKEN = /[a-z0-9]+/g;

export function tokenize(text: string): string[] {
  return text.toLowerCase().match(TOKEN) ?? [];
}

export class SearchIndex {
  readonly size: number;
  private readonly names: string[];
  private readonly lowerNames: string[];
  private readonly lengths: Float64Array;
  private readonly averageLength: number;
  /** term → [doc, tf, doc, tf, ...] */
  private readonly postings = new Map<string, number[]>();

  constructor(readonly tools: readonly IndexedTool[]) {
    this.size = tools.length;
    this.names = tools.map((tool) => tool.name);
    this.lowerNames = this.names.map((name) => name.toLowerCase());
    this.lengths = new Float64Array(tools.length);
    let total = 0;
    // One counting map reused for every tool: building the index is paid after each registry change.
    const counts = new Map<string, number>();
    const count = (text: string): number => {
      const tokens = tokenize(text);
      for (const token of tokens) counts.set(token, (counts.get(token) ?? 0) + 1);
      return tokens.length;
    };
    for (let doc = 0; doc < tools.length; doc++) {
      const tool = tools[doc]!;
      counts.clear();
      let length = count(tool.name.replace(/[_.\-:]/g, " ")) + count(tool.description);
      for (const parameter of tool.parameterNames) length += count(parameter);
      this.lengths[doc] = length;
      total += length;
      for (const [term, tf] of counts) {
        const list = this.postings.get(term);
        if (list === undefined) this.postings.set(term, [doc, tf]);
        else list.push(doc, tf);
      }
    }
    this.averageLength = tools.length === 0 ? 0 : total / tools.length || 1;
  }

  /**
   * The best `limit` tools for `query` among those `inScope` accepts, best first (ties by name). When no
   * term scores, names containing a query word are returned (score 0.1), so a word every tool shares,
   * or a fragment of a name, still finds something.
   */
  search(query: string, limit: number, inScope: (index: number) => boolean): SearchHit[] {
    const terms = [...new Set(tokenize(query.slice(0, MAX_QUERY_CHARS)))].slice(0, MAX_QUERY_TERMS);
    const scores = new Map<number, number>();
    const n = this.size;
    for (const term of terms) {
      const list = this.postings.get(term);
      if (list === undefined) continue;
      const df = list.length / 2;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (let i = 0; i < list.length; i += 2) {
        const doc = list[i]!;
        const tf = list[i + 1]!;
        const norm = tf + K1 * (1 - B + (B * this.lengths[doc]!) / this.averageLength);
        scores.set(doc, (scores.get(doc) ?? 0) + (idf * tf * (K1 + 1)) / norm);
      }
    }
    let hits: SearchHit[] = [];
    for (const [doc, score] of scores) if (score > 0 && inScope(doc)) hits.push({ index: doc, score });
    if (hits.length === 0 && terms.length > 0) {
      hits = [];
      for (let doc = 0; doc < n; doc++) {
        const name = this.lowerNames[doc]!;
        if (terms.some((term) => term.length >= 2 && name.includes(term)) && inScope(doc)) hits.push({ index: doc, score: SUBSTRING_SCORE });
      }
    }
    return topK(hits, limit, this.names);
  }
}

function topK(hits: SearchHit[], limit: number, names: readonly string[]): SearchHit[] {
  const order = (a: SearchHit, b: SearchHit): number =>
    b.score - a.score || (names[a.index]! < names[b.index]! ? -1 : names[a.index]! > names[b.index]! ? 1 : 0);
  if (hits.length <= limit * 4) return hits.sort(order).slice(0, limit);
  // Many hits (a common word): keep a small sorted window instead of sorting them all.
  const best: SearchHit[] = [];
  for (const hit of hits) {
    if (best.length === limit && order(hit, best[limit - 1]!) >= 0) continue;
    let at = best.length;
    while (at > 0 && order(hit, best[at - 1]!) < 0) at--;
    best.splice(at, 0, hit);
    if (best.length > limit) best.pop();
  }
  return best;
}
