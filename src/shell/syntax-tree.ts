/**
 * A plain-JavaScript copy of a tree-sitter syntax tree.
 *
 * Every property of a web-tree-sitter `Node` except `startIndex` is a call
 * into wasm (type, end, named, children…), each paid again on every read.
 * The model builder reads most nodes several times, so the tree is copied
 * once, in one iterative cursor walk (three to five wasm calls a node, no
 * `Node` objects), and the wasm tree is freed right away. The copy keeps the
 * names web-tree-sitter uses, so code reads the same.
 */

import type { Language, Tree, TreeCursor } from "web-tree-sitter";

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

/** tree-sitter's `ts_builtin_sym_error`. */
const ERROR_SYMBOL = 0xffff;
const NO_CHILDREN: readonly SyntaxNode[] = Object.freeze([]);

class Copy implements SyntaxNode {
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

export function languageTables(language: Language): LanguageTables {
  const types = language.types.slice();
  const named: boolean[] = [];
  for (let i = 0; i < types.length; i++) named.push(language.nodeTypeIsNamed(i));
  return { types, named };
}

/**
 * Copies `tree` into plain objects. Returns null when `deadline` (a `performance.now()` value)
 * passes during the copy. Iterative: a tree thousands of levels deep does not touch the stack.
 */
export function copyTree(tree: Tree, tables: LanguageTables, deadline: number): SyntaxNode | null {
  const withErrors = tree.rootNode.hasError;
  const cursor = tree.walk();
  try {
    const root = make(cursor, tables, withErrors, null);
    if (!cursor.gotoFirstChild()) {
      root.startIndex = cursor.startIndex;
      root.endIndex = cursor.endIndex;
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
      if ((++count & 1023) === 0 && performance.now() > deadline) return null;
      if (cursor.gotoFirstChild()) {
        parent = node;
        continue;
      }
      node.startIndex = cursor.startIndex;
      node.endIndex = cursor.endIndex;
      let moved = cursor.gotoNextSibling();
      while (!moved) {
        span(parent);
        if (parent === root) break;
        cursor.gotoParent();
        parent = parent.parent ?? root;
        moved = cursor.gotoNextSibling();
      }
      if (!moved) break;
    }
    return root;
  } finally {
    cursor.delete();
  }
}

function span(node: Copy): void {
  const children = node.children;
  node.startIndex = children[0]!.startIndex;
  node.endIndex = children[children.length - 1]!.endIndex;
}

function make(cursor: TreeCursor, tables: LanguageTables, withErrors: boolean, parent: Copy | null): Copy {
  const id = cursor.nodeTypeId;
  const node = id === ERROR_SYMBOL ? new Copy("ERROR", true, parent) : new Copy(tables.types[id] ?? "ERROR", tables.named[id] ?? true, parent);
  if (withErrors && cursor.nodeIsMissing) node.isMissing = true;
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
