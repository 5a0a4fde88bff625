/**
 * Git history destruction and infrastructure teardown.
 *
 * Decisions: every force push counts (`--force`, `-f`, `--force-with-lease`,
 * `--mirror`, a `+refspec`), whatever the branch; the branch is in the prefix,
 * so an approval for one branch does not cover another. `git branch -D` (delete
 * unmerged) counts, `-d` (refuses unmerged) does not. `git clean` counts when it
 * would delete (`-f` without `-n`). `git checkout .`/`git restore .` and
 * `checkout -f` discard uncommitted work and count too.
 */
import type { Rule } from "./types.js";

/** Cloud and hosting CLIs whose delete/destroy subcommands take resources down. */
const CLOUD_CLIS = ["doctl", "heroku", "fly", "flyctl", "vercel", "netlify", "firebase", "railway", "render", "linode-cli", "hcloud", "scw", "ibmcloud", "oci", "vultr-cli", "upctl", "exo", "civo", "koyeb"];
/** Their words for it: `delete`, `destroy`, `apps:destroy`, `sites:delete`, `functions:delete`, `remove`, `rm`. */
const CLOUD_DELETE_WORD = /^(?:delete|destroy|remove|rm|[a-z-]+:(?:destroy|delete|remove|rm))$/;

export const VCS_INFRA_RULES: readonly Rule[] = [
  {
    id: "git-force-push",
    description: "Force-pushes, replacing the remote branch's history (--force, --force-with-lease, --mirror, +refspec).",
    category: "git_history_destruction",
    hardline: false,
    match: [
      { kind: "command", programs: ["git"], subcommands: ["push"], anyOptions: ["-f", "--force-with-lease", "--mirror"] },
      { kind: "command", programs: ["git"], subcommands: ["push"], operands: [{ pattern: /^\+/ }] },
    ],
  },
  {
    id: "git-remote-branch-delete",
    description: "Deletes branches or tags on the remote (push --delete, :branch, --prune).",
    category: "git_history_destruction",
    hardline: false,
    match: [
      { kind: "command", programs: ["git"], subcommands: ["push"], anyOptions: ["-d", "--prune"] },
      { kind: "command", programs: ["git"], subcommands: ["push"], operands: [{ pattern: /^:./ }] },
    ],
  },
  {
    id: "git-reset-hard",
    description: "Discards uncommitted changes and moves the branch (git reset --hard).",
    category: "git_history_destruction",
    hardline: false,
    match: { kind: "command", programs: ["git"], subcommands: ["reset"], anyOptions: ["--hard", "--merge", "--keep"] },
  },
  {
    id: "git-clean",
    description: "Deletes untracked (and with -x, ignored) files from the working tree (git clean -f).",
    category: "git_history_destruction",
    hardline: false,
    match: { kind: "command", programs: ["git"], subcommands: ["clean"], anyOptions: ["-f"], noOptions: ["-n"] },
  },
  {
    id: "git-discard-changes",
    description: "Discards uncommitted changes in the working tree (git checkout ., git checkout -f, git restore .).",
    category: "git_history_destruction",
    hardline: false,
    match: [
      { kind: "command", programs: ["git"], subcommands: ["checkout|restore"], operands: [{ equals: [".", ":/", "*", ":/*"] }] },
      { kind: "command", programs: ["git"], subcommands: ["checkout"], anyOptions: ["-f"] },
      { kind: "command", programs: ["git"], subcommands: ["stash", "clear|drop"] },
    ],
  },
  {
    id: "git-history-rewrite",
    description: "Rewrites or expires repository history (filter-branch, filter-repo, reflog expire, gc --prune=now, update-ref -d).",
    category: "git_history_destruction",
    hardline: false,
    match: [
      { kind: "command", programs: ["git"], subcommands: ["filter-branch|filter-repo"] },
      { kind: "command", programs: ["git-filter-repo", "bfg"] },
      { kind: "command", programs: ["git"], subcommands: ["reflog", "expire|delete"] },
      { kind: "command", programs: ["git"], subcommands: ["gc"], optionValues: [{ option: "--prune", equals: ["now", "all"] }] },
      { kind: "command", programs: ["git"], subcommands: ["update-ref"], anyOptions: ["-d"] },
    ],
  },
  {
    id: "git-branch-force-delete",
    description: "Deletes a branch even if it is not merged (git branch -D).",
    category: "git_history_destruction",
    hardline: false,
    match: [
      { kind: "command", programs: ["git"], subcommands: ["branch"], anyOptions: ["-D"] },
      { kind: "command", programs: ["git"], subcommands: ["branch"], allOptions: ["-d", "-f"] },
    ],
  },
  {
    id: "docker-volume-destruction",
    description: "Removes containers together with their volumes, or prunes stopped containers, unused images and volumes (compose down -v, system prune, volume prune/rm).",
    category: "infrastructure_teardown",
    hardline: false,
    overrides: ["container-stop"],
    match: [
      { kind: "command", programs: ["docker", "podman"], subcommands: ["compose", "down"], anyOptions: ["-v", "--rmi"] },
      { kind: "command", programs: ["docker-compose", "podman-compose"], subcommands: ["down"], anyOptions: ["-v", "--rmi"] },
      { kind: "command", programs: ["docker", "podman"], subcommands: ["system", "prune"], noOptions: ["--help"] },
      { kind: "command", programs: ["docker", "podman"], subcommands: ["volume", "prune|rm"] },
      { kind: "command", programs: ["docker", "podman"], subcommands: ["compose", "rm"], anyOptions: ["-v"] },
      { kind: "command", programs: ["docker-compose", "podman-compose"], subcommands: ["rm"], anyOptions: ["-v"] },
    ],
  },
  {
    id: "terraform-destroy",
    description: "Destroys infrastructure managed by Terraform/OpenTofu/Pulumi/CDK (destroy, apply -destroy).",
    category: "infrastructure_teardown",
    hardline: false,
    match: [
      { kind: "command", programs: ["terraform", "tofu", "terragrunt"], subcommands: ["destroy"] },
      { kind: "command", programs: ["terraform", "tofu", "terragrunt"], subcommands: ["apply"], anyOptions: ["-destroy"] },
      { kind: "command", programs: ["terragrunt"], subcommands: ["run-all|run"], operands: [{ which: "first", equals: ["destroy"] }] },
      { kind: "command", programs: ["pulumi"], subcommands: ["destroy|down"] },
      { kind: "command", programs: ["cdk", "cdktf"], subcommands: ["destroy"] },
    ],
  },
  {
    id: "kubernetes-delete",
    description: "Deletes Kubernetes resources or Helm releases (kubectl delete, helm uninstall).",
    category: "infrastructure_teardown",
    hardline: false,
    match: [
      { kind: "command", programs: ["kubectl", "oc"], subcommands: ["delete"] },
      { kind: "command", programs: ["kubectl", "oc"], subcommands: ["drain"] },
      { kind: "command", programs: ["helm"], subcommands: ["uninstall|delete|del|un"] },
    ],
  },
  {
    id: "cloud-resource-delete",
    description: "Deletes or terminates cloud resources (aws … delete-*/terminate-*, aws s3 rb / rm --recursive, gcloud/az … delete).",
    category: "infrastructure_teardown",
    hardline: false,
    match: [
      { kind: "command", programs: ["aws"], operands: [{ which: 1, pattern: /^(?:delete-|terminate-|deregister-|remove-)/ }] },
      { kind: "command", programs: ["aws"], operands: [{ which: 0, equals: ["s3"] }, { which: 1, equals: ["rb"] }] },
      { kind: "command", programs: ["aws"], anyOptions: ["--recursive"], operands: [{ which: 0, equals: ["s3"] }, { which: 1, equals: ["rm"] }] },
      // `… | xargs -I{} aws s3 rm s3://bucket/{}`: objects only known at run time, a bulk delete.
      { kind: "command", programs: ["aws"], operands: [{ which: 0, equals: ["s3"] }, { which: 1, equals: ["rm"] }, { which: 2, classes: ["dynamic"] }] },
      { kind: "command", programs: ["gcloud", "az"], operands: [{ equals: ["delete"] }] },
      { kind: "command", programs: ["gsutil"], operands: [{ which: 0, equals: ["rm", "rb"] }] },
      { kind: "command", programs: ["gcloud", "gsutil"], operands: [{ which: 0, equals: ["storage"] }, { which: 1, equals: ["rm"] }] },
      { kind: "command", programs: ["s3cmd"], operands: [{ which: 0, equals: ["del", "rm", "rb"] }] },
      { kind: "command", programs: ["rclone"], operands: [{ which: 0, equals: ["purge", "delete", "rmdirs", "deletefile"] }], noOptions: ["--dry-run", "-n"] },
      { kind: "command", programs: CLOUD_CLIS, operands: [{ pattern: CLOUD_DELETE_WORD }] },
      { kind: "command", programs: ["gh", "glab"], operands: [{ which: 1, equals: ["delete", "del"] }] },
    ],
  },
  {
    id: "scale-to-zero",
    description: "Scales a deployment or service down to zero instances, taking it offline.",
    category: "infrastructure_teardown",
    hardline: false,
    match: [
      { kind: "command", programs: ["kubectl", "oc"], subcommands: ["scale"], optionValues: [{ option: "--replicas", equals: ["0"] }] },
      { kind: "command", programs: ["aws"], optionValues: [{ option: "--desired-count", equals: ["0"] }] },
      { kind: "command", programs: ["aws"], optionValues: [{ option: "--desired-capacity", equals: ["0"] }] },
      { kind: "command", programs: ["aws"], optionValues: [{ option: "--max-size", equals: ["0"] }] },
      { kind: "command", programs: ["heroku"], operands: [{ which: 0, equals: ["ps:scale"] }, { pattern: /=0$/ }] },
      { kind: "command", programs: ["docker"], subcommands: ["service"], operands: [{ which: 0, equals: ["scale"] }, { pattern: /=0$/ }] },
      { kind: "command", programs: ["fly", "flyctl"], operands: [{ which: 0, equals: ["scale"] }, { which: 1, equals: ["count"] }, { which: 2, equals: ["0"] }] },
      { kind: "command", programs: ["gcloud"], optionValues: [{ option: "--max-instances", equals: ["0"] }] },
    ],
  },
];
