/**
 * A plain-JavaScript copy of a tree-sitter syntax tree.
 *
 * Every property of a web-tree-sitter `Node` except `startIndex` is a call
 * into wasm (type, end, named, children…), each paid again on every read.
 * The model builder reads most nodes several times, so the tree is copied
 * once, in one iterative cursor walk (three to five cursor operations a node,
 * no `Node` objects), and the wasm tree is freed right away. The copy keeps
 * the names web-tree-sitter uses, so code reads the same.
 *
 * Each `TreeCursor` method of web-tree-sitter also copies the cursor's state
 * into the wasm transfer buffer and back around the call (eight typed memory
 * accesses through `setValue`/`getValue`), which costs more than the call
 * itself. When the parser could get hold of the emscripten module (see
 * `DirectCursorBinding`), the walk calls the module's cursor functions
 * directly and leaves the state in the transfer buffer between calls: the
 * same operations on the same cursor, three to four times cheaper. The
 * public `TreeCursor` walk is the fallback, and the two are checked against
 * each other when the parser loads.
 */

import type { TimeBudget } from "./time-budget.js";

/*
 * The parts of web-tree-sitter's `Language`, `Tree` and `TreeCursor` the copy uses, declared
 * here rather than imported: this file's declarations are reachable from the package's public
 * types, and web-tree-sitter's own declarations do not compile in a consumer's project (they
 * name emscripten's undeclared globals). web-tree-sitter's objects satisfy these structurally.
 */
/** What `languageTables` reads of a grammar (web-tree-sitter's `Language`). */
export interface GrammarTypes {
  readonly types: readonly string[];
  nodeTypeIsNamed(typeId: number): boolean;
}
/** The cursor operations of web-tree-sitter's `TreeCursor` the public walk uses. */
export interface TreeCursorLike {
  readonly nodeTypeId: number;
  readonly nodeIsMissing: boolean;
  readonly startIndex: number;
  readonly endIndex: number;
  gotoFirstChild(): boolean;
  gotoNextSibling(): boolean;
  gotoParent(): boolean;
  delete(): void;
}
/** What `copyTree` reads of a parse tree (web-tree-sitter's `Tree`). */
export interface ParsedTreeLike {
  readonly rootNode: { readonly hasError: boolean };
  walk(): TreeCursorLike;
}

export interface SyntaxNode {
  readonly type: string;
  readonly isNamed: boolean;
  /** UTF-16 index into the parsed text (web-tree-sitter parses JavaScript strings as UTF-16). */
  readonly startIndex: number;
  readonly endIndex: number;
  readonly children: readonly SyntaxNode[];
  readonly namedChildren: readonly SyntaxNode[];
  /** A token the parser inserted to recover from a syntax error. */
  readonly isMissing: boolean;
  readonly isError: boolean;
  /** This node or one below it is an `ERROR` or `MISSING` node. */
  readonly hasError: boolean;
}

/** Per-language lookups, computed once: type names and namedness by type id. */
export interface LanguageTables {
  types: readonly string[];
  named: readonly boolean[];
}

/**
 * The cursor functions of web-tree-sitter 0.25's emscripten module. Each takes the tree's
 * address and reads the cursor from the module's transfer buffer; the `goto` functions write
 * the moved cursor back there, the getters leave it as it is.
 */
export interface DirectCursorBinding {
  _ts_tree_root_node_wasm(tree: number): void;
  _ts_tree_cursor_new_wasm(tree: number): void;
  _ts_tree_cursor_delete_wasm(tree: number): void;
  _ts_tree_cursor_goto_first_child_wasm(tree: number): number;
  _ts_tree_cursor_goto_next_sibling_wasm(tree: number): number;
  _ts_tree_cursor_goto_parent_wasm(tree: number): number;
  _ts_tree_cursor_current_node_type_id_wasm(tree: number): number;
  _ts_tree_cursor_current_node_is_missing_wasm(tree: number): number;
  _ts_tree_cursor_start_index_wasm(tree: number): number;
  _ts_tree_cursor_end_index_wasm(tree: number): number;
}

