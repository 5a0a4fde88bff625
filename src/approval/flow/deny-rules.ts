/**
 * User deny rules (`approvals.deny`): checked right after the hardline rules, in every
 * mode, on every backend (unless the rule names one).
 */

import type { RuleMatch } from "../types.js";

export interface DenyRule {
  /** Rule id or a glob over rule ids (`git-*`). */
  rule?: string;
  /** A glob (`*`, `?`) or a word prefix over a match's normalised prefix. */
  prefix?: string;
  /** A rule category. */
  category?: string;
  /** Only on this backend. */
  backend?: string;
  /** Told to the model. */
  reason?: string;
}

export interface DenyRuleHit {
  rule: DenyRule;
  /** The match that hit, or undefined when the prefix matched the command text. */
  match?: RuleMatch;
}

const GLOB_CHARS = /[*?]/;

function escapeRegExp(text: string): string {
  return text.replace(/[.+^${}()|[\]\\]/g, "\\$&");
}

/** Whole-string glob: `*` any run, `?` one character. */
function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${escapeRegExp(glob).replace(/\*/g, "[\\s\\S]*").replace(/\?/g, "[\\s\\S]")}$`);
}

const collapse = (text: string): string => text.trim().replace(/\s+/g, " ");

/**
 * `pattern` against `text`: a glob when it has `*` or `?`, else a word prefix (`git push`
 * matches `git push origin` but not `git pushx`). Whitespace runs count as one space.
 */
export function matchesPrefixPattern(pattern: string, text: string): boolean {
  const p = collapse(pattern);
  const t = collapse(text);
  if (GLOB_CHARS.test(p)) return globToRegExp(p).test(t);
  return t === p || t.startsWith(`${p} `);
}

function matchesId(pattern: string, id: string): boolean {
  return GLOB_CHARS.test(pattern) ? globToRegExp(pattern).test(id) : pattern === id;
}

function ruleHitsMatch(rule: DenyRule, match: RuleMatch): boolean {
  if (rule.rule !== undefined && !matchesId(rule.rule, match.rule)) return false;
  if (rule.category !== undefined && rule.category !== match.category) return false;
  if (rule.prefix !== undefined && !matchesPrefixPattern(rule.prefix, match.prefix)) return false;
  return rule.rule !== undefined || rule.category !== undefined || rule.prefix !== undefined;
}

/**
 * The first deny rule that applies. A rule hits a match when every field it sets fits; a
 * rule with only `prefix` also hits the command text as written (a convenience for commands
 * detection does not flag, such as `npm publish`; rewriting the command avoids it).
 */
export function findDenyRule(
  rules: readonly DenyRule[],
  command: string,
  matches: readonly RuleMatch[],
  backend: string,
): DenyRuleHit | undefined {
  for (const rule of rules) {
    if (rule.backend !== undefined && rule.backend !== backend) continue;
    const match = matches.find((m) => ruleHitsMatch(rule, m));
    if (match) return { rule, match };
    if (rule.prefix !== undefined && rule.rule === undefined && rule.category === undefined) {
      if (matchesPrefixPattern(rule.prefix, command)) return { rule };
    }
  }
  return undefined;
}
