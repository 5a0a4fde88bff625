/**
 * Service and power control, process kills, fork bombs.
 */
import type { Rule } from "./types.js";

export const SYSTEM_RULES: readonly Rule[] = [
  {
    id: "hardline-power",
    description: "Shuts down, halts or reboots the machine.",
    category: "power_control",
    hardline: true,
    match: [
      { kind: "command", programs: ["shutdown"], noOptions: ["-c", "-k", "--help"] },
      { kind: "command", programs: ["reboot", "halt", "poweroff"], noOptions: ["--help", "-w", "--wtmp-only"] },
      { kind: "command", programs: ["systemctl", "loginctl"], operands: [{ which: "first", equals: ["poweroff", "reboot", "halt", "kexec", "soft-reboot"] }] },
      { kind: "command", programs: ["init", "telinit"], operands: [{ which: "first", equals: ["0", "6"] }] },
      { kind: "command", programs: ["openrc-shutdown"] },
      { kind: "write", classes: ["kernel-trigger"] },
    ],
  },
  {
    id: "power-suspend",
    description: "Suspends or hibernates the machine.",
    category: "power_control",
    hardline: false,
    match: [
      { kind: "command", programs: ["systemctl", "loginctl"], operands: [{ which: "first", equals: ["suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate", "sleep"] }] },
      { kind: "command", programs: ["pm-suspend", "pm-hibernate", "pm-suspend-hybrid"] },
      { kind: "command", programs: ["pmset"], operands: [{ which: "first", equals: ["sleepnow"] }] },
    ],
  },
  {
    id: "service-stop",
    description: "Stops, disables or masks a system service.",
    category: "service_control",
    hardline: false,
    match: [
      {
        kind: "command",
        programs: ["systemctl"],
        operands: [{ which: "first", equals: ["stop", "disable", "mask", "kill", "isolate", "rescue", "emergency", "default", "daemon-reexec", "try-restart"] }],
      },
      { kind: "command", programs: ["service", "rc-service"], operands: [{ which: 1, equals: ["stop", "disable", "zap"] }] },
      { kind: "command", programs: ["launchctl"], subcommands: ["unload|bootout|remove|disable|kill"] },
      { kind: "command", programs: ["sv"], operands: [{ which: "first", equals: ["stop", "down", "kill", "force-stop", "exit"] }] },
      { kind: "command", programs: ["update-rc.d"], operands: [{ which: "any", equals: ["remove", "disable"] }] },
      { kind: "command", programs: ["chkconfig"], operands: [{ which: "last", equals: ["off"] }] },
      { kind: "command", programs: ["init", "telinit"], operands: [{ which: "first", equals: ["1", "s", "S", "single"] }] },
    ],
  },
  {
    id: "hardline-kill-all",
    description: "Kills every process the user can signal (kill -1), which takes the session and usually the machine down.",
    category: "process_kill",
    hardline: true,
    match: [
      { kind: "command", programs: ["kill"], operands: [{ equals: ["-1"] }] },
      { kind: "command", programs: ["killall5"] },
    ],
  },
  {
    id: "process-kill-broad",
    description: "Kills processes by name or pattern, or a whole process group.",
    category: "process_kill",
    hardline: false,
    match: [
      { kind: "command", programs: ["pkill", "killall", "skill", "slay"], noOptions: ["-l", "--list", "-V", "--version", "--help"] },
      { kind: "command", programs: ["kill"], operands: [{ pattern: /^(?:-\d+|0|1)$/ }] },
    ],
  },
  {
    id: "hardline-fork-bomb",
    description: "A fork bomb: a function or program that copies itself without end until the machine stops responding.",
    category: "fork_bomb",
    hardline: true,
    match: { kind: "finding", finding: "fork-bomb" },
  },
];
