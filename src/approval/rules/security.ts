/**
 * Secrets sent off the machine, protections turned off, tracks covered:
 * credentials or the environment piped or uploaded to the network, firewalls
 * flushed or disabled, SELinux/AppArmor switched off, shell history wiped.
 */
import type { Rule } from "./types.js";

export const SECURITY_RULES: readonly Rule[] = [
  {
    id: "credential-exfiltration",
    description: "Sends credentials, keys, .env files or the environment to another machine (tar ~/.ssh | curl -T -, scp ~/.aws/credentials host:, printenv | nc).",
    category: "secret_exfiltration",
    hardline: false,
    match: { kind: "finding", finding: "secret-to-network" },
  },
  {
    id: "firewall-disable",
    description: "Flushes or turns off the firewall (iptables -F, iptables -P INPUT ACCEPT, ufw disable, nft flush ruleset).",
    category: "security_disable",
    hardline: false,
    match: [
      { kind: "command", programs: ["iptables", "ip6tables", "iptables-legacy", "iptables-nft", "ebtables", "arptables"], anyOptions: ["-F", "-X"] },
      { kind: "command", programs: ["iptables", "ip6tables", "iptables-legacy", "iptables-nft"], allOptions: ["-P"], operands: [{ equals: ["ACCEPT"] }] },
      { kind: "command", programs: ["ufw"], operands: [{ which: "first", equals: ["disable", "reset"] }] },
      { kind: "command", programs: ["nft"], operands: [{ which: 0, equals: ["flush"] }, { which: 1, equals: ["ruleset", "table", "chain"] }] },
      { kind: "command", programs: ["nft"], operands: [{ which: 0, equals: ["delete"] }, { which: 1, equals: ["table", "chain"] }] },
      { kind: "command", programs: ["firewall-cmd"], anyOptions: ["--set-default-zone"], optionValues: [{ option: "--set-default-zone", equals: ["trusted"] }] },
      { kind: "command", programs: ["pfctl"], anyOptions: ["-d", "-F"] },
      { kind: "command", programs: ["netsh"], operands: [{ which: 0, pattern: /^advfirewall$/i }, { which: "last", pattern: /^off$/i }] },
    ],
  },
  {
    id: "security-module-disable",
    description: "Turns SELinux or AppArmor off or makes it permissive (setenforce 0, aa-teardown, aa-disable).",
    category: "security_disable",
    hardline: false,
    match: [
      { kind: "command", programs: ["setenforce"], operands: [{ which: "first", pattern: /^(?:0|permissive)$/i }] },
      { kind: "command", programs: ["aa-teardown"] },
      { kind: "command", programs: ["aa-disable", "aa-complain"], minOperands: 1 },
      { kind: "command", programs: ["apparmor_parser"], anyOptions: ["-R"] },
    ],
  },
  {
    id: "history-wipe",
    description: "Wipes or switches off the shell history (history -c, HISTFILE=/dev/null, deleting ~/.bash_history).",
    category: "history_tampering",
    hardline: false,
    match: [
      { kind: "command", programs: ["history"], anyOptions: ["-c"] },
      { kind: "write", classes: ["history"] },
      { kind: "finding", finding: "history-disable" },
    ],
  },
];
