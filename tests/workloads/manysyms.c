/* manysyms.c - a program with 4096 functions in its symbol table, for the
 * memory tests of long live sessions: each copy of it (a hard link under
 * another path is another file to a profiler) that gets sampled makes the
 * profiler load a symbol table of that size.  Spins through its functions
 * for SECONDS (default 0.05), then exits.
 *
 * usage: manysyms [SECONDS] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef unsigned long (*step_fn)(unsigned long);

#define F1(n) __attribute__((noinline)) unsigned long f##n(unsigned long x) \
	{ return x * 2654435761UL + n; }
#define F4(n) F1(n##0) F1(n##1) F1(n##2) F1(n##3)
#define F16(n) F4(n##0) F4(n##1) F4(n##2) F4(n##3)
#define F64(n) F16(n##0) F16(n##1) F16(n##2) F16(n##3)
#define F256(n) F64(n##0) F64(n##1) F64(n##2) F64(n##3)
#define F1024(n) F256(n##0) F256(n##1) F256(n##2) F256(n##3)
F1024(1) F1024(2) F1024(3) F1024(4)

#define P1(n) f##n,
#define P4(n) P1(n##0) P1(n##1) P1(n##2) P1(n##3)
#define P16(n) P4(n##0) P4(n##1) P4(n##2) P4(n##3)
#define P64(n) P16(n##0) P16(n##1) P16(n##2) P16(n##3)
#define P256(n) P64(n##0) P64(n##1) P64(n##2) P64(n##3)
#define P1024(n) P256(n##0) P256(n##1) P256(n##2) P256(n##3)
static const step_fn steps[] = { P1024(1) P1024(2) P1024(3) P1024(4) };

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 0.05);
	unsigned long x = 1;
	while (now() < end)
		for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
			x = steps[i](x);
	return x == 42 ? 1 : 0;   /* x used: the calls stay */
}
