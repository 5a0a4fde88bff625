/**
 * The rule set compiled once into lookups: command matchers by program name,
 * write rules by path class, finding rules by finding. Evaluation helpers.
 */
import { INERT_COMMANDS } from "../rules/inert.js";
import { FINDINGS, RULES } from "../rules/index.js";
import type { CommandMatcher, Matcher, OperandTest, Rule, ValueTest } from "../rules/types.js";
import type { Arg, ParsedArgs } from "./model.js";
import { classBits, classifyPath, inDirectory } from "./paths.js";

interface CompiledTest {
  which: "any" | "first" | "last" | number;
  bits: number;
  equals: ReadonlySet<string> | null;
  pattern: RegExp | null;
  unless: RegExp | null;
}

interface CompiledValueTest extends CompiledTest {
  option: string;
}

export interface CompiledCommand {
  rule: Rule;
  subcommands: readonly (readonly string[])[] | null;
  all: readonly (readonly string[])[] | null;
  any: readonly string[] | null;
  none: readonly string[] | null;
  operands: readonly CompiledTest[] | null;
  optionValues: readonly CompiledValueTest[] | null;
  noOptionValues: readonly CompiledValueTest[] | null;
  min: number;
  max: number;
}

function compileTest(t: ValueTest & Partial<OperandTest>): CompiledTest {
  return {
    which: t.which ?? "any",
    bits: t.classes ? classBits(t.classes) : 0,
    equals: t.equals ? new Set(t.equals) : null,
    pattern: t.pattern ?? null,
    unless: t.unless ?? null,
  };
}

export function compileCommand(rule: Rule, m: CommandMatcher): CompiledCommand {
  return {
    rule,
    subcommands: m.subcommands ? m.subcommands.map((s) => s.split("|")) : null,
    all: m.allOptions ? m.allOptions.map((s) => s.split("|")) : null,
    any: m.anyOptions ? m.anyOptions.flatMap((s) => s.split("|")) : null,
    none: m.noOptions ? m.noOptions.flatMap((s) => s.split("|")) : null,
    operands: m.operands ? m.operands.map(compileTest) : null,
    optionValues: m.optionValues ? m.optionValues.map((v) => ({ ...compileTest(v), option: v.option })) : null,
    noOptionValues: m.noOptionValues ? m.noOptionValues.map((v) => ({ ...compileTest(v), option: v.option })) : null,
    min: m.minOperands ?? 0,
    max: m.maxOperands ?? Number.POSITIVE_INFINITY,
  };
}

/** Command matchers by exact program name. */
export const BY_PROGRAM = new Map<string, CompiledCommand[]>();
/** Command matchers whose program ends in `*` (prefix match). */
export const BY_PREFIX: { prefix: string; matcher: CompiledCommand }[] = [];
/** Write rules with the class bits they match. */
export const WRITE_RULES: { rule: Rule; bits: number }[] = [];
/** Rules by the finding they match. */
export const FINDING_RULES = new Map<string, Rule[]>();
export const RULES_BY_ID = new Map<string, Rule>();

function index(rule: Rule, m: Matcher): void {
  if (m.kind === "command") {
    const compiled = compileCommand(rule, m);
    for (const program of m.programs) {
      if (program.endsWith("*")) BY_PREFIX.push({ prefix: program.slice(0, -1), matcher: compiled });
      else {
        let list = BY_PROGRAM.get(program);
        if (!list) BY_PROGRAM.set(program, (list = []));
        list.push(compiled);
      }
    }
  } else if (m.kind === "write") {
    WRITE_RULES.push({ rule, bits: classBits(m.classes) });
  } else {
    if (!(m.finding in FINDINGS)) throw new Error(`rule ${rule.id} names an unknown finding: ${m.finding}`);
    let list = FINDING_RULES.get(m.finding);
    if (!list) FINDING_RULES.set(m.finding, (list = []));
    list.push(rule);
  }
}

for (const rule of RULES) {
  if (RULES_BY_ID.has(rule.id)) throw new Error(`duplicate rule id: ${rule.id}`);
  RULES_BY_ID.set(rule.id, rule);
  const matchers = Array.isArray(rule.match) ? (rule.match as readonly Matcher[]) : [rule.match as Matcher];
  for (const m of matchers) index(rule, m);
}

