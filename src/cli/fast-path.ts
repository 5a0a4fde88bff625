/**
 * The command lines agents and hooks run most (`mibyan check CMD`, `mibyan call TOOL JSON`,
 * `mibyan tools [--json]`), recognised without commander: loading commander (and the
 * `child_process` it requires) is 10–25 ms of a start-up that `node -e 0` does in about 100 ms
 * here (docs/benchmarks.md, "CLI start-up").
 *
 * Only exact shapes are taken, where commander's parse is certain: the command name, then
 * operands that cannot be options (not starting with `-`), and for `tools` and `check` only
 * `--json`. Anything else — another option, `--`, a missing or extra operand, `-` for stdin,
 * help — goes through commander (program.ts), which also gives the usage errors. Both run the
 * same actions (actions.ts).
 */
import { callAction, checkAction, toolsAction } from "./actions.js";

/** The action of `args` (argv without node and the script), or null when commander must parse it. */
export function fastPath(args: readonly string[]): (() => Promise<void>) | null {
  const [command, ...rest] = args;
  const operands = rest.filter((arg) => arg !== "--json");
  const json = rest.length - operands.length;
  if (json > 1 || operands.some((arg) => arg === "" || arg.startsWith("-"))) return null;
  switch (command) {
    case "tools":
      return operands.length === 0 ? () => toolsAction({ json: json === 1 }) : null;
    case "check":
      return operands.length === 1 ? () => checkAction(operands[0]!, { json: json === 1 }) : null;
    case "call":
      if (json !== 0 || operands.length < 1 || operands.length > 2) return null;
      return () => callAction(operands[0]!, operands[1] ?? "{}", {});
    default:
      return null;
  }
}
