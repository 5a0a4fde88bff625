/**
 * From a tree-sitter-bash syntax tree to the `Script` model (src/shell/types.ts).
 *
 * Every statement becomes a pipeline of simple or compound commands; every
 * node the model does not cover, every `ERROR` and `MISSING` node, and every
 * limit reached becomes a `problems` entry instead of being dropped. Nesting is
 * bounded by `maxDepth`; flat repetition (long `&&` chains, nested expansions)
 * is walked iteratively, so no input overflows the stack.
 *
 * Works around these tree-sitter-bash 0.25 quirks:
 * - words after a redirection (`rm >/dev/null -rf /`) come as extra redirect
 *   destinations: they are arguments of the command;
 * - the rest of a line after a heredoc start (`cat <<EOF | sh`, `… && x`) sits
 *   inside the heredoc redirect: it is put back in the pipeline and the list;
 * - a line continuation is read as blank (`r\⏎m` → two words): rejoined;
 * - text inside backticks gets no backslash pass (`` `echo \`id\`` ``): such
 *   text is unescaped and parsed again, as bash does;
 * - heredoc bodies are misread (expansions missed after leading blanks, a first
 *   line starting with a backslash read as words): bodies are taken from the
 *   source between the heredoc's line and its delimiter, and nodes inside them
 *   are skipped;
 * - `$"…"` comes as `$` plus a string: one word.
 * (`cat <<EOF; x`, a syntax error for the grammar, is retried by the parser:
 * see heredoc-lines.ts.)
 */

import { hasBareNewline } from "./bare-newline.js";
import type { SyntaxNode as Node } from "./syntax-tree.js";
import type { TimeBudget } from "./time-budget.js";
import type { Assignment, Command, CompoundCommand, Pipeline, Redirect, Script, SimpleCommand, Substitution, Word } from "./types.js";
import {
  closingDoubleQuote,
  collectSubstitutions,
  dynamicWord,
  findClosing,
  findClosingBacktick,
  isContinuationGap,
  joinContinuations,
  literalWord,
  needsBackquoteUnescape,
  resolveHeredocBody,
  resolveWord,
  snippet,
  unescapeBackquoted,
  type WordContext,
} from "./words.js";

/** State shared by one `parseShell` call across the main tree and any nested parses. */
export interface BuildState {
  problems: string[];
  maxDepth: number;
  /** Building stops once it is spent. */
  budget: TimeBudget;
  /** Parses nested shell text (backticks with escapes, heredoc bodies' substitutions); null when the time budget ran out. */
  parseNested(text: string): Node | null;
  /** Set once the matching problem has been recorded. */
  depthReported?: boolean;
  timeReported?: boolean;
  syntaxReported?: number;
  /** Current structural recursion, bounded by `RECURSION_LIMIT`. */
  recursion?: number;
}

/** Most syntax errors listed per tree (the first ones say enough). */
const MAX_SYNTAX_PROBLEMS = 5;
/**
 * Hard bound on structural recursion (statements inside heredoc tails and compounds,
 * substitutions), whatever `maxDepth` says, so a hostile input cannot overflow the stack.
 */
const RECURSION_LIMIT = 400;

const STATEMENT_TYPES = new Set([
  "c_style_for_statement",
  "case_statement",
  "command",
  "compound_statement",
  "declaration_command",
  "for_statement",
  "function_definition",
  "if_statement",
  "list",
  "negated_command",
  "pipeline",
  "redirected_statement",
  "subshell",
  "test_command",
  "unset_command",
  "variable_assignment",
  "variable_assignments",
  "while_statement",
]);

const REDIRECT_TYPES = new Set(["file_redirect", "heredoc_redirect", "herestring_redirect"]);

/** Where a command sits in the source, and the words it is made of (to append and rejoin). */
interface Extent {
  start: number;
  end: number;
  items?: { word: Word; start: number; end: number }[];
}

/** A pipeline being built: its commands, their extents, its range in the source. */
interface Draft {
  commands: Command[];
  extents: Extent[];
  negated: boolean;
  start: number;
  end: number;
  conditional?: true;
  background?: true;
}

type Out = (Draft | Pipeline)[];

class Ctx implements WordContext {
  constructor(
    readonly src: string,
    readonly state: BuildState,
  ) {}

  /** Heredoc bodies in this tree, as [start, end) pairs: text there is not shell code. */
  private bodies: number[] | null = null;

  problem(message: string): void {
    if (!this.state.problems.includes(message)) this.state.problems.push(message);
  }

  /**
   * Syntax the model does not cover. Not listed once the text has a syntax error: error
   * recovery leaves odd nodes about, and the syntax error already makes it unanalysable.
   */
  unsupported(what: string, node: Node): void {
    if ((this.state.syntaxReported ?? 0) > 0) return;
    this.problem(`unsupported ${what} at ${position(this.src, node.startIndex)}: ${snippet(this.src.slice(node.startIndex, node.endIndex))}`);
  }

