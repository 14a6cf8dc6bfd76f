#!/usr/bin/env bash
# export-speedscope.sh - ember export --format speedscope: the JSON
# validates against the schema the speedscope npm package ships, each
# frame's self and total weights are ember report's self and children
# shares, profiles per thread or per process, perf's stream as input, and
# off-CPU time in nanoseconds as ember offcpu counts it (and as pprof).
# parallel-safe: records only its own processes and compares files offline, nothing load changes (tests/run.sh)
source "$TOP/tests/e2e-lib.sh"

# speedscope's schema and ajv-cli, installed once into a cache folder
# (make deps does the same).
NPM_DIR=${XDG_CACHE_HOME:-$HOME/.cache}/ember/npm
SCHEMA=$NPM_DIR/node_modules/speedscope/dist/release/file-format-schema.json
AJV=$NPM_DIR/node_modules/.bin/ajv
if [ ! -f "$SCHEMA" ] || [ ! -x "$AJV" ]; then
	if command -v npm >/dev/null 2>&1; then
		mkdir -p "$NPM_DIR"
		timeout 120 npm install --silent --no-audit --no-fund --prefix "$NPM_DIR" \
			speedscope ajv-cli >"$TMP/npm.log" 2>&1
	fi
fi
have_schema() {
	[ -f "$SCHEMA" ] && [ -x "$AJV" ] && command -v node >/dev/null 2>&1
}
no_schema_reason="speedscope's schema or ajv-cli could not be installed with npm into $NPM_DIR (no npm or no network?)"

# weights FILE.json...: for each, FILE.w with "name self total" per frame
# name over all profiles (total: the weight of the samples whose stack
# holds the frame), in percent of the whole, and "= profiles unit sum"
# last.  One python for all the files: it starts slowly on a busy machine.
weights() {
	python3 - "$@" <<'PY'
import json, sys
for path in sys.argv[1:]:
    try:
        d = json.load(open(path))
    except (OSError, ValueError):
        continue
    names = [f["name"] for f in d["shared"]["frames"]]
    self_w, total_w, whole, units = {}, {}, 0, set()
    for p in d["profiles"]:
        units.add(p["unit"])
        for stack, w in zip(p["samples"], p["weights"]):
            whole += w
            if stack:
                leaf = names[stack[-1]]
                self_w[leaf] = self_w.get(leaf, 0) + w
            for n in {names[i] for i in stack}:
                total_w[n] = total_w.get(n, 0) + w
    with open(path[:-len(".json")] + ".w", "w") as out:
        for n in total_w:
            out.write("%s %.2f %.2f\n" % (n.replace(" ", "_"), 100.0 * self_w.get(n, 0) / whole,
                                         100.0 * total_w[n] / whole))
        out.write("= %d %s %d\n" % (len(d["profiles"]), ",".join(sorted(units)), whole))
PY
}
# summary NAME FIELD: field 2 (profiles), 3 (unit) or 4 (sum) of NAME.w's last line.
summary() {
	awk -v f="$2" '$1 == "=" { print $f }' "$TMP/$1.w" 2>/dev/null
}

# The recordings and their exports first, then one pass over the JSON.
if ! "$EMBER" record -q -F 999 -g -o "$TMP/r.data" -- "$WORKLOADS/ratio" 0.5 >/dev/null 2>&1; then
	fail export-speedscope-record "ember record of the ratio workload failed"
	exit 0
fi
if ! "$EMBER" export --format speedscope -i "$TMP/r.data" -o "$TMP/r.json" 2>"$TMP/r.err"; then
	fail export-speedscope "exit $?: $(head -c 300 "$TMP/r.err")"
	exit 0
fi
pass "export-speedscope (a file from ember's recording)"
"$EMBER" export --format speedscope --no-inline -i "$TMP/r.data" -o "$TMP/r-no-inline.json" 2>/dev/null
# Two threads.
threads_ok=false
"$EMBER" record -q -F 499 -g -o "$TMP/t.data" -- "$WORKLOADS/spin" 2 0.3 >/dev/null 2>&1 &&
	"$EMBER" export -f speedscope -i "$TMP/t.data" -o "$TMP/t.json" 2>/dev/null &&
	"$EMBER" export -f speedscope --per-process -i "$TMP/t.data" -o "$TMP/tp.json" 2>/dev/null &&
	threads_ok=true
