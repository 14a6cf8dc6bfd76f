#!/usr/bin/env bash
# tools-memory.sh - ember oomkill and drsnoop: a process in a memory cgroup
# of 32 MB that allocates 64 MB is killed, and oomkill gives one line with
# its pid as victim; drsnoop shows the cgroup's reclaims it stalled in
# (this machine has no swap: they reclaim nothing); live and offline print
# the same.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-memory "needs root for cgroups and tracepoints"; exit 0; }
ensure_tracefs || { skip tools-memory "no tracefs"; exit 0; }

# A memory cgroup limited to 32 MB: v1's memory controller, or v2's memory.max.
CG=
if [ -d /sys/fs/cgroup/memory ] && mkdir /sys/fs/cgroup/memory/ember-e2e-$$ 2>/dev/null; then
	CG=/sys/fs/cgroup/memory/ember-e2e-$$
	echo 32M >"$CG/memory.limit_in_bytes"
elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers &&
	mkdir /sys/fs/cgroup/ember-e2e-$$ 2>/dev/null; then
	CG=/sys/fs/cgroup/ember-e2e-$$
	echo 32M >"$CG/memory.max"
fi
[ -n "$CG" ] || { skip tools-memory "no memory cgroup to limit"; exit 0; }
trap 'rmdir "$CG" 2>/dev/null; rm -rf "$TMP"' EXIT

# in_cgroup TOOL FILE: the tool on a 64 MB allocation inside the cgroup.
in_cgroup() {
	"$EMBER" "$1" -o "$2" -- sh -c "echo \$\$ >$CG/cgroup.procs; echo \$\$ >$TMP/pid; exec $WORKLOADS/toolwork alloc 64"
}

in_cgroup oomkill "$TMP/oom.data" >"$TMP/oom" 2>"$TMP/err"
pid=$(cat "$TMP/pid")
check "oomkill: one line, the workload ($pid) its victim" \
	sh -c "test \$(wc -l <'$TMP/oom') = 1 && grep -q 'OOM kill of PID $pid (\"toolwork\"), [0-9]* pages' '$TMP/oom'"
pages=$(grep -o '[0-9]* pages' "$TMP/oom" | cut -d' ' -f1)
check "oomkill: about 32 MB resident when killed (${pages:-?} pages)" \
	test "${pages:-0}" -ge 4096 -a "${pages:-0}" -le 16384
"$EMBER" oomkill -i "$TMP/oom.data" >"$TMP/oom2" 2>/dev/null
check "oomkill: live and offline print the same" cmp -s "$TMP/oom" "$TMP/oom2"

in_cgroup drsnoop "$TMP/dr.data" >"$TMP/dr" 2>"$TMP/err"
pid=$(cat "$TMP/pid")
n=$(awk -v p="$pid" '$2 == "toolwork" && $3 == p && $6 == "memcg"' "$TMP/dr" | wc -l)
check "drsnoop: the workload's reclaims in its cgroup ($n lines)" test "$n" -gt 0
"$EMBER" drsnoop -i "$TMP/dr.data" >"$TMP/dr2" 2>/dev/null
check "drsnoop: live and offline print the same" cmp -s "$TMP/dr" "$TMP/dr2"