  skip(start: number, end: number): void {
    (this.bodies ??= []).push(start, end);
  }

  /** True when `index` lies in a heredoc body (where tree-sitter-bash may have seen words). */
  skipped(index: number): boolean {
    const b = this.bodies;
    if (b === null) return false;
    for (let i = 0; i < b.length; i += 2) if (index >= b[i]! && index < b[i + 1]!) return true;
    return false;
  }

  /** `end`, pulled back to the start of a heredoc body that `start..end` runs into. */
  clip(start: number, end: number): number {
    const b = this.bodies;
    if (b === null) return end;
    for (let i = 0; i < b.length; i += 2) if (b[i]! > start && b[i]! < end) end = b[i]!;
    return end;
  }

  /** True when `depth` may not be modelled; records the problem once. */
  tooDeep(depth: number, node: Node | null): boolean {
    if (depth <= this.state.maxDepth) return false;
    if (!this.state.depthReported) {
      this.state.depthReported = true;
      const where = node ? ` at ${position(this.src, node.startIndex)} ${snippet(this.src.slice(node.startIndex, node.endIndex), 20)}` : "";
      this.problem(`nesting deeper than ${this.state.maxDepth} levels${where}: the inner part is not analysed`);
    }
    return true;
  }

  outOfTime(): boolean {
    if (!this.state.budget.expired()) return false;
    if (!this.state.timeReported) {
      this.state.timeReported = true;
      this.problem("time budget exceeded while reading the command: the rest is not analysed");
    }
    return true;
  }

  enter(): boolean {
    const r = (this.state.recursion ?? 0) + 1;
    if (r > RECURSION_LIMIT) {
      if (!this.state.depthReported) {
        this.state.depthReported = true;
        this.problem(`nesting deeper than ${RECURSION_LIMIT} levels of heredocs and statements: the inner part is not analysed`);
      }
      return false;
    }
    this.state.recursion = r;
    return true;
  }

  leave(): void {
    this.state.recursion = (this.state.recursion ?? 1) - 1;
  }

  substitution(node: Node, depth: number): Substitution {
    const kind = node.type === "process_substitution" ? (this.src.startsWith(">(", node.startIndex) ? "process_out" : "process_in") : "command";
    const children = node.children;
    const first = children[0];
    const last = children[children.length - 1];
    const innerStart = first && !first.isNamed ? first.endIndex : node.startIndex;
    const innerEnd = children.length > 1 && last && !last.isNamed && !last.isMissing ? last.startIndex : node.endIndex;
    const text = this.src.slice(innerStart, innerEnd);
    if (this.tooDeep(depth + 1, node)) return { kind, script: { pipelines: [], text } };
    if (first?.type === "`" && needsBackquoteUnescape(text)) {
      return { kind, script: this.nestedScript(unescapeBackquoted(text), depth) };
    }
    if (!this.enter()) return { kind, script: { pipelines: [], text } };
    try {
      const out: Out = [];
      for (const child of children) {
        if (!child.isNamed) continue;
        if (child.type === "file_redirect") {
          // `$(< file)`: reads the file, runs nothing.
          const cmd: SimpleCommand = { kind: "simple", assignments: [], argv: [], redirects: [], text: "" };
          const draft = newDraft(child.startIndex);
          pushCommand(draft, cmd, { start: child.startIndex, end: child.endIndex });
          out.push(draft);
          applyRedirect(draft, draft.commands.length - 1, child, this, depth + 1, out);
          continue;
        }
        addStatement(child, this, depth + 1, out);
      }
      return { kind, script: { pipelines: finalize(out, this.src), text } };
    } finally {
      this.leave();
    }
  }

  nestedScript(text: string, depth: number): Script {
    if (this.tooDeep(depth + 1, null)) return { pipelines: [], text };
    if (this.outOfTime()) return { pipelines: [], text };
    const root = this.state.parseNested(text);
    if (!root) return { pipelines: [], text };
    return buildScript(root, text, this.state, depth + 1);
  }
}

/** Builds the script of a whole tree (a `program` node) whose indices point into `src`. */
export function buildScript(root: Node, src: string, state: BuildState, depth = 0): Script {
  const ctx = new Ctx(src, state);
  if (root.hasError) collectSyntaxProblems(root, ctx);
  const out: Out = [];
  for (const child of root.namedChildren) addStatement(child, ctx, depth, out);
  return { pipelines: finalize(out, src), text: src };
}

function newDraft(start: number): Draft {
  return { commands: [], extents: [], negated: false, start, end: start };
}

function pushCommand(d: Draft, cmd: Command, extent: Extent): void {
  if (d.commands.length === 0) d.start = extent.start;
  d.commands.push(cmd);
  d.extents.push(extent);
  if (extent.end > d.end) d.end = extent.end;
}

