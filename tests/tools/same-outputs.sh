#!/usr/bin/env bash
# same-outputs.sh - a developer tool (not part of make check): runs every
# view of two ember binaries over one set of recordings and says which
# outputs (stdout, stderr, exit status) differ, for changes that must not
# change what users see.
#
#   tests/tools/same-outputs.sh OLD NEW [DIR]
#
# DIR (default /tmp/ember-same) keeps the recordings between runs: they
# are made once, by OLD, and reused while they are there (rm -rf DIR for
# new ones).  Needs root for tracepoints and the loop device; a recording
# that cannot be made here is left out with a note.  Exit 0 when all are
# identical, 1 when some differ, 2 on bad usage.
set -u
if [ $# -lt 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
	echo "usage: $0 OLD-EMBER NEW-EMBER [DIR]" >&2
	exit 2
fi
OLD=$(realpath "$1") NEW=$(realpath "$2")
DIR=${3:-/tmp/ember-same}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
W=$TOP/build/workloads
[ -x "$W/ratio" ] || { echo "same-outputs: build the workloads first (make workloads)" >&2; exit 2; }
mkdir -p "$DIR/rec" "$DIR/out"
R=$DIR/rec

note() { echo "same-outputs: $*" >&2; }

# rec NAME ARGS...: $R/NAME.data recorded by OLD, unless already there.
rec() {
	local name=$1; shift
	[ -s "$R/$name.data" ] && return 0
	if ! "$OLD" record -q -o "$R/$name.data" "$@" >/dev/null 2>"$R/$name.err"; then
		note "no $name recording: $(head -c 200 "$R/$name.err")"
		rm -f "$R/$name.data"
	fi
}

make_recordings() {
	rec ratio-g -F 999 -g -- "$W/ratio" 1
	rec ratio-fp -F 999 --call-graph fp -- "$W/ratio" 1
	rec ratio-dwarf -F 499 --call-graph dwarf -- "$W/ratio" 1
	if [ ! -x "$R/inlined" ]; then
		cc -O2 -g -fomit-frame-pointer -o "$R/inlined" "$TOP/tests/workloads/inlined.c"
	fi
	rec inlined-dwarf -F 499 --call-graph dwarf -- "$R/inlined" 0.5
	command -v python3 >/dev/null &&
		rec python-g -F 999 -g -- python3 "$TOP/tests/workloads/pyloop.py" 1
	rec offcpu-wakers -F 999 --off-cpu=wakers -- "$W/offcpu"
	rec offcpu-dwarf --off-cpu --call-graph dwarf -- "$W/sleeper" 2 1
	rec sched-a -a --off-cpu=wakeups -- sleep 0.5
	if [ ! -s "$R/bio.data" ] && command -v losetup >/dev/null; then
		truncate -s 32M "$R/disk.img"
		local loop
		if loop=$(losetup -f --show "$R/disk.img"); then
			rec bio -g --block -d "$loop" -m 4096 -- sh -c \
				"dd if=/dev/zero of=$loop bs=64k count=100 oflag=direct 2>/dev/null &&
				 dd if=$loop of=/dev/null bs=64k count=100 iflag=direct 2>/dev/null"
			losetup -d "$loop"
		fi
		rm -f "$R/disk.img"
	fi
	rec tool-syscount --tool syscount -- "$W/toolwork" getppid 20000
	rec tool-execsnoop --tool execsnoop -- sh -c 'for i in 1 2 3; do /bin/true; done'
	rec tool-cpudist --tool cpudist -- "$W/toolwork" runsleep 20 5
	if command -v perf >/dev/null; then
		[ -s "$R/perf-g.data" ] ||
			perf record -q -o "$R/perf-g.data" -F 999 -g -- "$W/ratio" 1 >/dev/null 2>&1
		[ -s "$R/perf-dwarf.data" ] ||
			perf record -q -o "$R/perf-dwarf.data" -F 499 --call-graph dwarf -- \
				"$W/ratio" 0.5 >/dev/null 2>&1
		[ -s "$R/perf-sched.data" ] ||
			perf record -q -o "$R/perf-sched.data" -e sched:sched_switch -a -g -- \
				sleep 0.3 >/dev/null 2>&1
	fi
}

total=0 same=0
DIFFERS=()
# run FILE-OR-- TAG ARGS...: the view ARGS of both binaries; the data file
# goes in with -i (none for --), an -o - SVG comes on stdout.
run() {
	local data=$1 tag=$2; shift 2
	local in=()
	if [ "$data" != - ]; then
		[ -s "$R/$data.data" ] || return 0
		in=(-i "$R/$data.data")
	fi
	local id
	id=$(printf '%s' "$data $tag $*" | tr -c 'A-Za-z0-9_.=-' '_' | cut -c1-150)
	local o=$DIR/out/$id
	(cd "$DIR" && "$OLD" "$@" "${in[@]}" >"$o.old.out" 2>"$o.old.err"; echo $? >"$o.old.rc")
	(cd "$DIR" && "$NEW" "$@" "${in[@]}" >"$o.new.out" 2>"$o.new.err"; echo $? >"$o.new.rc")
	# The binaries' own paths and names differ in nothing they print but
	# their name in error lines: none of them prints its path.
	total=$((total + 1))
	if cmp -s "$o.old.out" "$o.new.out" && cmp -s "$o.old.err" "$o.new.err" &&
	   cmp -s "$o.old.rc" "$o.new.rc"; then
		same=$((same + 1))
		rm -f "$o".*
	else
		DIFFERS+=("$data: ember $* (see $o.{old,new}.{out,err,rc})")
	fi
}

# The views of a recording with samples and call chains.
sample_views() {
	local d=$1
	run "$d" report report
	run "$d" report-children report --children
	run "$d" report-nochildren report --no-children
	run "$d" report-sort report --sort dso,sym
	run "$d" report-sort2 report --sort comm,pid,tid,sym
	run "$d" report-srcline report --sort sym,srcline
	run "$d" report-gcaller report -g caller
	run "$d" report-gnone report -g none
	run "$d" report-G report -G --no-children --percent-limit 5
	run "$d" report-noinline report --no-inline --no-leaf-fix
	run "$d" script script
	run "$d" script-F script -F comm,tid,ip,sym
	run "$d" script-Fsymoff script -F -symoff,-dso
	run "$d" script-srcline script -F +srcline
	run "$d" script-leaf script --leaf-fix
	run "$d" collapse collapse
	run "$d" collapse-ann collapse --annotate --pid
	run "$d" collapse-tid collapse --tid --weight period
	run "$d" collapse-src collapse --srcline
	run "$d" collapse-noinline collapse --no-inline
	run "$d" flame flame -o - --title t
	run "$d" flame-rev flame -o - --reverse --annotate --hash
}

main() {
	make_recordings
	for c in report script collapse flame offcpu sched bio verify archive; do
		run - help-$c "$c" --help
	done
	for d in ratio-g ratio-fp ratio-dwarf inlined-dwarf python-g perf-g perf-dwarf; do
		sample_views "$d"
	done
	run perf-sched script script
	run perf-sched collapse collapse --annotate
	run perf-sched report report --sort comm,sym
	for d in offcpu-wakers offcpu-dwarf sched-a; do
		run "$d" offcpu offcpu
		run "$d" offcpu-wakers offcpu --wakers
		run "$d" offcpu-folded offcpu --folded
		run "$d" offcpu-folded-w offcpu --folded --wakers
		run "$d" offcpu-user offcpu --user-stacks-only --folded
		run "$d" offcpu-kernel offcpu --kernel-stacks-only
		run "$d" offcpu-threads offcpu --threads
		run "$d" offcpu-svg offcpu --flame /dev/stdout
		run "$d" sched sched
		run "$d" sched-comm sched --per-comm
		run "$d" script script
	done
	run offcpu-wakers flame-wall flame --wall -o -
	run offcpu-wakers collapse collapse
	run offcpu-wakers report report
	for v in "" --hist "--hist -Q -D -F -m" --snoop --csv --blkparse --size --seek --errors \
		--stacks --folded "--folded --bytes" "--heatmap /dev/stdout"; do
		# shellcheck disable=SC2086
		run bio "bio$v" bio $v
	done
	for v in --btt --top "--top --interval 0.2" "--btt --interval 0.2" "--hist --pid 1-99999"; do
		# shellcheck disable=SC2086
		run bio "bio$v" bio $v
	done
	run bio script script
	run bio script-blk script --blkparse
	run bio verify verify
	run bio collapse collapse --annotate
	run bio report report
	run ratio-g verify verify
	for d in ratio-g perf-g offcpu-wakers; do
		run "$d" sched-lat sched lat
		run "$d" export-speedscope export --format speedscope
		run "$d" export-speedscope-pp export --format speedscope --per-process
		run "$d" export-pprof export --format pprof
		run "$d" export-pprof-labels export --format pprof --labels
	done
	run offcpu-wakers export-offcpu export --format pprof --off-cpu
	run sched-a sched-lat sched lat
	run sched-a sched-lat-comm sched lat --per-comm
	run ratio-g report-children-caller report --children -g caller
	run ratio-g report-interval report --interval 0.2
	run tool-syscount syscount syscount
	run tool-syscount syscount-L syscount -L
	run tool-syscount syscount-P syscount -P
	run tool-execsnoop execsnoop execsnoop
	run tool-execsnoop execsnoop-t execsnoop -t
	run tool-cpudist cpudist cpudist
	run tool-cpudist cpudist-P cpudist -P
	for c in execsnoop syscount cpudist export top push btrace serve stat list; do
		run - help-$c "$c" --help
	done

	echo "$same of $total outputs identical"
	for d in "${DIFFERS[@]}"; do
		echo "differs: $d"
	done
	[ "$same" = "$total" ]
}
main
