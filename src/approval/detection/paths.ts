/**
 * Path classification: which of the classes in rules/paths.ts a path (an
 * operand, a redirect target, a written file) belongs to. Results are bit sets.
 */
import {
  BLOCK_DEVICE_PATTERNS,
  CONFINED_VARIABLES,
  CREDENTIAL_PATTERNS,
  ENV_FILE_PATTERNS,
  HARMLESS_DEVICES,
  HOME_DIRS,
  HOME_PARENTS,
  HISTORY_PATTERNS,
  HOME_VARIABLES,
  KERNEL_TRIGGER_PATTERNS,
  SCRATCH_PREFIXES,
  SHELL_RC_PATTERNS,
  SYSTEM_DIRS,
  SYSTEM_PATH_EXCEPTIONS,
  SYSTEM_PATH_ROOTS,
} from "../rules/paths.js";
import type { PathClass } from "../rules/types.js";
import { globToRegExp } from "./glob.js";

export const PATH_BITS: Readonly<Record<PathClass, number>> = {
  root: 1,
  home: 2,
  "system-dir": 4,
  "system-path": 8,
  "block-device": 16,
  credential: 32,
  "shell-rc": 64,
  "kernel-trigger": 128,
  dynamic: 256,
  "env-file": 512,
  history: 1024,
  unbounded: 2048,
};

export function classBits(classes: readonly PathClass[]): number {
  let bits = 0;
  for (const c of classes) bits |= PATH_BITS[c];
  return bits;
}