function finalize(out: Out, src: string): Pipeline[] {
  const pipelines: Pipeline[] = [];
  for (const item of out) {
    if (!("extents" in item)) {
      pipelines.push(item);
      continue;
    }
    if (item.commands.length === 0) continue;
    let end = item.end;
    for (const e of item.extents) if (e.end > end) end = e.end;
    const p: Pipeline = { commands: item.commands, negated: item.negated, text: src.slice(item.start, end) };
    if (item.conditional) p.conditional = true;
    if (item.background) p.background = true;
    pipelines.push(p);
  }
  return pipelines;
}

/** Statements of a body (`do … done`, `{ …; }`, a `then` branch) as a script. */
function bodyScript(nodes: Node[], ctx: Ctx, depth: number): Script {
  const out: Out = [];
  let start = -1;
  let end = -1;
  for (const n of nodes) {
    if (start < 0) start = n.startIndex;
    end = n.endIndex;
    addStatement(n, ctx, depth, out);
  }
  return { pipelines: finalize(out, ctx.src), text: start < 0 ? "" : ctx.src.slice(start, end) };
}

/**
 * A statement (anything on its own between `;`, `&&`, `||`, `&`, newlines) → one or more pipelines.
 * `conditional`: it runs only when an earlier `&&`/`||` operand allows it.
 */
function addStatement(node: Node, ctx: Ctx, depth: number, out: Out, conditional = false): void {
  if (!node.isNamed) return; // `;`, `&`, `&&`, `||`
  const type = node.type;
  if (type === "comment" || ctx.skipped(node.startIndex)) return;
  if (ctx.outOfTime()) return;
  const first = out.length;
  if (type === "list") {
    for (const element of flattenList(node)) addStatement(element.node, ctx, depth, out, conditional || element.conditional);
  } else if (type === "ERROR") {
    recover(node, ctx, depth, out);
  } else {
    if (!ctx.enter()) return;
    try {
      const draft = newDraft(node.startIndex);
      out.push(draft);
      appendToPipeline(draft, node, ctx, depth, out);
    } finally {
      ctx.leave();
    }
  }
  const background = runsInBackground(ctx.src, node.endIndex);
  if (!conditional && !background) return;
  for (let i = first; i < out.length; i++) {
    const item = out[i]!;
    if (conditional) item.conditional = true;
    if (background) item.background = true;
  }
}

/** Whether the statement ending at `end` is followed by a lone `&` (not `&&`, `&>`). */
function runsInBackground(src: string, end: number): boolean {
  let i = end;
  while (src.charCodeAt(i) === 32 || src.charCodeAt(i) === 9) i++;
  return src.charCodeAt(i) === 38 && src.charCodeAt(i + 1) !== 38 && src.charCodeAt(i + 1) !== 62;
}

/**
 * `a && b || c` nests to the left in the tree; read it flat, without recursion. Every element
 * after an `&&`/`||` operator is conditional.
 */
function flattenList(node: Node): { node: Node; conditional: boolean }[] {
  const result: { node: Node; conditional: boolean }[] = [];
  const stack: { node: Node; conditional: boolean }[] = [{ node, conditional: false }];
  while (stack.length > 0) {
    const top = stack.pop()!;
    const n = top.node;
    if (n.type !== "list") {
      result.push(top);
      continue;
    }
    const children = n.children;
    let afterOperator = false;
    const items: { node: Node; conditional: boolean }[] = [];
    for (const c of children) {
      if (!c.isNamed) {
        if (c.type === "&&" || c.type === "||") afterOperator = true;
        continue;
      }
      if (c.type !== "comment") items.push({ node: c, conditional: top.conditional || afterOperator });
    }
    for (let i = items.length - 1; i >= 0; i--) stack.push(items[i]!);
  }
  return result;
}

/** Adds what `node` runs to the pipeline being built (`node` is a pipeline element or a pipeline). */
function appendToPipeline(d: Draft, node: Node, ctx: Ctx, depth: number, out: Out): void {
  switch (node.type) {
    case "comment":
      return;
    case "negated_command":
      d.negated = true;
      for (const child of node.namedChildren) appendToPipeline(d, child, ctx, depth, out);
      return;
    case "pipeline":
      for (const child of node.children) if (child.isNamed) appendToPipeline(d, child, ctx, depth, out);
      return;
    case "list": {
      // Only inside a heredoc's trailing text (`cat <<EOF | sh && x`): the first element
      // continues the pipeline, the rest are statements of their own.
      const elements = flattenList(node);
      const [first, ...rest] = elements;
      if (first) appendToPipeline(d, first.node, ctx, depth, out);
      for (const element of rest) addStatement(element.node, ctx, depth, out, element.conditional);
      return;
    }
    case "redirected_statement":
      appendRedirected(d, node, ctx, depth, out);
      return;
    case "ERROR":
      recover(node, ctx, depth, out);
      return;
    default: {
      const built = buildCommand(node, ctx, depth, out);
      if (built) pushCommand(d, built.command, built.extent);
    }
  }
}