const DIRECT_FUNCTIONS: readonly (keyof DirectCursorBinding)[] = [
  "_ts_tree_root_node_wasm",
  "_ts_tree_cursor_new_wasm",
  "_ts_tree_cursor_delete_wasm",
  "_ts_tree_cursor_goto_first_child_wasm",
  "_ts_tree_cursor_goto_next_sibling_wasm",
  "_ts_tree_cursor_goto_parent_wasm",
  "_ts_tree_cursor_current_node_type_id_wasm",
  "_ts_tree_cursor_current_node_is_missing_wasm",
  "_ts_tree_cursor_start_index_wasm",
  "_ts_tree_cursor_end_index_wasm",
];

/** The module's cursor functions, when `module` has all of them; null otherwise. */
export function directCursorBinding(module: unknown): DirectCursorBinding | null {
  if (typeof module !== "object" || module === null) return null;
  const m = module as Record<string, unknown>;
  for (const name of DIRECT_FUNCTIONS) if (typeof m[name] !== "function") return null;
  return module as DirectCursorBinding;
}

/** The wasm address of a tree (web-tree-sitter keeps it as the tree's own property `0`). */
function treeAddress(tree: ParsedTreeLike): number | null {
  const address = (tree as unknown as { 0?: unknown })[0];
  return typeof address === "number" && address > 0 ? address : null;
}

/** tree-sitter's `ts_builtin_sym_error`. */
const ERROR_SYMBOL = 0xffff;
const NO_CHILDREN: readonly SyntaxNode[] = Object.freeze([]);

export class Copy implements SyntaxNode {
  children: readonly SyntaxNode[] = NO_CHILDREN;
  startIndex = 0;
  endIndex = 0;
  isMissing = false;
  hasError = false;
  private named: readonly SyntaxNode[] | undefined;

  constructor(
    readonly type: string,
    readonly isNamed: boolean,
    readonly parent: Copy | null,
  ) {}

  get isError(): boolean {
    return this.type === "ERROR";
  }

  get namedChildren(): readonly SyntaxNode[] {
    if (this.named === undefined) {
      let all = true;
      for (const c of this.children) {
        if (!c.isNamed) {
          all = false;
          break;
        }
      }
      this.named = all ? this.children : this.children.filter((c) => c.isNamed);
    }
    return this.named;
  }
}

export function languageTables(language: GrammarTypes): LanguageTables {
  const types = language.types.slice();
  const named: boolean[] = [];
  for (let i = 0; i < types.length; i++) named.push(language.nodeTypeIsNamed(i));
  return { types, named };
}

/** The cursor operations the copy needs. */
interface Walker {
  typeId(): number;
  isMissing(): boolean;
  firstChild(): boolean;
  nextSibling(): boolean;
  parent(): boolean;
  start(): number;
  end(): number;
  close(): void;
}

class PublicWalker implements Walker {
  constructor(private readonly cursor: TreeCursorLike) {}
  typeId(): number {
    return this.cursor.nodeTypeId;
  }
  isMissing(): boolean {
    return this.cursor.nodeIsMissing;
  }
  firstChild(): boolean {
    return this.cursor.gotoFirstChild();
  }
  nextSibling(): boolean {
    return this.cursor.gotoNextSibling();
  }
  parent(): boolean {
    return this.cursor.gotoParent();
  }
  start(): number {
    return this.cursor.startIndex;
  }
  end(): number {
    return this.cursor.endIndex;
  }
  close(): void {
    this.cursor.delete();
  }
}

/**
 * A cursor that lives only in the module's transfer buffer: created from the root node the
 * module put there, moved and read by direct calls, deleted from there. Nothing else may use
 * the transfer buffer between `open` and `close`; the copy makes no other web-tree-sitter call
 * in between.
 */
class DirectWalker implements Walker {
  private constructor(
    private readonly m: DirectCursorBinding,
    private readonly t: number,
  ) {}

