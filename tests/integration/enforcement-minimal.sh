#!/usr/bin/env bash
# The view of a policy without a `:root` entry (CODEX-HELPER.md 4.1, 4.2;
# Codex's example 12: `:minimal` read, the project writable): the sandbox
# sees /dev, /proc and its entries, and nothing else.  Real sandboxes through
# the helper, checked by what the command finds and by the effect on the
# host's files.  Runs as root and again as uid 65534 (unprivileged.sh).
#
# The scratch directories live under /tmp (not /var/tmp), so that /var is
# not part of any entry's path.
export SBX_TEST_TMP=/tmp
. "$(dirname "$0")/lib.sh"
require_helper
HELPER=$helper

ws=$(scratch)      # the workspace
extra=$(scratch)   # a directory given with an extra read entry
echo "extra content" > "$extra/file"
tag="sbx-minimal-$$"

minimal='{"special":"minimal","access":"read"}'
slash_tmp='{"special":"slash_tmp","access":"write"}'
write() { printf '{"path":"%s","access":"write"}' "$1"; }
read_() { printf '{"path":"%s","access":"read"}' "$1"; }
# policy ENTRY...: a canonical policy document with exactly these entries.
policy() {
    local IFS=,
    printf '{"mode":"workspace-write","entries":[%s]}' "$*"
}
# sandbox POLICY CMD...: the helper directly, in the workspace.
sandbox() {
    local p=$1; shift
    "$HELPER" --sandbox-policy-cwd "$ws" --command-cwd "$ws" --sandbox-policy "$p" -- "$@"
}
base=$(policy "$minimal" "$(write "$ws")")
mini() { sandbox "$base" "$@"; }
content() { cat "$1" 2>/dev/null || echo "<missing>"; }
# The errno name of stat(PATH) inside the sandbox ("ok" when it exists).
errno_in() { mini python3 -c 'import errno, os, sys
try:
    os.stat(sys.argv[1]); print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])' "$1" 2>&1; }

# --- the platform set runs ------------------------------------------------
ok "/bin/sh runs" mini /bin/sh -c 'exit 0'
is "python3 runs" "3" "$(mini python3 -c 'print(1 + 2)' 2>&1)"
is "coreutils run" "b a" "$(mini sh -c 'printf "a\nb\n" | sort -r | tr "\n" " " | sed "s/ \$//"' 2>&1)"
is "/etc is readable" "$(head -1 /etc/passwd)" "$(mini head -1 /etc/passwd 2>&1)"
if [ -L /lib64 ]; then
    is "/lib64 is the host's symlink" "$(readlink /lib64)" "$(mini readlink /lib64 2>&1)"
    loader=$(ls /lib64/ld-linux-*.so.* 2>/dev/null | head -1)
    if [ -n "$loader" ]; then
        ok "the dynamic loader runs through /lib64 -> $(readlink /lib64)" mini "$loader" /bin/true
    else
        skip "the dynamic loader runs through /lib64" "no /lib64/ld-linux-*.so.* on this host"
    fi
else
    skip "/lib64 is the host's symlink" "/lib64 is not a symlink on this host"
fi
if [ -L /bin ]; then
    is "/bin is the host's symlink" "$(readlink /bin)" "$(mini readlink /bin 2>&1)"
else
    skip "/bin is the host's symlink" "/bin is not a symlink on this host"
fi
not_ok "/usr is read-only" mini sh -c "echo x > /usr/$tag"
not_ok "/etc is read-only" mini sh -c "echo x > /etc/$tag"

# --- what is not there ----------------------------------------------------
for d in /home /root /var /opt /srv /mnt /boot /sys; do
    is "$d is absent (ENOENT)" "ENOENT" "$(errno_in $d)"
done
is "$extra (no entry) is absent" "ENOENT" "$(errno_in "$extra")"
# The platform set that exists here, /dev, /proc, and tmp (the workspace's
# parent directory).
expected_top=$( (for p in /bin /sbin /usr /etc /lib /lib64 /nix/store /run/current-system/sw; do
    [ -e "$p" ] && echo "$p" | cut -d/ -f2; done; echo dev; echo proc; echo tmp) |
    LC_ALL=C sort | tr '\n' ' ')
