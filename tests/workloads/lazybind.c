/* lazybind.c - a hot loop through the PLT: under LD_BIND_NOT=1 the
 * dynamic linker resolves every call anew (its lazy-binding trampoline
 * _dl_runtime_resolve, then _dl_fixup), so samples land in ld.so's
 * trampoline, whose CFA is defined by %rbx: a DWARF unwinder must carry
 * that register through _dl_fixup's frame to get back to the caller.
 *
 *   main -> call_loop -> [PLT] -> _dl_runtime_resolve -> _dl_fixup -> ...
 *
 * usage: LD_BIND_NOT=1 lazybind [CPU-SECONDS]   (default 1)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* atoi through the PLT, the result used so the call stays. */
__attribute__((noinline)) long call_loop(const char *text, long n)
{
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += atoi(text);
	return sum;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	volatile char text[] = "12";
	long sum = 0, calls = 0;
	double end = cpu_seconds() + seconds;
	while (cpu_seconds() < end) {
		sum += call_loop((const char *)text, 1000);
		calls += 1000;
	}
	printf("lazybind: %ld calls, sum %ld\n", calls, sum);
	return 0;
}
