#!/usr/bin/env bash
# record-online-memory.sh - the recorder's online unwinder (-g) stays
# bounded beside processes that come and go: a 12 s record -a -g while
# the spawn workload runs a fresh copy of /bin/true (a new inode each,
# the newest thousand kept on disk) a hundred times a second or more.
# Each exited process's maps are let go of a second after its exit, and
# the files no maps name are closed and forgotten by the unwinder; before
# that they stayed, one fd and its unwind state per binary ever run
# (between 6 and 11 s, with 634 copies run, the recorder's fds went from
# 2235 to 2937 and its RSS from 41.7 to 47.1 MB; after: 261 to 269 fds,
# 15.9 to 18.8 MB, with 680 run).  Checked: the fds open at the end are not many more than at
# 6 s (fewer than a quarter of the copies run in between), the RSS at the
# end within 20% of its peak over 6..7 s (the first seconds fill the
# writer's buffer and the unwind tables of the libraries all processes
# share), and the summary counts the maps let go of.  -o /dev/null: a
# recording thrown away fills no build-id cache (as -N), so the build-id
# list reads each file's id when it is first seen and closes it (a cache
# fill holds up to 1024 for the end: then the fds check fails), and
# $HOME/.debug is not written.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip record-online-memory "needs root for system-wide sampling"; exit 0; }
asan=0
ldd "$EMBER" 2>/dev/null | grep -q libasan && asan=1
mkdir "$TMP/bins" || { fail record-online-memory "cannot make $TMP/bins"; exit 0; }

mkdir "$TMP/home"
HOME=$TMP/home "$EMBER" record -a -g -F 99 -o /dev/null -- sleep 12 >"$TMP/out" 2>"$TMP/err" &
EM=$!
"$WORKLOADS/spawn" 12.5 1000000 "$TMP/bins" >"$TMP/spawned" &
SP=$!
trap 'kill $EM $SP 2>/dev/null; rm -rf "$TMP"' EXIT
rss() { awk '/^VmRSS:/ { print $2 }' /proc/$EM/status 2>/dev/null; }
fds() { ls /proc/$EM/fd 2>/dev/null | wc -l; }
ran() { ls "$TMP/bins" | sed -n 's/^t//p' | sort -n | tail -1; }
sleep 6
f6=$(fds) n6=$(ran) r6=0
for _ in 1 2 3; do
	r=$(rss); [ -n "$r" ] && [ "$r" -gt "$r6" ] && r6=$r
	sleep 0.5
done
sleep 3.7
f11=$(fds) n11=$(ran) r11=$(rss)
wait $SP
wait $EM
rc=$?
n=$(cat "$TMP/spawned")
gone=$(grep -Eo 'processes gone: [0-9]+ maps let go of, [0-9]+ files closed' "$TMP/err")
released=$(echo "$gone" | awk '{ print $3 }')
closed=$(echo "$gone" | awk '{ print $8 }')
if [ -z "$r6" ] || [ "$r6" = 0 ] || [ -z "$r11" ] || [ -z "$n6" ] || [ -z "$n11" ]; then
	fail record-online-memory "could not read the recorder's RSS or the copies run ($r6, $r11, $n6, $n11; exit $rc)"
	exit 0
fi
between=$((n11 - n6))
if [ "${n:-0}" -lt 1200 ] || [ "$between" -lt 400 ]; then
	skip record-online-memory "only ${n:-0} copies run in 12.5 s ($between between the readings): a busy machine"
	exit 0
fi
check "record -a -g beside $n short-lived copies of /bin/true ($((n / 12))/s): $f11 fds at 11 s, $f6 at 6 s, $between copies run in between; ${released:-no} exited processes' maps let go of, ${closed:-no} files closed (exit $rc)" \
	awk -v a="$f6" -v b="$f11" -v d="$between" -v r="${released:-0}" -v c="${closed:-0}" -v rc="$rc" \
	'BEGIN { exit !(b <= a + d / 4 && r >= d / 2 && c >= d / 2 && rc == 0) }'
check "record -o /dev/null fills no build-id cache ($(find "$TMP/home" -type f | wc -l) files in \$HOME)" \
	test ! -e "$TMP/home/.debug"
# AddressSanitizer holds freed memory in its quarantine: the RSS would
# measure that, not ember.
if [ "$asan" = 1 ]; then
	skip record-online-memory-rss "built with AddressSanitizer: its quarantine keeps freed memory"
else
	check "record -a -g's RSS at 11 s $r11 KB within 20% of its peak over 6..7 s, $r6 KB" \
		awk -v a="$r6" -v b="$r11" 'BEGIN { exit !(b <= a * 1.2) }'
fi
