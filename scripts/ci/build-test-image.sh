#!/usr/bin/env bash
# Builds the small image the docker backend's tests run in, without any network:
# busybox-static for the usual commands, plus the host's /bin/bash and the shared
# libraries it needs (the backend's per-task shell state needs bash).
#
#   scripts/ci/build-test-image.sh [IMAGE]      default IMAGE: localhost/mibyan-test:2
#
# Imports with `podman import` when podman is installed, otherwise with
# `docker import` (honouring DOCKER_HOST); IMPORT_WITH=docker or IMPORT_WITH=podman
# chooses. Needs busybox-static (apt-get install -y busybox-static) and bash on
# the host.
set -euo pipefail

image="${1:-localhost/mibyan-test:2}"

busybox=""
for candidate in /bin/busybox /usr/bin/busybox; do
  if [[ -x "$candidate" ]]; then busybox="$candidate"; break; fi
done
if [[ -z "$busybox" ]]; then
  echo "busybox is not installed (apt-get install -y busybox-static)" >&2
  exit 1
fi
if ldd "$busybox" >/dev/null 2>&1; then
  echo "$busybox is dynamically linked; install busybox-static" >&2
  exit 1
fi
bash_bin="$(readlink -f /bin/bash)"

work="$(mktemp -d "${TMPDIR:-/tmp}/mibyan-image.XXXXXX")"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,root,tmp,proc,sys,dev,run,var/tmp,home}
chmod 1777 "$root/tmp" "$root/var/tmp"
chmod 0700 "$root/root"

# busybox and a link for each of its applets (bash gets the real thing below).
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
  case "$applet" in busybox | bash) continue ;; esac
  [[ -e "$root/bin/$applet" ]] || ln -s busybox "$root/bin/$applet"
done

# bash, and util-linux `script` (PTY mode), with their shared libraries (and the dynamic
# loader) at the same paths as on the host.
script_bin="$(command -v script || true)"
if [[ -z "$script_bin" ]]; then
  echo "util-linux script is not installed (apt-get install -y bsdutils)" >&2
  exit 1
fi
cp "$bash_bin" "$root/bin/bash"
rm -f "$root/usr/bin/script" "$root/bin/script"
cp "$(readlink -f "$script_bin")" "$root/usr/bin/script"
for binary in "$bash_bin" "$script_bin"; do
  ldd "$binary" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }'
done | sort -u | while read -r lib; do
  real="$(readlink -f "$lib")"
  mkdir -p "$root$(dirname "$lib")"
  cp "$real" "$root$lib"
done

cat > "$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/bash
nobody:x:65534:65534:nobody:/nonexistent:/bin/sh
PASSWD
cat > "$root/etc/group" <<'GROUP'
root:x:0:
nogroup:x:65534:
GROUP
echo "mibyan-test" > "$root/etc/hostname"
: > "$root/etc/hosts"
: > "$root/etc/resolv.conf"

tar --numeric-owner --owner=0 --group=0 -C "$root" -cf "$work/rootfs.tar" .

changes=(--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["/bin/sh"]')
importer="${IMPORT_WITH:-}"
if [[ -z "$importer" ]]; then
  if command -v podman >/dev/null 2>&1; then importer=podman; else importer=docker; fi
fi
if [[ "$importer" == podman ]] && command -v podman >/dev/null 2>&1; then
  podman import --quiet "${changes[@]}" "$work/rootfs.tar" "$image" >/dev/null
elif [[ "$importer" == docker ]] && command -v docker >/dev/null 2>&1; then
  docker import "${changes[@]}" "$work/rootfs.tar" "$image" >/dev/null
else
  echo "cannot import the image: $importer is not installed" >&2
  exit 1
fi
echo "$image"
