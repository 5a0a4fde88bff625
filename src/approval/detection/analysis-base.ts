/**
 * What every layer of the detection walk shares: the options, the walk's context
 * (`Ctx`), where a command sits (`Site`), and the results (matches, reasons for
 * what could not be analysed). The layers: streams (stream-analysis.ts), special
 * programs (program-analysis.ts), the walk itself (engine.ts).
 */
import type { ParseOptions, Script } from "../../shell/types.js";
import type { Rule } from "../rules/types.js";
import type { RuleMatch } from "../types.js";
import type { Arg } from "./model.js";
import { FINDING_RULES } from "./rule-index.js";
import { copyDefinitions, setPositional, type Definitions } from "./shell-state.js";
import type { Stream } from "./streams.js";

export interface DetectOptions {
  /** Deepest nesting of scripts re-parsed from strings (`sh -c` in `eval` in `ssh …`). Default 8. */
  maxDepth?: number;
  /** Most scripts parsed for one command, the command itself included. Default 64. */
  maxParses?: number;
  /** Options for each parse (time budget, structural depth, length). */
  parse?: ParseOptions;
  /**
   * Use the cache of recent results (default true). `detect` keeps the results of the last
   * commands it analysed, keyed by the exact command text and these options, because agents
   * check the same command again (before approval, after approval, on retry). A result is
   * the same whether it comes from the cache or not; results cut short by the time budget
   * are never cached. `false` analyses the command afresh (benchmarks, tests).
   */
  cache?: boolean;
}

export const DEFAULT_MAX_DEPTH = 8;
export const DEFAULT_MAX_PARSES = 64;
export const MAX_WRAPPERS = 32;
export const MAX_STREAM_DEPTH = 12;
export const MAX_LOOP_VALUES = 8;
export const MAX_VARIANTS = 8;

export interface Ctx {
  depth: number;
  env: Map<string, string> | null;
  /** Wrappers and contexts passed on the way here, for a match's detail. */
  chain: readonly string[];
  /** A wrapper on the way runs as another user. */
  privileged: boolean;
  /** The working directory when a `cd` made it known (relative operands are classified in it). */
  cwd: string | null;
  /** Files written from the network earlier in the command (`curl -o x.sh …; bash x.sh`), normalised. Shared along the walk. */
  netFiles: Set<string> | null;
  /** Functions, aliases and namerefs defined so far (shell-state.ts). Shared by one shell; a new shell process gets a copy. */
  defs: Definitions;
}

export interface Site {
  /** Source text for unanalysable prefixes. */
  text: string;
  /** The pipeline around the command, for prefixes of what flows in (`curl … | sh`). */
  flow: string;
  /** The command's stdin, computed on demand. */
  stdin: (() => Stream | null) | null;
  /** The caller needs the canonical prefix even without a match (the command has write redirects). */
  needPrefix?: boolean;
  /** Static `NAME=value` words before the command (`IFS=: read …`): they hold for that command only. */
  prefixEnv?: ReadonlyMap<string, string>;
}

/** Matches of one command, before `flush` adds them. */
export type LocalMatches = { rule: Rule; prefix: string; detail: string | undefined }[];

export function collapse(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  return t.length > 200 ? t.slice(0, 197) + "..." : t;
}

export function emptyStream(): Stream {
  return { text: null, network: false, decoded: false, origin: "" };
}

export abstract class AnalysisBase {
  readonly matches: RuleMatch[] = [];
  readonly reasons: string[] = [];
  private readonly keys = new Set<string>();
  protected parses = 0;
  /** A parse ran out of its time budget: the result depends on the machine's load, do not cache it. */
  timedOut = false;
  protected streamDepth = 0;
  protected readonly maxDepth: number;
  protected readonly maxParses: number;

  constructor(protected readonly options: DetectOptions) {
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.maxParses = options.maxParses ?? DEFAULT_MAX_PARSES;
  }

  abstract walkSource(text: string, ctx: Ctx, input?: (() => Stream | null) | null): void;
  abstract walkScript(script: Script, ctx: Ctx, input?: (() => Stream | null) | null): void;
  abstract evalArgs(initial: Arg[], ctx: Ctx, site: Site): string | undefined;

  private push(rule: Rule, prefix: string, detail: string | undefined): void {
    const key = rule.id + "\0" + prefix;
    if (this.keys.has(key)) return;
    this.keys.add(key);
    const m: RuleMatch = { rule: rule.id, description: rule.description, category: rule.category, hardline: rule.hardline, prefix };
    if (detail) m.detail = detail;
    this.matches.push(m);
  }

  /** Adds the matches of one command: a hardline match makes the others redundant, and `overrides` apply. */
  protected flush(local: LocalMatches): void {
    if (local.length === 0) return;
    const hard = local.some((m) => m.rule.hardline);
    const overridden = new Set<string>();
    for (const m of local) for (const id of m.rule.overrides ?? []) overridden.add(id);
    for (const m of local) {
      if (hard && !m.rule.hardline) continue;
      if (overridden.has(m.rule.id)) continue;
      this.push(m.rule, m.prefix, m.detail);
    }
  }

  protected finding(name: string, prefix: string, ctx: Ctx, extra?: string): void {
    const rules = FINDING_RULES.get(name);
    if (!rules) return;
    const detail = this.detail(ctx, extra);
    for (const rule of rules) this.push(rule, prefix, detail);
  }

  protected unanalysable(reason: string, prefix: string, ctx: Ctx): void {
    const where = ctx.chain.length ? ` (in ${ctx.chain.join(" → ")})` : "";
    const full = reason + where;
    if (!this.reasons.includes(full)) this.reasons.push(full);
    this.finding("unanalysable", collapse(prefix), ctx, reason);
  }

  protected detail(ctx: Ctx, extra?: string): string | undefined {
    const via = ctx.chain.length ? `via ${ctx.chain.join(" → ")}` : "";
    if (extra && via) return `${extra}; ${via}`;
    return extra || via || undefined;
  }

  /** The context of a new shell process (`sh -c`, a payload's shell-out): variables and definitions copied, `positional` as `$0 $1 …`. */
  protected child(ctx: Ctx, label: string, positional?: readonly Arg[]): Ctx {
    let env: Map<string, string> | null = ctx.env ? new Map(ctx.env) : null;
    if (positional) {
      env ??= new Map();
      setPositional(env, positional);
    }
    return { depth: ctx.depth + 1, env, chain: [...ctx.chain, label], privileged: ctx.privileged, cwd: ctx.cwd, netFiles: ctx.netFiles, defs: copyDefinitions(ctx.defs) };
  }

  /** The context of text the same shell runs (`eval`, an alias, `source`): variables and definitions shared. */
  protected sameShell(ctx: Ctx, label: string): Ctx {
    ctx.env ??= new Map();
    return { ...ctx, depth: ctx.depth + 1, chain: [...ctx.chain, label] };
  }

}
