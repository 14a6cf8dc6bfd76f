# symbols-buildid.sh - frames are named from the files the recording saw,
# never from others: a kernel of another build-id stays unnamed (with a
# warning) unless the build-id cache holds its kallsyms; another boot's
# kernel (KASLR) is relocated by the recorded _text; ember archive carries a
# recording's files to a machine that lacks them; a container's binary
# is named after its process has gone.
# parallel-safe: records only its own processes and checks nothing that load changes (tests/run.sh)
source "$TOP/tests/e2e-lib.sh"
PY="python3 $TOP/tests/e2e-buildid.py"

if ! need_root || ! [ -r /sys/kernel/notes ] || ! command -v python3 >/dev/null; then
	skip symbols-buildid "needs root, /sys/kernel/notes and python3"
	exit 0
fi
if ! grep -q '^ffff[0-9a-f]* [Tt] _text$' /proc/kallsyms; then
	skip symbols-buildid "kallsyms hides its addresses (kptr_restrict)"
	exit 0
fi
fresh_home() { rm -rf "$1"; mkdir -p "$1"; echo "$1"; }
# Kernel frames of a script listing, "ADDR NAME" (NAME [unknown] or a symbol).
kframes() { grep '(\[kernel.kallsyms\])' | awk '{ print $1, $2 }'; }

# ---- a kernel of another build -----------------------------------------
# dd spends its time in the kernel (read of /dev/zero, write to /dev/null).
HOME=$(fresh_home "$TMP/h-rec") "$EMBER" record -q -N -g -o "$TMP/k.data" -- \
	dd if=/dev/zero of=/dev/null bs=64k count=20000 2>/dev/null
HOME=$(fresh_home "$TMP/h0") "$EMBER" script -i "$TMP/k.data" 2>/dev/null | kframes >"$TMP/truth"
named=$(grep -vc '\[unknown\]' "$TMP/truth")
if [ "$named" -lt 100 ]; then    # every check below compares with these
	fail kernel-frames "only $named kernel frames named in a recording of dd"
	exit 0
fi
other=$($PY kernel-id "$TMP/k.data" "$TMP/other.data")
HOME=$(fresh_home "$TMP/h1") "$EMBER" script -i "$TMP/other.data" 2>"$TMP/other.err" |
	kframes >"$TMP/other"
wrong=$(grep -vc '\[unknown\]' "$TMP/other")
if [ "$wrong" -eq 0 ] &&
   [ "$(cut -d' ' -f1 "$TMP/truth")" = "$(cut -d' ' -f1 "$TMP/other")" ]; then
	pass "kernel-other-build: $named kernel frames named here, none of them with another build-id"
else
	fail kernel-other-build "$named named in the recording, $wrong named with another build-id"
fi
if [ "$(grep -c "kernel (build-id $other) is not this one" "$TMP/other.err")" = 1 ] &&
   grep -q "\[kernel.kallsyms\]/$other/kallsyms" "$TMP/other.err"; then
	pass "kernel-other-build-warning: one line with both build-ids and the fix"
else
	fail kernel-other-build-warning "$(head -c 400 "$TMP/other.err")"
fi
if have_perf; then
	p=$(HOME=$TMP/h1 perf script -i "$TMP/other.data" 2>/dev/null | kframes | grep -c '\[unknown\]')
	e=$(grep -c '\[unknown\]' "$TMP/other")
	check "kernel-other-build-perf: perf leaves the same $p frames unknown" [ "$p" = "$e" ]
fi
# The cache holds that build's kallsyms: the right names.
mkdir -p "$TMP/h1/.debug/[kernel.kallsyms]/$other"
cat /proc/kallsyms >"$TMP/h1/.debug/[kernel.kallsyms]/$other/kallsyms"
HOME=$TMP/h1 "$EMBER" script -i "$TMP/other.data" 2>"$TMP/cached.err" | kframes >"$TMP/cached"
if cmp -s "$TMP/truth" "$TMP/cached" && ! grep -q 'is not this one' "$TMP/cached.err"; then
	pass "kernel-build-id-cache: names from ~/.debug/[kernel.kallsyms]/ID/kallsyms"
else
	fail kernel-build-id-cache "$(diff "$TMP/truth" "$TMP/cached" | head -3) $(head -c 300 "$TMP/cached.err")"
fi

# ---- another boot: KASLR -------------------------------------------------
# The recording another boot of this build would have made, its kernel
# 30 MiB higher (every kernel address of the samples and the kernel map
# moved): named as the original, relocated by the map's _text, as perf
# names it; the same samples with the map left where it was name others.
names() { cut -d' ' -f2 "$1"; }
$PY kaslr "$TMP/k.data" "$TMP/kaslr.data" 1e00000 >/dev/null
HOME=$TMP/h0 "$EMBER" script -i "$TMP/kaslr.data" 2>/dev/null | kframes >"$TMP/kaslr"
text=$(awk '$3 == "_text" { print $1; exit }' /proc/kallsyms)
$PY text "$TMP/kaslr.data" "$TMP/unmoved.data" "$text"
HOME=$TMP/h0 "$EMBER" script -i "$TMP/unmoved.data" 2>/dev/null | kframes >"$TMP/unmoved"
if [ "$(names "$TMP/truth")" = "$(names "$TMP/kaslr")" ] &&
   [ "$(names "$TMP/truth")" != "$(names "$TMP/unmoved")" ]; then
	pass "kernel-kaslr: a kernel 30 MiB higher named by the recorded _text"
