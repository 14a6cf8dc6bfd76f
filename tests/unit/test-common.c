/* test-common.c - unit tests of common/: parsing, hash map, buffers, the
 * held child's command lookup, stop requests and the exit status. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/child.h"
#include "common/common.h"
#include "tests/unit/test.h"

static void test_cpu_list(void)
{
	int *cpus = NULL, n = 0;
	CHECK(parse_cpu_list("3,0-1,1", 8, &cpus, &n) == 0, "%s", err_msg());
	CHECK(n == 3 && cpus[0] == 0 && cpus[1] == 1 && cpus[2] == 3, "n=%d", n);
	free(cpus);
	CHECK(parse_cpu_list("0-", 8, &cpus, &n) < 0, "accepted '0-'");
	CHECK(strstr(err_msg(), "malformed CPU list '0-'"), "%s", err_msg());
	CHECK(parse_cpu_list("9", 8, &cpus, &n) < 0, "accepted a missing CPU");
	CHECK(strstr(err_msg(), "CPU 9"), "%s", err_msg());
	CHECK(parse_cpu_list("3-1", 8, &cpus, &n) < 0, "accepted a reversed range");
	CHECK(parse_cpu_list("", 8, &cpus, &n) < 0, "accepted empty");
}

static void test_pid_list(void)
{
	pid_t *p = NULL;
	int n = 0;
	CHECK(parse_pid_list("12,345", &p, &n) == 0 && n == 2 && p[1] == 345, "n=%d", n);
	free(p);
	CHECK(parse_pid_list("12,x", &p, &n) < 0, "accepted x");
	CHECK(parse_pid_list("0", &p, &n) < 0, "accepted pid 0");
}

static void test_numbers(void)
{
	u64 v;
	CHECK(parse_u64("0x10", &v) == 0 && v == 16, "v=%llu", (unsigned long long)v);
	CHECK(parse_u64("-1", &v) < 0, "accepted -1");
	CHECK(parse_u64("12z", &v) < 0, "accepted 12z");
	double d;
	CHECK(parse_double("2.5", &d) == 0 && d == 2.5, "d=%f", d);
}

static void test_u64map(void)
{
	struct u64map m;
	u64map_init(&m);
	for (u64 k = 0; k < 10000; k++)
		*u64map_slot(&m, k * 7919, NULL) = k + 1;
	CHECK(m.n == 10000, "n=%zu", m.n);
	int bad = 0;
	for (u64 k = 0; k < 10000; k++) {
		u64 *v = u64map_get(&m, k * 7919);
		if (!v || *v != k + 1)
			bad++;
	}
	CHECK(bad == 0, "%d lookups wrong", bad);
	CHECK(u64map_get(&m, 3) == NULL, "found a key never inserted");
	bool created;
	u64map_slot(&m, 0, &created);
	CHECK(!created, "key 0 inserted twice");
	/* The key the table uses to mark free slots works like any other. */
	const u64 free_mark = 0x9e3779b97f4a7c15ULL;
	CHECK(u64map_get(&m, free_mark) == NULL, "free-slot key found before insert");
	*u64map_slot(&m, free_mark, &created) = 42;
	CHECK(created, "free-slot key not created");
	u64 *fv = u64map_get(&m, free_mark);
	CHECK(fv && *fv == 42, "free-slot key lost its value");
	CHECK(m.n == 10001, "n=%zu after the free-slot key", m.n);
	u64map_free(&m);
}

/* Deleting keeps every other key reachable: keys that collide and wrap
 * round a small table, deleted in an order that leaves holes in runs. */
static void test_u64map_del(void)
{
	struct u64map m;
	u64map_init(&m);
	const u64 n = 3000;
	for (u64 k = 0; k < n; k++)
		*u64map_slot(&m, k * 13, NULL) = k + 1;
	for (u64 k = 0; k < n; k += 3)
		u64map_del(&m, k * 13);
	u64map_del(&m, 5);               /* absent: nothing */
	int bad = 0;
	for (u64 k = 0; k < n; k++) {
		u64 *v = u64map_get(&m, k * 13);
		if (k % 3 == 0 ? v != NULL : (!v || *v != k + 1))
			bad++;
	}
	CHECK(bad == 0, "%d lookups wrong after deletes", bad);
	CHECK(m.n == n - n / 3, "n=%zu after deletes", m.n);
	size_t pos = 0, seen = 0;
	u64 key, val, sum = 0;
	while (u64map_next(&m, &pos, &key, &val)) {
		seen++;
		sum += val;
	}
	u64 want = 0;
	for (u64 k = 0; k < n; k++)
		want += k % 3 ? k + 1 : 0;
	CHECK(seen == m.n && sum == want, "iterated %zu keys (of %zu), sum %llu (want %llu)",
	      seen, m.n, (unsigned long long)sum, (unsigned long long)want);
	/* Delete all, then the table takes keys again. */
	for (u64 k = 0; k < n; k++)
		u64map_del(&m, k * 13);
	CHECK(m.n == 0, "n=%zu after deleting all", m.n);
	const u64 free_mark = 0x9e3779b97f4a7c15ULL;
	*u64map_slot(&m, free_mark, NULL) = 1;
	u64map_del(&m, free_mark);
	CHECK(m.n == 0 && !u64map_get(&m, free_mark), "free-slot key not deleted");
	*u64map_slot(&m, 26, NULL) = 7;
	CHECK(u64map_get(&m, 26) && *u64map_get(&m, 26) == 7, "insert after deletes lost");
	u64map_free(&m);
}

