/**
 * The script every write runs in the environment (write_file, patch), in
 * steps, so that content of any size fits the per-argument limit of the
 * environment (Linux: 128 KiB per argv string, and the whole command is one).
 *
 * It writes **through the location the approval gate checked, and nowhere
 * else**. The caller resolved the target once (write.ts, location.ts): DIR is
 * the physical directory (no symlink in it, `.`/`..` folded, as `pwd -P`
 * prints it) and NAME the final component, which was not a symlink then.
 * Every step:
 *
 * - enters DIR with `cd -P` and checks that it is DIR as the kernel knows it
 *   (`env pwd -P`: getcwd; bash's builtin trusts its own path string): a
 *   directory swapped for a symlink (or moved) after the check is refused
 *   (`moved`), never followed. From then on only relative names are used, so
 *   the step works in that very directory whatever happens to the path;
 * - creates each file it writes exclusively (`set -C`: `O_EXCL`, which never
 *   follows a symlink, under `umask 077`), so no step opens an existing name
 *   for writing: each chunk goes to a part file of its own, and the commit
 *   copies the parts into a fresh temporary file (checking its size, and its
 *   MD5 when there are parts and an md5 tool);
 * - sets the mode (and owner, as root) through the temporary file's open
 *   descriptor (`chmod MODE /dev/fd/7`), not by name;
 * - refuses when NAME has become a symlink (`final-link`), a directory or
 *   another non-file, then replaces NAME by renaming the temporary file over
 *   it with `mv -T` (GNU, BusyBox) or `mv -h` (BSD): a rename replaces a
 *   symlink that appears at the last moment, it never writes through one.
 *
 * Steps (`$2` the step, then its arguments):
 *
 *   begin   DIR TMP DATA                         enter DIR, creating its missing directories one at a
 *                                                time (each checked with pwd -P), write DATA (base64)
 *                                                into the new part TMP.1
 *   append  DIR TMP N DATA                       write DATA into the new part TMP.N
 *   commit  DIR NAME TMP N DATA SIZE EXPECT SUM  create TMP, copy parts 1..N-1 and DATA into it,
 *                                                remove the parts, check SIZE and (when given) SUM, the
 *                                                MD5 of the whole content; check NAME (with EXPECT: it
 *                                                still has that MD5), give TMP its mode, rename it over NAME
 *   oneshot DIR NAME TMP DATA SIZE EXPECT        begin + commit in one go (no parts)
 *   abort   DIR TMP                              remove TMP and its parts
 *
 * TMP (a name in DIR) is chosen by the caller, so it can always be removed,
 * even after a step was killed. The target is replaced only by the final
 * rename: a failure, timeout or crash before it leaves the old file as it was.
 * Every failure the script sees removes TMP and the parts.
 */

