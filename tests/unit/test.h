/* test.h - a tiny unit-test harness speaking tests/run.sh's protocol:
 * each CHECK prints nothing when it holds; each TEST prints one PASS/FAIL.
 *
 *   static void test_parse(void) { CHECK(x == 1, "x is %d", x); }
 *   int main(void) { RUN(test_parse); return test_summary(); }
 */
#ifndef EMBER_TEST_H
#define EMBER_TEST_H

#include <stdio.h>
#include <string.h>

static int test_failed_now;  /* failures inside the running TEST */
static int test_failures;    /* failed TESTs */

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			printf("FAIL: %s: %s:%d: %s: ", test_current, __FILE__, \
			       __LINE__, #cond);                             \
			printf(__VA_ARGS__);                                 \
			printf("\n");                                        \
			test_failed_now++;                                   \
		}                                                            \
	} while (0)

static const char *test_current = "";

#define RUN(fn)                                                              \
	do {                                                                 \
		test_current = #fn;                                          \
		test_failed_now = 0;                                         \
		fn();                                                        \
		if (test_failed_now)                                         \
			test_failures++;                                     \
		else                                                         \
			printf("PASS: %s\n", #fn);                           \
		fflush(stdout);                                              \
	} while (0)

#define SKIP(fn, reason) printf("SKIP: %s: %s\n", #fn, reason)

static inline int test_summary(void)
{
	return test_failures ? 1 : 0;
}

#endif