function appendRedirected(d: Draft, node: Node, ctx: Ctx, depth: number, out: Out): void {
  const children = node.namedChildren;
  let body: Node | null = null;
  for (const child of children) {
    if (!REDIRECT_TYPES.has(child.type) && child.type !== "comment") {
      body = child;
      break;
    }
  }
  const before = d.commands.length;
  if (body) appendToPipeline(d, body, ctx, depth, out);
  if (d.commands.length === before) {
    // `> file` alone (or a body that could not be modelled): an empty simple command.
    const start = body ? body.startIndex : node.startIndex;
    pushCommand(d, { kind: "simple", assignments: [], argv: [], redirects: [], text: "" }, { start, end: start });
  }
  const index = d.commands.length - 1;
  for (const child of children) {
    if (child !== body && REDIRECT_TYPES.has(child.type)) applyRedirect(d, index, child, ctx, depth, out);
  }
  updateText(d, index, ctx.src);
}

function updateText(d: Draft, index: number, src: string): void {
  const cmd = d.commands[index];
  const extent = d.extents[index];
  if (cmd && extent) {
    cmd.text = src.slice(extent.start, extent.end);
    if (extent.end > d.end) d.end = extent.end;
  }
}

/** Words bash reads as arguments of the command but tree-sitter-bash put in a redirect. */
function appendArguments(d: Draft, index: number, items: { word: Word; start: number; end: number }[], ctx: Ctx): void {
  if (items.length === 0) return;
  const cmd = d.commands[index];
  const extent = d.extents[index];
  if (!cmd || !extent) return;
  if (cmd.kind !== "simple") {
    ctx.problem(`words after the redirection of a compound command: ${snippet(ctx.src.slice(items[0]!.start, items[items.length - 1]!.end))}`);
    return;
  }
  extent.items ??= [];
  extent.items.push(...items);
  cmd.argv = joinContinuations(extent.items, ctx.src);
  const last = items[items.length - 1]!;
  if (last.end > extent.end) extent.end = last.end;
}

function wordItem(node: Node, ctx: Ctx, depth: number): { word: Word; start: number; end: number } {
  return { word: resolveWord(node, ctx, depth), start: node.startIndex, end: node.endIndex };
}

/**
 * Attaches a `file_redirect`, `herestring_redirect` or `heredoc_redirect` to command `index` of the
 * draft, moving stray words to its arguments and a heredoc's trailing text to the pipeline and list.
 */
function applyRedirect(d: Draft, index: number, node: Node, ctx: Ctx, depth: number, out: Out): void {
  if (node.type === "heredoc_redirect") {
    applyHeredoc(d, index, node, ctx, depth, out);
    return;
  }
  const cmd = d.commands[index];
  const extent = d.extents[index];
  if (!cmd || !extent) return;
  const src = ctx.src;
  let fd: number | undefined;
  let operator = "";
  let end = node.endIndex;
  const destinations: Node[] = [];
  for (const child of node.children) {
    if (!child.isNamed) {
      operator = child.type;
      continue;
    }
    if (child.type === "file_descriptor") fd = Number(src.slice(child.startIndex, child.endIndex));
    else if (child.type !== "ERROR" && child.type !== "comment" && !ctx.skipped(child.startIndex)) destinations.push(child);
  }
  let target: Word;
  if (operator === ">&-" || operator === "<&-") {
    target = literalWord("-");
    operator = operator.slice(0, 2);
    end = node.startIndex;
    for (const child of node.children) if (!child.isNamed) end = child.endIndex;
  } else {
    // The first destination (rejoined across line continuations) is the target. tree-sitter-bash
    // hands the words after it to the redirect too, but bash reads them as arguments.
    let n = 1;
    while (n < destinations.length && isContinuationGap(src, destinations[n - 1]!.endIndex, destinations[n]!.startIndex)) n++;
    const targetItems = destinations.slice(0, n).map((c) => wordItem(c, ctx, depth));
    target = joinContinuations(targetItems, src)[0] ?? literalWord("");
    if (targetItems.length > 0) end = targetItems[targetItems.length - 1]!.end;
    appendArguments(d, index, destinations.slice(n).map((c) => wordItem(c, ctx, depth)), ctx);
  }
  const redirect: Redirect = { operator, target };
  if (fd !== undefined) redirect.fd = fd;
  cmd.redirects.push(redirect);
  if (end > extent.end) extent.end = end;
}