/** Help and dry-run options by program (rules/inert.ts), compiled like command matchers. */
const INERT_BY_PROGRAM = new Map<string, CompiledCommand[]>();
const INERT_RULE: Rule = { id: "inert", description: "", category: "unanalysable", hardline: false, match: [] };
for (const m of INERT_COMMANDS) {
  const compiled = compileCommand(INERT_RULE, m);
  for (const program of m.programs) INERT_BY_PROGRAM.set(program, [...(INERT_BY_PROGRAM.get(program) ?? []), compiled]);
}

/** The command only prints help or rehearses (a dry run): its program's command rules do not apply. */
export function isInert(parsed: ParsedArgs): boolean {
  const list = INERT_BY_PROGRAM.get(parsed.program);
  if (list === undefined) return false;
  // Only options written out count: an unquoted expansion "may hold any option" when matching a rule, not here.
  const literal = parsed.dynamic ? { ...parsed, dynamic: false } : parsed;
  return list.some((m) => matchCommand(m, literal));
}

const matchersCache = new Map<string, readonly CompiledCommand[] | undefined>();

/** Command matchers that may apply to this program. */
export function matchersFor(program: string): readonly CompiledCommand[] | undefined {
  if (matchersCache.has(program)) return matchersCache.get(program);
  const found = findMatchers(program);
  if (matchersCache.size > 4096) matchersCache.clear();
  matchersCache.set(program, found);
  return found;
}

function findMatchers(program: string): readonly CompiledCommand[] | undefined {
  const exact = BY_PROGRAM.get(program);
  let prefixed: CompiledCommand[] | undefined;
  for (const p of BY_PREFIX) {
    if (program.startsWith(p.prefix)) (prefixed ??= []).push(p.matcher);
  }
  if (!prefixed) return exact;
  return exact ? [...exact, ...prefixed] : prefixed;
}

/** The working directory relative operands are classified in, while a command is matched (set by `matchCommand`). */
let currentCwd: string | null = null;

function testValue(t: CompiledTest, a: Arg): boolean {
  if (t.bits !== 0 && (classifyPath(a.static ? inDirectory(currentCwd, a.value) : a.value, a.static) & t.bits) === 0) return false;
  if (t.equals && !(a.static && t.equals.has(a.value))) return false;
  if (t.pattern) {
    t.pattern.lastIndex = 0;
    if (!t.pattern.test(a.value)) return false;
  }
  if (t.unless) {
    t.unless.lastIndex = 0;
    if (t.unless.test(a.value)) return false;
  }
  return true;
}

function testOperands(t: CompiledTest, operands: readonly Arg[]): boolean {
  if (operands.length === 0) return false;
  if (t.which === "first") return testValue(t, operands[0]!);
  if (t.which === "last") return testValue(t, operands[operands.length - 1]!);
  if (typeof t.which === "number") {
    const a = operands[t.which];
    return a !== undefined && testValue(t, a);
  }
  for (const a of operands) if (testValue(t, a)) return true;
  return false;
}

/**
 * Does the parsed command satisfy the matcher? An unquoted expansion in option position may hold any option.
 * `cwd`, when known (`cd DIR && …`), is where relative operands are classified.
 */
export function matchCommand(m: CompiledCommand, parsed: ParsedArgs, cwd: string | null = null): boolean {
  currentCwd = cwd;
  try {
    return matches(m, parsed);
  } finally {
    currentCwd = null;
  }
}

function matches(m: CompiledCommand, parsed: ParsedArgs): boolean {
  if (m.subcommands) {
    if (parsed.subcommands.length < m.subcommands.length) return false;
    for (let i = 0; i < m.subcommands.length; i++) if (!m.subcommands[i]!.includes(parsed.subcommands[i]!)) return false;
  }
  const dyn = parsed.dynamic;
  if (m.all && !dyn) {
    for (const alternatives of m.all) if (!alternatives.some((o) => parsed.options.has(o))) return false;
  }
  if (m.any && !dyn && !m.any.some((o) => parsed.options.has(o))) return false;
  if (m.none && m.none.some((o) => parsed.options.has(o))) return false;
  const n = parsed.operands.length;
  if (n < m.min || n > m.max) return false;
  if (m.operands) for (const t of m.operands) if (!testOperands(t, parsed.operands)) return false;
  if (m.optionValues) {
    for (const t of m.optionValues) {
      const values = parsed.options.get(t.option);
      if (!values || !values.some((v) => testValue(t, v))) return false;
    }
  }
  if (m.noOptionValues) {
    for (const t of m.noOptionValues) {
      const values = parsed.options.get(t.option);
      if (values && values.some((v) => testValue(t, v))) return false;
    }
  }
  return true;
}
