#!/usr/bin/env bash
# Serves the Docker Engine API from podman on a unix socket, for the docker
# backend's tests (there is no Docker daemon on the CI machine).
#
#   scripts/ci/start-podman.sh SOCKET          start; prints DOCKER_HOST=unix://SOCKET
#   scripts/ci/start-podman.sh --stop SOCKET   stop the service started for SOCKET
#
# Needs `podman` and `runc` (apt-get install -y podman runc) and root. Writes
# /etc/containers/containers.conf as ../shared/notes/MACHINE.md describes: runc
# and the cgroupfs manager (crun fails on hybrid cgroups here) and ulimits no
# higher than the machine's hard limits (raising them needs CAP_SYS_RESOURCE),
# and an exec exit delay of 5 s instead of Docker's 5 minutes: podman keeps one
# `conmon` per finished exec alive that long, so a test run would leave hundreds
# of them behind (the docker backend reads an exec's exit code at once).
# The service's pid goes to SOCKET.pid and its log to SOCKET.log.
# PODMAN_SERVICE_TIMEOUT=N makes the service exit by itself after N idle seconds
# (default 0: it runs until stopped).
set -euo pipefail

# shellcheck source=service-lib.sh
. "$(dirname "$0")/service-lib.sh"
parse_service_args "$@"
socket="$target"
pidfile="$socket.pid"
logfile="$socket.log"

if [[ $stop -eq 1 ]]; then
  stop_pidfile "$pidfile"
  rm -f "$socket"
  exit 0
fi

if ! command -v podman >/dev/null 2>&1; then
  echo "podman is not installed (apt-get install -y podman runc)" >&2
  exit 1
fi

# Configuration that works on this kind of machine.
conf=/etc/containers/containers.conf
nofile="$(ulimit -Hn)"
nproc="$(ulimit -Hu)"
[[ "$nofile" == unlimited || "$nofile" -gt 1024 ]] && nofile=1024
[[ "$nproc" == unlimited || "$nproc" -gt 4096 ]] && nproc=4096
want="$(cat <<CONF
[containers]
default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
exit_command_delay = 5
CONF
)"
if [[ ! -f "$conf" ]] || [[ "$(cat "$conf")" != "$want" ]]; then
  mkdir -p "$(dirname "$conf")"
  printf '%s\n' "$want" > "$conf"
fi

# Already running for this socket?
if [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null && [[ -S "$socket" ]]; then
  echo "DOCKER_HOST=unix://$socket"
  exit 0
fi

mkdir -p "$(dirname "$socket")"
rm -f "$socket"
# setsid + nohup: the service outlives this script and ignores the caller's terminal.
setsid nohup podman system service --time="${PODMAN_SERVICE_TIMEOUT:-0}" "unix://$socket" </dev/null >"$logfile" 2>&1 &
pid=$!
echo "$pid" > "$pidfile"

# Wait until the API answers (the socket appears before the service is ready).
for _ in $(seq 1 100); do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "podman system service exited; its log ($logfile):" >&2
    cat "$logfile" >&2 || true
    exit 1
  fi
  if [[ -S "$socket" ]] && DOCKER_HOST="unix://$socket" docker version --format '{{.Server.Version}}' >/dev/null 2>&1; then
    echo "DOCKER_HOST=unix://$socket"
    exit 0
  fi
  if [[ -S "$socket" ]] && ! command -v docker >/dev/null 2>&1; then
    echo "DOCKER_HOST=unix://$socket"
    exit 0
  fi
  sleep 0.1
done
echo "podman system service did not answer on $socket within 10 s; its log ($logfile):" >&2
cat "$logfile" >&2 || true
exit 1
