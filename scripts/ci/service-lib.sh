# Shared by the scripts that start a test service (start-sshd.sh, start-podman.sh):
# argument parsing (`[--stop] PATH`) and stopping a service by its pid file.
# Sourced, not run.

# parse_service_args "$@": sets `stop` (0/1) and `target` (the absolute PATH argument).
parse_service_args() {
  stop=0
  if [[ "${1:-}" == "--stop" ]]; then
    stop=1
    shift
  fi
  if [[ $# -ne 1 || -z "$1" ]]; then
    echo "usage: $0 [--stop] PATH" >&2
    exit 2
  fi
  target="$1"
  case "$target" in
    /*) ;;
    *) target="$PWD/$target" ;;
  esac
}

# stop_pidfile FILE: SIGTERM the process named in FILE, SIGKILL it after 5 s, remove FILE.
stop_pidfile() {
  local pidfile="$1" pid
  [[ -f "$pidfile" ]] || return 0
  pid="$(cat "$pidfile")"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$pidfile"
}