const SYSTEM_DIR_SET = new Set(SYSTEM_DIRS);
const HOME_DIR_SET = new Set(HOME_DIRS);
const HOME_PARENT_SET = new Set(HOME_PARENTS);
/** `$HOME`, `${HOME}`, and `${HOME:?msg}`, `${HOME:-x}`, `${HOME=x}` (HOME when it is set). */
const HOME_VAR_RE = new RegExp(`^(?:\\$\\{(?:${HOME_VARIABLES.join("|")})(?::?[-?=][^}]*)?\\}|\\$(?:${HOME_VARIABLES.join("|")})(?![A-Za-z0-9_]))`);
const GLOB_RE = /[*?[]/;

/** Names a glob is tried against, to decide whether it may name a protected path. */
const GLOB_CANDIDATES: readonly string[] = [
  "/", ...SYSTEM_DIRS, ...HOME_DIRS, ...HOME_PARENTS, "/home/user", "/Users/user", "~",
  "/dev/sda", "/dev/sdb1", "/dev/nvme0n1", "/dev/nvme0n1p1", "/dev/vda", "/dev/xvda", "/dev/hda", "/dev/mmcblk0", "/dev/disk0", "/dev/mem",
  "~/.bashrc", "~/.zshrc", "~/.profile", "~/.bash_profile", "~/.ssh", "~/.ssh/id_rsa", "~/.ssh/authorized_keys", "~/.aws/credentials",
  "~/.netrc", "~/.npmrc", "~/.pypirc", "~/.gnupg", "/etc/shadow", "/etc/passwd", "/etc/sudoers", "/etc/hosts", "/proc/sysrq-trigger",
];

/** Folds `~user`, `$HOME`, `//`, `/./`, `..` and trailing slashes. Returns the path with a leading `~` for home. */
export function normalisePath(value: string): string {
  let p = value;
  const home = HOME_VAR_RE.exec(p);
  if (home) p = "~" + p.slice(home[0].length);
  else if (p.startsWith("~")) {
    const slash = p.indexOf("/");
    p = slash < 0 ? "~" : "~" + p.slice(slash);
  }
  const absolute = p.startsWith("/");
  const tilde = p.startsWith("~");
  if (!absolute && !tilde) return p.length > 1 ? p.replace(/\/+$/, "") || p : p;
  const segments = (tilde ? p.slice(1) : p).split("/");
  const out: string[] = [];
  let aboveHome = 0;
  for (const s of segments) {
    if (s === "" || s === ".") continue;
    if (s === "..") {
      if (out.length > 0) out.pop();
      else if (tilde) aboveHome++;
      continue;
    }
    out.push(s);
  }
  if (tilde) {
    if (aboveHome > 0) {
      // `~/..` is /home (or /Users); further up is /.
      return aboveHome === 1 ? "/home" + (out.length ? "/" + out.join("/") : "") : "/" + out.join("/");
    }
    return out.length ? "~/" + out.join("/") : "~";
  }
  return "/" + out.join("/");
}


function isHomeDir(dir: string): boolean {
  if (dir === "~" || HOME_DIR_SET.has(dir) || HOME_PARENT_SET.has(dir)) return true;
  const slash = dir.lastIndexOf("/");
  return slash > 0 && HOME_PARENT_SET.has(dir.slice(0, slash));
}

function under(path: string, root: string): boolean {
  return path === root || (path.startsWith(root) && path.charCodeAt(root.length) === 47);
}

function fileBits(path: string): number {
  let bits = 0;
  if (path.startsWith("/dev/")) {
    for (const re of HARMLESS_DEVICES) if (re.test(path)) return 0;
    for (const re of BLOCK_DEVICE_PATTERNS) if (re.test(path)) return PATH_BITS["block-device"];
  }
  if (path.startsWith("/")) {
    let exception = false;
    for (const e of SYSTEM_PATH_EXCEPTIONS) if (under(path, e)) exception = true;
    if (!exception) for (const r of SYSTEM_PATH_ROOTS) if (under(path, r)) bits |= PATH_BITS["system-path"];
    for (const re of KERNEL_TRIGGER_PATTERNS) if (re.test(path)) bits |= PATH_BITS["kernel-trigger"];
  }
  for (const re of CREDENTIAL_PATTERNS) if (re.test(path)) {
    bits |= PATH_BITS.credential;
    break;
  }
  for (const re of SHELL_RC_PATTERNS) if (re.test(path)) {
    bits |= PATH_BITS["shell-rc"];
    break;
  }
  for (const re of ENV_FILE_PATTERNS) if (re.test(path)) bits |= PATH_BITS["env-file"];
  for (const re of HISTORY_PATTERNS) if (re.test(path)) bits |= PATH_BITS.history;
  return bits;
}

/** Strips trailing "contents of" globs (`/*`, `/.*`, `/{*,.*}`): `~/*` is all of home. */
function directoryOf(path: string): string {
  let p = path;
  for (;;) {
    const m = /\/(?:\*|\.\*|\.\[!.\]\*|\{\*,\.\*\}|\{\.\*,\*\}|\.\?\*|\*\.\*)$/.exec(p);
    if (!m) break;
    p = p.slice(0, m.index);
    if (p === "") return "/";
  }
  return p;
}

function staticBits(value: string): number {
  if (value === "") return 0;
  const path = normalisePath(value);
  // `../../../../etc/passwd` climbs out of wherever it starts: from deep enough it is `/etc/passwd`.
  const climb = /^(?:\.\.\/){2,}/.exec(path);
  if (climb && path.length > climb[0].length) return staticBitsOf(path) | staticBitsOf("/" + path.slice(climb[0].length));
  return staticBitsOf(path);
}

function staticBitsOf(path: string): number {
  const dir = directoryOf(path);
  let bits = 0;
  // Globs are tried against absolute and home paths; a relative glob (`*`) stays relative.
  if (GLOB_RE.test(path) && (path.startsWith("/") || path.startsWith("~"))) {
    const dirRe = globToRegExp(dir);
    const pathRe = globToRegExp(path);
    for (const candidate of GLOB_CANDIDATES) {
      if (dirRe.test(candidate)) bits |= dirBits(candidate);
      if (pathRe.test(candidate)) bits |= fileBits(candidate);
    }
    // A glob below a system directory still writes there; a glob ending in a protected name is that name.
    bits |= fileBits(path.replace(/[*?[].*$/, "x")) | fileBits(path);
    return bits;
  }
  bits |= dirBits(dir);
  bits |= fileBits(path);
  return bits;
}

function dirBits(dir: string): number {
  if (dir === "/") return PATH_BITS.root;
  let bits = 0;
  if (isHomeDir(dir)) bits |= PATH_BITS.home;
  if (SYSTEM_DIR_SET.has(dir)) bits |= PATH_BITS["system-dir"];
  return bits;
}

const cache = new Map<string, number>();

/** Joins a relative path onto a known working directory (`cd ~ && rm -rf *`). */
export function inDirectory(cwd: string | null, value: string): string {
  if (!cwd || value === "" || value.startsWith("/") || value.startsWith("~") || value.startsWith("$") || value.startsWith("-")) return value;
  return cwd.endsWith("/") ? cwd + value : cwd + "/" + value;
}

/** The classes of `value` as a bit set (PATH_BITS). A value with unresolved expansions is `dynamic`, plus what its static head tells. */
export function classifyPath(value: string, isStatic: boolean): number {
  const key = isStatic ? value : "\0" + value;
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  let bits: number;
  if (isStatic) bits = staticBits(value);
  else {
    bits = PATH_BITS.dynamic;
    // `$HOME` and `${HOME}` alone, or followed by static text, are resolvable.
    const home = HOME_VAR_RE.exec(value);
    const rest = home ? value.slice(home[0].length) : value;
    // `$HOME/x` is as good as `~/x`; other text with no expansion left stands for something only known when it runs (`{}` of xargs).
    if (!/[$`]/.test(rest)) bits = home ? staticBits("~" + rest) : bits | staticBits(rest) | PATH_BITS.unbounded;
    else {
      const cut = rest.search(/[$`]/);
      const head = (home ? "~" : "") + rest.slice(0, cut);
      const slash = head.lastIndexOf("/");
      if (slash >= 0) {
        // Something inside this directory: what is written there is unknown, where it is is not.
        const dir = normalisePath(head.slice(0, slash + 1) || "/");
        bits |= fileBits(dir === "/" ? "/" : dir + "/x") & ~PATH_BITS["block-device"];
      }
      // The known end (`"$HOME_DIR/.ssh/authorized_keys"`): a protected name is protected wherever it is.
      const tail = rest.slice(Math.max(rest.lastIndexOf("$"), rest.lastIndexOf("`"), rest.lastIndexOf(")"), rest.lastIndexOf("}")) + 1);
      const tailSlash = tail.indexOf("/");
      if (tailSlash >= 0 && !/[$`]/.test(tail)) bits |= fileBits("/x" + tail.slice(tailSlash)) & ~PATH_BITS["system-path"];
      if (!isConfined(value, head)) bits |= PATH_BITS.unbounded;
    }
  }
  if (cache.size > 4096) cache.clear();
  cache.set(key, bits);
  return bits;
}

/** A computed path that stays in scratch space or below the working directory (see `SCRATCH_PREFIXES`). */
function isConfined(value: string, head: string): boolean {
  if (SCRATCH_PREFIXES.some((p) => head.startsWith(p))) return true;
  if (CONFINED_VARIABLES.some((re) => re.test(value))) return true;
  // `build/$name`, `./out/$f`: below the working directory.
  return head.includes("/") && !head.startsWith("/") && !head.startsWith("~") && !head.startsWith("..");
}

export function hasClass(bits: number, cls: PathClass): boolean {
  return (bits & PATH_BITS[cls]) !== 0;
}
