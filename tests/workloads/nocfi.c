/* nocfi.c - a workload whose hot function has no CFI: asm_hot is written
 * as top-level asm with a standard frame (push %rbp; mov %rsp,%rbp) and
 * no .cfi directives, so no FDE covers it and a DWARF unwinder cannot
 * step out of it; only its frame pointer leads to the caller.  The
 * frame-pointer fallback of --call-graph dwarf's fast path is tested on it.
 *
 *   main -> mid -> asm_hot     nearly all of the time (self)
 *
 * mid checks the CPU clock once per round of asm_hot calls, so only a
 * sliver of the samples falls outside asm_hot.  A sample in asm_hot's
 * first instruction or after its pop (rbp still the caller's) unwinds by
 * frame pointer to main without mid, as a -g walk would: a few in a
 * thousand.
 *
 * usage: nocfi [CPU-SECONDS]   run for about that much CPU time (default 2)
 *        nocfi --design        print the design percentages and exit
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ITERS_PER_CALL 100000
#define CALLS_PER_CLOCK_CHECK 64

volatile uint64_t sink;   /* keeps the work observable */

/* uint64_t asm_hot(uint64_t x, long n): n steps of a linear congruential
 * generator.  No .cfi_startproc, so the assembler writes no FDE for it
 * (tests/e2e/unwind-nocfi.sh checks with readelf); the frame is the one
 * gcc makes with -fno-omit-frame-pointer, so rbp chains to mid. */
uint64_t asm_hot(uint64_t x, long n);
__asm__(".pushsection .text\n"
	".globl asm_hot\n"
	".type asm_hot, @function\n"
	".p2align 6\n"
	"asm_hot:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	mov %rdi, %rax\n"
	"	test %rsi, %rsi\n"
	"	jle 2f\n"
	"	movabs $6364136223846793005, %rdx\n"
	"	movabs $1442695040888963407, %rcx\n"
	"1:	imul %rdx, %rax\n"
	"	add %rcx, %rax\n"
	"	dec %rsi\n"
	"	jnz 1b\n"
	"2:	pop %rbp\n"
	"	ret\n"
	".size asm_hot, . - asm_hot\n"
	".popsection\n");

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Calls asm_hot until `seconds` of CPU time are spent; returns the calls.
 * The work after each call keeps it from being a tail call (mid must be
 * on the stack under asm_hot). */
__attribute__((noinline)) long mid(double seconds)
{
	uint64_t x = 1;
	long calls = 0;
	double end = cpu_seconds() + seconds;
	do {
		for (int i = 0; i < CALLS_PER_CLOCK_CHECK; i++, calls++)
			x = asm_hot(x, ITERS_PER_CALL) ^ (uint64_t)i;
	} while (cpu_seconds() < end);
	sink = x;
	return calls;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--design")) {
		printf("self asm_hot 100\n");
		printf("children mid 100\n");
		printf("children main 100\n");
		return 0;
	}
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	if (seconds <= 0) {
		fprintf(stderr, "usage: nocfi [CPU-SECONDS] | nocfi --design\n");
		return 2;
	}
	long calls = mid(seconds);
	printf("nocfi: %ld calls, %.2f s CPU\n", calls, cpu_seconds());
	return 0;
}