is "the top level holds only the entries, /dev and /proc" "$expected_top" \
    "$(mini ls -A / 2>&1 | LC_ALL=C sort | tr '\n' ' ')"
not_ok "no new top-level directory" mini mkdir "/$tag"
not_ok "no new top-level file" mini sh -c "echo x > /$tag"
not_ok "no symlink at the top" mini ln -s /usr "/$tag"
not_ok "the workspace's parents are read-only" mini sh -c "echo x > '$(dirname "$ws")/$tag'"

# --- the workspace --------------------------------------------------------
ok "the workspace is writable" mini sh -c "echo hello > '$ws/new' && mkdir '$ws/dir' && echo x > '$ws/dir/f'"
is "writes in the workspace land on the host" "hello" "$(content "$ws/new")"
is "a new directory's file lands on the host" "x" "$(content "$ws/dir/f")"
echo "from the host" > "$ws/host"
is "the workspace shows the host's files" "from the host" "$(mini cat "$ws/host" 2>&1)"

# A protected name that is a symlink (as a concurrent run's placeholder is):
# the entry names the link itself, which the workspace's clone holds.
mkdir "$ws/cfg"
ln -s cfg "$ws/.codex"
ok "a protected name that is a symlink does not stop the run" mini sh -c "echo x > '$ws/beside-link'"
not_ok "what the protected symlink names stays read-only" mini sh -c "echo x > '$ws/.codex/f'"
is "nothing was created through it" "<missing>" "$(content "$ws/cfg/f")"
rm "$ws/.codex"

# --- /tmp -----------------------------------------------------------------
rm -f "/tmp/$tag"
not_ok "/tmp is read-only without :slash_tmp" mini sh -c "echo x > /tmp/$tag"
is "nothing was created in /tmp" "<missing>" "$(content "/tmp/$tag")"
ok "/tmp is writable with :slash_tmp" sandbox "$(policy "$minimal" "$(write "$ws")" "$slash_tmp")" sh -c "echo tmp > /tmp/$tag"
is "the write in /tmp lands on the host" "tmp" "$(content "/tmp/$tag")"
rm -f "/tmp/$tag"

# --- /dev -----------------------------------------------------------------
ok "/dev/null is writable" mini sh -c 'echo x > /dev/null'
is "/dev/zero is readable" "4" "$(mini sh -c 'head -c 4 /dev/zero | wc -c' 2>&1)"
is "/dev/urandom is readable" "16" "$(mini sh -c 'head -c 16 /dev/urandom | wc -c' 2>&1)"
is "/dev holds the minimal set" "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero" \
    "$(mini ls /dev 2>&1 | tr '\n' ' ' | sed 's/ $//')"
# (/dev/console: no terminal is inherited here.)
for d in /dev/sda /dev/vda /dev/mem /dev/kmsg /dev/loop0 /dev/console; do
    is "$d is absent (ENOENT)" "ENOENT" "$(errno_in $d)"
done
not_ok "no new name in /dev" mini sh -c "echo x > /dev/$tag"
# The sandbox's /dev/shm is its own tmpfs, whatever the host has; the host's
# file is there to be not seen (where the host has a /dev/shm to hold it).
if shm_missing=$(has_dev_shm); then
    echo host > "/dev/shm/$tag"
    is "/dev/shm is empty (not the host's)" "" "$(mini ls -A /dev/shm 2>&1)"
else
    skip "/dev/shm is empty (not the host's)" "$shm_missing"
fi
is "/dev/shm is writable" "shm" "$(mini sh -c "echo shm > /dev/shm/$tag-in && cat /dev/shm/$tag-in" 2>&1)"
is "a write in /dev/shm does not reach the host's" "<missing>" "$(content "/dev/shm/$tag-in")"
if [ -z "$shm_missing" ]; then
    is "the host's /dev/shm file is untouched" "host" "$(content "/dev/shm/$tag")"
fi
rm -f "/dev/shm/$tag" "/dev/shm/$tag-in"
is "/dev/stdout leads to the command's stdout" "out" "$(mini sh -c 'echo out > /dev/stdout' 2>&1)"