/**
 * A `heredoc_redirect`. The body is taken from the source, not from the tree: it runs from the
 * end of the line holding `<<EOF` to the delimiter line. tree-sitter-bash 0.25 sometimes reads the
 * body's first line as words (when it starts with a backslash) and puts them in the redirect or
 * the command after it; every node starting inside the body is skipped.
 */
function applyHeredoc(d: Draft, index: number, node: Node, ctx: Ctx, depth: number, out: Out): void {
  const cmd = d.commands[index];
  const extent = d.extents[index];
  if (!cmd || !extent) return;
  const src = ctx.src;
  let operator = "<<";
  let fd: number | undefined;
  let startNode: Node | null = null;
  let bodyNode: Node | null = null;
  let endNode: Node | null = null;
  for (const child of node.children) {
    const t = child.type;
    if (t === "<<" || t === "<<-") operator = t;
    else if (t === "file_descriptor") fd = Number(src.slice(child.startIndex, child.endIndex));
    else if (t === "heredoc_start" && !startNode) startNode = child;
    else if (t === "heredoc_body") bodyNode = child;
    else if (t === "heredoc_end") endNode = child;
  }
  const lineEnd = startNode ? endOfLine(src, startNode.endIndex) : src.length;
  let bodyEnd = endNode && !endNode.isMissing && endNode.startIndex > lineEnd ? endNode.startIndex : bodyNode ? bodyNode.endIndex : node.endIndex;
  if (bodyEnd < lineEnd) bodyEnd = lineEnd;
  ctx.skip(lineEnd, bodyEnd);

  const words: { word: Word; start: number; end: number }[] = [];
  const nested: Node[] = [];
  /** `| sh …` after the delimiter: continues this pipeline. */
  const pipeTails: Node[] = [];
  /** `&& x`, `|| x` after the delimiter: the next statements of the list. */
  const listTails: Node[] = [];
  let afterListOperator = false;
  for (const child of node.children) {
    const t = child.type;
    if (!child.isNamed) {
      if (t === "&&" || t === "||") afterListOperator = true;
      continue;
    }
    if (child === startNode || t === "file_descriptor" || t === "heredoc_body" || t === "heredoc_end") continue;
    if (t === "ERROR" || t === "comment" || ctx.skipped(child.startIndex)) continue;
    if (t === "file_redirect" || t === "herestring_redirect") nested.push(child);
    else if (STATEMENT_TYPES.has(t)) (afterListOperator || t !== "pipeline" ? listTails : pipeTails).push(child);
    else words.push(wordItem(child, ctx, depth));
  }

  const delimiterRaw = startNode ? src.slice(startNode.startIndex, startNode.endIndex) : "";
  const quoted = /['"\\]/.test(delimiterRaw);
  const subs: Substitution[] = [];
  const heredoc: NonNullable<Redirect["heredoc"]> = resolveHeredocBody(lineEnd + 1, bodyEnd, quoted, operator === "<<-", ctx, depth, subs);
  if (subs.length > 0) heredoc.substitutions = subs;
  const redirect: Redirect = { operator, target: literalWord(delimiterRaw, delimiterRaw.replace(/['"\\]/g, "")), heredoc };
  if (fd !== undefined) redirect.fd = fd;
  cmd.redirects.push(redirect);
  let end = startNode ? startNode.endIndex : node.startIndex + operator.length;
  for (const w of words) if (w.end > end) end = w.end;
  if (end > extent.end) extent.end = end;
  appendArguments(d, index, words, ctx);
  for (const n of nested) applyRedirect(d, index, n, ctx, depth, out);
  updateText(d, index, src);
  // The rest of the line: `| sh` continues this pipeline, `&& x` starts the next one.
  for (const tail of pipeTails) appendToPipeline(d, tail, ctx, depth, out);
  for (const tail of listTails) addStatement(tail, ctx, depth, out, true);
}

/**
 * Index of the newline that ends the command line starting at `from` (where a heredoc body
 * begins), skipping newlines inside quotes, substitutions and line continuations; `src.length`
 * when there is none.
 */
function endOfLine(src: string, from: number): number {
  for (let i = from; i < src.length; i++) {
    const c = src[i];
    let next = -1;
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === "\n") return i;
    if (c === "'") next = src.indexOf("'", i + 1);
    else if (c === '"') next = closingDoubleQuote(src, i + 1);
    else if (c === "`") next = findClosingBacktick(src, i + 1);
    else if (c === "$" && src[i + 1] === "(") next = findClosing(src, i + 1, "(", ")");
    else if (c === "#" && (i === from || /\s/.test(src[i - 1]!))) next = src.indexOf("\n", i) - 1;
    else continue;
    if (next < 0) return src.length;
    i = next;
  }
  return src.length;
}

/** Builds a pipeline element that is not a pipeline, list or redirected statement. */
function buildCommand(node: Node, ctx: Ctx, depth: number, out: Out): { command: Command; extent: Extent } | null {
  const extent: Extent = { start: node.startIndex, end: node.endIndex };
  switch (node.type) {
    case "command": {
      const command = buildSimple(node, ctx, depth, extent, out);
      if (hasBareNewline(ctx.src.slice(extent.start, extent.end))) {
        ctx.problem(`the parser read two lines as one command (${JSON.stringify(ctx.src.slice(extent.start, extent.end).slice(0, 120))}); it cannot be trusted`);
      }
      return { command, extent };
    }
    case "variable_assignment":
    case "variable_assignments": {
      const cmd: SimpleCommand = { kind: "simple", assignments: [], argv: [], redirects: [], text: ctx.src.slice(extent.start, extent.end) };
      const list = node.type === "variable_assignment" ? [node] : node.namedChildren;
      for (const a of list) if (a.type === "variable_assignment") cmd.assignments.push(assignment(a, ctx, depth));
      return { command: cmd, extent };
    }
    case "declaration_command":
    case "unset_command": {
      // `export A=1 B`, `local -r x=$(id)`, `unset -f f`: a simple command whose arguments are words.
      const items: { word: Word; start: number; end: number }[] = [];
      for (const child of node.children) {
        if (child.type === "comment" || child.type === "ERROR") continue;
        if (!child.isNamed) {
          const raw = ctx.src.slice(child.startIndex, child.endIndex);
          items.push({ word: literalWord(raw), start: child.startIndex, end: child.endIndex });
        } else {
          items.push(wordItem(child, ctx, depth));
        }
      }
      const cmd: SimpleCommand = { kind: "simple", assignments: [], argv: joinContinuations(items, ctx.src), redirects: [], text: ctx.src.slice(extent.start, extent.end) };
      extent.items = items;
      return { command: cmd, extent };
    }
    case "subshell":
    case "compound_statement":
    case "if_statement":
    case "for_statement":
    case "c_style_for_statement":
    case "while_statement":
    case "case_statement":
    case "function_definition":
    case "test_command":
      return { command: buildCompound(node, ctx, depth), extent };
    default:
      ctx.unsupported(`shell syntax (${node.type})`, node);
      return null;
  }
}

function assignment(node: Node, ctx: Ctx, depth: number): Assignment {
  let name = "";
  let valueNode: Node | null = null;
  let subscript: Node | null = null;
  let seenOperator = false;
  let append = false;
  for (const child of node.children) {
    if (!child.isNamed) {
      if (child.type === "=" || child.type === "+=") {
        seenOperator = true;
        append = child.type === "+=";
      }
      continue;
    }
    if (!seenOperator) {
      name = ctx.src.slice(child.startIndex, child.endIndex);
      if (child.type === "subscript") subscript = child;
    } else {
      valueNode = child;
    }
  }
  const value = valueNode ? resolveWord(valueNode, ctx, depth) : literalWord("");
  // `a[$(cmd)]=1`: the subscript is evaluated, so its substitutions run.
  if (subscript) collectSubstitutions(subscript, ctx, depth, value.substitutions);
  const result: Assignment = { name, value };
  if (append) result.append = true;
  if (valueNode?.type === "array") {
    result.elements = [];
    for (const child of valueNode.namedChildren) if (child.type !== "comment") result.elements.push(resolveWord(child, ctx, depth));
  }
  return result;
}

function buildSimple(node: Node, ctx: Ctx, depth: number, extent: Extent, out: Out): SimpleCommand {
  const cmd: SimpleCommand = { kind: "simple", assignments: [], argv: [], redirects: [], text: "" };
  const items: { word: Word; start: number; end: number }[] = [];
  extent.items = items;
  // Redirects inside the command node go through a one-command draft, so stray words land in `items`.
  let local: Draft | null = null;
  for (const child of node.children) {
    const type = child.type;
    if (type === "comment" || type === "ERROR" || ctx.skipped(child.startIndex)) continue;
    if (type === "variable_assignment") cmd.assignments.push(assignment(child, ctx, depth));
    else if (type === "file_redirect" || type === "herestring_redirect") {
      if (!local) {
        local = newDraft(node.startIndex);
        pushCommand(local, cmd, extent);
      }
      applyRedirect(local, 0, child, ctx, depth, out);
    } else if (STATEMENT_TYPES.has(type)) {
      ctx.unsupported(`shell syntax (${type} inside a command)`, child);
    } else {
      items.push(wordItem(child, ctx, depth));
    }
  }
  items.sort((a, b) => a.start - b.start);
  cmd.argv = joinContinuations(items, ctx.src);
  extent.end = ctx.clip(extent.start, Math.max(extent.end, node.endIndex));
  cmd.text = ctx.src.slice(extent.start, extent.end);
  return cmd;
}

function compound(type: CompoundCommand["type"], node: Node, ctx: Ctx): CompoundCommand {
  return { kind: "compound", type, bodies: [], words: [], redirects: [], text: ctx.src.slice(node.startIndex, node.endIndex) };
}

function statements(node: Node): Node[] {
  const result: Node[] = [];
  for (const c of node.namedChildren) if (STATEMENT_TYPES.has(c.type)) result.push(c);
  return result;
}

function buildCompound(node: Node, ctx: Ctx, depth: number): CompoundCommand {
  const type = node.type;
  const inner = depth + 1;
  let result: CompoundCommand;
  switch (type) {
    case "subshell":
      result = compound("subshell", node, ctx);
      break;
    case "compound_statement":
      result = compound("group", node, ctx);
      break;
    case "if_statement":
      result = compound("if", node, ctx);
      break;
    case "for_statement":
    case "c_style_for_statement":
      result = compound("for", node, ctx);
      break;
    case "while_statement":
      result = compound(node.children[0]?.type === "until" ? "until" : "while", node, ctx);
      break;
    case "case_statement":
      result = compound("case", node, ctx);
      break;
    case "function_definition":
      result = compound("function", node, ctx);
      break;
    default: {
      const opener = node.children[0]?.type;
      result = compound(opener === "((" ? "arithmetic" : "test", node, ctx);
    }
  }
  if (ctx.tooDeep(inner, node)) return result;
  if (!ctx.enter()) return result;
  try {
    fillCompound(result, node, ctx, depth, inner);
  } finally {
    ctx.leave();
  }
  return result;
}

function fillCompound(result: CompoundCommand, node: Node, ctx: Ctx, depth: number, inner: number): void {
  switch (node.type) {
    case "subshell":
    case "compound_statement":
      result.bodies.push(bodyScript(statements(node), ctx, inner));
      return;
    case "if_statement":
      fillIf(result, node, ctx, inner);
      return;
    case "for_statement": {
      const items: { word: Word; start: number; end: number }[] = [];
      let sawVariable = false;
      for (const child of node.namedChildren) {
        if (child.type === "comment") continue;
        if (child.type === "do_group") result.bodies.push(bodyScript(statements(child), ctx, inner));
        else if (!sawVariable && child.type === "variable_name") sawVariable = true;
        else if (child.type !== "ERROR") items.push(wordItem(child, ctx, depth));
      }
      result.words = joinContinuations(items, ctx.src);
      return;
    }
    case "c_style_for_statement":
      for (const child of node.namedChildren) {
        if (child.type === "comment" || child.type === "ERROR") continue;
        if (child.type === "do_group" || child.type === "compound_statement") result.bodies.push(bodyScript(statements(child), ctx, inner));
        else result.words.push(dynamicWord(child, ctx, depth));
      }
      return;
    case "while_statement": {
      const condition: Node[] = [];
      for (const child of node.namedChildren) {
        if (child.type === "do_group") result.bodies.push(bodyScript(condition, ctx, inner), bodyScript(statements(child), ctx, inner));
        else if (STATEMENT_TYPES.has(child.type)) condition.push(child);
      }
      return;
    }
    case "case_statement":
      for (const child of node.namedChildren) {
        if (child.type === "comment" || child.type === "ERROR") continue;
        if (child.type === "case_item") fillCaseItem(result, child, ctx, depth, inner);
        else result.words.push(resolveWord(child, ctx, depth));
      }
      return;
    case "function_definition": {
      let sawName = false;
      for (const child of node.namedChildren) {
        if (child.type === "comment" || child.type === "ERROR") continue;
        if (!sawName && child.type === "word") {
          sawName = true;
          result.name = ctx.src.slice(child.startIndex, child.endIndex);
        } else if (child.type === "compound_statement") result.bodies.push(bodyScript(statements(child), ctx, inner));
        else if (STATEMENT_TYPES.has(child.type)) result.bodies.push(bodyScript([child], ctx, inner));
        else if (REDIRECT_TYPES.has(child.type)) {
          const d = newDraft(child.startIndex);
          pushCommand(d, result, { start: node.startIndex, end: node.endIndex });
          applyRedirect(d, 0, child, ctx, depth, []);
        }
      }
      return;
    }
    case "test_command":
      if (result.type === "arithmetic") {
        for (const child of node.namedChildren) if (child.type !== "comment") result.words.push(dynamicWord(child, ctx, depth));
      } else {
        testOperands(result, node, ctx, depth);
      }
      return;
  }
}

/** `if c; then a; elif d; then b; else e; fi` → bodies [c, a, d, b, e]. */
function fillIf(result: CompoundCommand, node: Node, ctx: Ctx, inner: number): void {
  let current: Node[] = [];
  const flush = (): void => {
    result.bodies.push(bodyScript(current, ctx, inner));
    current = [];
  };
  const walk = (n: Node): void => {
    for (const child of n.children) {
      const t = child.type;
      if (!child.isNamed) {
        if (t === "then" || t === "elif" || t === "else") {
          if (current.length > 0 || t === "then") flush();
        }
        continue;
      }
      if (t === "elif_clause" || t === "else_clause") {
        if (current.length > 0) flush();
        walk(child);
      } else if (STATEMENT_TYPES.has(t)) current.push(child);
    }
  };
  walk(node);
  if (current.length > 0) flush();
}

function fillCaseItem(result: CompoundCommand, item: Node, ctx: Ctx, depth: number, inner: number): void {
  const body: Node[] = [];
  let inBody = false;
  for (const child of item.children) {
    if (!child.isNamed) {
      if (child.type === ")") inBody = true;
      continue;
    }
    if (child.type === "comment" || child.type === "ERROR") continue;
    if (!inBody) result.words.push(resolveWord(child, ctx, depth));
    else if (STATEMENT_TYPES.has(child.type)) body.push(child);
  }
  result.bodies.push(bodyScript(body, ctx, inner));
}

const TEST_STRUCTURE = new Set(["binary_expression", "unary_expression", "parenthesized_expression", "ternary_expression", "postfix_expression"]);

/** Operands of `[[ … ]]` / `[ … ]`: the words, not the operators. Iterative. */
function testOperands(result: CompoundCommand, node: Node, ctx: Ctx, depth: number): void {
  const stack: Node[] = [];
  const children = node.namedChildren;
  for (let i = children.length - 1; i >= 0; i--) {
    stack.push(children[i]!);
  }
  while (stack.length > 0) {
    const n = stack.pop()!;
    const t = n.type;
    if (t === "test_operator" || t === "comment" || t === "ERROR") continue;
    if (TEST_STRUCTURE.has(t)) {
      const kids = n.namedChildren;
      for (let i = kids.length - 1; i >= 0; i--) {
        stack.push(kids[i]!);
      }
      continue;
    }
    if (STATEMENT_TYPES.has(t)) {
      ctx.unsupported("test syntax", n);
      continue;
    }
    result.words.push(resolveWord(n, ctx, depth));
  }
}

/**
 * An `ERROR` node: the problem is already recorded by `collectSyntaxProblems`; keep what can be
 * read inside it (whole statements, substitutions) so that detection still sees those commands.
 */
function recover(node: Node, ctx: Ctx, depth: number, out: Out): void {
  // Depth-first through nested ERROR nodes, in source order, without recursion.
  const stack: { kids: readonly Node[]; next: number }[] = [{ kids: node.namedChildren, next: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const c = top.kids[top.next++];
    if (c === undefined) {
      stack.pop();
      continue;
    }
    if (c.type === "ERROR") stack.push({ kids: c.namedChildren, next: 0 });
    else if (c.type === "comment") continue;
    else if (STATEMENT_TYPES.has(c.type)) addStatement(c, ctx, depth, out);
    else if (c.type === "command_substitution" || c.type === "process_substitution") out.push(...ctx.substitution(c, depth).script.pipelines);
    else {
      const subs: Substitution[] = [];
      collectSubstitutions(c, ctx, depth, subs);
      for (const sub of subs) out.push(...sub.script.pipelines);
    }
  }
}

/** Every `ERROR` and `MISSING` node as a problem naming the offending text. Iterative, pruned by `hasError`. */
function collectSyntaxProblems(root: Node, ctx: Ctx): void {
  const state = ctx.state;
  const stack: Node[] = [root];
  let found = 0;
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.isMissing) {
      found++;
      report(`syntax error at ${position(ctx.src, n.startIndex)}: missing ${JSON.stringify(n.type)}`);
      continue;
    }
    if (n.isError) {
      found++;
      const text = ctx.src.slice(n.startIndex, n.endIndex);
      report(`syntax error at ${position(ctx.src, n.startIndex)} near ${text.trim() === "" ? "end of input" : snippet(text)}`);
      // MISSING nodes inside an ERROR add nothing useful.
      continue;
    }
    if (!n.hasError) continue;
    const kids = n.children;
    for (let i = kids.length - 1; i >= 0; i--) {
      stack.push(kids[i]!);
    }
  }
  if (found === 0) report("syntax error");
  function report(message: string): void {
    const count = state.syntaxReported ?? 0;
    state.syntaxReported = count + 1;
    if (count < MAX_SYNTAX_PROBLEMS) ctx.problem(message);
    else if (count === MAX_SYNTAX_PROBLEMS) ctx.problem("more syntax errors not listed");
  }
}

/** `line:column` (1-based) of a source index. */
function position(src: string, index: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = src.indexOf("\n"); i >= 0 && i < index; i = src.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return `${line}:${index - lineStart + 1}`;
}
