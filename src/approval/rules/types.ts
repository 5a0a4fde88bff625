/**
 * The rule vocabulary. A rule is data: an id, the words a user reads, a
 * category, whether it is hardline, and one or more declarative matchers. The
 * detection engine (src/approval/detection/) only evaluates these; it holds no
 * rule of its own.
 */
import type { RuleCategory } from "../types.js";

/**
 * What a path operand (or a redirect target, or a file a program writes) is,
 * decided by `classifyPath` in the engine from the lists in `paths.ts`.
 * A path may have several classes (`/etc/shadow` is `system-path` and `credential`).
 */
export type PathClass =
  /** `/`, `/*`, `/.`, `/..`, `//`, a glob that matches `/`. */
  | "root"
  /** A home directory itself or all of it: `~`, `~/`, `~/*`, `$HOME`, `~user`, `/home`, `/home/NAME`, `/root`, `/Users/NAME`. */
  | "home"
  /** A system directory itself or all of it: `/etc`, `/usr/*`, `/var/lib`, a glob such as `/e*` that matches one. */
  | "system-dir"
  /** Any path at or below a directory the system owns (`/etc/hosts`, `/usr/local/bin/x`, `/boot/grub/grub.cfg`). */
  | "system-path"
  /** A raw disk or memory device: `/dev/sda`, `/dev/nvme0n1p1`, `/dev/mmcblk0`, `/dev/disk2`, `/dev/mem`. */
  | "block-device"
  /** Secrets and account databases: `~/.ssh/*`, `~/.aws/credentials`, `.netrc`, `.npmrc`, `.pypirc`, `/etc/shadow`, `/etc/sudoers`. */
  | "credential"
  /** Files a shell runs at start-up: `.bashrc`, `.zshrc`, `.profile`, `.bash_profile`, `/etc/profile.d/*`. */
  | "shell-rc"
  /** Kernel trigger files whose write reboots or halts the machine (`/proc/sysrq-trigger`). */
  | "kernel-trigger"
  /** Environment files that hold an application's secrets: `.env`, `.env.local`, `.env.production` (not `.env.example`). */
  | "env-file"
  /** Shell and REPL history files: `.bash_history`, `.zsh_history`, `.python_history`, … */
  | "history"
  /** Not known without running something (`$DIR`, `$(pwd)`, input appended by `xargs`). */
  | "dynamic"
  /**
   * Not known without running something, and not confined to scratch space or the project
   * (`"$F"`, `$(…)/x`, `/dev/$D`, `~/$X`): it could be a device, a system file, a credential
   * or a shell start-up file. `/tmp/$X`, `$TMPDIR/x`, `build/$name` are `dynamic` only.
   */
  | "unbounded";

/** A test on an operand or an option value. Every given field must hold. */
export interface ValueTest {
  /** The value is (or, for a glob or `~`, may be) a path of one of these classes. */
  classes?: readonly PathClass[];
  /** The value equals one of these (case-sensitive). */
  equals?: readonly string[];
  /** The value matches. */
  pattern?: RegExp;
  /** ...and does not match this. */
  unless?: RegExp;
}

export interface OperandTest extends ValueTest {
  /** Which operands are tested: any of them (default), the first, the last, or the one at this index (0-based). */
  which?: "any" | "first" | "last" | number;
}

export interface OptionValueTest extends ValueTest {
  /** The canonical option (see detection/options.ts), e.g. `-c` for `git -c`, `of` for `dd of=`. */
  option: string;
}

/**
 * Matches one command after wrappers are unwrapped and its options are parsed
 * with the program's option model. Every given field must hold.
 */
export interface CommandMatcher {
  kind: "command";
  /** Program basenames (`/usr/bin/rm` → `rm`). An entry ending in `*` matches by prefix (`mkfs*` → `mkfs.ext4`). */
  programs: readonly string[];
  /** The leading words that select a subcommand, in order; each entry may list alternatives `a|b` (`["compose", "down"]`). */
  subcommands?: readonly string[];
  /** Canonical options that must all be present; each entry may list alternatives `a|b`. */
  allOptions?: readonly string[];
  /** Canonical options of which at least one must be present. */
  anyOptions?: readonly string[];
  /** Canonical options that must be absent. */
  noOptions?: readonly string[];
  /** Operand tests that must all hold. */
  operands?: readonly OperandTest[];
  /** Option value tests that must all hold (an option given several times: any value). */
  optionValues?: readonly OptionValueTest[];
  /** Option value tests none of which may hold (`kill -s 0` only probes). */
  noOptionValues?: readonly OptionValueTest[];
  /** Operand count bounds (after subcommands). */
  minOperands?: number;
  maxOperands?: number;
}

/**
 * Matches a file the command writes or deletes: a redirect target (`>`, `>>`, `>|`, `&>`, `<>`),
 * or a file a known writer program writes (`tee`, `cp`/`mv`/`install`/`ln` destinations,
 * `dd of=`, `sed -i`, `truncate`, `rm`, `shred`, `curl -o`, ...; see `writers.ts`), or a
 * file an interpreter payload or a `sed`/`awk` script writes.
 */
export interface WriteMatcher {
  kind: "write";
  classes: readonly PathClass[];
}

/**
 * Matches a named finding that an analyser in the engine reports: a structure
 * (`network-to-interpreter`, `decode-to-interpreter`, `fork-bomb`, `root-shell`),
 * an SQL statement class (`sql-drop`, ...), or a tool script feature (`sed-exec`, `awk-exec`).
 * The list of findings is `FINDINGS` in `findings.ts`.
 */
export interface FindingMatcher {
  kind: "finding";
  finding: string;
}

export type Matcher = CommandMatcher | WriteMatcher | FindingMatcher;

export interface Rule {
  /** Stable id; approval keys use it. */
  readonly id: string;
  /** What the rule means, in words a user reads in an approval prompt. */
  readonly description: string;
  readonly category: RuleCategory;
  /** Never approvable: not by allowlist, yolo, `off` mode or an LLM. */
  readonly hardline: boolean;
  /** The rule matches when any of its matchers does. */
  readonly match: Matcher | readonly Matcher[];
  /**
   * Rules this one makes redundant when both match the same command
   * (`credential-file-write` overrides `system-file-write` on `/etc/shadow`).
   * Any hardline match on a command overrides that command's non-hardline matches anyway.
   */
  readonly overrides?: readonly string[];
}