else
	fail kernel-kaslr "$(diff <(names "$TMP/truth") <(names "$TMP/kaslr") | head -3)"
fi
if have_perf; then
	HOME=$TMP/h0 perf script -i "$TMP/kaslr.data" 2>/dev/null | kframes >"$TMP/kaslr.perf"
	check "kernel-kaslr-perf: perf names the moved frames alike" \
		[ "$(names "$TMP/kaslr")" = "$(names "$TMP/kaslr.perf")" ]
fi
# The same the other way round: another boot's kallsyms (--kallsyms).
$PY shift-kallsyms "$TMP/moved.kallsyms" 1e00000
HOME=$TMP/h0 "$EMBER" script -i "$TMP/k.data" --kallsyms "$TMP/moved.kallsyms" 2>/dev/null |
	kframes >"$TMP/moved"
check "kernel-kallsyms-relocated: another boot's kallsyms names the frames alike" \
	cmp -s "$TMP/truth" "$TMP/moved"

# ---- ember archive -------------------------------------------------------
top3() { "$EMBER" report -i "$1" --stdio --no-children -g none --sort dso,sym 2>/dev/null |
	grep '%' | head -3 | awk '{ print $2, $4 }'; }
mkdir -p "$TMP/wl"
cp "$WORKLOADS/ratio" "$TMP/wl/ratio-copy"
export HOME=$(fresh_home "$TMP/h-rec")
# --call-graph dwarf: the report unwinds from the file's own bytes, too.
"$EMBER" record -q --call-graph dwarf -o "$TMP/a.data" -- "$TMP/wl/ratio-copy" 0.5 >/dev/null
before=$(top3 "$TMP/a.data")
[ -n "$before" ] || fail archive "no report of the recording to compare with"
"$EMBER" archive -i "$TMP/a.data" -o "$TMP/a.tar" >"$TMP/archive.out" 2>&1
rm "$TMP/wl/ratio-copy"
export HOME=$(fresh_home "$TMP/h-away")
"$EMBER" report -i "$TMP/a.data" --stdio >/dev/null 2>"$TMP/away.err"
if grep -q "missing here: $TMP/wl/ratio-copy.*ember archive" "$TMP/away.err"; then
	pass "archive-missing: report names the missing file and suggests ember archive"
else
	fail archive-missing "$(head -c 300 "$TMP/away.err")"
fi
mkdir -p "$HOME/.debug" && tar xf "$TMP/a.tar" -C "$HOME/.debug"
after=$(top3 "$TMP/a.data")
main=$("$EMBER" report -i "$TMP/a.data" --stdio --children -g none --sort sym 2>/dev/null |
	awk '$NF == "main" { sub(/%/, "", $1); print int($1) }')
if [ "$(echo $before)" = "ratio-copy leaf_a ratio-copy leaf_b ratio-copy leaf_c" ] &&
   [ "$before" = "$after" ] && [ "${main:-0}" -ge 95 ]; then
	pass "archive-round-trip: the binary deleted, the archive names its functions and unwinds ${main}% to main"
else
	fail archive-round-trip "before [$before] after [$after], main ${main:-0}% $(cat "$TMP/archive.out")"
fi

# ---- a container's binary --------------------------------------------------
# A private mount namespace with a tmpfs over a folder: the binary's path
# exists only in there, and its process is gone when the report runs.
mkdir -p "$TMP/ns"
export HOME=$(fresh_home "$TMP/h-ns")
unshare -m sh -c "mount -t tmpfs none '$TMP/ns' && cp '$WORKLOADS/ratio' '$TMP/ns/inside' &&
	exec '$TMP/ns/inside' 1.5" >/dev/null 2>&1 &
for _ in $(seq 50); do
	pid=$(pgrep -f "^$TMP/ns/inside" | head -1)
	[ -n "$pid" ] && break
	sleep 0.05
done
if [ -z "$pid" ] || [ -e "$TMP/ns/inside" ]; then
	skip container "the workload did not start in its own mount namespace"
else
	"$EMBER" record -q -g -p "$pid" --duration 0.5 -o "$TMP/ns.data" 2>/dev/null
	wait
	got=$(top3 "$TMP/ns.data")
	if [ "$(echo $got)" = "inside leaf_a inside leaf_b inside leaf_c" ]; then
		pass "container: a binary only its mount namespace had, named after it exited"
	else
		fail container "top entries [$got]"
	fi
fi
