// Every test file runs with a profile home of its own unless it sets one: nothing a
// test does (process checkpoints, receipts, approvals) may reach the real ~/.mibyan.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

process.env.MIBYAN_HOME ||= mkdtempSync(path.join(tmpdir(), "mibyan-test-home-"));
