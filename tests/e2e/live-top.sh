#!/usr/bin/env bash
# live-top.sh - ember top: --stdio prints each refresh as its span, report's header
# and table, the known-ratio leaves at their design shares (50/30/20 of
# the three, within 3 points) in every refresh while two ratio processes
# keep both CPUs busy (perf_events drops samples on idle CPUs); and the
# full screen under tmux: rows appear, Ctrl-Z gives the shell its screen
# and modes back and fg redraws, / filters, q quits, and the
# terminal is as it was (capture-pane before and after).
. "$(dirname "$0")/../e2e-lib.sh"

need_root || { skip live-top "needs root for system-wide sampling"; exit 0; }

"$WORKLOADS/ratio" 16 >/dev/null &
R1=$!
"$WORKLOADS/ratio" 16 >/dev/null &
R2=$!
# A session of this run's own: two checks running at once (other
# worktrees) must not type into each other's.
S=ember-live-top-$$
trap 'kill $R1 $R2 2>/dev/null; tmux kill-session -t $S 2>/dev/null; rm -rf "$TMP"' EXIT
sleep 0.3

"$EMBER" top --stdio -a -d 1 --count 3 >"$TMP/top.out" 2>"$TMP/top.err"
rc=$?
read -r -a design <<<"$("$WORKLOADS/ratio" --design | awk '/^self leaf_[abc] / { printf "%s ", $3 }')"
python3 - "$TMP/top.out" "$rc" "${design[@]}" <<'PY'
import re, sys
text, rc = open(sys.argv[1]).read(), sys.argv[2]
design = [float(x) for x in sys.argv[3:6]]
refreshes = re.split(r"(?m)^# live: .*\n", text)
refreshes = [r for r in refreshes if "# Samples:" in r]
starts = all(re.match(r"# interval \d+: [\d.]+ - [\d.]+ s \(recording time [\d.]+ - [\d.]+\)\n"
                      r"#\n# Total Lost Samples: \d+\n#\n# Samples: ", r.lstrip("\n"))
             for r in refreshes)
print(("PASS" if rc == "0" and len(refreshes) == 3 and starts else "FAIL") +
      f": top --stdio -d 1 --count 3 (exit {rc}): {len(refreshes)} refreshes, each beginning "
      f"with its span and report's header lines")
for i, r in enumerate(refreshes, 1):
    pct = {m.group(2): float(m.group(1))
           for m in re.finditer(r"^\s+([\d.]+)%\s+ratio\s+\[\.\] (leaf_[abc])$", r, re.M)}
    tot = sum(pct.get(k, 0) for k in ("leaf_a", "leaf_b", "leaf_c"))
    shares = [100 * pct.get(k, 0) / tot if tot else 0 for k in ("leaf_a", "leaf_b", "leaf_c")]
    ok = tot > 0 and all(abs(s - d) <= 3 for s, d in zip(shares, design))
    print(("PASS" if ok else "FAIL") + f": refresh {i}: leaf shares " +
          "/".join(f"{s:.1f}" for s in shares) + " against the design " +
          "/".join(f"{d:g}" for d in design) + " (within 3 points)")
PY

if ! command -v tmux >/dev/null; then
	skip live-top-screen "no tmux"
	exit 0
fi
tmux kill-session -t $S 2>/dev/null
tmux new-session -d -s $S -x 120 -y 30 "env PS1='$ ' bash --norc --noprofile" || {
	skip live-top-screen "tmux cannot start a session"; exit 0; }
sleep 0.5
tmux send-keys -t $S "clear; echo ready" Enter
sleep 0.5
tmux capture-pane -t $S -p >"$TMP/before"
tmux send-keys -t $S "'$EMBER' top -a -d 1 -s sym" Enter
seen=
for _ in $(seq 1 30); do
	sleep 0.3
	tmux capture-pane -t $S -p >"$TMP/screen"
	grep -q 'leaf_a' "$TMP/screen" && { seen=1; break; }
done
check "top's screen shows rows (leaf_a among them)" test -n "$seen"
check "the screen's first line says what the live path lost" \
	grep -Eq '^ember top: [0-9]+ samples in the last refresh, [0-9]+ lost in all' "$TMP/screen"
# Ctrl-Z: the shell's screen and modes while top is stopped; fg: top's
# screen again, drawn at once.
tmux send-keys -t $S C-z
sleep 1
tmux send-keys -t $S "stty -a | grep -o ' icanon\| echo ' | tr -d ' ' | sort | tr '\n' ,; echo" Enter
sleep 0.5
tmux capture-pane -t $S -p >"$TMP/stopped"
check "Ctrl-Z: top stops, the shell's screen is back with icanon and echo" \
	sh -c "grep -q 'Stopped' '$TMP/stopped' && grep -q 'echo,icanon,' '$TMP/stopped' &&
	       ! grep -q 'ember top:' '$TMP/stopped'"
tmux send-keys -t $S fg Enter
seen=
for _ in $(seq 1 10); do
	sleep 0.3
	tmux capture-pane -t $S -p >"$TMP/screen"
	grep -q 'leaf_a' "$TMP/screen" && grep -q '^ember top:' "$TMP/screen" && { seen=1; break; }
done
check "fg: top's screen is drawn again (rows, leaf_a among them)" test -n "$seen"
modes=$(stty -a -F "$(tmux display -p -t $S '#{pane_tty}')" | grep -o ' -icanon\| -echo ' | tr -d ' ' | sort | tr '\n' ,)
check "fg: top's keys are raw again ($modes)" test "$modes" = "-echo,-icanon,"
tmux send-keys -t $S "/"
sleep 0.2
tmux send-keys -t $S "leaf_[ab]" Enter
sleep 2.5
tmux capture-pane -t $S -p >"$TMP/filtered"
rows=$(grep -Ec '%  ' "$TMP/filtered")
check "/ filters: only rows matching leaf_[ab] ($rows rows; leaf_a and leaf_b, no leaf_c)" \
	test "$rows" -ge 2 -a -z "$(grep -E '%  ' "$TMP/filtered" | grep -v 'leaf_[ab]')" -a \
	-n "$(grep leaf_b "$TMP/filtered")"
tmux send-keys -t $S q
sleep 1.5
tmux capture-pane -t $S -p >"$TMP/after"
# The shell's screen is back: what was there (its last line, the prompt,
# now holds the command typed), then a new prompt; none of top's screen.
grep . "$TMP/before" | sed '$d' >"$TMP/before.kept"
grep . "$TMP/after" >"$TMP/after.lines"
if cmp -s "$TMP/before.kept" <(head -n "$(wc -l <"$TMP/before.kept")" "$TMP/after.lines") &&
   grep -q "top -a -d 1 -s sym" "$TMP/after" && [ "$(tail -1 "$TMP/after.lines")" = '$' ] &&
   ! grep -q 'ember top:' "$TMP/after"; then
	pass "q quits and the terminal is restored (the screen before, then the command line)"
else
	fail "terminal restored" "$(head -5 "$TMP/after")"
fi
tmux send-keys -t $S "stty -a | grep -o ' icanon\| echo ' | tr -d ' ' | sort | tr '\n' ,; echo" Enter
sleep 0.5
check "the terminal's modes are back (icanon and echo on)" \
	grep -q 'echo,icanon,' <(tmux capture-pane -t $S -p)
