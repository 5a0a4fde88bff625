/**
 * The behaviours every backend shares (test/support/environment-contract.ts),
 * run on a local environment whose commands all go through the bubblewrap
 * sandbox: per-task state, isolation between tasks, output capping, binary
 * output, timeouts and aborts, what a closed environment does.
 */

import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import path from "node:path";

import { afterAll } from "vitest";

import { LocalEnvironment } from "../src/environments/local.js";
import { checkBubblewrap } from "../src/sandbox/bubblewrap.js";
import { environmentContract } from "./support/environment-contract.js";

const scratch = realpathSync(mkdtempSync("/var/tmp/mibyan-sandbox-contract-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

environmentContract(
  "local in the sandbox (bubblewrap, workspace-write, network off)",
  (taskId) =>
    LocalEnvironment.create(taskId, {
      initialCwd: scratch,
      sandbox: { mode: "workspace-write", network: false, writableRoots: [] },
      profileHome: path.join(scratch, "profile"),
    }),
  { skip: checkBubblewrap().problem },
);
