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
      { kind: "command", programs: ["supervisorctl"], operands: [{ which: "first", equals: ["stop", "shutdown", "remove"] }] },
      { kind: "command", programs: ["pm2"], operands: [{ which: "first", equals: ["stop", "delete", "del", "kill"] }] },
      { kind: "command", programs: ["update-rc.d"], operands: [{ which: "any", equals: ["remove", "disable"] }] },
      { kind: "command", programs: ["chkconfig"], operands: [{ which: "last", equals: ["off"] }] },
      { kind: "command", programs: ["init", "telinit"], operands: [{ which: "first", equals: ["1", "s", "S", "single"] }] },
    ],
  },
  {
    id: "service-restart",
    description: "Restarts a system service, interrupting whatever it serves.",
    category: "service_control",
    hardline: false,
    match: [
      { kind: "command", programs: ["systemctl"], operands: [{ which: "first", equals: ["restart", "reload-or-restart", "condrestart", "force-reload"] }] },
      { kind: "command", programs: ["service", "rc-service"], operands: [{ which: 1, equals: ["restart", "force-reload", "condrestart", "try-restart", "force-restart"] }] },
      { kind: "command", programs: ["launchctl"], subcommands: ["kickstart"], anyOptions: ["-k"] },
      { kind: "command", programs: ["sv"], operands: [{ which: "first", equals: ["restart", "force-restart"] }] },
      { kind: "command", programs: ["supervisorctl"], operands: [{ which: "first", equals: ["restart", "reload"] }] },
      { kind: "command", programs: ["pm2"], operands: [{ which: "first", equals: ["restart", "reload"] }] },
    ],
  },
  {
    id: "container-stop",
    description: "Stops, kills or restarts running containers (docker stop/kill/restart, docker rm -f, docker compose down/stop).",
    category: "service_control",
    hardline: false,
    match: [
      { kind: "command", programs: ["docker", "podman", "nerdctl"], subcommands: ["stop|kill|restart|pause"], noOptions: ["--help"] },
      { kind: "command", programs: ["docker", "podman", "nerdctl"], subcommands: ["container", "stop|kill|restart|pause"], noOptions: ["--help"] },
      { kind: "command", programs: ["docker", "podman", "nerdctl"], subcommands: ["rm|container"], anyOptions: ["-f"] },
      { kind: "command", programs: ["docker", "podman"], subcommands: ["compose", "down|stop|kill|restart|pause"], noOptions: ["--help", "--dry-run"] },
      { kind: "command", programs: ["docker-compose", "podman-compose"], subcommands: ["down|stop|kill|restart|pause"], noOptions: ["--help", "--dry-run"] },
      { kind: "command", programs: ["docker", "podman"], subcommands: ["compose", "rm"], anyOptions: ["-s", "-f"] },
    ],
  },
  {
    id: "crontab-change",
    description: "Removes or replaces the user's crontab (crontab -r, crontab FILE).",
    category: "service_control",
    hardline: false,
    match: [
      { kind: "command", programs: ["crontab"], anyOptions: ["-r"] },
      { kind: "command", programs: ["crontab"], noOptions: ["-l", "-e", "-r", "--help"], minOperands: 1 },
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
      // `kill $(pgrep x)`, `… | xargs kill`: targets only known when it runs (`$!`, the job just started, is known).
      { kind: "command", programs: ["kill"], operands: [{ classes: ["dynamic"], unless: /^\$\{?!\}?$/ }], noOptionValues: [{ option: "-s", equals: ["0"] }] },
      { kind: "command", programs: ["fuser"], anyOptions: ["-k"] },
      { kind: "command", programs: ["kill-port", "fkill"], minOperands: 1 },
      { kind: "command", programs: ["taskkill"], operands: [{ pattern: /^\/(?:IM|F|T)$/i }] },
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
