import type { PostHook, PreHook } from "../registry/types.js";

export type HookKind = "pre" | "post";

/**
 * Pre- and post-invocation hooks. Lists are replaced, never mutated, so a hook
 * removed while a call is running does not disturb that call's iteration.
 */
export class HookSet {
  pre: readonly PreHook[] = [];
  post: readonly PostHook[] = [];

  addPre(hook: PreHook): void {
    if (typeof hook !== "function") throw new TypeError("a pre-hook must be a function");
    this.pre = [...this.pre, hook];
  }

  addPost(hook: PostHook): void {
    if (typeof hook !== "function") throw new TypeError("a post-hook must be a function");
    this.post = [...this.post, hook];
  }

  /** Removes one registration of `hook` (from both lists when `kind` is omitted); true when one was removed. */
  remove(hook: PreHook | PostHook, kind?: HookKind): boolean {
    let removed = false;
    if (kind === undefined || kind === "pre") {
      const index = this.pre.indexOf(hook as PreHook);
      if (index >= 0) {
        this.pre = this.pre.filter((_, i) => i !== index);
        removed = true;
      }
    }
    if (kind === undefined || kind === "post") {
      const index = this.post.indexOf(hook as PostHook);
      if (index >= 0) {
        this.post = this.post.filter((_, i) => i !== index);
        removed = true;
      }
    }
    return removed;
  }
}

export function hookName(hook: PreHook | PostHook): string {
  return hook.name ? `"${hook.name}"` : "(anonymous)";
}
