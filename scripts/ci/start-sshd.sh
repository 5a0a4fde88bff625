#!/usr/bin/env bash
# Starts a private OpenSSH server on 127.0.0.1 for the ssh backend's tests.
#
#   scripts/ci/start-sshd.sh DIR          start; prints the MIBYAN_TEST_SSH_* variables
#   scripts/ci/start-sshd.sh --stop DIR   stop the server started for DIR
#
# In DIR it generates (once) an ed25519 host key (DIR/host) and user key
# (DIR/user), both without passphrase, writes DIR/authorized_keys and a
# known_hosts line for the server (DIR/known_hosts), then starts /usr/sbin/sshd
# with no config file but the options below (pid in DIR/sshd.pid, log in
# DIR/sshd.log), waits until a real key login works, and prints, one per line,
#
#   MIBYAN_TEST_SSH_HOST=127.0.0.1
#   MIBYAN_TEST_SSH_PORT=2222
#   MIBYAN_TEST_SSH_USER=root
#   MIBYAN_TEST_SSH_KEY=DIR/user
#   MIBYAN_TEST_SSH_KNOWN_HOSTS=DIR/known_hosts
#
# (values shell-quoted, so `eval "$(scripts/ci/start-sshd.sh DIR)"` works; add
# `set -a` to export them). The port is MIBYAN_SSHD_PORT, default 2222.
# Needs openssh-server (apt-get install -y openssh-server) and the
# OpenSSH client. The account logged into is the one running this script;
# as root, /run/sshd (the privilege separation directory) is created.
set -euo pipefail

# shellcheck source=service-lib.sh
. "$(dirname "$0")/service-lib.sh"
parse_service_args "$@"
dir="$target"
pidfile="$dir/sshd.pid"
logfile="$dir/sshd.log"
port="${MIBYAN_SSHD_PORT:-2222}"
host=127.0.0.1
sshd_bin="${SSHD:-/usr/sbin/sshd}"

if [[ $stop -eq 1 ]]; then
  stop_pidfile "$pidfile"
  exit 0
fi

if [[ ! -x "$sshd_bin" ]]; then
  echo "$sshd_bin not found (apt-get install -y openssh-server)" >&2
  exit 1
fi
for tool in ssh ssh-keygen; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "$tool not found (apt-get install -y openssh-client)" >&2
    exit 1
  fi
done

mkdir -p "$dir"
chmod 700 "$dir"
[[ -f "$dir/host" ]] || ssh-keygen -q -t ed25519 -N '' -C mibyan-test-host -f "$dir/host"
[[ -f "$dir/user" ]] || ssh-keygen -q -t ed25519 -N '' -C mibyan-test-user -f "$dir/user"
cp "$dir/user.pub" "$dir/authorized_keys"
chmod 600 "$dir/authorized_keys"
if [[ "$port" == 22 ]]; then known_name="$host"; else known_name="[$host]:$port"; fi
read -r key_type key_data _ < "$dir/host.pub"
printf '%s %s %s\n' "$known_name" "$key_type" "$key_data" > "$dir/known_hosts"

user="$(id -un)"
print_env() {
  printf 'MIBYAN_TEST_SSH_HOST=%q\n' "$host"
  printf 'MIBYAN_TEST_SSH_PORT=%q\n' "$port"
  printf 'MIBYAN_TEST_SSH_USER=%q\n' "$user"
  printf 'MIBYAN_TEST_SSH_KEY=%q\n' "$dir/user"
  printf 'MIBYAN_TEST_SSH_KNOWN_HOSTS=%q\n' "$dir/known_hosts"
}
can_login() {
  ssh -F /dev/null -o BatchMode=yes -o IdentitiesOnly=yes -o StrictHostKeyChecking=yes \
    -o UserKnownHostsFile="$dir/known_hosts" -o ConnectTimeout=2 -o LogLevel=ERROR \
    -i "$dir/user" -p "$port" -l "$user" -- "$host" true </dev/null >/dev/null 2>&1
}

# Already running for this DIR?
if [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null && can_login; then
  print_env
  exit 0
fi

[[ "$(id -u)" -eq 0 ]] && mkdir -p /run/sshd && chmod 755 /run/sshd
rm -f "$pidfile"
# sshd daemonizes itself and writes its pid file; -E keeps its log out of the caller's output.
# SetEnv=SHLVL=1: bash (Debian's) sources ~/.bashrc for every command run over ssh
# unless SHLVL is set; root's ~/.bashrc on the CI machine runs `pyenv init`, which
# adds about a second to every command. A test server need not pay for that.
"$sshd_bin" -f /dev/null -E "$logfile" \
  -o Port="$port" -o ListenAddress="$host" \
  -o HostKey="$dir/host" -o AuthorizedKeysFile="$dir/authorized_keys" \
  -o PidFile="$pidfile" -o PasswordAuthentication=no -o KbdInteractiveAuthentication=no \
  -o PermitRootLogin=prohibit-password -o StrictModes=no -o UsePAM=no \
  -o SetEnv=SHLVL=1 -o MaxStartups=100 -o MaxSessions=100 \
  </dev/null

# Wait until a key login works (the pid file appears before the listener is ready on slow machines).
for _ in $(seq 1 100); do
  if can_login; then
    print_env
    exit 0
  fi
  sleep 0.1
done
echo "sshd did not accept a login on $host:$port within 10 s; its log ($logfile):" >&2
cat "$logfile" >&2 || true
exit 1
