# tests/e2e-serve-lib.sh - helpers for tests/e2e/serve-*.sh (sourced after
# e2e-lib.sh and e2e-record-lib.sh): an ember serve on 127.0.0.1 at a port
# the kernel picks, and what its clients said.
set -u

# start_server TAG ARGS... : ember serve --listen 127.0.0.1:0 ARGS in the
# background (log in $TMP/TAG.log) under timeout(1); sets SRV_PID (the
# timeout), SRV_EMBER (ember itself) and PORT once it listens.
start_server() {
	local tag=$1 i; shift
	PORT=
	timeout -k 5 60 "$EMBER" serve --listen 127.0.0.1:0 "$@" 2>"$TMP/$tag.log" </dev/null &
	SRV_PID=$!
	for i in $(seq 100); do
		PORT=$(sed -n 's/^ember serve: listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$TMP/$tag.log")
		if [ -n "$PORT" ]; then
			SRV_EMBER=$(pgrep -P "$SRV_PID")
			return 0
		fi
		sleep 0.05
	done
	return 1
}

# stored_name ERRFILE : the file name the server gave the client's recording.
stored_name() {
	sed -n 's/^ember record: .* written to tcp:.*, stored as \(.*\)$/\1/p' "$1" | tail -1
}

# samples_agree FILE N : ember and perf both read FILE and count N samples
# (N empty: any number, as long as both agree and it is not 0).  Prints why not.
samples_agree() {
	local f=$1 n=$2 e p
	e=$("$EMBER" script -i "$f" 2>"$TMP/es.err" | wc -l)
	p=$(perf_stat "$f" SAMPLE)
	if [ "$e" -eq 0 ] || [ "$e" != "$p" ] || { [ -n "$n" ] && [ "$e" != "$n" ]; }; then
		echo "ember script ${e} lines, perf ${p:-no} samples, the client ${n:-?}: $(head -c 200 "$TMP/es.err")"
		return 1
	fi
}
