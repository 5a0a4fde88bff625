/**
 * CLI start-up benchmarks for bench/run.mjs (issue 11): how long one `mibyan`
 * command takes from `spawn` to exit, as a ratio to `node -e 0` measured in the
 * same rounds.
 *
 *   cli.check          mibyan check 'ls'                        target ≤ 3× node -e 0
 *   cli.call           mibyan call terminal '{"command":"true"}' target ≤ 5×
 *   cli.tools          mibyan tools --json                       target ≤ 2×
 *   cli.check.grammar  mibyan check on a command the fast parser leaves to
 *                      tree-sitter (the bash grammar is loaded)   reported
 *
 * Every command runs `node bin/mibyan.js ...` with `spawnSync`, timed around the
 * spawn, `NODE_OPTIONS` cleared, in a temporary `MIBYAN_HOME` (warmed by one run
 * first, so the discovery scan cache exists, as for any user after the first
 * command) and a temporary `MIBYAN_PROCESS_ROOT`. The rounds interleave the
 * baseline and the subjects, rotating the order each round, so a load spike on
 * the shared machine hits all of them alike. Figures are medians; the ratio is
 * median ÷ median of the baseline, and the spread is the ratios' range over
 * the rounds (each run ÷ the baseline run of its own round).
 *
 * Standalone: `node bench/cli-startup.mjs [--quick] [--runs N] [--json] [--cli PATH]` (after
 * `npm run build`); `--cli` times another build's bin/mibyan.js (a worktree of an older commit).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { median, round } from "./common.mjs";

const SELF = fileURLToPath(import.meta.url);
const ROOT = path.resolve(path.dirname(SELF), "..");
const CLI = path.join(ROOT, "bin", "mibyan.js");

/**
 * A command the fast parser does not take (a `case` with a pattern list): `check`
 * must load web-tree-sitter and the bash grammar. Its verdict is "approval".
 */
const GRAMMAR_COMMAND = "case $x in a|b) rm -rf ./build;; esac";

/** [name, label, argv after bin/mibyan.js, accepted exit statuses, target ratio or null]. */
const SUBJECTS = [
  ["cli.check", "mibyan check 'ls'", ["check", "ls"], [0], 3],
  ["cli.call", `mibyan call terminal '{"command":"true"}'`, ["call", "terminal", '{"command":"true"}'], [0], 5],
  ["cli.tools", "mibyan tools --json (scan cache warm)", ["tools", "--json"], [0], 2],
  ["cli.check.grammar", `mibyan check '${GRAMMAR_COMMAND}' (loads the bash grammar)`, ["check", GRAMMAR_COMMAND], [1], null],
];

function timeSpawn(argv, env, accepted) {
  const start = performance.now();
  const child = spawnSync(process.execPath, argv, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
  const elapsed = performance.now() - start;
  if (child.error !== undefined || !accepted.includes(child.status)) {
    throw new Error(`node ${argv.join(" ")} failed (status ${child.status}): ${child.error ?? child.stderr}`);
  }
  return { elapsed, stdout: child.stdout };
}

/**
 * Runs the CLI start-up benchmarks and returns their result rows (the shape
 * bench/run.mjs prints). `note` prints progress; `runs` overrides the round count.
 */
export async function benchCliStartup({ quick, note, runs: runsOverride, cli = CLI }) {
  const runs = runsOverride ?? (quick ? 3 : 15);
  const warmups = quick ? 1 : 2;
  note(`cli start-up: ${SUBJECTS.map(([, label]) => label).join("; ")} vs node -e 0, ${runs} interleaved rounds ...`);
  const scratch = mkdtempSync(path.join(tmpdir(), "mibyan-bench-cli-"));
  try {
    const env = { ...process.env, MIBYAN_HOME: path.join(scratch, "home"), MIBYAN_PROCESS_ROOT: path.join(scratch, "proc") };
    delete env.NODE_OPTIONS; // npm may set it; the figure is for a plain `node`
    mkdirSync(env.MIBYAN_PROCESS_ROOT, { recursive: true, mode: 0o700 });
    const jobs = [["baseline", () => timeSpawn(["-e", "0"], env, [0])]];
    for (const [name, , argv, accepted] of SUBJECTS) jobs.push([name, () => timeSpawn([cli, ...argv], env, accepted)]);

    // Sanity: the commands do what we think (and the first run writes the scan cache).
    const tools = JSON.parse(timeSpawn([cli, "tools", "--json"], env, [0]).stdout);
    if (!Array.isArray(tools.toolsets)) throw new Error("mibyan tools --json printed no toolsets");
    const call = JSON.parse(timeSpawn([cli, "call", "terminal", '{"command":"true"}'], env, [0]).stdout);
    if (call.exit_code !== 0) throw new Error(`mibyan call terminal true: ${JSON.stringify(call)}`);

    for (let i = 0; i < warmups; i++) for (const [, job] of jobs) job();
    const samples = Object.fromEntries(jobs.map(([name]) => [name, []]));
    for (let i = 0; i < runs; i++) {
      for (let j = 0; j < jobs.length; j++) {
        const [name, job] = jobs[(i + j) % jobs.length];
        samples[name].push(job().elapsed);
      }
    }
    const baseline = median(samples.baseline);
    return SUBJECTS.map(([name, label, , , target]) => {
      const value = median(samples[name]);
      const perRound = samples[name].map((ms, i) => ms / samples.baseline[i]);
      const ratio = value / baseline;
      const range = [round(Math.min(...perRound), 2), round(Math.max(...perRound), 2)];
      return {
        name,
        label: `${label} [rounds ${range[0]}–${range[1]}×]`,
        value: round(value, 1),
        unit: "ms",
        baseline: round(baseline, 1),
        baselineLabel: "node -e 0",
        ratio: round(ratio, 2),
        ratioRange: range,
        samples: runs,
        target,
        targetOn: target === null ? null : "ratio",
        targetText: target === null ? "(reported)" : `≤ ${target}× node -e 0`,
        met: target === null ? true : ratio <= target,
      };
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] === SELF) {
  const args = process.argv.slice(2);
  const runsAt = args.indexOf("--runs");
  const cliAt = args.indexOf("--cli");
  const rows = await benchCliStartup({
    quick: args.includes("--quick"),
    runs: runsAt === -1 ? undefined : Number(args[runsAt + 1]),
    cli: cliAt === -1 ? undefined : path.resolve(args[cliAt + 1]),
    note: (message) => process.stderr.write(`${message}\n`),
  });
  for (const row of rows) {
    process.stdout.write(
      args.includes("--json")
        ? `${JSON.stringify(row)}\n`
        : `${row.label.padEnd(90)} ${String(row.value).padStart(7)} ms  ${row.ratio.toFixed(2)}× (node -e 0 ${row.baseline} ms)  ${row.targetText} ${row.met ? "ok" : "MISS"}\n`,
    );
  }
}
