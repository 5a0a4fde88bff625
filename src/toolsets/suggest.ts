import { distance } from "fastest-levenshtein";

/** How many edits a whole name (or one of its `-`/`_` separated parts) may differ by. */
function editThreshold(length: number): number {
  if (length <= 2) return 0;
  if (length <= 4) return 1;
  if (length <= 8) return 2;
  return 3;
}

const SEPARATORS = /[-_.:\s]+/;

/**
 * A lower score is a better match; `undefined` means no match. Tiers:
 * 0 equal ignoring case; 10+ whole-name edit distance; 20+ prefix;
 * 30+ edit distance to a part of the candidate (`webb` → `web_tools`); 40 substring.
 */
function score(query: string, candidate: string): number | undefined {
  if (query === candidate) return 0;
  const limit = editThreshold(query.length);
  let best: number | undefined;
  const take = (s: number): void => {
    if (best === undefined || s < best) best = s;
  };

  const whole = distance(query, candidate);
  if (whole <= limit) take(10 + whole);

  if (
    (query.length >= 2 && candidate.startsWith(query)) ||
    (candidate.length >= 3 && query.startsWith(candidate))
  ) {
    take(20 + Math.min(9, Math.abs(candidate.length - query.length)));
  }

  if (best === undefined || best > 30) {
    const parts = candidate.split(SEPARATORS);
    if (parts.length > 1) {
      for (const part of parts) {
        if (part.length < 2) continue;
        const d = distance(query, part);
        if (d <= editThreshold(part.length) && d <= limit) take(30 + d);
      }
    }
  }

  if (best === undefined && query.length >= 3 && (candidate.includes(query) || (candidate.length >= 3 && query.includes(candidate)))) {
    take(40);
  }
  return best;
}

/**
 * Up to `max` candidates that look like `name`, best first: equal ignoring case,
 * a small edit distance (scaled with the name's length), a prefix in either
 * direction, a close `-`/`_` separated part, or a substring. Case-insensitive;
 * ties are broken alphabetically. Returns the candidates as given (original case).
 */
export function closeMatches(name: string, candidates: Iterable<string>, max = 3): string[] {
  if (max <= 0) return [];
  const query = name.trim().toLowerCase();
  if (query === "") return [];
  const scored: Array<{ candidate: string; score: number }> = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    if (seen.has(candidate)) continue;
    seen.add(candidate);
    const s = score(query, candidate.toLowerCase());
    if (s !== undefined) scored.push({ candidate, score: s });
  }
  scored.sort((a, b) => a.score - b.score || (a.candidate < b.candidate ? -1 : a.candidate > b.candidate ? 1 : 0));
  return scored.slice(0, max).map((s) => s.candidate);
}
