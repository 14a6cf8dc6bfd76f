/* test-symbols.c - unit tests of symbols/: programs and libraries built
 * here at test time, resolved through the mappings the kernel gave a
 * running copy; debug files, build-ids, kallsyms, JIT maps, demangling,
 * and a comparison with perf script on the same recording. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>

#include "common/common.h"
#include "symbols/symbols.h"
#include "tests/unit/test.h"

static char tmpdir[] = "/tmp/ember-symtest-XXXXXX";

/* ---- Helpers ------------------------------------------------------------ */

static int sh(const char *fmt, ...) PRINTF_LIKE(1, 2);
static int sh(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *cmd = NULL;
	if (vasprintf(&cmd, fmt, ap) < 0)
		abort();
	va_end(ap);
	int rc = system(cmd);
	if (rc != 0)
		printf("# command failed (%d): %s\n", rc, cmd);
	free(cmd);
	return rc;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static char *tpath(const char *name)
{
	return xasprintf("%s/%s", tmpdir, name);
}

/* A defined symbol's value per nm(1), the reference for file addresses. */
static u64 nm_value(const char *file, const char *name)
{
	char *cmd = xasprintf("nm --defined-only '%s' 2>/dev/null", file);
	FILE *p = popen(cmd, "r");
	free(cmd);
	char line[512], sym[400], type;
	unsigned long long v, found = 0;
	while (p && fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %399s", &v, &type, sym) == 3 && !strcmp(sym, name))
			found = v;
	if (p)
		pclose(p);
	return found;
}

static const char prog_src[] =
	"#include <stdio.h>\n#include <unistd.h>\n"
	"const char *lib_name(int i); void *lib_addr(int i);\n"
	"static __attribute__((noinline, used)) int alpha(int x) { return x * 3 + 1; }\n"
	"static __attribute__((noinline, used)) int beta(int x) { return x * 5 + alpha(x); }\n"
	"__attribute__((noinline)) int gamma_fn(int x) { return beta(x) - 1; }\n"
	"int main(void) {\n"
	"  printf(\"alpha %p\\nbeta %p\\ngamma_fn %p\\n\", (void *)alpha, (void *)beta,\n"
	"         (void *)gamma_fn);\n"
	"  for (int i = 0; i < 2; i++) printf(\"%s %p\\n\", lib_name(i), lib_addr(i));\n"
	"  printf(\"ready\\n\"); fflush(stdout); sleep(60); return gamma_fn(1) == 0;\n}\n";

static const char lib_src[] =
	"static __attribute__((noinline, used)) int lib_inner(int x) { return x * 7; }\n"
	"__attribute__((noinline)) int lib_outer(int x) { return lib_inner(x) + 1; }\n"
	"const char *lib_name(int i) { return i ? \"lib_outer\" : \"lib_inner\"; }\n"
	"void *lib_addr(int i) { return i ? (void *)lib_outer : (void *)lib_inner; }\n";

/* Builds the test programs once: libt.so (ordinary) and libv.so (linked
 * at a non-zero base, so its segments' p_vaddr differ from p_offset),
 * a PIE using libt and a non-PIE using libv. */
static bool build_programs(void)
{
	static int built;   /* 1 ok, -1 failed */
	if (built)
		return built > 0;
	char *prog = tpath("prog.c"), *lib = tpath("lib.c");
	write_file(prog, prog_src);
	write_file(lib, lib_src);
	const char *d = tmpdir;
	bool ok =
		!sh("cc -O1 -g -fPIC -shared -Wl,--build-id -o %s/libt.so %s", d, lib) &&
		!sh("cc -O1 -g -fPIC -shared -Wl,--build-id -Wl,-Ttext-segment=0x10000000"
		    " -o %s/libv.so %s", d, lib) &&
		!sh("cc -O1 -g -fPIE -pie -Wl,--build-id -o %s/pie %s -L%s -l:libt.so"
		    " -Wl,-rpath,%s", d, prog, d, d) &&
		!sh("cc -O1 -g -fno-pie -no-pie -Wl,--build-id -o %s/nopie %s -L%s"
		    " -l:libv.so -Wl,-rpath,%s", d, prog, d, d);
	free(prog);
	free(lib);
	built = ok ? 1 : -1;
	return ok;
}

/* A running copy of a test program and the function addresses it
 * printed (its own view of where the loader put them). */
struct running {
	pid_t pid;
	int n;
	char names[8][32];
	u64 addrs[8];
};

static bool start_program(const char *path, struct running *r)
{
	memset(r, 0, sizeof(*r));
	int fds[2];
	if (pipe(fds) < 0)
		return false;
	r->pid = fork();
	if (r->pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	FILE *out = fdopen(fds[0], "r");
	char line[256];
	unsigned long long a;
	while (fgets(line, sizeof(line), out) && strncmp(line, "ready", 5))
		if (r->n < 8 && sscanf(line, "%31s %llx", r->names[r->n], &a) == 2)
			r->addrs[r->n++] = a;
	fclose(out);
	return r->n == 5;
}

static void stop_program(struct running *r)
{
	if (r->pid > 0) {
		kill(r->pid, SIGKILL);
		waitpid(r->pid, NULL, 0);
	}
}

/* The mapping of pid holding addr, as /proc/PID/maps shows it. */
static bool find_mapping(pid_t pid, u64 addr, u64 *start, u64 *pgoff, char *path, size_t cap)
{
	char file[64];
	snprintf(file, sizeof(file), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(file, "r");
	char line[1024];
	bool found = false;
	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		int pos = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &off, &pos) < 3)
			continue;
		if (addr >= lo && addr < hi) {
			*start = lo;
			*pgoff = off;
			snprintf(path, cap, "%s", line + pos);
			path[strcspn(path, "\n")] = '\0';
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* Resolves each printed address through its mapping, as a report would
 * resolve a sample there, and checks the name and the file address.
 * reference: for each dso path, the unstripped file nm reads. */
static void check_running(struct sym_ctx *c, struct running *r, const char *exe_ref)
{
	for (int i = 0; i < r->n; i++) {
		u64 start = 0, pgoff = 0;
		char path[512];
		if (!find_mapping(r->pid, r->addrs[i], &start, &pgoff, path, sizeof(path))) {
			CHECK(0, "no mapping holds %s at %#llx", r->names[i],
			      (unsigned long long)r->addrs[i]);
			continue;
		}
		struct sym_dso *d = sym_dso_get(c, path, NULL, 0, r->pid);
		u64 fa = sym_map_to_file(d, r->addrs[i], start, pgoff);
		bool in_exe = !strstr(path, ".so");
		u64 want = nm_value(in_exe && exe_ref ? exe_ref : path, r->names[i]);
		CHECK(want && fa == want, "%s: file address %#llx, nm says %#llx", r->names[i],
		      (unsigned long long)fa, (unsigned long long)want);
		for (u64 delta = 0; delta < 3; delta++) {
			const struct sym *s = sym_lookup(d, fa + delta);
			CHECK(s && !strcmp(s->name, r->names[i]), "%s+%llu resolved to %s in %s",
			      r->names[i], (unsigned long long)delta, s ? s->name : "NULL",
			      sym_dso_path(d));
		}
	}
}

static void run_and_check(const char *exe, struct sym_opts *o, const char *exe_ref)
{
	struct running r;
	bool up = start_program(exe, &r);
	CHECK(up, "%s did not start (printed %d addresses)", exe, r.n);
	if (up) {
		struct sym_ctx *c = sym_ctx_new(o);
		check_running(c, &r, exe_ref);
		CHECK(sym_ctx_stats(c)->build_id_mismatches == 0, "mismatches");
		sym_ctx_free(c);
	}
	stop_program(&r);
}

/* ---- ELF files ------------------------------------------------------------ */

static void test_pie_and_shared_library(void)
{
	if (!build_programs()) {
		CHECK(0, "cannot build test programs");
		return;
	}
	char *exe = tpath("pie");
	run_and_check(exe, &(struct sym_opts){ .demangle = true }, NULL);
	free(exe);
}

static void test_non_pie_and_rebased_library(void)
{
	if (!build_programs()) {
		CHECK(0, "cannot build test programs");
		return;
	}
	char *exe = tpath("nopie"), *lib = tpath("libv.so");
	/* The library must really have p_vaddr != p_offset for this test. */
	CHECK(nm_value(lib, "lib_outer") >= 0x10000000, "libv.so not rebased");
	run_and_check(exe, &(struct sym_opts){ .demangle = true }, NULL);
	free(exe);
	free(lib);
}

/* Mappings synthesized from the program headers, with no process: the
 * text segment mapped at an arbitrary page, as the loader would. */
static void test_synthesized_mapping(void)
{
	if (!build_programs())
		return;
	char *lib = tpath("libv.so");
	struct sym_ctx *c = sym_ctx_new(NULL);
	struct sym_dso *d = sym_dso_get(c, lib, NULL, 0, 0);
	u64 va = nm_value(lib, "lib_inner");
	/* readelf tells where the executable segment sits in the file. */
	char *cmd = xasprintf("readelf -lW '%s' | awk '$1==\"LOAD\" && / R E / {print $2, $3}'", lib);
	FILE *p = popen(cmd, "r");
	unsigned long long off = 0, vaddr = 0;
	int got = p ? fscanf(p, "%llx %llx", &off, &vaddr) : 0;
	if (p)
		pclose(p);
	free(cmd);
	CHECK(got == 2 && va, "readelf/nm failed");
	u64 map_start = 0x7f0000000000ULL + (vaddr & 0xfff);  /* same page offset */
	u64 pgoff = off & ~0xfffULL;
	u64 addr = map_start + (va - vaddr) + (off & 0xfff) - (vaddr & 0xfff);
	u64 fa = sym_map_to_file(d, addr, map_start & ~0xfffULL, pgoff);
	const struct sym *s = sym_lookup(d, fa);
	CHECK(fa == va, "file address %#llx, want %#llx", (unsigned long long)fa,
	      (unsigned long long)va);
	CHECK(s && !strcmp(s->name, "lib_inner"), "got %s", s ? s->name : "NULL");
	CHECK(!strcmp(sym_dso_short(d), "libv.so"), "short %s", sym_dso_short(d));
	CHECK(sym_dso_get(c, lib, NULL, 0, 0) == d, "dso loaded twice");
	CHECK(sym_ctx_stats(c)->files_loaded == 1, "files_loaded %llu",
	      (unsigned long long)sym_ctx_stats(c)->files_loaded);
	sym_ctx_free(c);
	free(lib);
}

/* Files released when no one holds them and no one asked for them since
 * the release before; held ones, problem files and fresh ones stay. */
static void test_release(void)
{
	if (!build_programs())
		return;
	char *lib = tpath("libv.so");
	struct sym_ctx *c = sym_ctx_new(NULL);
	struct sym_dso *d = sym_dso_get(c, lib, NULL, 0, 0);
	const struct sym_dso *missing = sym_dso_get(c, "/nonexistent/libgone.so", NULL, 0, 0);
	sym_dso_hold(d);
	CHECK(sym_ctx_release(c) == 0, "released a file held and just handed out");
	CHECK(sym_ctx_release(c) == 0, "released a file held");
	CHECK(sym_dso_put(d) == 0, "put of a held file failed: %s", err_msg());
	CHECK(sym_dso_put(d) < 0 && strstr(err_msg(), "libv.so"), "a second put: %s", err_msg());
	CHECK(sym_ctx_release(c) == 1, "the unheld file stayed");
	CHECK(sym_ctx_stats(c)->files_released == 1, "files_released %llu",
	      (unsigned long long)sym_ctx_stats(c)->files_released);
	CHECK(sym_problem_file(c, 0) == missing && sym_ctx_release(c) == 0,
	      "the missing file was released");
	/* Asked for again: loaded again, and kept through the next release. */
	d = sym_dso_get(c, lib, NULL, 0, 0);
	u64 va = nm_value(lib, "lib_inner");
	const struct sym *s = sym_lookup(d, va);
	CHECK(s && !strcmp(s->name, "lib_inner"), "reloaded file: got %s", s ? s->name : "NULL");
	CHECK(sym_ctx_stats(c)->files_loaded == 3, "files_loaded %llu",
	      (unsigned long long)sym_ctx_stats(c)->files_loaded);
	CHECK(sym_ctx_release(c) == 0, "released a file handed out since the last release");
	CHECK(sym_dso_get(c, lib, NULL, 0, 0) == d, "the kept file is not found again");
	sym_ctx_free(c);
	free(lib);
}

/* Stub addresses from objdump's disassembly, named "<puts@plt>". */
static void test_plt_stubs(void)
{
	if (!build_programs())
		return;
	char *exe = tpath("pie");
	char *cmd = xasprintf("objdump -d -j .plt -j .plt.sec '%s' 2>/dev/null", exe);
	FILE *p = popen(cmd, "r");
	free(cmd);
	struct sym_ctx *c = sym_ctx_new(NULL);
	struct sym_dso *d = sym_dso_get(c, exe, NULL, 0, 0);
	char line[512], name[256];
	unsigned long long a;
	int seen = 0;
	while (p && fgets(line, sizeof(line), p)) {
		/* "<puts@plt-0x10>" is objdump's name for the PLT header. */
		if (sscanf(line, "%llx <%255[^>]>:", &a, name) != 2 || !strstr(name, "@plt") ||
		    strstr(name, "0x"))
			continue;
		const struct sym *s = sym_lookup(d, a + 4);
		CHECK(s && !strcmp(s->name, name), "%#llx: %s, objdump says %s", a,
		      s ? s->name : "NULL", name);
		seen++;
	}
	if (p)
		pclose(p);
	CHECK(seen >= 2, "objdump showed %d PLT stubs", seen);
	sym_ctx_free(c);
	free(exe);
}

/* ---- Debug files and build-ids -------------------------------------------- */

static char *hex(const u8 *id, int n)
{
	char *s = xmalloc(2 * (size_t)n + 1);
	for (int i = 0; i < n; i++)
		sprintf(s + 2 * i, "%02x", id[i]);
	return s;
}

/* A stripped copy of the PIE, its symbols only in a debug file placed
 * by build-id: static functions resolve only through that file. */
static void test_debug_file_by_build_id(void)
{
	if (!build_programs())
		return;
	const char *d = tmpdir;
	u8 id[64];
	char *pie = tpath("pie");
	int n = sym_read_build_id(pie, id, sizeof(id));
	CHECK(n == 20, "build-id size %d: %s", n, err_msg());
	if (n <= 0)
		return;
	char *h = hex(id, n);
	bool ok = !sh("mkdir -p %s/dbg/.build-id/%.2s %s/bid && cp %s %s/bid/pie && "
		      "objcopy --only-keep-debug %s %s/dbg/.build-id/%.2s/%s.debug && "
		      "strip --strip-all %s/bid/pie", d, h, d, pie, d, pie, d, h, h + 2, d);
	CHECK(ok, "cannot prepare the stripped copy");
	char *dbg_dir = tpath("dbg"), *exe = tpath("bid/pie");
	struct sym_opts o = { .demangle = true, .debug_dir = dbg_dir };
	if (ok) {
		run_and_check(exe, &o, pie);
		struct sym_ctx *c = sym_ctx_new(&o);
		struct sym_dso *dso = sym_dso_get(c, exe, id, (size_t)n, 0);
		const char *sf = sym_dso_symfile(dso);
		CHECK(sf && strstr(sf, "/.build-id/") && sym_dso_trusted(dso), "symbols from %s",
		      sf ? sf : "NULL");
		/* The file at the path was rebuilt since (another binary is
		 * there now), but the recorded one's debug file is installed. */
		char *other = tpath("nopie");
		dso = sym_dso_get(c, other, id, (size_t)n, 0);
		const struct sym *s = sym_lookup(dso, nm_value(pie, "alpha"));
		CHECK(sym_dso_trusted(dso) && s && !strcmp(s->name, "alpha"),
		      "rebuilt file: %s", s ? s->name : "NULL");
		CHECK(sym_ctx_stats(c)->build_id_mismatches == 0, "counted as a mismatch");
		free(other);
		sym_ctx_free(c);
	}
	free(h);
	free(pie);
	free(dbg_dir);
	free(exe);
}

/* Stripped copies with .gnu_debuglink, the debug file beside the binary
 * in one case and in its .debug/ folder in the other. */
static void test_debug_file_by_debuglink(void)
{
	if (!build_programs())
		return;
	const char *d = tmpdir;
	char *pie = tpath("pie"), *empty = tpath("nodebug");
	bool ok = !sh("mkdir -p %s/nodebug %s/dl1 %s/dl2/.debug && "
		      "objcopy --only-keep-debug %s %s/dl1/pie.dbg && "
		      "objcopy --strip-all --add-gnu-debuglink=%s/dl1/pie.dbg %s %s/dl1/pie && "
		      "cp %s/dl1/pie.dbg %s/dl2/.debug/pie.dbg && cp %s/dl1/pie %s/dl2/pie",
		      d, d, d, pie, d, d, pie, d, d, d, d, d);
	CHECK(ok, "cannot prepare debuglink copies");
	struct sym_opts o = { .demangle = true, .debug_dir = empty };
	for (int i = 1; ok && i <= 2; i++) {
		char *exe = xasprintf("%s/dl%d/pie", d, i);
		run_and_check(exe, &o, pie);
		struct sym_ctx *c = sym_ctx_new(&o);
		const char *sf = sym_dso_symfile(sym_dso_get(c, exe, NULL, 0, 0));
		CHECK(sf && strstr(sf, "pie.dbg"), "dl%d: symbols from %s", i, sf ? sf : "NULL");
		sym_ctx_free(c);
		free(exe);
	}
	free(pie);
	free(empty);
}

static void test_build_id_mismatch(void)
{
	if (!build_programs())
		return;
	char *pie = tpath("pie"), *empty = tpath("nodebug");
	struct sym_ctx *c = sym_ctx_new(&(struct sym_opts){ .debug_dir = empty });
	u8 good[64], bad[20];
	int n = sym_read_build_id(pie, good, sizeof(good));
	memset(bad, 0xab, sizeof(bad));
	u64 va = nm_value(pie, "gamma_fn");
	struct sym_dso *d = sym_dso_get(c, pie, bad, sizeof(bad), 0);
	CHECK(!sym_dso_trusted(d), "a wrong build-id was trusted");
	CHECK(sym_lookup(d, va) == NULL, "an untrusted file resolved");
	CHECK(sym_ctx_stats(c)->build_id_mismatches == 1, "mismatches %llu",
	      (unsigned long long)sym_ctx_stats(c)->build_id_mismatches);
	struct sym_dso *g = sym_dso_get(c, pie, good, (size_t)n, 0);
	const struct sym *s = sym_lookup(g, va);
	CHECK(g != d && sym_dso_trusted(g), "the right build-id was not trusted");
	CHECK(s && !strcmp(s->name, "gamma_fn"), "got %s", s ? s->name : "NULL");
	sym_ctx_free(c);
	free(pie);
	free(empty);
}

/* Files named with their build-ids load on a thread and are adopted when
 * asked for; a wrong build-id or a missing file takes the usual path (and
 * its counts) as if nothing had been prefetched; a file never asked for is
 * freed with the context (ASan's leak check). */
static void test_prefetch(void)
{
	if (!build_programs())
		return;
	char *pie = tpath("pie"), *lib = tpath("libv.so"), *empty = tpath("nodebug");
	struct sym_ctx *c = sym_ctx_new(&(struct sym_opts){ .debug_dir = empty });
	u8 good[64], libid[64], bad[20];
	int n = sym_read_build_id(pie, good, sizeof(good));
	int ln = sym_read_build_id(lib, libid, sizeof(libid));
	memset(bad, 0xab, sizeof(bad));
	struct sym_file_hint hints[] = {
		{ pie, good, (size_t)n },
		{ pie, bad, sizeof(bad) },
		{ "/nonexistent/libgone.so", bad, sizeof(bad) },
		{ lib, libid, (size_t)ln },   /* never asked for */
		{ "relative/path", good, (size_t)n },
	};
	sym_prefetch_files(c, hints, ARRAY_SIZE(hints));
	sym_prefetch_wait(c);   /* else the lookups below may win the race */
	u64 va = nm_value(pie, "gamma_fn");
	struct sym_dso *g = sym_dso_get(c, pie, good, (size_t)n, 0);
	const struct sym *s = sym_lookup(g, va);
	CHECK(sym_dso_trusted(g) && s && !strcmp(s->name, "gamma_fn"), "prefetched pie: %s",
	      s ? s->name : "NULL");
	CHECK(sym_dso_get(c, pie, good, (size_t)n, 0) == g, "asked again, the same dso");
	struct sym_dso *d = sym_dso_get(c, pie, bad, sizeof(bad), 0);
	CHECK(!sym_dso_trusted(d) && sym_lookup(d, va) == NULL, "a wrong build-id was trusted");
	struct sym_dso *m = sym_dso_get(c, "/nonexistent/libgone.so", bad, sizeof(bad), 0);
	CHECK(m && sym_lookup(m, 0x1000) == NULL, "a missing file resolved");
	const struct sym_stats *st = sym_ctx_stats(c);
	CHECK(st->files_loaded == 3 && st->files_prefetched == 1 && st->build_id_mismatches == 1 &&
	      st->missing_files == 1, "loaded %llu prefetched %llu mismatches %llu missing %llu",
	      (unsigned long long)st->files_loaded, (unsigned long long)st->files_prefetched,
	      (unsigned long long)st->build_id_mismatches, (unsigned long long)st->missing_files);
	sym_ctx_free(c);
	free(pie);
	free(lib);
	free(empty);
}

static void test_missing_and_corrupt_files(void)
{
	struct sym_ctx *c = sym_ctx_new(NULL);
	struct sym_dso *d = sym_dso_get(c, "/nonexistent/libgone.so", NULL, 0, 0);
	CHECK(d && sym_lookup(d, 0x1000) == NULL, "missing file resolved");
	CHECK(!strcmp(sym_dso_short(d), "libgone.so"), "short %s", sym_dso_short(d));
	CHECK(sym_ctx_stats(c)->missing_files == 1, "missing %llu",
	      (unsigned long long)sym_ctx_stats(c)->missing_files);
	d = sym_dso_get(c, "//anon", NULL, 0, 0);
	CHECK(sym_ctx_stats(c)->missing_files == 1, "//anon counted as missing");
	/* Truncated and byte-flipped copies of a real library, cut and
	 * flipped all along the file (headers, tables, strings): no crash,
	 * no sanitizer report. */
	char *lib = tpath("libt.so");
	struct stat st;
	if (build_programs() && stat(lib, &st) == 0) {
		for (int i = 0; i < 64; i++) {
			char *bad = xasprintf("%s/bad%d.so", tmpdir, i);
			long at = (long)((st.st_size * (i % 32)) / 32) + 3;
			if (i < 32)
				sh("head -c %ld %s > %s", at, lib, bad);
			else
				sh("cp %s %s && printf '\\377\\177\\377\\377\\377\\377' | dd of=%s bs=1 "
				   "seek=%ld conv=notrunc status=none", lib, bad, bad, at);
			struct sym_dso *x = sym_dso_get(c, bad, NULL, 0, 0);
			for (u64 a = 0; a < 0x4000; a += 0x40)
				sym_lookup(x, sym_map_to_file(x, a, 0, 0));
			free(bad);
		}
	}
	free(lib);
	sym_ctx_free(c);
}

/* ---- Kernel ---------------------------------------------------------------- */

/* The address of a text symbol from a kallsyms file, and whether no
 * other text symbol shares it (aliases would make the check ambiguous). */
static u64 kallsyms_addr(const char *file, const char *want, bool *unique)
{
	FILE *f = fopen(file, "r");
	char line[512], name[256], type;
	unsigned long long a, found = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 && !strcmp(name, want))
			found = a;
	*unique = found != 0;
	if (f)
		rewind(f);
	while (f && found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 && a == found &&
		    strcmp(name, want) && strchr("tTwW", type))
			*unique = false;
	if (f)
		fclose(f);
	return found;
}

static void test_kallsyms(void)
{
	static const char *names[] = { "schedule", "vfs_read", "do_nanosleep", "__x64_sys_read" };
	struct sym_ctx *c = sym_ctx_new(NULL);
	int checked = 0;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		bool unique;
		u64 a = kallsyms_addr("/proc/kallsyms", names[i], &unique);
		if (!a || !unique)
			continue;
		struct sym_dso *k = sym_kernel_dso(c, a + 1);
		const struct sym *s = sym_lookup(k, sym_map_to_file(k, a + 1, 0, 0));
		CHECK(s && !strcmp(s->name, names[i]) && s->start == a, "%s: got %s", names[i],
		      s ? s->name : "NULL");
		CHECK(!strcmp(sym_dso_short(k), "[kernel.kallsyms]") && sym_dso_is_kernel(k),
		      "dso %s", sym_dso_short(k));
		checked++;
	}
	sym_ctx_free(c);
	CHECK(checked > 0, "none of the kernel symbols had a unique address");
}

static const char *kallsyms_skip(void)
{
	bool unique;
	return kallsyms_addr("/proc/kallsyms", "schedule", &unique) ? NULL
		: "/proc/kallsyms shows no addresses (not root?)";
}

/* The first module /proc/modules lists, with a visible base address. */
static bool first_module(char *name, unsigned long long *size, unsigned long long *base)
{
	char *mods = read_text_file("/proc/modules", NULL);
	bool ok = mods && sscanf(mods, "%127s %llu %*s %*s %*s %llx", name, size, base) == 3 &&
		  *base;
	free(mods);
	return ok;
}

static const char *modules_skip(void)
{
	char name[128];
	unsigned long long size, base;
	return first_module(name, &size, &base) ? NULL
		: "no loadable modules on this kernel (/proc/modules empty or absent)";
}

static void test_real_modules(void)
{
	char name[128];
	unsigned long long size, base;
	if (!first_module(name, &size, &base))
		return;
	struct sym_ctx *c = sym_ctx_new(NULL);
	struct sym_dso *m = sym_kernel_dso(c, base + size / 2);
	char *want = xasprintf("[%s]", name);
	CHECK(!strcmp(sym_dso_short(m), want) && sym_dso_is_kernel(m), "dso %s, want %s",
	      sym_dso_short(m), want);
	free(want);
	sym_ctx_free(c);
}

static const char fake_kallsyms[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T startup_64\n"
	"ffffffff81000100 t local_fn\n"
	"ffffffff81000200 D some_data\n"
	"ffffffff81000300 W weak_fn\n"
	"ffffffff81000400 T _etext\n"
	"ffffffffc0001000 t ext4_inner\t[ext4]\n"
	"ffffffffc0001100 T ext4_file_read\t[ext4]\n"
	"ffffffffc0003000 t ftrace_trampoline\t[__builtin__ftrace]\n"
	"ffffffffc0005000 T xfs_thing\t[xfs]\n";

static const char fake_modules[] =
	"ext4 8192 1 - Live 0xffffffffc0001000\n"
	"xfs 4096 0 - Live 0xffffffffc0005000\n";

static void check_fake_kernel(struct sym_ctx *c)
{
	struct { u64 addr; const char *dso, *sym; } cases[] = {
		{ 0xffffffff81000010, "[kernel.kallsyms]", "startup_64" },
		{ 0xffffffff81000150, "[kernel.kallsyms]", "local_fn" },
		{ 0xffffffff81000250, "[kernel.kallsyms]", "local_fn" },  /* data skipped */
		{ 0xffffffff81000310, "[kernel.kallsyms]", "weak_fn" },
		{ 0xffffffffc0001010, "[ext4]", "ext4_inner" },
		{ 0xffffffffc0001500, "[ext4]", "ext4_file_read" },
		{ 0xffffffffc0005001, "[xfs]", "xfs_thing" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sym_dso *d = sym_kernel_dso(c, cases[i].addr);
		const struct sym *s = sym_lookup(d, cases[i].addr);
		CHECK(!strcmp(sym_dso_short(d), cases[i].dso), "%#llx in %s",
		      (unsigned long long)cases[i].addr, sym_dso_short(d));
		CHECK(s && !strcmp(s->name, cases[i].sym), "%#llx is %s",
		      (unsigned long long)cases[i].addr, s ? s->name : "NULL");
	}
	struct sym_dso *t = sym_kernel_dso(c, 0xffffffffc0003000);
	CHECK(sym_lookup(t, 0xffffffffc0003000) == NULL ||
	      strcmp(sym_lookup(t, 0xffffffffc0003000)->name, "ftrace_trampoline"),
	      "a [__builtin__ftrace] symbol was kept");
}

/* The fake kallsyms and its modules file, written in a directory of
 * their own under the test's; fake_kernel_free() frees the names. */
struct fake_kernel {
	char *dir, *ks, *mods;
};

static struct fake_kernel fake_kernel_files(const char *name)
{
	struct fake_kernel f = { tpath(name), NULL, NULL };
	f.ks = xasprintf("%s/kallsyms", f.dir);
	f.mods = xasprintf("%s/modules", f.dir);
	mkdir(f.dir, 0755);
	write_file(f.ks, fake_kallsyms);
	write_file(f.mods, fake_modules);
	return f;
}

static void fake_kernel_free(struct fake_kernel *f)
{
	free(f->dir);
	free(f->ks);
	free(f->mods);
}

/* Modules placed by a "modules" file beside kallsyms, then without it
 * (ranges from their symbols). */
static void test_fake_kallsyms_modules(void)
{
	struct fake_kernel f = fake_kernel_files("kern");
	char *ks = f.ks, *mods = f.mods;
	struct sym_ctx *c = sym_ctx_new(&(struct sym_opts){ .kallsyms = ks });
	check_fake_kernel(c);
	sym_ctx_free(c);
	unlink(mods);
	c = sym_ctx_new(&(struct sym_opts){ .kallsyms = ks });
	check_fake_kernel(c);
	sym_ctx_free(c);
	fake_kernel_free(&f);
}

/* The recording saw the kernel 48 MiB higher (another boot's KASLR) and
 * its modules elsewhere: lookups are relocated to the kallsyms read. */
static void test_kernel_relocation(void)
{
	struct fake_kernel f = fake_kernel_files("kern-reloc");
	struct sym_ctx *c = sym_ctx_new(&(struct sym_opts){ .kallsyms = f.ks });
	const u64 d = 0x3000000;
	sym_kernel_recorded_text(c, "_text", 0xffffffff81000000 + d);
	sym_kernel_recorded_module(c, "[ext4]", 0xffffffffc0201000, 8192);
	sym_kernel_recorded_module(c, "/lib/modules/6.1/kernel/fs/xfs/xfs.ko.xz",
				   0xffffffffc0301000, 4096);
	struct { u64 addr; const char *dso, *sym; } cases[] = {
		{ 0xffffffff81000010 + d, "[kernel.kallsyms]", "startup_64" },
		{ 0xffffffff81000150 + d, "[kernel.kallsyms]", "local_fn" },
		{ 0xffffffffc0201010, "[ext4]", "ext4_inner" },
		{ 0xffffffffc0201500, "[ext4]", "ext4_file_read" },
		{ 0xffffffffc0301001, "[xfs]", "xfs_thing" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sym_dso *k = sym_kernel_dso(c, cases[i].addr);
		const struct sym *s = sym_lookup(k, sym_map_to_file(k, cases[i].addr, 0, 0));
		CHECK(!strcmp(sym_dso_short(k), cases[i].dso) && s && !strcmp(s->name, cases[i].sym),
		      "%#llx: %s %s, want %s %s", (unsigned long long)cases[i].addr,
		      sym_dso_short(k), s ? s->name : "NULL", cases[i].dso, cases[i].sym);
	}
	sym_ctx_free(c);
	fake_kernel_free(&f);
}

/* HOME moved into the test's directory, so the build-id cache is ours,
 * and put back. */
struct home_swap {
	char *old, *home;
};

static struct home_swap home_for_test(const char *name)
{
	struct home_swap h = { getenv("HOME") ? xstrdup(getenv("HOME")) : NULL, tpath(name) };
	sh("rm -rf %s && mkdir -p %s", h.home, h.home);
	setenv("HOME", h.home, 1);
	return h;
}

static void home_restore(struct home_swap *h)
{
	if (h->old)
		setenv("HOME", h->old, 1);
	free(h->old);
	free(h->home);
}

/* A recording of another kernel build: no names (not the running
 * kernel's), until the build-id cache holds its kallsyms; the running
 * kernel's own build-id keeps /proc/kallsyms. */
static void test_kernel_build_id_choice(void)
{
	u8 run[64], other[64];
	int n = sym_kernel_build_id(run, sizeof(run));
	if (n <= 0) {
		printf("SKIP: kernel_build_id_choice: %s\n", err_msg());
		return;
	}
	for (int i = 0; i < n; i++)
		other[i] = run[i] ^ 0x5a;
	struct home_swap hs = home_for_test("home-kernel");
	const char *home = hs.home;
	struct sym_ctx *c = sym_ctx_new(NULL);
	sym_kernel_expect(c, other, (size_t)n);
	struct sym_dso *k = sym_kernel_dso(c, 0xffffffff81000010);
	struct sym_kernel_info info;
	sym_kernel_info(c, &info);
	CHECK(!sym_dso_trusted(k) && !sym_lookup(k, 0xffffffff81000010), "another build named");
	CHECK(info.used && info.unknown && info.recorded[0] && info.running[0] &&
	      strcmp(info.recorded, info.running), "info: used %d unknown %d", info.used,
	      info.unknown);
	sym_ctx_free(c);

	char hex[129];
	sym_build_id_hex(other, (size_t)n, hex);
	sh("mkdir -p '%s/.debug/[kernel.kallsyms]/%s'", home, hex);
	char *cached = xasprintf("%s/.debug/[kernel.kallsyms]/%s/kallsyms", home, hex);
	write_file(cached, fake_kallsyms);
	c = sym_ctx_new(NULL);
	sym_kernel_expect(c, other, (size_t)n);
	check_fake_kernel(c);
	sym_kernel_info(c, &info);
	CHECK(info.cached && !info.unknown, "cached %d unknown %d", info.cached, info.unknown);
	sym_ctx_free(c);

	c = sym_ctx_new(NULL);
	sym_kernel_expect(c, run, (size_t)n);
	sym_kernel_dso(c, 0);
	sym_kernel_info(c, &info);
	CHECK(!info.cached && !info.unknown, "the running kernel: cached %d unknown %d",
	      info.cached, info.unknown);
	sym_ctx_free(c);
	home_restore(&hs);
	free(cached);
}

/* The cache's layout is perf's; names cannot leave it; a second add
 * copies nothing; a file gone from its path is found there by build-id,
 * and a file neither here nor cached is listed as missing. */
static void test_build_id_cache(void)
{
	if (!build_programs())
		return;
	CHECK(!sym_cache_entry("relative/x", (const u8 *)"ab", 2), "a relative name accepted");
	CHECK(!sym_cache_entry("/a/../etc/x", (const u8 *)"ab", 2), "a '..' accepted");
	char *e = sym_cache_entry("/a/..b/x", (const u8 *)"\x01\xab", 2);
	CHECK(e && !strcmp(e, "a/..b/x/01ab"), "entry %s", e ? e : "NULL");
	free(e);
	char *l = sym_cache_link((const u8 *)"\x01\xab\xcd", 3);
	CHECK(l && !strcmp(l, ".build-id/01/abcd"), "link %s", l ? l : "NULL");
	free(l);

	struct home_swap hs = home_for_test("home-cache");
	char *pie = tpath("pie"), *gone = tpath("gone/pie"), *empty = tpath("nodebug");
	u8 id[64];
	int n = sym_read_build_id(pie, id, sizeof(id));
	char *root = sym_cache_root();
	u64 copied = 0;
	CHECK(sym_cache_add(root, gone, id, (size_t)n, "elf", pie, -1, &copied) == 0, "add: %s",
	      err_msg());
	CHECK(sym_cache_add(root, gone, id, (size_t)n, "elf", pie, -1, &copied) == 0 &&
	      copied == 0, "copied %llu bytes (a hard link costs none)", (unsigned long long)copied);
	char *by_link = sym_cache_find("/elsewhere/pie", id, (size_t)n, "elf");
	CHECK(by_link && strstr(by_link, "/.build-id/"), "through the link: %s",
	      by_link ? by_link : "NULL");
	free(by_link);

	struct sym_ctx *c = sym_ctx_new(&(struct sym_opts){ .debug_dir = empty });
	struct sym_dso *d = sym_dso_get(c, gone, id, (size_t)n, 0);
	const struct sym *s = sym_lookup(d, nm_value(pie, "gamma_fn"));
	CHECK(s && !strcmp(s->name, "gamma_fn"), "from the cache: %s", s ? s->name : "NULL");
	CHECK(!sym_problem_file(c, 0), "a cached file listed as a problem");
	struct sym_dso *m = sym_dso_get(c, "/nonexistent/libgone.so", id, (size_t)n / 2, 0);
	CHECK(sym_problem_file(c, 0) == m && !sym_problem_file(c, 1), "missing file not listed");
	sym_ctx_free(c);
	home_restore(&hs);
	free(root);
	free(pie);
	free(gone);
	free(empty);
}

/* kallsyms read ahead on a thread gives the same kernel when it is asked
 * for; and when it is not, freeing the context stops the read instead of
 * waiting for the rest (the real file takes ~40 ms of kernel time).  The
 * "kallsyms" here is a FIFO fed a piece every 10 ms, up to PIECES: the
 * feeder counts the pieces taken before the reader went away. */
#define PIECES 200
static void test_kallsyms_prefetch(void)
{
	struct fake_kernel f = fake_kernel_files("kern2");
	char *ks = f.ks, *mods = f.mods;
	struct sym_ctx *c = sym_ctx_new(&(struct sym_opts){ .kallsyms = ks });
	sym_prefetch_kernel(c);
	check_fake_kernel(c);
	sym_ctx_free(c);
	unlink(mods);
	unlink(ks);

	CHECK(mkfifo(ks, 0600) == 0, "mkfifo: %s", strerror(errno));
	pid_t feeder = fork();
	if (feeder == 0) {
		signal(SIGPIPE, SIG_IGN);
		int fd = open(ks, O_WRONLY);
		char piece[4096];
		for (size_t i = 0; i + 32 < sizeof(piece); i += 32)
			memcpy(piece + i, "ffffffff81000000 T some_symbol\n", 32);
		int n = 0;
		while (fd >= 0 && n < PIECES && write(fd, piece, 4064) == 4064) {
			n++;
			usleep(10000);
		}
		_exit(n);
	}
	c = sym_ctx_new(&(struct sym_opts){ .kallsyms = ks });
	sym_prefetch_kernel(c);
	usleep(50000);
	sym_ctx_free(c);      /* never asked for the kernel */
	int st = 0;
	waitpid(feeder, &st, 0);
	int taken = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	CHECK(taken >= 1 && taken < PIECES / 4,
	      "the read took %d of %d pieces: freeing waited for it", taken, PIECES);
	unlink(ks);
	rmdir(f.dir);
	fake_kernel_free(&f);
}

/* ---- JIT maps and demangling ---------------------------------------------- */

static void test_jit_map(void)
{
	pid_t pid = getpid();
	char *path = xasprintf("/tmp/perf-%d.map", (int)pid);
	write_file(path, "7f0000002000 100 LazyCompile:*loop app.js:10\n"
			 "garbage line\n"
			 "7f0000001000 80 Interpreter\n"
			 "0x7f0000003000 0x20 stub\n");
	struct sym_ctx *c = sym_ctx_new(NULL);
	struct sym_dso *d = sym_jit_dso(c, pid);
	CHECK(d != NULL, "no JIT dso");
	if (d) {
		const struct sym *s = sym_lookup(d, sym_map_to_file(d, 0x7f00000020ff, 0x7f0000000000, 0));
		CHECK(s && !strcmp(s->name, "LazyCompile:*loop app.js:10"), "got %s",
		      s ? s->name : "NULL");
		s = sym_lookup(d, 0x7f0000001010);
		CHECK(s && !strcmp(s->name, "Interpreter"), "got %s", s ? s->name : "NULL");
		CHECK(sym_lookup(d, 0x7f0000001080) == NULL, "gap resolved");
		s = sym_lookup(d, 0x7f000000301f);
		CHECK(s && !strcmp(s->name, "stub"), "got %s", s ? s->name : "NULL");
		char *shortname = xasprintf("perf-%d.map", (int)pid);
		CHECK(!strcmp(sym_dso_short(d), shortname), "short %s", sym_dso_short(d));
		free(shortname);
	}
	CHECK(sym_jit_dso(c, pid) == d, "JIT map loaded twice");
	/* An anonymous mapping of a process with a map reads it, as perf does. */
	CHECK(sym_dso_get(c, "//anon", NULL, 0, pid) == d, "//anon did not use the JIT map");
	struct sym_dso *anon = sym_dso_get(c, "//anon", NULL, 0, 999999999);
	CHECK(anon != d && sym_lookup(anon, 0x7f0000001010) == NULL, "//anon of another pid");
	CHECK(sym_jit_dso(c, 999999999) == NULL, "a JIT map out of nothing");
	sym_ctx_free(c);
	unlink(path);
	free(path);
}

/* A process that ended is forgotten: a new one with its pid reads its own
 * map, and the old map's symbols go at the next release, not before. */
static void test_jit_forget(void)
{
	pid_t pid = getpid();
	char *path = xasprintf("/tmp/perf-%d.map", (int)pid);
	write_file(path, "7f0000001000 80 old_process_fn\n");
	struct sym_ctx *c = sym_ctx_new(NULL);
	struct sym_dso *old = sym_jit_dso(c, pid);
	CHECK(old != NULL, "no JIT dso");
	write_file(path, "7f0000001000 80 new_process_fn\n");
	CHECK(sym_jit_dso(c, pid) == old, "read again before the process ended");
	size_t released = sym_ctx_release(c);
	CHECK(released == 0, "%zu released before the process ended", released);
	CHECK(sym_jit_dso(c, pid) == old, "read again before the process ended");
	sym_jit_forget(c, pid);
	struct sym_dso *now = sym_jit_dso(c, pid);
	const struct sym *s = now ? sym_lookup(now, 0x7f0000001010) : NULL;
	CHECK(now != old && s && !strcmp(s->name, "new_process_fn"), "the new process got %s",
	      s ? s->name : "NULL");
	released = sym_ctx_release(c);
	CHECK(released == 0, "%zu released: the old map was handed out in this epoch", released);
	released = sym_ctx_release(c);
	CHECK(released == 1, "%zu released: want the ended process's map", released);
	CHECK(sym_jit_dso(c, pid) == now, "the new process's map was let go of");
	sym_ctx_free(c);
	unlink(path);
	free(path);
}

/* Names as perf 6.1 prints them for these symbols (checked by hand
 * with perf report on the same program). */
static const struct { const char *mangled, *shown; } demangle_cases[] = {
	{ "_ZN2ns3fooEPKcl", "ns::foo" },
	{ "_ZN7mycrate4util8crunch_x17h0123456789abcdefE", "mycrate::util::crunch_x" },
	{ "_RNvNtCs1234_7mycrate4util7crunchy", "mycrate::util::crunchy" },
	{ "_ZN2ns1KIiE4workIlEElT_i", "ns::K<int>::work<long>" },
};

static bool build_demangle_program(const char *exe)
{
	struct strbuf sb = {0};
	for (size_t i = 0; i < ARRAY_SIZE(demangle_cases); i++)
		sb_printf(&sb, "__attribute__((used, noinline)) int f%zu(int x) __asm__(\"%s\");\n"
			  "int f%zu(int x) { return x + %zu; }\n", i, demangle_cases[i].mangled,
			  i, i);
	sb_puts(&sb, "int main(void) { return 0; }\n");
	char *src = xasprintf("%s.c", exe);
	write_file(src, sb.s);
	bool ok = !sh("cc -O1 -o %s %s", exe, src);
	free(src);
	sb_free(&sb);
	return ok;
}

static const char *demangle_skip(void)
{
#ifdef HAVE_LIBIBERTY
	return NULL;
#else
	return "built without libiberty (HAVE_LIBIBERTY undefined)";
#endif
}

static void test_demangle(void)
{
	char *exe = tpath("mangled");
	if (!build_demangle_program(exe)) {
		CHECK(0, "cannot build %s", exe);
		free(exe);
		return;
	}
	for (int dem = 0; dem <= 1; dem++) {
		struct sym_ctx *c = sym_ctx_new(&(struct sym_opts){ .demangle = dem });
		struct sym_dso *d = sym_dso_get(c, exe, NULL, 0, 0);
		for (size_t i = 0; i < ARRAY_SIZE(demangle_cases); i++) {
			const char *want = dem ? demangle_cases[i].shown : demangle_cases[i].mangled;
			const struct sym *s = sym_lookup(d, nm_value(exe, demangle_cases[i].mangled));
			CHECK(s && !strcmp(s->name, want), "got %s, want %s", s ? s->name : "NULL",
			      want);
		}
		sym_ctx_free(c);
	}
	free(exe);
}

/* ---- Against perf ------------------------------------------------------------ */

struct pmap {
	u64 start, end, pgoff;
	char path[256];
};

/* "PERF_RECORD_MMAP2 pid/tid: [0xSTART(0xLEN) @ 0xPGOFF ...]: prot PATH" */
static bool parse_perf_mmap(const char *line, struct pmap *m)
{
	const char *p = strstr(line, ": [0x");
	unsigned long long s, len, off;
	if (!p || sscanf(p, ": [0x%llx(0x%llx) @ %llx", &s, &len, &off) != 3)
		return false;
	const char *path = strrchr(line, ' ');
	if (!path)
		return false;
	snprintf(m->path, sizeof(m->path), "%s", path + 1);
	m->path[strcspn(m->path, "\n")] = '\0';
	m->start = s;
	m->end = s + len;
	m->pgoff = off;
	return true;
}

/* ember's name for a sample perf printed as "ip sym (dso)". */
static const char *ember_name(struct sym_ctx *c, const struct pmap *maps, int n, u64 ip)
{
	if (ip >= 0xffff800000000000ULL)
		return sym_lookup(sym_kernel_dso(c, ip), ip) ? sym_lookup(sym_kernel_dso(c, ip), ip)->name : "[unknown]";
	for (int i = n - 1; i >= 0; i--) {
		if (ip < maps[i].start || ip >= maps[i].end)
			continue;
		struct sym_dso *d = sym_dso_get(c, maps[i].path, NULL, 0, 0);
		const struct sym *s = sym_lookup(d, sym_map_to_file(d, ip, maps[i].start,
								     maps[i].pgoff));
		return s ? s->name : "[unknown]";
	}
	return "[unknown]";
}

static const char spin_src[] =
	"#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <time.h>\n"
	"static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }\n"
	"#ifdef MANGLED\n"
	"#define SPIN(f, label) __attribute__((noinline)) long f(long n) __asm__(label); \\\n"
	"  long f(long n) { long s = 0; for (long i = 0; i < n; i++) s += i ^ (s >> 3); return s; }\n"
	"SPIN(cxx, \"_ZN2ns3fooEPKcl\")\n"
	"SPIN(rust_legacy, \"_ZN7mycrate4util8crunch_x17h0123456789abcdefE\")\n"
	"SPIN(rust_v0, \"_RNvNtCs1234_7mycrate4util7crunchy\")\n"
	"#define MANGLED_WORK(t) t += cxx(20000) + rust_legacy(20000) + rust_v0(20000)\n"
	"#else\n#define MANGLED_WORK(t)\n#endif\n"
	"int main(void) { char buf[256]; int arr[512]; long t = 0;\n"
	"  for (int k = 0; k < 4000; k++) {\n"
	"    for (int i = 0; i < 512; i++) arr[i] = rand();\n"
	"    qsort(arr, 512, sizeof(int), cmp);\n"
	"    snprintf(buf, sizeof buf, \"%d %f %s\", k, k * 1.5, \"abc\"); t += strlen(buf);\n"
	"    struct timespec ts;\n"
	"    for (int j = 0; j < 100; j++) { clock_gettime(CLOCK_MONOTONIC, &ts); t += ts.tv_nsec & 1; }\n"
	"    memmove(buf + 1, buf, 200); MANGLED_WORK(t); }\n"
	"  printf(\"%ld\\n\", t); return 0; }\n";

/* Records the spin workload with perf; NULL when that worked. */
static const char *perf_skip(void)
{
	if (system("perf --version >/dev/null 2>&1") != 0)
		return "perf is not installed";
	const char *d = tmpdir;
	char *src = tpath("spin.c");
	write_file(src, spin_src);
	free(src);
	if (sh("cc -O1 %s -o %s/spin %s/spin.c", demangle_skip() ? "" : "-DMANGLED", d, d))
		return "cannot build the workload";
	/* perf 6.1 on this kernel sometimes aborts while it collects
	 * build-ids at exit (stack smashing in util/build-id.c): -B skips
	 * that step, and a retry covers any other flake. */
	for (int tries = 0; tries < 3; tries++)
		if (!sh("perf record -B -q -F 3000 -o %s/spin.data %s/spin >/dev/null "
			"2>%s/perf.err && perf script -i %s/spin.data --show-mmap-events "
			"-F ip,sym,dso > %s/spin.txt 2>/dev/null", d, d, d, d, d))
			return NULL;
	return "perf record failed here three times";
}

/* Every sample of the recording named as perf script names it. */
static void test_against_perf_script(void)
{
	char *txt = tpath("spin.txt");
	FILE *f = fopen(txt, "r");
	free(txt);
	struct pmap maps[64];
	int nmaps = 0, samples = 0, differ = 0;
	struct sym_ctx *c = sym_ctx_new(&(struct sym_opts){ .demangle = true });
	char line[1024];
	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "PERF_RECORD_MMAP")) {
			if (nmaps < 64 && parse_perf_mmap(line, &maps[nmaps]))
				nmaps++;
			continue;
		}
		unsigned long long ip;
		char sym[512];
		if (sscanf(line, " %llx %511[^(]", &ip, sym) != 2)
			continue;
		size_t n = strlen(sym);
		while (n && sym[n - 1] == ' ')
			sym[--n] = '\0';
		const char *ours = ember_name(c, maps, nmaps, ip);
		samples++;
		/* perf 6.1 names no PLT stub of this program: a sample in one
		 * gets the symbol before .plt, _init (1 of 1465 samples in a
		 * CI run); ember names the stub (test_plt_stubs checks it). */
		size_t on = strlen(ours);
		if (!strcmp(sym, "_init") && on > 4 && !strcmp(ours + on - 4, "@plt")) {
			printf("# ip %llx: perf says _init (it names no PLT stub), ember %s\n", ip,
			       ours);
			continue;
		}
		if (strcmp(ours, sym) && differ++ < 5)
			printf("# ip %llx: perf says %s, ember %s\n", ip, sym, ours);
	}
	if (f)
		fclose(f);
	sym_ctx_free(c);
	printf("# compared %d samples with perf script, %d differ\n", samples, differ);
	CHECK(samples >= 50, "only %d samples", samples);
	CHECK(differ == 0, "%d of %d samples named differently from perf", differ, samples);
}

/* ---- Inline frames (inline.c's index of each CU's scopes) ---- */

/* Nested inlines (inner_fn in mid_fn, twice), an inline split between a
 * function and its .cold part (split_fn, given DW_AT_ranges), all from a
 * header two CUs include, so dwz can move their abstract origins to a
 * partial unit or an alt file. */
static const char inl_h[] =
	"extern volatile unsigned sink;\n"
	"__attribute__((noinline, cold)) void rare(unsigned x);\n"
	"static inline __attribute__((always_inline)) unsigned inner_fn(unsigned x)\n"
	"{ for (int i = 0; i < 50; i++) x = x * 2654435761u + (unsigned)i; return x; }\n"
	"static inline __attribute__((always_inline)) unsigned mid_fn(unsigned x)\n"
	"{ x = inner_fn(x) ^ 0x55; return inner_fn(x + 1); }\n"
	"static inline __attribute__((always_inline)) unsigned split_fn(unsigned x)\n"
	"{ if (__builtin_expect(x == 12345, 0)) { rare(x); x = mid_fn(x); rare(x); }\n"
	"  return x + 3; }\n";
static const char inl_a[] =
	"#include \"inl.h\"\nvolatile unsigned sink;\nvoid rare(unsigned x) { sink = x; }\n"
	"__attribute__((noinline)) unsigned outer_a(unsigned x) { return split_fn(mid_fn(x)); }\n"
	"unsigned outer_b(unsigned x);\n"
	"int main(int argc, char **argv) { (void)argv;\n"
	"  sink = outer_a((unsigned)argc) + outer_b((unsigned)argc); return 0; }\n";
static const char inl_b[] =
	"#include \"inl.h\"\n"
	"__attribute__((noinline)) unsigned outer_b(unsigned x) { return mid_fn(split_fn(x)); }\n";

/* The inline chain at an address as libdw's own scope search gives it
 * (what inline.c asked before its index): the inlined scopes, innermost
 * first, up to the subprogram. */
struct ref_chain {
	int k;
	const char *names[16];
	Dwarf_Die dies[16];
};

static void ref_chain_at(Dwarf *dw, u64 addr, struct ref_chain *r)
{
	Dwarf_Die cu, *scopes = NULL, *outer = NULL;
	r->k = 0;
	int n = dwarf_addrdie(dw, addr, &cu) ? dwarf_getscopes(&cu, addr, &scopes) : 0;
	int i = 0;
	while (i < n && dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine &&
	       dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
		i++;
	int m = i < n && dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine
		? dwarf_getscopes_die(&scopes[i], &outer) : 0;
	for (int j = 0; j < m && r->k < 16 && dwarf_tag(&outer[j]) != DW_TAG_subprogram; j++)
		if (dwarf_tag(&outer[j]) == DW_TAG_inlined_subroutine) {
			r->names[r->k] = dwarf_diename(&outer[j]);
			r->dies[r->k++] = outer[j];
		}
	free(outer);
	free(scopes);
}

/* "file:line" of an inlined scope's call site, basename as perf shows. */
static void ref_call_site(Dwarf_Die *die, char *out, size_t cap)
{
	Dwarf_Attribute a;
	Dwarf_Word file, line;
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t n;
	const char *name = NULL;
	if (dwarf_attr(die, DW_AT_call_file, &a) && !dwarf_formudata(&a, &file) &&
	    dwarf_attr(die, DW_AT_call_line, &a) && !dwarf_formudata(&a, &line) &&
	    dwarf_diecu(die, &cu, NULL, NULL) && !dwarf_getsrcfiles(&cu, &files, &n) && file < n)
		name = dwarf_filesrc(files, file, NULL, NULL);
	if (name)
		snprintf(out, cap, "%s:%llu", strrchr(name, '/') ? strrchr(name, '/') + 1 : name,
			 (unsigned long long)line);
	else
		snprintf(out, cap, "(none)");
}

/* What ember says of the chain at fa: "a (inlined)|b (inlined)|" (the
 * inlined frames, the base left out) and their call sites. */
static void ember_chain(struct sym_ctx *c, struct sym_dso *d, u64 fa, struct strbuf *names,
			struct strbuf *lines)
{
	const struct sym *s = sym_lookup(d, fa), *out[16];
	int n = s ? sym_inline_frames(c, d, fa, s, out, 16) : 0;
	for (int i = 0; i + 1 < n; i++) {
		const char *line = sym_inline_srcline(c, d, fa, i + 1);
		sb_printf(names, "%s|", out[i]->name);
		sb_printf(lines, "%s|", line ? line : "(none)");
	}
}

/* The function symbols of path (name, start, size) among want. */
static int text_symbols(const char *path, const char *const *want, int nwant, u64 *start,
			u64 *size, const char **names)
{
	char *cmd = xasprintf("nm -S --defined-only '%s' 2>/dev/null", path);
	FILE *p = popen(cmd, "r");
	free(cmd);
	char line[512], sym[400], type;
	unsigned long long v, sz;
	int n = 0;
	while (p && fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %llx %c %399s", &v, &sz, &type, sym) == 4)
			for (int i = 0; i < nwant; i++)
				if (!strcmp(sym, want[i]) && n < 8) {
					start[n] = v, size[n] = sz, names[n++] = want[i];
				}
	if (p)
		pclose(p);
	return n;
}

/* Compares ember's inline frames and call-site lines with libdw's scope
 * search at every byte of the program's functions; returns the chains
 * ember gave, one "symbol: chain" a line, for the checks by construction. */
static char *last_dwarf_file;   /* where check_chains' DWARF came from */

static char *check_chains(const char *path, const char *cache_dir)
{
	static const char *const want[] = { "outer_a", "outer_a.cold", "outer_b", "outer_b.cold" };
	u64 start[8], size[8];
	const char *names[8];
	int nsym = text_symbols(path, want, 4, start, size, names);
	CHECK(nsym >= 2, "%s: %d of outer_a, outer_b and their .cold parts", path, nsym);
	int fd = open(path, O_RDONLY);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	CHECK(dw, "libdw cannot read %s", path);
	struct sym_opts o = { .demangle = true, .debug_dir = "/nonexistent", .cache_dir = cache_dir };
	struct sym_ctx *c = sym_ctx_new(&o);
	struct sym_dso *d = sym_dso_get(c, path, NULL, 0, 0);
	struct strbuf seen = { 0 };
	int compared = 0, differ = 0;
	const char *from = sym_dso_dwarf_file(c, d);
	printf("# %s: DWARF read from %s\n", path, from ? from : "(none)");
	free(last_dwarf_file);
	last_dwarf_file = from ? xstrdup(from) : NULL;
	for (int i = 0; dw && i < nsym; i++)
		for (u64 fa = start[i]; fa < start[i] + size[i]; fa++) {
			struct ref_chain r;
			ref_chain_at(dw, fa, &r);
			struct strbuf want_n = { 0 }, want_l = { 0 }, got_n = { 0 }, got_l = { 0 };
			for (int j = 0; j < r.k; j++) {
				char site[256];
				ref_call_site(&r.dies[j], site, sizeof(site));
				sb_printf(&want_n, "%s (inlined)|", r.names[j]);
				sb_printf(&want_l, "%s|", site);
			}
			ember_chain(c, d, fa, &got_n, &got_l);
			const char *wn = want_n.s ? want_n.s : "", *gn = got_n.s ? got_n.s : "";
			const char *wl = want_l.s ? want_l.s : "", *gl = got_l.s ? got_l.s : "";
			compared++;
			if (strcmp(wn, gn) || strcmp(wl, gl)) {
				if (differ++ < 3)
					printf("# %s %#llx: libdw %s %s, ember %s %s\n", path,
					       (unsigned long long)fa, wn, wl, gn, gl);
			}
			char *entry = xasprintf("%s: %s\n", names[i], gn);
			if (*gn && (!seen.s || !strstr(seen.s, entry)))
				sb_puts(&seen, entry);
			free(entry);
			free(want_n.s), free(want_l.s), free(got_n.s), free(got_l.s);
		}
	printf("# %s: %d addresses compared with libdw's scopes, %d differ\n", path, compared,
	       differ);
	CHECK(compared > 100 && differ == 0, "%s: %d of %d addresses differ", path, differ,
	      compared);
	sym_ctx_free(c);
	if (dw)
		dwarf_end(dw);
	if (fd >= 0)
		close(fd);
	return seen.s ? seen.s : xstrdup("");
}

/* The chains a program must show by its construction. */
static void check_constructed(const char *path, const char *seen)
{
	CHECK(strstr(seen, "outer_a: inner_fn (inlined)|mid_fn (inlined)|\n"),
	      "%s: no inner_fn in mid_fn in outer_a; seen:\n%s", path, seen);
	CHECK(strstr(seen, "outer_b: inner_fn (inlined)|mid_fn (inlined)|\n"),
	      "%s: no inner_fn in mid_fn in outer_b; seen:\n%s", path, seen);
	/* split_fn's code lies in outer_a and in outer_a.cold. */
	CHECK(strstr(seen, "outer_a: split_fn (inlined)|\n") &&
	      strstr(seen, "outer_a.cold: inner_fn (inlined)|mid_fn (inlined)|split_fn (inlined)|\n"),
	      "%s: split_fn not in both parts of outer_a; seen:\n%s", path, seen);
}

static bool has_inline_ranges(const char *path)
{
	return !sh("readelf --debug-dump=info '%s' | grep -A8 DW_TAG_inlined_subroutine |"
		   " grep -q DW_AT_ranges", path);
}

static void test_inline_index(void)
{
	const char *d = tmpdir;
	char *h = tpath("inl.h"), *a = tpath("inl-a.c"), *b = tpath("inl-b.c");
	write_file(h, inl_h);
	write_file(a, inl_a);
	write_file(b, inl_b);
	bool ok = !sh("cd %s && cc -O2 -g -o inl2 inl-a.c inl-b.c && cc -O1 -g -o inl1 inl-a.c inl-b.c", d);
	CHECK(ok, "cannot build the inline programs");
	char *p2 = tpath("inl2"), *p1 = tpath("inl1");
	if (ok) {
		CHECK(has_inline_ranges(p2), "no inlined scope with DW_AT_ranges in %s", p2);
		char *seen = check_chains(p2, "");
		check_constructed(p2, seen);
		free(seen);
		seen = check_chains(p1, "");
		free(seen);
	}
	free(h), free(a), free(b), free(p1), free(p2);
}

/* A file kept through many releases has its DWARF let go of and opened
 * again on next use, giving the same inline chains (test_inline_index
 * built inl2). */
static void test_dwarf_renew(void)
{
	char *path = tpath("inl2");
	static const char *const want[] = { "outer_a" };
	u64 start[8], size[8];
	const char *names[8];
	struct sym_opts o = { .demangle = true, .debug_dir = "/nonexistent", .cache_dir = "" };
	struct sym_ctx *c = sym_ctx_new(&o);
	struct sym_dso *d = sym_dso_get(c, path, NULL, 0, 0);
	CHECK(text_symbols(path, want, 1, start, size, names) == 1, "no outer_a in %s", path);
	struct strbuf before = { 0 }, lines = { 0 }, after = { 0 };
	u64 fa = start[0];
	for (; fa < start[0] + size[0] && !before.s; fa++)
		ember_chain(c, d, fa, &before, &lines);
	fa--;
	CHECK(before.s != NULL, "no inline chain in outer_a");
	sym_dso_hold(d);                      /* a file some process maps */
	/* The line tables go at each release, and open again when asked:
	 * the next address's call-site lines are still found. */
	sym_ctx_release(c);
	CHECK(sym_ctx_stats(c)->dwarf_lines_closed == 1, "%llu line tables closed",
	      (unsigned long long)sym_ctx_stats(c)->dwarf_lines_closed);
	struct strbuf next = { 0 }, next_lines = { 0 };
	u64 at = fa + 1;
	for (; at < start[0] + size[0] && !next.s; at++)
		ember_chain(c, d, at, &next, &next_lines);
	CHECK(next_lines.s && !strstr(next_lines.s, "(none)"), "call sites after the close: %s",
	      next_lines.s ? next_lines.s : "none");
	free(next.s), free(next_lines.s);
	for (int i = 0; i < 59; i++)
		sym_ctx_release(c);
	CHECK(sym_ctx_stats(c)->dwarf_renewed == 0, "renewed after 60 releases");
	sym_ctx_release(c);
	CHECK(sym_ctx_stats(c)->dwarf_renewed == 1, "%llu renewed after 61 releases",
	      (unsigned long long)sym_ctx_stats(c)->dwarf_renewed);
	ember_chain(c, d, fa, &after, &lines);
	CHECK(before.s && after.s && !strcmp(before.s, after.s), "chain %s, then %s",
	      before.s ? before.s : "", after.s ? after.s : "");
	CHECK(sym_ctx_stats(c)->files_released == 0, "a held file released");
	sym_dso_put(d);
	sym_ctx_free(c);
	free(before.s), free(after.s), free(lines.s), free(path);
}

/* The same programs after dwz -m: partial units imported by the CUs and
 * the abstract origins in an alt file (.gnu_debugaltlink, reached with
 * DW_FORM_GNU_ref_alt) give the same chains. */
static void test_inline_index_dwz(void)
{
	const char *d = tmpdir;
	bool ok = !sh("cd %s && mkdir -p dz && cp inl2 inl1 dz/ && cd dz &&"
		      " dwz -m common.debug -M %s/dz/common.debug inl2 inl1", d, d);
	CHECK(ok, "dwz failed");
	char *p2 = tpath("dz/inl2");
	if (ok) {
		CHECK(!sh("readelf -S '%s' | grep -q gnu_debugaltlink && readelf --debug-dump=info"
			  " '%s' 2>/dev/null | grep -q DW_TAG_imported_unit", p2, p2),
		      "dwz made no alt file or partial units");
		char *seen = check_chains(p2, "");
		check_constructed(p2, seen);
		free(seen);
		/* Compressed, read through its inflated copy in another
		 * folder: the alt file is still found (by its absolute path). */
		char *z = tpath("dz/inl2z"), *cache = tpath("dzcache");
		CHECK(!sh("objcopy --compress-debug-sections=zlib %s %s", p2, z), "objcopy");
		seen = check_chains(z, cache);
		check_constructed(z, seen);
		CHECK(last_dwarf_file && strstr(last_dwarf_file, "/dzcache/debug/"),
		      "DWARF read from %s", last_dwarf_file ? last_dwarf_file : "(none)");
		free(seen);
		free(z);
		free(cache);
	}
	free(p2);
}

/* The inflated copy of a file whose DWARF is compressed: made in the
 * cache on first use, named by build-id, with nothing compressed left,
 * used again as it is, made anew over a broken one; and the chains the
 * same through it as without a cache (or with one that cannot be made). */
static void test_inflated_copy(void)
{
	const char *d = tmpdir;
	char *z = tpath("inlz"), *cache = tpath("cache");
	bool ok = !sh("cd %s && objcopy --compress-debug-sections=zlib inl2 inlz &&"
		      " readelf -SW inlz | grep debug_info | grep -q ' C '", d);
	CHECK(ok, "cannot make a copy with compressed DWARF");
	u8 id[64];
	int n = ok ? sym_read_build_id(z, id, sizeof(id)) : -1;
	if (n <= 0) {
		CHECK(!ok, "no build-id in %s", z);
		goto out;
	}
	char *h = hex(id, n), *copy = xasprintf("%s/debug/%s.debug", cache, h);
	char *seen = check_chains(z, cache);
	check_constructed(z, seen);
	free(seen);
	struct stat st1, st2;
	CHECK(last_dwarf_file && !strcmp(last_dwarf_file, copy), "DWARF read from %s, not %s",
	      last_dwarf_file ? last_dwarf_file : "(none)", copy);
	CHECK(stat(copy, &st1) == 0, "no inflated copy at %s", copy);
	CHECK(sh("readelf -SW '%s' | grep debug_ | grep -q ' C '", copy) != 0,
	      "a section of %s is still compressed", copy);
	u8 got[64];
	CHECK(sym_read_build_id(copy, got, sizeof(got)) == n && !memcmp(got, id, (size_t)n),
	      "the copy has another build-id");
	free(check_chains(z, cache));
	CHECK(stat(copy, &st2) == 0 && st2.st_ino == st1.st_ino, "the copy was made again");
	CHECK(last_dwarf_file && !strcmp(last_dwarf_file, copy), "the copy was not read again");
	/* Broken (not an ELF file): made anew, the chains still right. */
	write_file(copy, "not an ELF file\n");
	seen = check_chains(z, cache);
	check_constructed(z, seen);
	free(seen);
	CHECK(sym_read_build_id(copy, got, sizeof(got)) == n, "the broken copy stayed");
	/* A cache that cannot be made: read as it is. */
	seen = check_chains(z, "/proc/self/no-cache");
	check_constructed(z, seen);
	free(seen);
	CHECK(last_dwarf_file && !strcmp(last_dwarf_file, z), "DWARF read from %s, not %s",
	      last_dwarf_file ? last_dwarf_file : "(none)", z);
	free(h);
	free(copy);
out:
	free(z);
	free(cache);
}

static const char *dwz_skip(void)
{
	return system("command -v dwz >/dev/null 2>&1") ? "dwz not installed (make deps)" : NULL;
}

#define RUN_UNLESS(reason, fn)                                               \
	do {                                                                 \
		const char *why_ = (reason);                                 \
		if (why_)                                                    \
			SKIP(fn, why_);                                      \
		else                                                         \
			RUN(fn);                                             \
	} while (0)

/* ---- process address spaces (maps.c) ---- */

static void add_map(struct sym_maps *m, u64 start, u64 end, u64 pgoff, const char *path)
{
	struct sym_map nm = { .start = start, .end = end, .pgoff = pgoff, .path = xstrdup(path),
			      .file = (void *)path, .file_known = true };
	sym_maps_insert(m, &nm);
}

/* A new mapping over old ones cuts them back, each part at its own file
 * offset; lookups find the right one; a fork's copy is its own. */
static void test_process_maps(void)
{
	u64 clock = 0;
	struct sym_maps *m = sym_maps_new(42, &clock);
	add_map(m, 0x1000, 0x5000, 0, "/a");
	add_map(m, 0x8000, 0x9000, 0, "/b");
	u64 gen = m->generation;
	add_map(m, 0x2000, 0x3000, 0x10000, "/c");      /* splits /a in two */
	CHECK(m->generation > gen, "an edit moves the generation");
	CHECK(m->v.n == 4, "%zu maps, want 4 (/a, /c, /a, /b)", m->v.n);
	const struct sym_map *x = sym_maps_find(m, 0x1800);
	CHECK(x && !strcmp(x->path, "/a") && x->end == 0x2000 && x->pgoff == 0 && !x->file_known,
	      "the part before keeps its offset, its file looked up again");
	x = sym_maps_find(m, 0x2800);
	CHECK(x && !strcmp(x->path, "/c") && x->pgoff == 0x10000, "the new map");
	x = sym_maps_find(m, 0x4000);
	CHECK(x && !strcmp(x->path, "/a") && x->start == 0x3000 && x->pgoff == 0x2000 &&
	      !x->file_known, "the part after: offset moved by 0x2000, file looked up again");
	CHECK(!sym_maps_find(m, 0x6000) && !sym_maps_find(m, 0x9000) && !sym_maps_find(m, 0x0fff),
	      "holes and ends are in no map");
	add_map(m, 0x0, 0x10000, 0, "/d");              /* covers everything */
	CHECK(m->v.n == 1 && sym_maps_find(m, 0x8800) && !strcmp(sym_maps_find(m, 0x8800)->path, "/d"),
	      "a covering map replaces all: %zu maps", m->v.n);
	struct sym_maps *c = sym_maps_copy(m, 43);
	add_map(c, 0x100, 0x200, 0, "/e");
	CHECK(c->pid == 43 && c->v.n == 3 && m->v.n == 1 && c->generation != m->generation,
	      "the copy is edited alone: %zu and %zu maps", c->v.n, m->v.n);
	sym_maps_free(c);
	sym_maps_free(m);
}

/* Syscall sites, known by construction: a shared object whose my_open
 * passes its first argument to openat (the path arrives in rdi, moves to
 * rsi), whose my_stat loads its path from memory (no entry register has
 * it), and whose my_any makes a syscall of a number it was passed. */
static const char sites_src[] =
	".text\n"
	".globl my_open\n.type my_open,@function\nmy_open:\n.cfi_startproc\n"
	"push %rbx\n.cfi_def_cfa_offset 16\nmov %rdi,%rbx\nmov %rbx,%rsi\n"
	"mov $-100,%edi\nxor %edx,%edx\nmov $257,%eax\nsyscall\n"
	"pop %rbx\n.cfi_def_cfa_offset 8\nret\n.cfi_endproc\n"
	".p2align 4\n"
	".globl my_stat\n.type my_stat,@function\nmy_stat:\n.cfi_startproc\n"
	"lea name(%rip),%rsi\nmov $-100,%edi\nmov $262,%eax\nsyscall\nret\n.cfi_endproc\n"
	".p2align 4\n"
	".globl my_any\n.type my_any,@function\nmy_any:\n.cfi_startproc\n"
	"mov %rdi,%rax\nsyscall\nret\n.cfi_endproc\n"
	".section .rodata\nname: .asciz \"/\"\n";

static void test_syscall_sites(void)
{
	char *src = tpath("sites.s"), *lib = tpath("libsites.so");
	FILE *f = fopen(src, "w");
	fputs(sites_src, f);
	fclose(f);
	if (sh("cc -shared -o %s %s", lib, src) != 0) {
		CHECK(0, "cannot assemble %s", src);
		return;
	}
	struct sym_syscall_want want[] = { { 257, 1 }, { 262, 1 } };
	struct sym_syscall_sites s;
	CHECK(sym_syscall_sites(lib, want, 2, &s) == 0, "%s", err_msg());
	CHECK(s.v.n == 2 && s.unknown == 1, "%zu sites, %zu unknown", s.v.n, s.unknown);
	int fd = open(lib, O_RDONLY);
	for (size_t i = 0; i < s.v.n; i++) {
		const struct sym_syscall_site *t = &s.v.v[i];
		unsigned char insn[2] = { 0, 0 };
		CHECK(pread(fd, insn, 2, (off_t)t->offset) == 2 && insn[0] == 0x0f && insn[1] == 0x05,
		      "site %zu at %#llx is no syscall instruction", i, (unsigned long long)t->offset);
		const char *fn = t->nr == 257 ? "my_open" : "my_stat";
		CHECK(t->entry == nm_value(lib, fn), "%s: entry %#llx, nm says %#llx", fn,
		      (unsigned long long)t->entry, (unsigned long long)nm_value(lib, fn));
		CHECK(t->entry_arg == (t->nr == 257 ? 0 : -1), "%s: path in argument %d on entry",
		      fn, t->entry_arg);
	}
	close(fd);
	sym_syscall_sites_free(&s);
	CHECK(sym_syscall_sites(src, want, 2, &s) < 0, "an assembly file taken for ELF");
	free(src);
	free(lib);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		printf("FAIL: setup: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	RUN(test_pie_and_shared_library);
	RUN(test_non_pie_and_rebased_library);
	RUN(test_synthesized_mapping);
	RUN(test_release);
	RUN(test_plt_stubs);
	RUN(test_debug_file_by_build_id);
	RUN(test_debug_file_by_debuglink);
	RUN(test_build_id_mismatch);
	RUN(test_prefetch);
	RUN(test_missing_and_corrupt_files);
	RUN_UNLESS(kallsyms_skip(), test_kallsyms);
	RUN_UNLESS(modules_skip(), test_real_modules);
	RUN(test_fake_kallsyms_modules);
	RUN(test_kallsyms_prefetch);
	RUN(test_kernel_relocation);
	RUN(test_kernel_build_id_choice);
	RUN(test_build_id_cache);
	RUN(test_jit_map);
	RUN(test_jit_forget);
	RUN(test_process_maps);
	RUN(test_inline_index);
	RUN(test_dwarf_renew);
	RUN_UNLESS(dwz_skip(), test_inline_index_dwz);
	RUN(test_inflated_copy);
	RUN(test_syscall_sites);
	free(last_dwarf_file);
	RUN_UNLESS(demangle_skip(), test_demangle);
	RUN_UNLESS(perf_skip(), test_against_perf_script);
	if (!getenv("KEEP_TMP"))
		sh("rm -rf %s", tmpdir);
	return test_summary();
}
