/**
 * Compounds whose bodies may run or not, or many times: `if`/`else` (one branch runs,
 * so what all branches set is known as alternatives), `for` loops (once per known value,
 * or with a value that is only known to be a path below the working directory), `while`,
 * `until`, `case`; and the fork-bomb check of function definitions.
 */
import type { CompoundCommand, Script, Word } from "../../shell/types.js";
import { MAX_LOOP_VALUES, collapse, type Ctx } from "./analysis-base.js";
import { partialValue } from "./expand.js";
import type { Arg } from "./model.js";
import { ShellAnalysis } from "./shell-analysis.js";
import { invalidateChanges, mergeBranches } from "./shell-state.js";
import { resolveWord } from "./words.js";

export abstract class BranchAnalysis extends ShellAnalysis {
  /** Loops and conditionals: each body may run or not, any number of times. */
  protected walkBranches(c: CompoundCommand, ctx: Ctx): void {
    // `if … then … else … fi`: one of the branches runs, so what they all set is known as alternatives.
    if (c.type === "if" && c.bodies.length >= 3 && c.bodies.length % 2 === 1) {
      this.walkScript(c.bodies[0]!, ctx);
      const ends: (Map<string, string> | null)[] = [];
      for (let i = 1; i < c.bodies.length; i++) {
        const inner: Ctx = { ...ctx, env: ctx.env ? new Map(ctx.env) : null };
        this.walkScript(c.bodies[i]!, inner);
        const isCondition = i % 2 === 0 && i < c.bodies.length - 1;
        if (isCondition) invalidateChanges((ctx.env ??= new Map()), inner.env);
        else ends.push(inner.env);
        if (inner.cwd !== ctx.cwd) ctx.cwd = null;
      }
      mergeBranches((ctx.env ??= new Map()), ends);
      return;
    }
    const loopVar = c.type === "for" ? /^\s*(?:for|select)\s+([A-Za-z_][A-Za-z0-9_]*)\b/.exec(c.text)?.[1] : undefined;
    // The values, when they are known (literal words, known variables and arrays); a glob stays a
    // pattern (`for f in /etc/*.conf` → `$f` is `/etc/*.conf`): paths are classified the same way.
    const values = loopVar && c.words.length > 0 ? this.loopValues(c, ctx) : null;
    if (loopVar && values) {
      for (const value of values) {
        this.inScope(ctx, "invalidate", (inner) => {
          (inner.env ??= new Map()).set(loopVar, value);
          for (const body of c.bodies) this.walkScript(body, inner);
        });
      }
      return;
    }
    if (loopVar) this.forgetLoopVariable(ctx, loopVar);
    // `for f in $(git ls-files)`: each value is unknown, but a path below the working directory.
    const relative = loopVar !== undefined && c.words.length > 0 && c.words.every((w) => this.listsRelativePaths(w, ctx));
    for (const body of c.bodies) {
      this.inScope(ctx, "invalidate", (inner) => {
        if (relative) (inner.env ??= new Map()).set(loopVar, partialValue(`./$${loopVar}`));
        this.walkScript(body, inner);
      });
    }
  }

  /** A `for` loop's values when all are known, at most MAX_LOOP_VALUES of them. */
  private loopValues(c: CompoundCommand, ctx: Ctx): string[] | null {
    const out: string[] = [];
    for (const w of c.words) {
      if (w.static && !w.braceExpansion) out.push(w.value);
      else {
        const args = w.static ? [] : this.resolveArgs([w], ctx);
        if (w.static) {
          const expanded: Arg[] = [];
          resolveWord(w, null, null, expanded);
          for (const a of expanded) out.push(a.value);
        } else if (args.every((a) => a.static)) for (const a of args) out.push(a.value);
        else return null;
      }
      if (out.length > MAX_LOOP_VALUES) return null;
    }
    return out;
  }

  /** A word that is only a command substitution printing relative paths (`$(git ls-files)`, `` `find . -name x` ``). */
  private listsRelativePaths(w: Word, ctx: Ctx): boolean {
    if (w.substitutions.length !== 1 || w.substitutions[0]!.kind !== "command") return false;
    if (!/^"?(?:\$\(|`)[\s\S]*(?:\)|`)"?$/.test(w.raw)) return false;
    return this.streamOfScript(w.substitutions[0]!.script, ctx, null).relativePaths === true;
  }

  private forgetLoopVariable(ctx: Ctx, name: string): void {
    if (ctx.env) {
      ctx.env.delete(name);
      ctx.env.delete(`${name}[@]`);
    }
  }

  protected checkForkBomb(c: CompoundCommand, ctx: Ctx): void {
    const name = c.name ?? /^\s*(?:function\s+)?([^\s(){}]+)/.exec(c.text)?.[1];
    if (!name) return;
    let calls = 0;
    const count = (s: Script): void => {
      for (const p of s.pipelines) {
        for (const cmd of p.commands) {
          if (cmd.kind === "simple") {
            if (cmd.argv[0]?.value === name) calls++;
          } else for (const b of cmd.bodies) count(b);
        }
      }
    };
    for (const b of c.bodies) count(b);
    const background = new RegExp(`(?:^|[\\s;|&{(])${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*&(?!&)`).test(c.text.slice(c.text.indexOf("{") + 1 || c.text.indexOf("(") + 1));
    if (calls >= 2 || (calls >= 1 && background)) this.finding("fork-bomb", collapse(c.text), ctx);
  }

}