# --- /proc ----------------------------------------------------------------
is "/proc shows only the sandbox's processes" "1 2" "$(mini sh -c 'cd /proc && echo [0-9]*' 2>&1)"
is "the command is pid 2" "2" "$(mini readlink /proc/self 2>&1)"

# --- an extra read entry --------------------------------------------------
with_extra=$(policy "$minimal" "$(write "$ws")" "$(read_ "$extra")")
is "an extra read entry is visible" "extra content" "$(sandbox "$with_extra" cat "$extra/file" 2>&1)"
not_ok "an extra read entry is read-only" sandbox "$with_extra" sh -c "echo evil > '$extra/file'"
not_ok "nothing can be created in an extra read entry" sandbox "$with_extra" sh -c "echo evil > '$extra/new'"
is "the extra entry's file is unchanged" "extra content" "$(content "$extra/file")"
is "the extra entry's directory is unchanged" "file" "$(ls -A "$extra")"

# --- a writable hole in a denied directory outside every entry ------------
# CODEX-HELPER.md 4.3: D deny, D/open write: D/open writable, D traverse-only
# (mode 0111), its other names invisible; D/ro read is not reopened.
denied=$(scratch)
mkdir "$denied/open" "$denied/ro"
echo secret > "$denied/secret"
deny_() { printf '{"path":"%s","access":"deny"}' "$1"; }
holes=$(policy "$minimal" "$(write "$ws")" "$(deny_ "$denied")" "$(write "$denied/open")" "$(read_ "$denied/ro")")
ok "the writable hole is writable" sandbox "$holes" sh -c "echo hole > '$denied/open/f'"
is "its write lands on the host" "hole" "$(content "$denied/open/f")"
is "the denied directory is traverse-only" "111" "$(sandbox "$holes" stat -c %a "$denied" 2>&1)"
not_ok "the denied directory cannot be listed" sandbox "$holes" ls "$denied"
not_ok "its other files are invisible" sandbox "$holes" cat "$denied/secret"
not_ok "a read entry below it is not reopened" sandbox "$holes" ls -d "$denied/ro"
not_ok "nothing can be created in it" sandbox "$holes" mkdir "$denied/new"

# --- a file entry ---------------------------------------------------------
echo sibling > "$extra/sibling"
with_file=$(policy "$minimal" "$(write "$ws")" "$(read_ "$extra/file")")
is "a read entry naming a file shows the file" "extra content" "$(sandbox "$with_file" cat "$extra/file" 2>&1)"
is "its sibling is absent" "ENOENT" "$(sandbox "$with_file" python3 -c 'import errno, os, sys
try:
    os.stat(sys.argv[1]); print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])' "$extra/sibling" 2>&1)"
not_ok "the file is read-only" sandbox "$with_file" sh -c "echo evil > '$extra/file'"
rm "$extra/sibling"

# --- a terminal -----------------------------------------------------------
if command -v script >/dev/null; then
    # script(1) gives the sandbox a terminal on stdin, stdout and stderr: the
    # host's pts, opened again inside the view at /dev/console (its node;
    # /dev/pts is the sandbox's own).
    is "a terminal on stdin is opened again in the view, at /dev/console" "/dev/console" \
        "$(SHELL=/bin/sh script -qc "$(printf '%q ' "$HELPER" --sandbox-policy-cwd "$ws" --command-cwd "$ws" --sandbox-policy "$base" -- tty)" /dev/null 2>&1 |
            tr -d '\r' | sed 's/[0-9]*$//')"
else
    skip "a terminal on stdin is opened again in the view, at /dev/console" "no script(1)"
fi

# --- a read entry inside the workspace ------------------------------------
mkdir -p "$ws/ro"
echo keep > "$ws/ro/f"
inner=$(policy "$minimal" "$(write "$ws")" "$(read_ "$ws/ro")")
not_ok "a read entry inside the workspace is read-only" sandbox "$inner" sh -c "echo evil > '$ws/ro/f'"
ok "the rest of the workspace stays writable" sandbox "$inner" sh -c "echo x > '$ws/beside-ro'"
is "the read entry's file is unchanged" "keep" "$(content "$ws/ro/f")"

done_testing
