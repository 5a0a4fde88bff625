/**
 * Recursive deletes, disk and filesystem destruction, writes to system,
 * credential and shell start-up files.
 */
import type { Matcher, PathClass, Rule } from "./types.js";

/** The recursive deletes, each scoped to operands of the given classes (none: any operand). */
function recursiveDeletes(classes?: readonly PathClass[]): readonly Matcher[] {
  const operands = classes ? [{ classes }] : undefined;
  const lastOperand = classes ? [{ which: "last" as const, classes }] : undefined;
  return [
    { kind: "command", programs: ["rm"], allOptions: ["-r"], ...(operands ? { operands } : {}) },
    { kind: "command", programs: ["find"], anyOptions: ["-delete"], ...(operands ? { operands } : {}) },
    { kind: "command", programs: ["rsync"], anyOptions: ["--delete", "--delete-before", "--delete-during", "--delete-delay", "--delete-after", "--delete-excluded"], ...(lastOperand ? { operands: lastOperand } : {}) },
    { kind: "command", programs: ["srm", "wipe"], anyOptions: ["-r", "-R"], ...(operands ? { operands } : {}) },
    { kind: "command", programs: ["rimraf"], minOperands: 1, ...(operands ? { operands } : {}) },
  ];
}

export const FILESYSTEM_RULES: readonly Rule[] = [
  {
    id: "hardline-wipe-root",
    description: "Deletes the whole file system (a recursive delete of /).",
    category: "recursive_delete",
    hardline: true,
    match: recursiveDeletes(["root"]),
  },
  {
    id: "hardline-wipe-home",
    description: "Deletes a home directory (a recursive delete of ~, $HOME, /home or /root).",
    category: "recursive_delete",
    hardline: true,
    match: recursiveDeletes(["home"]),
  },
  {
    id: "hardline-wipe-system-dir",
    description: "Deletes a system directory such as /etc, /usr, /bin, /boot, /var or /lib.",
    category: "recursive_delete",
    hardline: true,
    match: recursiveDeletes(["system-dir"]),
  },
  {
    id: "recursive-delete",
    description: "Deletes files and directories recursively.",
    category: "recursive_delete",
    hardline: false,
    match: recursiveDeletes(),
    overrides: ["bulk-delete", "computed-write-target"],
  },
  {
    id: "bulk-delete",
    description: "Deletes files whose names are only known when it runs (find -exec rm, xargs rm, a loop over names read at run time, rm \"$F\").",
    category: "recursive_delete",
    hardline: false,
    match: { kind: "command", programs: ["rm", "unlink", "srm", "rimraf"], operands: [{ classes: ["dynamic"] }] },
    overrides: ["computed-write-target"],
  },
  {
    id: "delete-source-files",
    description: "Deletes the files it was given after archiving or copying them (tar --remove-files, zip -m, rsync --remove-source-files, 7z -sdel).",
    category: "recursive_delete",
    hardline: false,
    match: [
      { kind: "command", programs: ["tar", "gtar", "bsdtar"], anyOptions: ["--remove-files"] },
      { kind: "command", programs: ["zip"], anyOptions: ["-m"] },
      { kind: "command", programs: ["rsync"], anyOptions: ["--remove-source-files"] },
      { kind: "command", programs: ["7z", "7za", "7zz"], anyOptions: ["-sdel"] },
    ],
  },
  {
    id: "file-shred",
    description: "Overwrites files so that they cannot be recovered (shred, srm, wipe).",
    category: "recursive_delete",
    hardline: false,
    match: { kind: "command", programs: ["shred", "srm", "wipe", "scrub"], noOptions: ["--help", "--version"], minOperands: 1 },
  },
  {
    id: "hardline-mkfs",
    description: "Creates a file system on a device, destroying everything on it.",
    category: "filesystem_destruction",
    hardline: true,
    match: [
      { kind: "command", programs: ["mkfs", "mkfs*", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "mkexfatfs", "newfs*", "mkudffs"] },
      { kind: "command", programs: ["diskutil"], operands: [{ which: "first", pattern: /^(?:eraseDisk|eraseVolume|zeroDisk|randomDisk|secureErase|partitionDisk|reformat)$/i }] },
    ],
  },
  {
    id: "hardline-raw-device-write",
    description: "Writes directly to a raw disk or memory device, destroying its contents.",
    category: "filesystem_destruction",
    hardline: true,
    match: { kind: "write", classes: ["block-device"] },
  },
  {
    id: "hardline-disk-wipe",
    description: "Erases a disk's signatures, partition table or contents.",
    category: "filesystem_destruction",
    hardline: true,
    match: [
      { kind: "command", programs: ["wipefs"], anyOptions: ["-a", "-o"] },
      { kind: "command", programs: ["blkdiscard"], minOperands: 1 },
      { kind: "command", programs: ["sgdisk"], anyOptions: ["-Z", "-z", "-o"] },
      { kind: "command", programs: ["cryptsetup"], subcommands: ["luksFormat|erase|luksErase|reencrypt"] },
      { kind: "command", programs: ["nvme"], operands: [{ which: "first", equals: ["format", "sanitize"] }] },
      { kind: "command", programs: ["hdparm"], anyOptions: ["--security-erase", "--security-erase-enhanced", "--trim-sector-ranges"] },
    ],
  },
  {
    id: "disk-partition",
    description: "Changes the partition table of a disk.",
    category: "filesystem_destruction",
    hardline: false,
    match: [
      { kind: "command", programs: ["fdisk", "gdisk", "cfdisk", "cgdisk"], noOptions: ["-l"], operands: [{ classes: ["block-device"] }] },
      { kind: "command", programs: ["sfdisk"], noOptions: ["-l", "-d", "-J", "-s", "-V", "--verify", "-g"], operands: [{ classes: ["block-device"] }] },
      { kind: "command", programs: ["parted"], noOptions: ["-l"], operands: [{ classes: ["block-device"] }] },
    ],
  },
  {
    id: "system-file-write",
    description: "Writes to or deletes a file the operating system owns (under /etc, /usr, /boot, /var, /sys, ...).",
    category: "system_file_write",
    hardline: false,
    // `tar xzf overlay.tgz -C /`, `cp file /`: the root directory is the system's too.
    match: { kind: "write", classes: ["system-path", "root"] },
  },
  {
    id: "credential-file-write",
    description: "Writes to or deletes a credential or account file (SSH keys, cloud credentials, .netrc, .npmrc, /etc/shadow, /etc/sudoers).",
    category: "credential_file_write",
    hardline: false,
    match: { kind: "write", classes: ["credential"] },
    overrides: ["system-file-write"],
  },
  {
    id: "env-file-write",
    description: "Writes to or deletes an environment file with an application's secrets (.env, .env.local, .env.production).",
    category: "credential_file_write",
    hardline: false,
    match: { kind: "write", classes: ["env-file"] },
  },
  {
    id: "computed-write-target",
    description: "Writes to or deletes a file whose name is only known when it runs; it could be a device, a system file, a credential or a shell start-up file.",
    category: "unanalysable",
    hardline: false,
    match: { kind: "write", classes: ["unbounded"] },
  },
  {
    id: "shell-rc-write",
    description: "Writes to a shell start-up file (.bashrc, .zshrc, .profile, ...), which runs in every new shell.",
    category: "shell_rc_write",
    hardline: false,
    match: { kind: "write", classes: ["shell-rc"] },
    overrides: ["system-file-write"],
  },
];
