#!/usr/bin/env bash
# bio-split.sh - split bios keep their size and pattern: `dd bs=4M
# count=6 oflag=direct` onto a loop device queues 24 MiB in bios of about
# 1024 KiB (a direct bio holds 256 pages, more with large folios) back to
# back, and with the device's max_sectors_kb at 256 the block layer
# splits each into requests of 256 KiB at most.  The recording's own
# block_bio_queue and block_split records say which sizes and how many
# (ember script).  --size counts each bio as queued (in the buckets of
# its queued size, not of its first part), --seek and btt's pattern line
# call them all sequential, and btt, --top, --stacks and --folded count
# one I/O per bio, 24 MiB in all.
. "$(dirname "$0")/../e2e-lib.sh"
. "$(dirname "$0")/../e2e-bio-lib.sh"
bio_setup bio-split

q=/sys/block/${LOOP#/dev/}/queue/max_sectors_kb
echo 256 >"$q" 2>/dev/null && [ "$(cat "$q")" = 256 ] ||
	{ skip bio-split "cannot set $q to 256"; exit 0; }

F=$TMP/split.data
WL="dd if=/dev/zero of=$LOOP bs=4M count=6 oflag=direct 2>/dev/null"
ok=
for try in 1 2 3; do
	"$EMBER" record --block -g -d "$LOOP" -m 4096 -o "$F" -- sh -c "$WL" \
		>/dev/null 2>"$TMP/rec.err" || continue
	"$EMBER" bio -i "$F" --comm dd >"$TMP/btt" 2>&1 || continue
	grep -q '^left out: 0 issued but never seen completing, 0 queued but never issued, 0 superseded' \
		"$TMP/btt" && grep -q ' 0 lost' "$TMP/rec.err" && { ok=1; break; }
done
[ -n "$ok" ] || { fail record "no complete recording in 3 tries: $(grep '^left out' "$TMP/btt") $(tail -1 "$TMP/rec.err")"; exit 0; }

# What dd queued, from the records ("7,0 WS 2048 + 2048 [dd]"): bios of
# 1024 KiB or so (more where the buffer's pages are large folios), back
# to back, 24 MiB in all, those of more than 256 KiB split; and how many
# of them fall in each log2 KiB bucket (the buckets of --size).
"$EMBER" script -i "$F" >"$TMP/script" 2>&1
awk '$1 == "dd" && /block:block_bio_queue:/ {
		for (i = 1; i < NF; i++) if ($i == "+") { s = $(i - 1); n = $(i + 1) }
		q++; sum += n; big += n > 512; if (q > 1 && s != end) gaps++; end = s + n
		k = n / 2; b = 0; while (k > 1) { k = int(k / 2); b++ }; lo[2 ^ b]++ }
	END { print q + 0, sum + 0, big + 0, gaps + 0 >"/dev/stderr"
		for (b in lo) print b, lo[b] }' "$TMP/script" 2>"$TMP/queued" | sort -n >"$TMP/buckets"
read -r nq sum big gaps <"$TMP/queued"
splits=$(grep -c 'block:block_split:' "$TMP/script")
check "script: dd queued $nq bios of 24 MiB ($sum sectors), back to back ($gaps gaps)" \
	test "$nq" -gt 0 -a "$sum" = 49152 -a "$gaps" = 0
check "script: $big bios of more than 256 KiB, each split ($splits splits)" \
	test "$big" -gt 0 -a "$splits" -ge "$big"

B="$EMBER bio -i $F --comm dd"
m=$((nq - 1))
$B --size >"$TMP/c" 2>&1
awk '$2 == "->" && $5 > 0 { print $1, $5 }' "$TMP/c" >"$TMP/sized"
check "--size: $nq I/Os in the buckets of the queued sizes ($(tr '\n' ' ' <"$TMP/buckets")): $(tr '\n' ' ' <"$TMP/sized")" \
	eval 'grep -q "^Process name = dd: $nq I/Os" "$TMP/c" && cmp -s "$TMP/sized" "$TMP/buckets"'
$B --seek >"$TMP/c" 2>&1
check "--seek: $m after the first, $m sequential: $(head -1 "$TMP/c")" \
	grep -q ": $m I/Os after the first, $m sequential (100.0%)" "$TMP/c"
check "btt: pattern $m sequential (100.0%): $(grep '^pattern' "$TMP/btt")" \
	grep -q "^pattern: $m sequential (100.0%), 0 random" "$TMP/btt"
check "btt: $nq writes of 25165824 bytes" \
	grep -q "^I/Os: $nq completed, 25165824 bytes: reads 0 (0 bytes), writes $nq " "$TMP/btt"
$B --top >"$TMP/c" 2>&1
check "--top: dd $nq I/Os, 24576 Kbytes" \
	eval "test \"\$(awk 'NR > 1 { print \$2, \$7, \$8 }' '$TMP/c')\" = 'dd $nq 24576'"
$B --stacks >"$TMP/c" 2>&1
check "--stacks: $nq I/Os, 25165824 bytes: $(grep '^Who' "$TMP/c")" \
	grep -q "^Who queued the I/O: $nq I/Os, 25165824 bytes" "$TMP/c"
$B --folded >"$TMP/c" 2>&1
check "--folded: weights add up to $nq I/Os" \
	eval "test \"\$(awk '{ n += \$NF } END { print n }' '$TMP/c')\" = $nq"
