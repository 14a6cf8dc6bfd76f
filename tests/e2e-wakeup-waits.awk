# tests/e2e-wakeup-waits.awk -v w=TID: from ember script -F time,event,trace
# lines, thread w's waits from a wakeup to its next switch-in (a wakeup
# while it is off-CPU, or before it was seen running: it slept since
# before the recording; one it gets while running is no wait), each as
# "LOW HIGH": the lowest and highest of sched lat's log2 buckets of
# microseconds it may fall in, since script's times are rounded to the
# microsecond (a wait of 15.6 us reads 15 or 16).
function bucket(us,   lo) { lo = 1; if (us < 2) return 0; while (lo * 2 <= us) lo *= 2; return lo }
BEGIN { out = 1 }
{
	t = $1 + 0
	if ($2 == "sched:sched_wakeup:" && $0 ~ ("pid=" w " ")) {
		if (out && !pending) pending = t
	} else if ($2 == "sched:sched_switch:") {
		if ($0 ~ ("next_pid=" w " ")) {
			if (pending) {
				us = (t - pending) * 1e6
				print bucket(int(us - 1 > 0 ? us - 1 : 0)), bucket(int(us + 1))
				pending = 0
			}
			out = 0
		} else if ($0 ~ ("prev_pid=" w " ")) { out = 1; pending = 0 }
	}
}