  static open(m: DirectCursorBinding, t: number): DirectWalker {
    m._ts_tree_root_node_wasm(t);
    m._ts_tree_cursor_new_wasm(t);
    return new DirectWalker(m, t);
  }
  typeId(): number {
    return this.m._ts_tree_cursor_current_node_type_id_wasm(this.t);
  }
  isMissing(): boolean {
    return this.m._ts_tree_cursor_current_node_is_missing_wasm(this.t) === 1;
  }
  firstChild(): boolean {
    return this.m._ts_tree_cursor_goto_first_child_wasm(this.t) === 1;
  }
  nextSibling(): boolean {
    return this.m._ts_tree_cursor_goto_next_sibling_wasm(this.t) === 1;
  }
  parent(): boolean {
    return this.m._ts_tree_cursor_goto_parent_wasm(this.t) === 1;
  }
  start(): number {
    return this.m._ts_tree_cursor_start_index_wasm(this.t);
  }
  end(): number {
    return this.m._ts_tree_cursor_end_index_wasm(this.t);
  }
  close(): void {
    this.m._ts_tree_cursor_delete_wasm(this.t);
  }
}

/**
 * Copies `tree` into plain objects. Returns null when `budget` is spent during the copy. Iterative: a tree thousands of levels deep does not touch the stack.
 * With `direct`, the cursor is driven through the module's functions (see `DirectWalker`).
 */
export function copyTree(tree: ParsedTreeLike, tables: LanguageTables, budget: TimeBudget, direct: DirectCursorBinding | null = null): SyntaxNode | null {
  const withErrors = tree.rootNode.hasError;
  const address = direct ? treeAddress(tree) : null;
  const cursor: Walker = direct && address !== null ? DirectWalker.open(direct, address) : new PublicWalker(tree.walk());
  try {
    return walk(cursor, tables, withErrors, budget);
  } finally {
    cursor.close();
  }
}

function walk(cursor: Walker, tables: LanguageTables, withErrors: boolean, budget: TimeBudget): SyntaxNode | null {
  const root = make(cursor, tables, withErrors, null);
  if (!cursor.firstChild()) {
    root.startIndex = cursor.start();
    root.endIndex = cursor.end();
    return root;
  }
  // A node with children spans from its first child's start to its last child's end, so only
  // leaves need their positions read (two wasm calls fewer per inner node).
  let parent: Copy = root;
  let count = 0;
  for (;;) {
    const node = make(cursor, tables, withErrors, parent);
    if (parent.children === NO_CHILDREN) parent.children = [node];
    else (parent.children as SyntaxNode[]).push(node);
    if (withErrors && (node.isMissing || node.type === "ERROR")) markErrors(node);
    if ((++count & 1023) === 0 && budget.expired()) return null;
    if (cursor.firstChild()) {
      parent = node;
      continue;
    }
    node.startIndex = cursor.start();
    node.endIndex = cursor.end();
    let moved = cursor.nextSibling();
    while (!moved) {
      span(parent);
      if (parent === root) break;
      cursor.parent();
      parent = parent.parent ?? root;
      moved = cursor.nextSibling();
    }
    if (!moved) break;
  }
  return root;
}

function span(node: Copy): void {
  const children = node.children;
  node.startIndex = children[0]!.startIndex;
  node.endIndex = children[children.length - 1]!.endIndex;
}

function make(cursor: Walker, tables: LanguageTables, withErrors: boolean, parent: Copy | null): Copy {
  const id = cursor.typeId();
  const node = id === ERROR_SYMBOL ? new Copy("ERROR", true, parent) : new Copy(tables.types[id] ?? "ERROR", tables.named[id] ?? true, parent);
  if (withErrors && cursor.isMissing()) node.isMissing = true;
  return node;
}

/** Marks `node` and its ancestors up to the first one already marked. */
function markErrors(node: Copy): void {
  let n: Copy | null = node;
  while (n && !n.hasError) {
    n.hasError = true;
    n = n.parent;
  }
}

/** True when the two trees have the same nodes (type, namedness, span, error flags) in the same shape. */
export function sameTree(a: SyntaxNode, b: SyntaxNode): boolean {
  const stack: [SyntaxNode, SyntaxNode][] = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop()!;
    if (
      x.type !== y.type ||
      x.isNamed !== y.isNamed ||
      x.startIndex !== y.startIndex ||
      x.endIndex !== y.endIndex ||
      x.isMissing !== y.isMissing ||
      x.hasError !== y.hasError ||
      x.children.length !== y.children.length
    ) {
      return false;
    }
    for (let i = 0; i < x.children.length; i++) stack.push([x.children[i]!, y.children[i]!]);
  }
  return true;
}