static void test_strbuf(void)
{
	struct strbuf sb = {0};
	for (int i = 0; i < 1000; i++)
		sb_printf(&sb, "%d,", i);
	CHECK(sb.len == strlen(sb.s), "len %zu", sb.len);
	CHECK(!strncmp(sb.s, "0,1,2,", 6) && strstr(sb.s, "999,"), "%.20s", sb.s);
	sb_free(&sb);
}

/* A peer's text made safe to print: no control byte survives, printable
 * text stays, an escape is never cut in two. */
static void test_escape(void)
{
	char out[64];
	const char red[] = "Oops \x1b[31mred\r\n\\ \xc2\x9b ok";
	str_escape(out, sizeof(out), red, sizeof(red) - 1);
	CHECK(!strcmp(out, "Oops \\x1b[31mred\\x0d\\x0a\\\\ \\xc2\\x9b ok"), "%s", out);
	str_escape(out, 8, red, sizeof(red) - 1);
	CHECK(!strcmp(out, "Oops "), "cut: '%s'", out);
	str_escape(out, sizeof(out), "plain", 5);
	CHECK(!strcmp(out, "plain"), "%s", out);
}

static void test_errors(void)
{
	err_set("inner %d", 7);
	err_prefix("outer");
	CHECK(!strcmp(err_msg(), "outer: inner 7"), "%s", err_msg());
}

static void test_command_check(void)
{
	CHECK(child_command_check("sh") == 0, "%s", err_msg());
	CHECK(child_command_check("/bin/sh") == 0, "%s", err_msg());
	CHECK(child_command_check("no-such-command-here") < 0, "found a ghost");
	CHECK(strstr(err_msg(), "command not found"), "message '%s'", err_msg());
	char path[] = "/tmp/ember-test-noexec-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp");
	if (fd >= 0) {
		fchmod(fd, 0644);
		close(fd);
		CHECK(child_command_check(path) < 0, "non-executable accepted");
		unlink(path);
	}
}

/* Wait statuses as wait4 gives them. */
#define EXITED(n) ((n) << 8)
#define KILLED(sig) (sig)

static void test_exit_status(void)
{
	struct stop_handlers h;
	int die;
	/* No stop request. */
	volatile sig_atomic_t *stop = stop_install(&h, false);
	struct child_end none = { 0 };
	CHECK(stop_exit_status(&none, &die) == 0 && die == 0, "no command: 0");
	struct child_end e = { .ran = true, .status = EXITED(3) };
	CHECK(stop_exit_status(&e, &die) == 3 && die == 0, "its own exit 3");
	e.status = KILLED(SIGSEGV);
	CHECK(stop_exit_status(&e, &die) == 128 + SIGSEGV && die == 0, "SIGSEGV: 139");
	e.sent = 1ULL << SIGTERM;   /* --duration ended it */
	e.status = KILLED(SIGTERM);
	CHECK(stop_exit_status(&e, &die) == 0 && die == 0, "ended by us: 0");
	e.status = KILLED(SIGSEGV);
	CHECK(stop_exit_status(&e, &die) == 128 + SIGSEGV, "another signal than ours");
	stop_restore(&h);
	/* A request that comes while the stop signals are blocked is counted
	 * once they are restored, before the status is chosen. */
	stop = stop_install(&h, true);
	raise(SIGTERM);
	CHECK(*stop == 0 && stop_signal() == 0, "taken while blocked");
	stop_restore(&h);
	CHECK(*stop == 1 && stop_signal() == SIGTERM, "pending SIGTERM not counted");
	e = (struct child_end){ .ran = true, .status = KILLED(SIGINT), .sent = 1ULL << SIGINT };
	CHECK(stop_exit_status(&e, &die) == 128 + SIGTERM && die == SIGTERM,
	      "stopped: ends by SIGTERM");
	e.status = EXITED(3);
	CHECK(stop_exit_status(&e, &die) == 3 && die == 0, "stopped but exited 3 itself");
	CHECK(signal(SIGTERM, SIG_DFL) == SIG_DFL, "the old handler is back");
}

int main(void)
{
	RUN(test_cpu_list);
	RUN(test_pid_list);
	RUN(test_numbers);
	RUN(test_u64map);
	RUN(test_u64map_del);
	RUN(test_strbuf);
	RUN(test_escape);
	RUN(test_errors);
	RUN(test_command_check);
	RUN(test_exit_status);
	return test_summary();
}
