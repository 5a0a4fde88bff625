/**
 * Options that make a command act on nothing: help and dry runs of the tools
 * whose rules would otherwise match (`terraform destroy -help`, `kubectl delete
 * --dry-run=client`, `git push --force --dry-run`, `aws s3 rm --dryrun`). When one
 * of these matches, the program's own command rules are skipped; everything else
 * about the command (redirects, embedded commands, what it pipes into) is still
 * analysed. Only tools whose help and dry-run options are known to stop them are
 * listed: `-h` means other things to other programs (`chown -h`, `du -h`).
 */
import type { CommandMatcher } from "./types.js";

/** Programs for which `--help` anywhere prints help and does nothing else. */
const HELP_PROGRAMS = [
  "terraform", "tofu", "terragrunt", "kubectl", "oc", "helm", "aws", "gcloud", "az", "git", "docker", "podman",
  "docker-compose", "pulumi", "cdk", "cdktf", "prisma", "heroku", "fly", "flyctl", "vercel", "netlify", "firebase",
  "doctl", "gh", "glab", "supabase", "rclone", "gsutil", "s3cmd", "systemctl", "crontab", "rsync", "ufw", "iptables",
  "nft", "sequelize", "typeorm", "drizzle-kit", "knex", "alembic", "dotnet", "mix", "rails", "rake",
];

export const INERT_COMMANDS: readonly CommandMatcher[] = [
  { kind: "command", programs: HELP_PROGRAMS, anyOptions: ["--help"] },
  { kind: "command", programs: ["terraform", "tofu", "terragrunt"], anyOptions: ["-help", "-h"] },
  { kind: "command", programs: ["kubectl", "oc", "helm", "gcloud", "az", "pulumi"], anyOptions: ["-h"] },
  { kind: "command", programs: ["gcloud"], operands: [{ which: 0, equals: ["help"] }] },
  { kind: "command", programs: ["aws"], operands: [{ which: "last", equals: ["help"] }] },
  // Dry runs.
  { kind: "command", programs: ["kubectl", "oc"], anyOptions: ["--dry-run"], noOptionValues: [{ option: "--dry-run", equals: ["none"] }] },
  { kind: "command", programs: ["helm"], anyOptions: ["--dry-run"] },
  { kind: "command", programs: ["aws"], anyOptions: ["--dryrun", "--dry-run"] },
  { kind: "command", programs: ["git"], subcommands: ["push|clean|reflog|rm|mv|prune|remote"], anyOptions: ["-n", "--dry-run"] },
  { kind: "command", programs: ["rsync"], anyOptions: ["-n", "--list-only"] },
  { kind: "command", programs: ["docker", "podman"], subcommands: ["compose"], anyOptions: ["--dry-run"] },
  { kind: "command", programs: ["docker-compose", "podman-compose"], anyOptions: ["--dry-run"] },
  { kind: "command", programs: ["pulumi"], anyOptions: ["--preview-only"] },
  { kind: "command", programs: ["rclone"], anyOptions: ["--dry-run", "-n"] },
  { kind: "command", programs: ["git"], subcommands: ["filter-repo"], anyOptions: ["--analyze", "--dry-run"] },
  { kind: "command", programs: ["git-filter-repo"], anyOptions: ["--analyze", "--dry-run"] },
  // Framework CLIs behind an interpreter: `php artisan migrate:fresh --help`, `python manage.py flush --help`.
  { kind: "command", programs: ["php", "python"], operands: [{ which: 0, pattern: /(?:^|\/)(?:artisan|manage\.py)$/ }, { equals: ["--help", "-h"] }] },
  { kind: "command", programs: ["artisan", "manage.py", "django-admin", "rails", "rake", "prisma"], anyOptions: ["--help", "-h"] },
];
