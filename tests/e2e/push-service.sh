#!/usr/bin/env bash
# push-service.sh - docs/ember-profiler.service as systemd would run it:
# systemd-analyze verifies the unit, and its ExecStart, with the unit's
# environment file and %H expanded as systemd expands them (${VAR} one
# word, quotes kept together), runs ember against a stand-in for
# Pyroscope's /ingest on 127.0.0.1: profiles arrive with the service's
# name and the host and service labels, and SIGTERM (the unit's
# KillSignal) ends it with exit 0.  (No systemd is PID 1 here to start it.)
# parallel-safe: its checks are what arrived, which load only delays (tests/run.sh)
. "$(dirname "$0")/../e2e-lib.sh"

UNIT=$TOP/docs/ember-profiler.service
need_root || { skip push-service "needs root for system-wide sampling"; exit 0; }
PY=$(command -v /usr/bin/python3 || command -v python3) ||
	{ skip push-service "no python3 for the receiver"; exit 0; }

if command -v systemd-analyze >/dev/null; then
	sed "s#/usr/local/bin/ember#$EMBER#" "$UNIT" >"$TMP/ember-profiler.service"
	systemd-analyze verify --man=no "$TMP/ember-profiler.service" >"$TMP/verify" 2>&1
	rc=$?
	check "systemd-analyze verify the unit: exit 0 ($rc: $(head -c 200 "$TMP/verify"))" test "$rc" = 0
else
	skip "systemd-analyze verify the unit" "no systemd-analyze"
fi

R=$TMP/recv
mkdir -p "$R"
"$PY" "$TOP/tests/e2e-push-receiver.py" "$R" --requests 100 --seconds 40 &
RECV=$!
trap 'kill $RECV 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 100); do [ -s "$R/port" ] && break; sleep 0.1; done
PORT=$(cat "$R/port" 2>/dev/null)
[ -n "$PORT" ] || { fail push-service "the receiver did not start"; exit 0; }

# The environment file the unit's header describes, and ExecStart as
# systemd expands it; --every 1s instead of 15s, to be quick.
printf 'EMBER_PUSH_URL=http://127.0.0.1:%s\nEMBER_SERVICE=myapp\nEMBER_ENV=ci\n' "$PORT" >"$TMP/push.env"
# StateDirectory=ember: systemd makes /var/lib/ember; here a folder of the test's.
mkdir -p "$TMP/state"
"$PY" - "$UNIT" "$TMP/push.env" "$EMBER" "$(hostname)" "$TMP/state" >"$TMP/argv" <<'PYEOF' || {
import re, shlex, sys
unit, envfile, ember, host, state = sys.argv[1:]
env = dict(l.strip().split("=", 1) for l in open(envfile) if "=" in l)
text = open(unit).read().replace("\\\n", " ")
line = next(l for l in text.splitlines() if l.startswith("ExecStart="))
cmd = line[len("ExecStart="):].replace("%H", host)
# systemd: ${VAR} is replaced by the value as one word; within quotes, in place.
cmd = re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], cmd)
words = shlex.split(cmd)
words[0] = ember
words = ["1s" if w == "15s" else w.replace("/var/lib/ember", state) for w in words]
print("\0".join(words), end="")
PYEOF
	fail push-service "could not read ExecStart from $UNIT"; exit 0; }
mapfile -d '' argv <"$TMP/argv"
cd "$TMP" || exit 1
"${argv[@]}" >"$TMP/out" 2>"$TMP/err" &
pid=$!
for _ in $(seq 150); do [ -e "$R/req-1.path" ] && break; sleep 0.1; done
kill -TERM $pid
wait $pid
rc=$?
n=$(ls "$R"/req-*.path 2>/dev/null | wc -l)
check "the unit's ExecStart runs: SIGTERM gives exit 0 ($rc: $(head -c 200 "$TMP/err")), 2 or more profiles ($n)" \
	test "$rc" = 0 -a "$n" -ge 2
want="myapp{env=ci,host=$(hostname),service=myapp}"
name=$("$PY" -c 'import sys, urllib.parse as u
print(u.parse_qs(u.urlsplit(open(sys.argv[1]).read().strip()).query)["name"][0])' "$R/req-0.path" 2>/dev/null)
check "the name and labels: $name" test "$name" = "$want"
check "the spool directory the unit names, in its StateDirectory, was made" test -d "$TMP/state/spool"
