#!/usr/bin/env bash
# tools-writeback.sh - ember writeback: 16 MB written through the page
# cache and then sync(1) show as writeback work for reason sync, at least
# the file's 4096 pages, with durations; --interval prints intervals;
# live and offline the same.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip tools-writeback "needs root for tracepoints"; exit 0; }
ensure_tracefs || { skip tools-writeback "no tracefs"; exit 0; }
D=$(mktemp -d /var/tmp/ember-wb.XXXXXX)   # on a disk: /tmp may be tmpfs
trap 'rm -rf "$D" "$TMP"' EXIT
if [ "$(df --output=fstype "$D" | tail -1)" = tmpfs ]; then
	skip tools-writeback "/var/tmp is tmpfs: nothing to write back"
	exit 0
fi

F=$TMP/wb.data
"$EMBER" writeback -a -o "$F" -- sh -c "dd if=/dev/zero of=$D/f bs=1M count=16 2>/dev/null; sync" \
	>"$TMP/live" 2>"$TMP/err"
pages=$(awk '$1 == "sync" { print $3 }' "$TMP/live")
check "sync's writeback wrote at least the file's 4096 pages (${pages:-none})" test "${pages:-0}" -ge 4096
check "with durations" awk '$1 == "sync" && $4 > 0 && $6 >= $5 { ok = 1 } END { exit !ok }' "$TMP/live"
"$EMBER" writeback -i "$F" >"$TMP/offline" 2>/dev/null
check "live and offline print the same" cmp -s "$TMP/live" "$TMP/offline"
"$EMBER" writeback -i "$F" --interval 0.001 --count 3 >"$TMP/int" 2>/dev/null
check "--interval 1 ms --count 3: three intervals" test "$(grep -c '^\[' "$TMP/int")" = 3
