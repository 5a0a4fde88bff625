/**
 * `terminal.local.sandbox` as written in config.yaml: the mode shorthand, the
 * mapping, and bad values as typed errors naming the key (a misspelt
 * isolation setting must never pass as "off").
 */

import os from "node:os";
import path from "node:path";

import { describe, expect, it } from "vitest";

import { bubblewrapArgv } from "../src/sandbox/bubblewrap.js";
import { SandboxConfigError } from "../src/sandbox/errors.js";
import { parseSandboxSetting, sandboxPolicyFromSection } from "../src/sandbox/policy.js";

describe("terminal.local.sandbox", () => {
  it("is off when absent; a mode alone turns the network off", () => {
    expect(sandboxPolicyFromSection(undefined)).toEqual({ mode: "off", network: true, writableRoots: [] });
    expect(sandboxPolicyFromSection({ sandbox: "workspace-write" })).toEqual({ mode: "workspace-write", network: false, writableRoots: [] });
    // A YAML 1.1 reader's `off`.
    expect(parseSandboxSetting(false).mode).toBe("off");
  });

  it("takes a mapping with network and writable roots (~ expanded)", () => {
    const policy = parseSandboxSetting({ mode: "read-only", network: true, writable_roots: ["~/cache", "/opt/x/"] });
    expect(policy).toEqual({ mode: "read-only", network: true, writableRoots: [path.join(os.homedir(), "cache"), "/opt/x"] });
    expect(parseSandboxSetting({ mode: "workspace-write", writableRoots: ["/a"] }).writableRoots).toEqual(["/a"]);
  });

  it.each([
    [{ sandbox: "readonly" }, /terminal\.local\.sandbox must be one of off, read-only, workspace-write/],
    [{ sandbox: { mode: "read-only", netwrok: false } }, /terminal\.local\.sandbox\.netwrok is not a known option/],
    [{ sandbox: { network: false } }, /terminal\.local\.sandbox\.mode is required/],
    [{ sandbox: { mode: "read-only", network: "no" } }, /network must be true or false/],
    [{ sandbox: { mode: "workspace-write", writable_roots: "/a" } }, /writable_roots must be a list/],
    [{ sandbox: { mode: "workspace-write", writable_roots: ["relative/dir"] } }, /writable_roots\[0\] must be an absolute path/],
    [{ sandbx: "read-only" }, /terminal\.local\.sandbx is not a known option/],
  ])("refuses %j", (section, message) => {
    expect(() => sandboxPolicyFromSection(section)).toThrow(SandboxConfigError);
    expect(() => sandboxPolicyFromSection(section)).toThrow(message);
  });
});

describe("the bubblewrap command line", () => {
  it("drops capabilities in a user namespace, mounts the private /tmp before the binds, parents first, protected paths last", () => {
    const argv = bubblewrapArgv(
      "/usr/bin/bwrap",
      { network: false, privateTmp: "/s/tmp", writable: ["/w/a/b", "/w"], readable: ["/r"], protectedPaths: ["/w/.mibyan"], runtimeWritable: ["/w/.mibyan/x"] },
      ["bash", "-c", "x"],
    );
    const text = argv.join(" ");
    expect(text).toMatch(/^\/usr\/bin\/bwrap --unshare-user --cap-drop ALL --ro-bind \/ \/ --dev \/dev --unshare-net --tmpfs \/run --bind \/s\/tmp \/tmp /);
    expect(text.indexOf("--bind /w /w")).toBeLessThan(text.indexOf("--bind /w/a/b /w/a/b"));
    expect(text).toMatch(/--ro-bind \/w\/\.mibyan \/w\/\.mibyan --bind \/w\/\.mibyan\/x \/w\/\.mibyan\/x --setenv TMPDIR \/tmp -- bash -c x$/);
    // No pid namespace, no new session, no die-with-parent: background processes outlive the launch and stay killable by group.
    expect(argv).not.toContain("--unshare-pid");
    expect(argv).not.toContain("--new-session");
    expect(argv).not.toContain("--die-with-parent");
    const online = bubblewrapArgv("bwrap", { network: true, privateTmp: "/s/tmp", writable: [], readable: [], protectedPaths: [], runtimeWritable: [] }, ["true"]);
    expect(online).not.toContain("--unshare-net");
    expect(online).not.toContain("/run");
  });
});