# perf's stream on standard input.
if have_perf; then
	perf record -q -F 999 -g -o - -- "$WORKLOADS/ratio" 0.3 2>/dev/null |
		"$EMBER" export -f speedscope -i - -o "$TMP/p.json" 2>"$TMP/p.err"
fi
# Off-CPU time.
offcpu_ok=false
"$EMBER" record -q --off-cpu -g -o "$TMP/o.data" -- "$WORKLOADS/offcpu" >/dev/null 2>&1 &&
	"$EMBER" export -f speedscope --off-cpu -i "$TMP/o.data" -o "$TMP/o.json" 2>"$TMP/o.err" &&
	offcpu_ok=true
weights "$TMP"/*.json

# compare NAME [OPTS]: every frame's self and total in NAME.w against
# report's self and children with the same OPTS, in percent (both printed
# to 0.01), for the rows report shows at 0.1% or more whose name is a
# single row there (ld.so and the program both have a _start).  Self is
# compared with --no-inline only: report gives an inline chain's self time
# to the machine frame's function, speedscope (as pprof) to the innermost.
compare() {
	local name=$1 self=0 test=export-speedscope-totals; shift
	[ "$*" = --no-inline ] && self=1 test=export-speedscope-totals-no-inline
	"$EMBER" report -i "$TMP/r.data" "$@" --stdio --children --sort sym -g none 2>/dev/null |
		awk '$1 ~ /%$/ && $2 ~ /%$/ { c = $1; s = $2; sub(/%/, "", c); sub(/%/, "", s)
			name = $4; for (i = 5; i <= NF; i++) name = name "_" $i
			sub(/_\(inlined\)$/, "", name); print name, s, c }' >"$TMP/$name.report"
	local verdict rows bad
	verdict=$(awk -v self=$self 'NR == FNR { if ($1 != "=") { s[$1] = $2; t[$1] = $3 } next }
		{ seen[$1]++; rs[$1] = $2; rt[$1] = $3 }
		END { for (k in seen) { if (seen[k] > 1 || rt[k] < 0.1) continue; n++
			if (!(k in t)) { bad = bad " " k ":missing"; continue }
			d1 = self ? s[k] - rs[k] : 0; d2 = t[k] - rt[k]
			if (d1 < 0) d1 = -d1; if (d2 < 0) d2 = -d2
			if (d1 > 0.011 || d2 > 0.011) bad = bad " " k ":" s[k] "/" t[k] "!=" rs[k] "/" rt[k] }
		print n + 0, bad }' "$TMP/$name.w" "$TMP/$name.report")
	read -r rows bad <<<"$verdict"
	local what="total = report's children"
	[ $self = 1 ] && what="self and total = report's self and children"
	if [ "$rows" -ge 5 ] && [ -z "$bad" ]; then
		pass "$test ($rows frames: $what; leaf_a $(awk '$1 == "leaf_a" { print $2 "%" }' "$TMP/$name.w"))"
	else
		fail "$test" "$rows rows;$bad"
	fi
}
compare r
compare r-no-inline --no-inline
if [ "$(summary r 2)/$(summary r 3)" = 1/nanoseconds ]; then
	pass "export-speedscope-unit (cpu-clock: one thread, nanoseconds)"
else
	fail export-speedscope-unit "$(tail -1 "$TMP/r.w")"
fi

# Two threads: a profile each, or one with --per-process, the same weight.
if $threads_ok; then
	per_thread=$(summary t 2) per_process=$(summary tp 2)
	if [ "${per_thread:-0}" -ge 2 ] && [ "$per_process" = 1 ] &&
	   [ "$(summary t 4)" = "$(summary tp 4)" ]; then
		pass "export-speedscope-threads ($per_thread profiles by thread, 1 by process, the same weight)"
	else
		fail export-speedscope-threads "$per_thread by thread, $per_process by process, sums $(summary t 4)/$(summary tp 4)"
	fi
else
	fail export-speedscope-threads "recording or exporting spin failed"
fi

if ! have_perf; then
	skip export-speedscope-perf-stream "perf (linux-perf) is not installed"
elif grep -q '^leaf_a ' "$TMP/p.w" 2>/dev/null; then
	pass "export-speedscope-perf-stream (perf record -o - | ember export -i -: leaf_a)"
else
	fail export-speedscope-perf-stream "$(head -c 300 "$TMP/p.err")"
fi

# Off-CPU: nanoseconds blocked, as ember offcpu's folded microseconds.
if $offcpu_ok; then
	unit=$(summary o 3) ns=$(summary o 4)
	read -r us stacks < <("$EMBER" offcpu -i "$TMP/o.data" --folded 2>/dev/null |
		awk '{ s += $NF; n++ } END { print s + 0, n + 0 }')
	# offcpu rounds each stack to the microsecond.
	if [ "$unit" = nanoseconds ] && [ "$us" -gt 0 ] && within "$((ns / 1000))" "$us" "$stacks"; then
		pass "export-speedscope-offcpu ($((ns / 1000)) us blocked; offcpu: $us us in $stacks stacks)"
	else
		fail export-speedscope-offcpu "unit $unit, $ns ns; offcpu $us us in $stacks stacks"
	fi
else
	fail export-speedscope-offcpu "recording or exporting the offcpu workload failed: $(head -c 300 "$TMP/o.err" 2>/dev/null)"
fi

# The same off-CPU time as pprof (its test lives here, beside the
# recording): intervals/count and off-cpu/nanoseconds, the same sum.
if ! $offcpu_ok; then
	:
elif ! command -v go >/dev/null 2>&1; then
	skip export-pprof-offcpu "go tool pprof is not here (Debian's golang-go; make deps)"
elif "$EMBER" export -f pprof --off-cpu -i "$TMP/o.data" -o "$TMP/o.pb.gz" 2>/dev/null &&
     go tool pprof -raw "$TMP/o.pb.gz" >"$TMP/o.raw" 2>/dev/null; then
	pns=$(awk '/^Samples:/ { s = 1; getline; next } /^Locations/ { s = 0 }
		s && $1 ~ /^[0-9]+$/ { p += $2 } END { printf "%d\n", p }' "$TMP/o.raw")
	if grep -q '^intervals/count off-cpu/nanoseconds\[dflt\]' "$TMP/o.raw" && [ "$pns" = "$(summary o 4)" ]; then
		pass "export-pprof-offcpu (off-cpu/nanoseconds: $pns ns, speedscope's sum)"
	else
		fail export-pprof-offcpu "$pns ns against speedscope's $(summary o 4); $(grep -A1 '^Samples' "$TMP/o.raw" | tail -1)"
	fi
else
	fail export-pprof-offcpu "ember export or go tool pprof failed on the off-CPU recording"
fi

# Every file written above against speedscope's schema, in one run of ajv.
if ! have_schema; then
	skip export-speedscope-schema "$no_schema_reason"
else
	files=()
	for f in "$TMP"/*.json; do files+=(-d "$f"); done
	"$AJV" validate -s "$SCHEMA" "${files[@]}" >"$TMP/ajv.out" 2>&1
	valid=$(grep -c ' valid$' "$TMP/ajv.out")
	nfiles=$(( ${#files[@]} / 2 ))
	if [ "$valid" -ge 5 ] && [ "$valid" -eq "$nfiles" ] && ! grep -q invalid "$TMP/ajv.out"; then
		pass "export-speedscope-schema ($valid files valid against speedscope's file-format-schema.json)"
	else
		fail export-speedscope-schema "$valid of $nfiles valid: $(grep -v ' valid$' "$TMP/ajv.out" | head -c 300)"
	fi
fi