export const WRITE_SCRIPT = String.raw`__need base64 mv chmod mkdir cat
unset CDPATH
op=$2
# True when the current directory is $1 as the kernel knows it: an external pwd (getcwd). Bash's
# own pwd -P re-resolves its PWD string, so it still says $1 when the directory we are in was
# moved away and another put in its place. Without an external pwd, bash's is used.
__at() { REPLY=$(env pwd -P 2>/dev/null); [ $? -ne 127 ] || REPLY=$(pwd -P); [ "$REPLY" = "$1" ]; }
# Enters the directory $1 as it is now; refuses (moved) unless it is $1 physically.
# With $2 = create, missing directories are made one at a time, each entered and checked.
__pin() {
  local want=$1 cur= rest c out
  if cd -P -- "$want" 2>/dev/null && __at "$want"; then return 0; fi
  [ "${"${2-}"}" = create ] || __fail moved "$want"
  cd -P / || __fail moved /
  rest=${"${want#/}"}
  while [ -n "$rest" ]; do
    c=${"${rest%%/*}"}
    if [ "$c" = "$rest" ]; then rest=; else rest=${"${rest#*/}"}; fi
    [ -n "$c" ] || continue
    cur=$cur/$c
    # Made by someone else meanwhile (or gone again): the check below decides.
    if [ ! -e "./$c" ] && [ ! -L "./$c" ] && ! out=$(mkdir -- "./$c" 2>&1); then
      case $out in *[Ee]xists*) ;; *) __fail mkdir "$out" ;; esac
    fi
    cd -P -- "./$c" 2>/dev/null && __at "$cur" || __fail moved "$cur"
  done
}
# Removes the temporary file and its parts, then fails with "$@".
__abort() { exec 7>&- 2>/dev/null; rm -f -- "./$tmp" "./$tmp".[0-9]*; __fail "$@"; }
# Creates the file $1 in the current directory exclusively (a name that exists, even as a
# dangling symlink, is refused) with mode 0600, open as descriptor 7.
__new() {
  local um
  um=$(umask); umask 077; set -C
  if ! { exec 7> "./$1"; } 2>/dev/null; then
    set +C; umask "$um"
    # The directory itself may be what went away (removed, or replaced while we were in it).
    __at "$dir" || __abort moved "$dir"
    if [ -e "./$1" ] || [ -L "./$1" ]; then __abort create "./$1 already exists"; fi
    __abort create "$(if [ -w . ]; then echo "cannot create ./$1"; else echo "permission denied"; fi)"
  fi
  set +C; umask "$um"
}
# Decodes DATA into descriptor 7.
__put() {
  [ -n "$data" ] || return 0
  local out
  out=$(printf '%s' "$data" | base64 -d 2>&1 >&7) || __abort write "$out"
}
# chmod/chown of the open temporary file (Linux and the BSDs: /dev/fd); by name, checked first, where that fails.
__fdo() {
  "$@" /dev/fd/7 2>/dev/null && return 0
  [ -f "./$tmp" ] && [ ! -L "./$tmp" ] && "$@" "./$tmp" 2>/dev/null
}
# Renames ./$tmp over ./$name without following a symlink at ./$name; REPLY is the error.
__rename() {
  REPLY=$(mv -f -T -- "./$tmp" "./$name" 2>&1) && return 0
  case $REPLY in *"invalid option"*|*"illegal option"*|*"unrecognized option"*|*"unknown option"*) ;; *) return 1 ;; esac
  REPLY=$(mv -f -h -- "./$tmp" "./$name" 2>&1) && return 0
  case $REPLY in *"invalid option"*|*"illegal option"*|*"unrecognized option"*|*"unknown option"*) ;; *) return 1 ;; esac
  if [ -L "./$name" ] || [ -d "./$name" ]; then REPLY="./$name is a symbolic link or a directory"; return 1; fi
  REPLY=$(mv -f -- "./$tmp" "./$name" 2>&1)
}
__commit() {
  local parts=() i
  __new "$tmp"
  for ((i = 1; i < n; i++)); do
    [ -f "./$tmp.$i" ] && [ ! -L "./$tmp.$i" ] || __abort tmp-gone
    parts+=("./$tmp.$i")
  done
  if [ "${"${#parts[@]}"}" -gt 0 ]; then
    out=$(cat -- "${"${parts[@]}"}" 2>&1 >&7) || __abort write "$out"
    rm -f -- "${"${parts[@]}"}"
  fi
  __put
  __size "./$tmp" || __abort write "cannot read back the temporary file"
  [ "$REPLY" -eq "$total" ] || __abort size-mismatch "$REPLY"
  if [ -n "$sum" ]; then
    __md5 "./$tmp"; case $? in 0) [ "$REPLY" = "$sum" ] || __abort altered ;; 2) ;; *) __abort write "cannot read back the temporary file" ;; esac
  fi
  # The last component: the rename replaces it, and it must still be the file (or the absence) that was checked.
  if [ -L "./$name" ]; then __abort final-link; fi
  if [ -e "./$name" ]; then
    [ ! -d "./$name" ] || __abort is-directory
    [ -f "./$name" ] || __abort not-regular
    if [ -n "$expect" ]; then
      __md5 "./$name"; case $? in 0) ;; 2) __abort missing-tool md5sum ;; *) __abort changed ;; esac
      [ "$REPLY" = "$expect" ] || __abort changed
    fi
    if __stat "./$name"; then
      __fdo chmod "$MODE"
      # Only root can give a file away; the temporary file is root's already when the target is too.
      if [ "${"${EUID:-1}"}" = 0 ] && [ -n "$OWNER" ] && [ "$OWNER" != 0:0 ]; then __fdo chown "$OWNER"; fi
    fi
    __emit created 0
  else
    [ -z "$expect" ] || __abort changed
    __fdo chmod "$(printf '%o' $((0666 & ~$(umask))))"
    __emit created 1
  fi
  exec 7>&-
  __at "$dir" || __abort moved "$dir"
  [ ! -L "./$name" ] || __abort final-link
  __rename || __abort rename "$REPLY"
  __emit bytes "$total"
}
case $op in
  begin) dir=$3 tmp=$4 data=$5; __pin "$dir" create; __new "$tmp.1"; __put ;;
  append) dir=$3 tmp=$4 data=$6; __pin "$dir"; __new "$tmp.$5"; __put ;;
  commit) dir=$3 name=$4 tmp=$5 n=$6 data=$7 total=$8 expect=$9 sum=${"${10}"}; __pin "$dir"; __commit ;;
  oneshot) dir=$3 name=$4 tmp=$5 n=1 data=$6 total=$7 expect=$8 sum=; __pin "$dir" create; __commit ;;
  abort) if cd -P -- "$3" 2>/dev/null && __at "$3"; then rm -f -- "./$4" "./$4".[0-9]*; fi ;;
  *) __fail bad-op "$op" ;;
esac
`;
