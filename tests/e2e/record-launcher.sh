#!/usr/bin/env bash
# tests/e2e/record-launcher.sh - record -g through a launcher script, as
# version managers (pyenv, nvm, rbenv) put one in front of python3 or node:
# a bash script that forks subshells and short helper programs, then execs
# the program through env, so one pid goes bash -> env -> python3 within a
# few milliseconds.  The recorder reads each CPU's ring in turn, so a
# child's FORK can come before its parent's mmaps, and a pid's three
# images before any of its samples: each sample must still be unwound with
# the maps of the process and image that took it.  Of the samples with a
# user part (those taken inside exec after the old image is gone have
# none), at least 97% of the launcher's (bash, its subshells and helpers)
# and 99% of python3's must reach the program's start.  Before the
# recorder applied each pass's side-band records in time order and kept
# every replaced image's maps, the launcher's share was 61% to 92% here.
# Also deep stacks: python3 recursing 30 levels through a C builtin (each
# level a C frame of its own, some 700 bytes) sits about 20 KB deep, past
# a 16 KB copy (4% of its samples reached Py_BytesMain with 16 KB), and
# -g copies 32 KB at -F 999 (16 KB above -F 1024 with the default rings:
# perf evlist says which).
# parallel-safe: records only its own processes and checks shares of its own samples (tests/run.sh)
set -u
. "$(dirname "$0")/../e2e-lib.sh"

if ! need_root; then skip record-launcher "needs root to record"; exit 0; fi
PY=/usr/bin/python3
[ -x "$PY" ] || { skip record-launcher "$PY is not installed"; exit 0; }

cat >"$TMP/launch" <<EOF
#!/usr/bin/env bash
set -e
# Forks and helpers for 0.6 s (bash's EPOCHREALTIME): enough launcher
# samples with a user part however fast this machine forks.
end=\$(( \${EPOCHREALTIME/./} + 600000 )) i=0
while [ \$i -lt 12 ] || [ \${EPOCHREALTIME/./} -lt \$end ]; do
	i=\$((i + 1)); v=\$(echo "v\$i" | tr a-z A-Z); d=\$(dirname "\$0")
done
exec env PYTHONDONTWRITEBYTECODE=1 $PY "\$@"
EOF
chmod +x "$TMP/launch"

if ! "$EMBER" record -g -F 999 -o "$TMP/l.data" -- "$TMP/launch" -c 'import json, time
end = time.time() + 1.5
while time.time() < end:
    json.loads(json.dumps([{"k": i, "v": [i * 0.5] * 8} for i in range(300)]))' \
	>"$TMP/l.out" 2>"$TMP/l.err"; then
	fail record-launcher "$(head -c 300 "$TMP/l.err")"; exit 0
fi
"$EMBER" collapse -i "$TMP/l.data" >"$TMP/l.folded" 2>"$TMP/l.cerr"

ROOTS='^(main|_start|__libc_start_main.*|__libc_start_call_main|_dl_start_user|Py_BytesMain)$'
# share GROUP: "REACHED TOTAL" of the group's samples with a user part
# (the first frame after the command is a kernel entry when there is none).
share() {
	awk -v g="$1" -v roots="$ROOTS" '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";")
		if (f[2] ~ /^(entry_SYSCALL|asm_|ret_from_fork)/) next
		if ((f[1] == "python3") != (g == "python3")) next
		t += n
		for (i = 2; i <= k; i++) if (f[i] ~ roots) { r += n; break } }
		END { print r + 0, t + 0 }' "$TMP/l.folded"
}

reach_check() {   # NAME GROUP PERCENT MIN_SAMPLES
	local r t
	read -r r t < <(share "$2")
	if [ "$t" -ge "$4" ] && [ $((r * 100)) -ge $((t * $3)) ]; then
		pass "$1 ($r of $t $2 samples reach the program's start)"
	else
		fail "$1" "$r of $t $2 samples reach the program's start (want $3% of at least $4)"
	fi
}
reach_check launcher-reach-start launcher 97 100
reach_check launched-python-reach-start python3 99 300

# ---- a deep stack ------------------------------------------------------------
if ! "$EMBER" record -g -F 999 -o "$TMP/d.data" -- "$PY" -c '
import time
def f(n):
    if n:
        return list(map(f, [n - 1]))[0]
    end, s = time.time() + 1, 0
    while time.time() < end:
        s += 1
    return s
f(30)' >"$TMP/d.out" 2>"$TMP/d.err"; then
	fail deep-python-stack "$(head -c 300 "$TMP/d.err")"; exit 0
fi
read -r r t < <("$EMBER" collapse -i "$TMP/d.data" 2>/dev/null |
	awk '{ n = $NF; t += n; if ($0 ~ /(^|;)Py_BytesMain;/) r += n } END { print r + 0, t + 0 }')
if [ "$t" -ge 300 ] && [ $((r * 100)) -ge $((t * 95)) ]; then
	pass "deep-python-stack ($r of $t samples 30 calls deep reach Py_BytesMain)"
else
	fail deep-python-stack "$r of $t samples 30 calls deep reach Py_BytesMain (want 95% of at least 300)"
fi
if have_perf; then
	"$EMBER" record -g -F 4999 -o "$TMP/f.data" -- true >/dev/null 2>&1
	deep=$(perf evlist -v -i "$TMP/d.data" 2>/dev/null | grep -o 'sample_stack_user: [0-9]*')
	fast=$(perf evlist -v -i "$TMP/f.data" 2>/dev/null | grep -o 'sample_stack_user: [0-9]*')
	check "stack-copy-by-rate (-F 999: $deep, -F 4999: $fast)" \
		test "$deep" = "sample_stack_user: 32768" -a "$fast" = "sample_stack_user: 16384"
else
	skip stack-copy-by-rate "perf is not installed (perf evlist reads the attrs)"
fi
