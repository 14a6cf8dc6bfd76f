#!/usr/bin/env bash
# top-screen.sh - ember top's full screen (screen/) under a pty (script):
# the terminal's settings (stty -g) are the same before and after top
# quits by q, by SIGTERM and by SIGINT, which exit 0, and by SIGHUP, which
# ends it as the signal does (129); the alternate screen is left each time
# (its leaving sequence comes after the last frame).  The target is an
# idle process: the screen's frames are its header and no rows.
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip top-screen "needs root for sampling"; exit 0; }
command -v script >/dev/null || { skip top-screen "no script (util-linux)"; exit 0; }

sleep 1000 &
IDLE=$!
trap 'kill $IDLE 2>/dev/null; rm -rf "$TMP"' EXIT

# screen NAME HOW: top run in a pty, ended by HOW (q, or a signal's
# name sent to top's own pid once its screen is up).
screen() {
	local name=$1 how=$2 d=$TMP/$1
	mkdir -p "$d"
	local cmd="stty -g >'$d/before'; sh -c 'echo \$\$ >\"$d/pid\"; exec \"$EMBER\" top -p $IDLE -d 0.3'; echo rc=\$?; stty -g >'$d/after'"
	{
		# Once the screen is up (its first frame drawn), or 15 s.
		for _ in $(seq 1 50); do
			grep -aq 'ember top:' "$d/typescript" 2>/dev/null && break
			sleep 0.3
		done
		sleep 0.5
		if [ "$how" = q ]; then
			printf q
		else
			kill -"$how" "$(cat "$d/pid")"
		fi
		sleep 1.5
	} | timeout 20 script -qfc "$cmd" "$d/typescript" >/dev/null 2>&1
}

for how in q TERM INT HUP; do
	screen "by-$how" "$how"
	d=$TMP/by-$how
	want=0
	[ "$how" = HUP ] && want=129
	rc=$(grep -ao 'rc=[0-9]*' "$d/typescript" | tail -1)
	check "top ended by $how: exit $want ($rc)" test "$rc" = "rc=$want"
	check "top ended by $how: stty -g the same before and after" \
		cmp -s "$d/before" "$d/after"
	check "top ended by $how: the screen drew its header" \
		grep -aq 'ember top: 0 samples in the last refresh' "$d/typescript"
	check "top ended by $how: the alternate screen left after the last frame" \
		python3 -c "import sys; d = open(sys.argv[1], 'rb').read(); \
sys.exit(0 if d.rfind(b'\x1b[?25h\x1b[?1049l') > max(d.rfind(b'\x1b[H'), d.rfind(b'\x1b[?1049h')) else 1)" "$d/typescript"
done
