/* test-format.c - unit tests of the perf.data writer: byte layouts checked
 * directly, and files and streams checked by Linux perf (perf script,
 * perf report --header-only, perf buildid-list) when perf is installed. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zstd.h>

#include "common/common.h"
#include "format/format.h"
#include "tests/unit/test.h"

#define SAMPLE_ID 4242
#define PERIOD 250000
#define NSAMPLES 6
#define ALIGN4(x) (((x) + 3u) & ~3u)

static char tmpdir[64];
static const char *perf_missing;   /* NULL when perf can run */

/* ---- Functions whose addresses the synthetic samples point at --------- */

volatile int fmt_sink;

__attribute__((noinline)) void fmt_marker_alpha(void)
{
	for (int i = 0; i < 64; i++)
		fmt_sink += i * 3;
}

__attribute__((noinline)) void fmt_marker_beta(void)
{
	for (int i = 0; i < 64; i++)
		fmt_sink ^= i * 7;
	fmt_marker_alpha();
}

/* ---- Helpers --------------------------------------------------------------- */

static char *tmp_path(const char *name)
{
	return xasprintf("%s/%s", tmpdir, name);
}

static u8 *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return NULL;
	struct stat st;
	fstat(fd, &st);
	u8 *p = xmalloc(st.st_size + 1);
	ssize_t got = read(fd, p, st.st_size);
	close(fd);
	*len = got < 0 ? 0 : (size_t)got;
	return p;
}

static u64 rd64(const u8 *p)
{
	u64 v;
	memcpy(&v, p, 8);
	return v;
}

static u16 rd16(const u8 *p)
{
	u16 v;
	memcpy(&v, p, 2);
	return v;
}

static u32 rd32(const u8 *p)
{
	u32 v;
	memcpy(&v, p, 4);
	return v;
}

/* Finds feature f's section in a whole file image; false when absent. */
static bool feature_section(const u8 *f, size_t len, int feat, u64 *off, u64 *size)
{
	int idx = 0;
	if (!(f[72 + feat / 8] >> (feat % 8) & 1))
		return false;
	for (int b = 0; b < feat; b++)
		idx += f[72 + b / 8] >> (b % 8) & 1;
	const u8 *sec = f + rd64(f + 40) + rd64(f + 48) + 16 * idx;
	if (sec + 16 > f + len)
		return false;
	*off = rd64(sec);
	*size = rd64(sec + 8);
	return *off + *size <= len;
}

/* Runs a shell command; returns its exit status and its stdout in *out. */
static int run(const char *cmd, struct strbuf *out)
{
	sb_reset(out);
	sb_puts(out, "");
	FILE *f = popen(cmd, "r");
	if (!f)
		return -1;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		sb_add(out, buf, n);
	int st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count_lines_with(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The mapping of our own text and our build-id, as a recorder would find. */
struct self_map {
	u64 start, end, pgoff, ino;
	u32 maj, min;
	char path[4096];
	u8 build_id[20];
	u8 build_id_size;
};

static int find_text_map(struct self_map *m)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4600];
	u64 want = (u64)(uintptr_t)&fmt_marker_alpha;
	int found = 0;
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off, ino;
		unsigned maj, min;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perms, &off,
			   &maj, &min, &ino, &pos) < 7)
			continue;
		if (want < s || want >= e)
			continue;
		m->start = s, m->end = e, m->pgoff = off, m->ino = ino;
		m->maj = maj, m->min = min;
		snprintf(m->path, sizeof(m->path), "%s", line + pos);
		m->path[strcspn(m->path, "\n")] = '\0';
		found = 1;
	}
	if (f)
		fclose(f);
	return found ? 0 : -1;
}

static int note_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct self_map *m = data;
	if (info->dlpi_name && info->dlpi_name[0])
		return 0;   /* the main program has an empty name */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const u8 *p = (const u8 *)(info->dlpi_addr + ph->p_vaddr);
		const u8 *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const u8 *name = p + sizeof(*nh);
			const u8 *desc = name + ALIGN4(nh->n_namesz);
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && nh->n_descsz <= 20) {
				memcpy(m->build_id, desc, nh->n_descsz);
				m->build_id_size = (u8)nh->n_descsz;
				return 1;
			}
			p = desc + ALIGN4(nh->n_descsz);
		}
	}
	return 1;
}

static void hex(const u8 *p, int n, char *out)
{
	for (int i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

/* ---- Building a realistic cpu-clock recording ------------------------------ */

static struct perf_event_attr clock_attr(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = PERIOD,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			       PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_CALLCHAIN,
		.sample_id_all = 1,
		.comm = 1,
		.mmap = 1,
		.mmap2 = 1,
		.task = 1,
	};
	return a;
}

static u64 sample_time(int i)
{
	return 5000000000ULL + (u64)i * 1000000ULL;   /* 5.000000, 5.001000 ... */
}

static u64 sample_ip(int i)
{
	return i % 2 ? (u64)(uintptr_t)&fmt_marker_beta + 4
		     : (u64)(uintptr_t)&fmt_marker_alpha + 8;
}

/* IDENTIFIER, IP, TID, TIME, CPU, PERIOD, CALLCHAIN: the kernel's order. */
static size_t build_sample(u64 *rec, int i, u32 pid)
{
	size_t n = 1;
	rec[n++] = SAMPLE_ID;
	rec[n++] = sample_ip(i);
	rec[n++] = (u64)pid << 32 | pid;
	rec[n++] = sample_time(i);
	rec[n++] = (u64)(i % 2);
	rec[n++] = PERIOD;
	rec[n++] = 3;
	rec[n++] = PERF_CONTEXT_USER;
	rec[n++] = sample_ip(i);
	rec[n++] = (u64)(uintptr_t)&fmt_marker_beta + 16;
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
				       (u16)(n * 8) };
	memcpy(rec, &h, sizeof(h));
	return n * 8;
}

static void add_header_features(struct pd_writer *w, const struct self_map *m)
{
	struct utsname u;
	uname(&u);
	pd_writer_feat_string(w, PD_FEAT_HOSTNAME, u.nodename);
	pd_writer_feat_string(w, PD_FEAT_OSRELEASE, u.release);
	pd_writer_feat_string(w, PD_FEAT_VERSION, "ember-test");
	pd_writer_feat_string(w, PD_FEAT_ARCH, u.machine);
	pd_writer_feat_nrcpus(w, 2, 2);
	pd_writer_feat_total_mem(w, 4000000);
	char *argv[] = { "ember", "record", "--fmt-test-flag", NULL };
	pd_writer_feat_cmdline(w, 3, argv);
	pd_writer_feat_event_desc(w);
	char *cores[] = { "0-1" }, *threads[] = { "0", "1" }, *dies[] = { "0-1" };
	u32 core_id[] = { 0, 1 }, socket_id[] = { 0, 0 }, die_id[] = { 0, 0 };
	struct pd_cpu_topology t = {
		.nr_cores = 1, .core_siblings = cores,
		.nr_threads = 2, .thread_siblings = threads,
		.nr_cpus = 2, .core_id = core_id, .socket_id = socket_id,
		.die_id = die_id, .nr_dies = 1, .die_siblings = dies,
	};
	pd_writer_feat_cpu_topology(w, &t);
	struct pd_numa_node node = { 0, 1234567, 654321, "0-1" };
	pd_writer_feat_numa(w, &node, 1);
	if (m->build_id_size) {
		struct pd_build_id b = { .pid = -1, .cpumode = PERF_RECORD_MISC_USER,
					 .size = m->build_id_size, .filename = m->path };
		b.pid = (s32)getpid();
		memcpy(b.id, m->build_id, m->build_id_size);
		pd_writer_feat_build_ids(w, &b, 1);
	}
}

/* One attr, COMM, MMAP2 of our text (build-id variant), NSAMPLES samples. */
static int write_clock_file(const char *path, bool pipe, const struct self_map *m,
			    bool close_it)
{
	u32 pid = (u32)getpid();
	struct perf_event_attr a = clock_attr();
	u64 id = SAMPLE_ID;
	struct pd_writer *w = pd_writer_open(path, pipe);
	if (!w)
		return -1;
	int bad = pd_writer_add_attr(w, &a, "cpu-clock", &id, 1);
	add_header_features(w, m);
	bad |= pd_writer_begin(w);
	struct pd_sample_id sid = { pid, pid, 1000, SAMPLE_ID, 0 };
	bad |= pd_write_comm(w, &a, pid, pid, "fmtcomm", false, &sid);
	struct pd_mmap2 mm = {
		.pid = pid, .tid = pid, .start = m->start, .len = m->end - m->start,
		.pgoff = m->pgoff, .prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE,
		.cpumode = PERF_RECORD_MISC_USER, .filename = m->path,
		.build_id = m->build_id_size ? m->build_id : NULL,
		.build_id_size = m->build_id_size,
	};
	if (!m->build_id_size)
		mm.maj = m->maj, mm.min = m->min, mm.ino = m->ino;
	bad |= pd_write_mmap2(w, &a, &mm, &sid);
	bad |= pd_writer_finished_round(w);
	u64 rec[32];
	for (int i = 0; i < NSAMPLES; i++)
		bad |= pd_writer_write(w, rec, build_sample(rec, i, pid));
	bad |= pd_writer_finished_round(w);
	bad |= pd_writer_feat_sample_time(w, sample_time(0), sample_time(NSAMPLES - 1));
	if (!close_it) {
		pd_writer_abort(w);
		return bad ? -1 : 0;
	}
	return pd_writer_close(w) || bad ? -1 : 0;
}

/* perf script lines for our samples, one per sample. */
static const char *SCRIPT_FIELDS = "-F comm,pid,tid,cpu,time,event,ip,sym,symoff,dso";

static int perf_script(const char *input, bool from_pipe, struct strbuf *out)
{
	char *cmd = from_pipe
		? xasprintf("cat '%s' | perf script -i - -G %s 2>%s/script.err", input,
			    SCRIPT_FIELDS, tmpdir)
		: xasprintf("perf script -i '%s' -G %s 2>%s/script.err", input,
			    SCRIPT_FIELDS, tmpdir);
	int rc = run(cmd, out);
	free(cmd);
	return rc;
}

/* Every sample line shows comm, pid/tid, cpu, time, symbol and dso. */
static void check_sample_lines(const char *text, const struct self_map *m)
{
	u32 pid = (u32)getpid();
	char who[64], when[64];
	for (int i = 0; i < NSAMPLES; i++) {
		u64 t = sample_time(i);
		/* perf pads the tid to five columns: match up to the cpu. */
		snprintf(who, sizeof(who), " %u/%u", pid, pid);
		snprintf(when, sizeof(when), " %llu.%06llu: ",
			 (unsigned long long)(t / 1000000000ULL),
			 (unsigned long long)(t % 1000000000ULL / 1000));
		const char *at = strstr(text, when);
		CHECK(at, "no line with time '%s' in:\n%s", when, text);
		if (!at)
			continue;
		const char *bol = at;
		while (bol > text && bol[-1] != '\n')
			bol--;
		char *l = xasprintf("%.*s", (int)(at - bol + strcspn(at, "\n")), bol);
		const char *sym = i % 2 ? "fmt_marker_beta+0x4 " : "fmt_marker_alpha+0x8 ";
		CHECK(strstr(l, "fmtcomm "), "comm missing: %s", l);
		CHECK(strstr(l, " cpu-clock: "), "event name missing: %s", l);
		CHECK(strstr(l, who), "want '%s': %s", who, l);
		char cpu[16];
		snprintf(cpu, sizeof(cpu), " [%03d] ", i % 2);
		CHECK(strstr(l, cpu), "want '%s': %s", cpu, l);
		CHECK(strstr(l, sym), "want %s: %s", sym, l);
		CHECK(strstr(l, m->path), "want dso %s: %s", m->path, l);
		free(l);
	}
}

/* ---- Tests -------------------------------------------------------------------- */

static void test_file_header_layout(void)
{
	char *path = tmp_path("layout.data");
	struct perf_event_attr a = clock_attr();
	u64 ids[2] = { 7, 8 };
	struct pd_writer *w = pd_writer_open(path, false);
	CHECK(w, "%s", err_msg());
	if (!w)
		return;
	CHECK(!pd_writer_is_pipe(w), "a regular file became a pipe");
	CHECK(pd_writer_add_attr(w, &a, "cpu-clock", ids, 2) == 0, "%s", err_msg());
	CHECK(pd_writer_feat_string(w, PD_FEAT_HOSTNAME, "hostA") == 0, "%s", err_msg());
	CHECK(pd_writer_feat_nrcpus(w, 4, 3) == 0, "%s", err_msg());
	CHECK(pd_writer_begin(w) == 0, "%s", err_msg());

	/* The placeholder: attrs and data findable, data size 0 = unfinished. */
	size_t len;
	u8 *f = slurp(path, &len);
	u64 ids_size = 2 * 8, attrs_off = 104 + ids_size, data_off = attrs_off + 144;
	CHECK(len == data_off, "placeholder file is %zu bytes, want %llu", len,
	      (unsigned long long)data_off);
	CHECK(!memcmp(f, "PERFILE2", 8), "magic %.8s", f);
	CHECK(rd64(f + 8) == 104 && rd64(f + 16) == 144, "size %llu attr_size %llu",
	      (unsigned long long)rd64(f + 8), (unsigned long long)rd64(f + 16));
	CHECK(rd64(f + 24) == attrs_off && rd64(f + 32) == 144, "attrs section wrong");
	CHECK(rd64(f + 40) == data_off && rd64(f + 48) == 0, "placeholder data %llu+%llu",
	      (unsigned long long)rd64(f + 40), (unsigned long long)rd64(f + 48));
	CHECK(rd64(f + 72) == 0, "placeholder claims features");
	free(f);

	u64 rec[32];
	size_t n = build_sample(rec, 0, 1);
	CHECK(pd_writer_write(w, rec, n) == 0, "%s", err_msg());
	CHECK(pd_writer_data_size(w) == n, "data size %llu", (unsigned long long)pd_writer_data_size(w));
	CHECK(pd_writer_close(w) == 0, "%s", err_msg());

	f = slurp(path, &len);
	CHECK(rd64(f + 48) == n, "final data size %llu want %zu", (unsigned long long)rd64(f + 48), n);
	/* Feature bitmap: exactly HOSTNAME (3) and NRCPUS (7). */
	CHECK(rd64(f + 72) == ((1ULL << 3) | (1ULL << 7)), "bitmap %llx",
	      (unsigned long long)rd64(f + 72));
	CHECK(rd64(f + 80) == 0 && rd64(f + 88) == 0 && rd64(f + 96) == 0, "high bits set");
	/* The attr: size 128, its ids section pointing at 7 and 8. */
	const u8 *fa = f + attrs_off;
	CHECK(rd32(fa + 4) == sizeof(struct perf_event_attr) && rd32(fa + 4) == 128,
	      "attr.size %u", rd32(fa + 4));
	CHECK(rd64(fa + 128) == 104 && rd64(fa + 136) == 16, "ids section %llu+%llu",
	      (unsigned long long)rd64(fa + 128), (unsigned long long)rd64(fa + 136));
	CHECK(rd64(f + 104) == 7 && rd64(f + 112) == 8, "ids not 7, 8");
	CHECK(!memcmp(f + data_off, rec, n), "data section differs from the record");
	/* Section table after the data, then HOSTNAME: u32 64, "hostA", zeros. */
	const u8 *sec = f + data_off + n;
	u64 host_off = rd64(sec), host_size = rd64(sec + 8);
	CHECK(host_off == data_off + n + 32 && host_size == 4 + 64, "hostname at %llu size %llu",
	      (unsigned long long)host_off, (unsigned long long)host_size);
	if (host_off + host_size <= len) {
		CHECK(rd32(f + host_off) == 64 && !strcmp((char *)f + host_off + 4, "hostA"),
		      "hostname body wrong");
		CHECK(f[host_off + 4 + 63] == 0, "string not NUL padded");
	}
	u64 nr_off = rd64(sec + 16);
	CHECK(rd64(sec + 24) == 8 && nr_off + 8 <= len && rd32(f + nr_off) == 4 &&
	      rd32(f + nr_off + 4) == 3, "NRCPUS body wrong");
	CHECK(len == nr_off + 8, "file is %zu bytes, features end at %llu", len,
	      (unsigned long long)(nr_off + 8));
	free(f);
	free(path);
}

static void test_sample_id_trailer(void)
{
	struct perf_event_attr a = { .sample_id_all = 1,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
			       PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP };
	CHECK(pd_sample_id_size(&a) == 48, "size %zu", pd_sample_id_size(&a));
	struct perf_event_attr b = a;
	b.sample_id_all = 0;
	CHECK(pd_sample_id_size(&b) == 0, "no sample_id_all but %zu", pd_sample_id_size(&b));

	char *path = tmp_path("synth.data");
	struct pd_writer *w = pd_writer_open(path, false);
	u64 id = 99;
	pd_writer_add_attr(w, &a, NULL, &id, 1);
	CHECK(pd_writer_begin(w) == 0, "%s", err_msg());
	struct pd_sample_id sid = { 11, 12, 0x1122334455ULL, 99, 1 };
	CHECK(pd_write_comm(w, &a, 11, 12, "abcdefgh", true, &sid) == 0, "%s", err_msg());
	CHECK(pd_write_fork(w, &a, 11, 1, 12, 1, 777, &sid) == 0, "%s", err_msg());
	u8 bid[20];
	for (int i = 0; i < 20; i++)
		bid[i] = (u8)(0xa0 + i);
	struct pd_mmap2 m = { .pid = 11, .tid = 12, .start = 0x400000, .len = 0x1000,
			      .pgoff = 0x2000, .prot = PROT_READ, .flags = MAP_PRIVATE,
			      .cpumode = PERF_RECORD_MISC_USER, .build_id = bid,
			      .build_id_size = 20, .filename = "/x/libz.so" };
	CHECK(pd_write_mmap2(w, &a, &m, &sid) == 0, "%s", err_msg());
	CHECK(pd_writer_close(w) == 0, "%s", err_msg());

	size_t len;
	u8 *f = slurp(path, &len);
	const u8 *r = f + rd64(f + 40);
	/* COMM: 8 header + 8 pid/tid + 16 ("abcdefgh" + NUL, padded) + 48. */
	CHECK(rd32(r) == PERF_RECORD_COMM, "type %u", rd32(r));
	CHECK(rd16(r + 4) == PERF_RECORD_MISC_COMM_EXEC, "exec flag missing");
	CHECK(rd16(r + 6) == 80, "comm size %u", rd16(r + 6));
	CHECK(!strcmp((char *)r + 16, "abcdefgh") && r[31] == 0, "comm text");
	const u8 *t = r + 32;
	CHECK(rd32(t) == 11 && rd32(t + 4) == 12, "trailer pid/tid");
	CHECK(rd64(t + 8) == 0x1122334455ULL, "trailer time");
	CHECK(rd64(t + 16) == 99 && rd64(t + 24) == 99, "trailer id/stream_id");
	CHECK(rd32(t + 32) == 1 && rd32(t + 36) == 0, "trailer cpu");
	CHECK(rd64(t + 40) == 99, "trailer identifier last");
	r += 80;
	CHECK(rd32(r) == PERF_RECORD_FORK && rd16(r + 6) == 8 + 24 + 48, "fork header");
	CHECK(rd32(r + 8) == 11 && rd32(r + 12) == 1 && rd64(r + 24) == 777, "fork body");
	r += 80;
	u16 msize = rd16(r + 6);
	CHECK(rd32(r) == PERF_RECORD_MMAP2, "mmap2 type %u", rd32(r));
	CHECK(rd16(r + 4) == (PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID |
				  PERF_RECORD_MISC_MMAP_DATA), "mmap2 misc %x", rd16(r + 4));
	CHECK(msize % 8 == 0 && msize == 8 + 8 + 24 + 24 + 8 + 16 + 48, "mmap2 size %u", msize);
	CHECK(rd64(r + 16) == 0x400000 && rd64(r + 24) == 0x1000 && rd64(r + 32) == 0x2000,
	      "mmap2 range");
	CHECK(r[40] == 20 && !memcmp(r + 44, bid, 20), "build-id bytes");
	CHECK(rd32(r + 64) == PROT_READ && rd32(r + 68) == MAP_PRIVATE, "prot/flags");
	CHECK(!strcmp((char *)r + 72, "/x/libz.so"), "mmap2 name");
	CHECK(rd64(r + msize - 8) == 99, "mmap2 identifier");
	free(f);
	free(path);
}

static void test_buffering(void)
{
	char *path = tmp_path("buffer.data");
	struct perf_event_attr a = clock_attr();
	struct pd_writer *w = pd_writer_open(path, false);
	pd_writer_add_attr(w, &a, NULL, NULL, 0);
	pd_writer_begin(w);
	struct stat st;
	stat(path, &st);
	off_t base = st.st_size;
	u64 rec[32];
	size_t n = build_sample(rec, 0, 1);
	for (int i = 0; i < 100; i++)
		pd_writer_write(w, rec, n);
	stat(path, &st);
	CHECK(st.st_size == base, "small writes hit the disk at once (%lld > %lld)",
	      (long long)st.st_size, (long long)base);
	CHECK(pd_writer_data_size(w) == 100 * n, "data size counts buffered bytes");
	pd_writer_finished_round(w);
	stat(path, &st);
	CHECK(st.st_size == base + (off_t)(100 * n + 8), "round did not flush: %lld",
	      (long long)st.st_size);
	/* A big piece goes straight through. */
	size_t big = 4u << 20;
	u8 *blob = xcalloc(1, big);
	for (size_t off = 0; off < big; off += 4096) {
		struct perf_event_header h = { 100, 0, 4096 };
		memcpy(blob + off, &h, sizeof(h));
	}
	CHECK(pd_writer_write(w, blob, big) == 0, "%s", err_msg());
	stat(path, &st);
	CHECK(st.st_size == base + (off_t)(100 * n + 8 + big), "big write was buffered");
	free(blob);
	CHECK(pd_writer_close(w) == 0, "%s", err_msg());
	free(path);
}

static void test_build_id_feature_layout(void)
{
	char *path = tmp_path("bid.data");
	struct perf_event_attr a = clock_attr();
	struct pd_writer *w = pd_writer_open(path, false);
	pd_writer_add_attr(w, &a, NULL, NULL, 0);
	struct pd_build_id ids[2] = {
		{ .pid = -1, .cpumode = PERF_RECORD_MISC_KERNEL, .size = 20,
		  .filename = "[kernel.kallsyms]" },
		{ .pid = 5, .cpumode = PERF_RECORD_MISC_USER, .size = 8,
		  .filename = "/usr/lib/x" },
	};
	memset(ids[0].id, 0x11, 20);
	memset(ids[1].id, 0x22, 8);
	pd_writer_begin(w);
	CHECK(pd_writer_feat_build_ids(w, ids, 1) == 0, "%s", err_msg());
	CHECK(pd_writer_feat_build_ids(w, ids + 1, 1) == 0, "%s", err_msg());
	CHECK(pd_writer_close(w) == 0, "%s", err_msg());
	size_t len;
	u8 *f = slurp(path, &len);
	CHECK(rd64(f + 72) == 1ULL << PD_FEAT_BUILD_ID, "bitmap %llx", (unsigned long long)rd64(f + 72));
	const u8 *sec = f + rd64(f + 40) + rd64(f + 48);
	const u8 *b = f + rd64(sec), *end = b + rd64(sec + 8);
	int n = 0;
	while (b + 36 <= end && n < 3) {
		u16 misc = rd16(b + 4), size = rd16(b + 6);
		const struct pd_build_id *want = &ids[n];
		CHECK(size % 8 == 0 && size >= 36 + 64, "record size %u", size);
		CHECK(misc == (want->cpumode | (1 << 15)), "misc %x", misc);
		CHECK((s32)rd32(b + 8) == want->pid, "pid");
		CHECK(!memcmp(b + 12, want->id, want->size) && b[32] == want->size, "id/size");
		CHECK(!strcmp((char *)b + 36, want->filename), "name %s", b + 36);
		b += size ? size : 36;
		n++;
	}
	CHECK(n == 2 && b == end, "%d build-id records", n);
	free(f);
	free(path);
}

static void test_topology_matches_nrcpus(void)
{
	char *cores[] = { "0-1" }, *threads[] = { "0", "1" }, *dies[] = { "0-1" };
	u32 ids[] = { 5, 6 };
	struct pd_cpu_topology t = {
		.nr_cores = 1, .core_siblings = cores, .nr_threads = 2,
		.thread_siblings = threads, .nr_cpus = 2, .core_id = ids,
		.socket_id = ids, .die_id = ids, .nr_dies = 1, .die_siblings = dies,
	};
	struct perf_event_attr a = clock_attr();
	/* strings: 1 + 2 + 1 of 4 + 64 bytes; three u32 counts. */
	u64 fixed = 4 * 68 + 3 * 4;
	for (int with_nrcpus = 0; with_nrcpus < 2; with_nrcpus++) {
		char *path = tmp_path("topo.data");
		struct pd_writer *w = pd_writer_open(path, false);
		pd_writer_add_attr(w, &a, NULL, NULL, 0);
		if (with_nrcpus)
			pd_writer_feat_nrcpus(w, 3, 2);
		CHECK(pd_writer_feat_cpu_topology(w, &t) == 0, "%s", err_msg());
		CHECK(pd_writer_close(w) == 0, "%s", err_msg());
		size_t len;
		u8 *f = slurp(path, &len);
		u64 off = 0, size = 0;
		u64 ncpu = with_nrcpus ? 3 : 2;
		CHECK(feature_section(f, len, PD_FEAT_CPU_TOPOLOGY, &off, &size), "no section");
		CHECK(size == fixed + ncpu * 12, "topology of %llu bytes for %llu CPUs",
		      (unsigned long long)size, (unsigned long long)ncpu);
		/* Core/socket ids of CPU 1 follow the strings; CPU 2 is zero. */
		const u8 *per_cpu = f + off + 4 + 68 + 4 + 2 * 68;
		if (off + size <= len) {
			CHECK(rd32(per_cpu + 8) == 6 && rd32(per_cpu + 12) == 6, "CPU 1 ids");
			if (with_nrcpus)
				CHECK(rd32(per_cpu + 16) == 0, "CPU 2 ids not zero");
		}
		free(f);
		free(path);
	}
}

static void test_perf_script_file(void)
{
	if (perf_missing) {
		SKIP(test_perf_script_file, perf_missing);
		return;
	}
	struct self_map m = { 0 };
	CHECK(find_text_map(&m) == 0, "no text mapping of ourselves");
	dl_iterate_phdr(note_cb, &m);
	char *path = tmp_path("clock.data");
	CHECK(write_clock_file(path, false, &m, true) == 0, "%s", err_msg());
	struct strbuf out = { 0 };
	int rc = perf_script(path, false, &out);
	CHECK(rc == 0, "perf script exited %d", rc);
	check_sample_lines(out.s, &m);
	CHECK(count_lines_with(out.s, "fmtcomm") == NSAMPLES, "want %d samples:\n%s", NSAMPLES, out.s);

	/* With call graphs: the caller frame resolves too. */
	char *cmd = xasprintf("perf script -i '%s' 2>/dev/null", path);
	rc = run(cmd, &out);
	free(cmd);
	CHECK(rc == 0 && count_lines_with(out.s, "fmt_marker_beta+0x10") == NSAMPLES,
	      "caller frames:\n%s", out.s);
	CHECK(strstr(out.s, "cpu-clock"), "event name missing:\n%s", out.s);
	sb_free(&out);
	free(path);
}

static void test_perf_header(void)
{
	if (perf_missing) {
		SKIP(test_perf_header, perf_missing);
		return;
	}
	struct self_map m = { 0 };
	find_text_map(&m);
	dl_iterate_phdr(note_cb, &m);
	char *path = tmp_path("header.data");
	CHECK(write_clock_file(path, false, &m, true) == 0, "%s", err_msg());
	struct strbuf out = { 0 };
	char *cmd = xasprintf("perf report -i '%s' --header-only -I 2>&1", path);
	int rc = run(cmd, &out);
	free(cmd);
	CHECK(rc == 0, "perf report exited %d:\n%s", rc, out.s);
	struct utsname u;
	uname(&u);
	char host[300], rel[300];
	snprintf(host, sizeof(host), "# hostname : %s\n", u.nodename);
	snprintf(rel, sizeof(rel), "# os release : %s\n", u.release);
	const char *want[] = {
		host, rel, "# perf version : ember-test", "# arch : x86_64",
		"# nrcpus online : 2", "# nrcpus avail : 2", "# total memory : 4000000 kB",
		"# cmdline : ember record --fmt-test-flag",
		"# event : name = cpu-clock", "id = { 4242 }",
		"# sibling sockets : 0-1", "# sibling dies    : 0-1",
		"# sibling threads : 0", "# sibling threads : 1",
		"# CPU 0: Core ID 0, Die ID 0, Socket ID 0",
		"# CPU 1: Core ID 1, Die ID 0, Socket ID 0",
		"# node0 meminfo  : total = 1234567 kB, free = 654321 kB",
		"# node0 cpu list : 0-1",
		"# sample duration :",
	};
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		CHECK(strstr(out.s, want[i]), "missing '%s' in:\n%s", want[i], out.s);

	if (m.build_id_size) {
		char idhex[41];
		hex(m.build_id, m.build_id_size, idhex);
		cmd = xasprintf("perf buildid-list -i '%s' 2>&1", path);
		rc = run(cmd, &out);
		free(cmd);
		char *line = xasprintf("%s %s", idhex, m.path);
		CHECK(rc == 0 && strstr(out.s, line), "want '%s' in:\n%s", line, out.s);
		free(line);
	} else {
		printf("SKIP: test_perf_header_build_id: test binary has no build-id\n");
	}
	sb_free(&out);
	free(path);
}

static void test_perf_script_pipe(void)
{
	if (perf_missing) {
		SKIP(test_perf_script_pipe, perf_missing);
		return;
	}
	struct self_map m = { 0 };
	find_text_map(&m);
	dl_iterate_phdr(note_cb, &m);
	char *fpath = tmp_path("cmp.data"), *ppath = tmp_path("cmp.pipe");
	CHECK(write_clock_file(fpath, false, &m, true) == 0, "%s", err_msg());
	CHECK(write_clock_file(ppath, true, &m, true) == 0, "%s", err_msg());
	size_t len;
	u8 *p = slurp(ppath, &len);
	CHECK(len > 16 && !memcmp(p, "PERFILE2", 8) && rd64(p + 8) == 16, "pipe header");
	/* Features given before begin lead the stream, HOSTNAME (3) first. */
	CHECK(len > 32 && rd32(p + 16) == PD_RECORD_HEADER_FEATURE && rd64(p + 24) == 3,
	      "stream starts with record %u", rd32(p + 16));
	free(p);
	struct strbuf a = { 0 }, b = { 0 };
	CHECK(perf_script(fpath, false, &a) == 0, "file script failed");
	CHECK(perf_script(ppath, true, &b) == 0, "pipe script failed");
	check_sample_lines(b.s, &m);
	CHECK(!strcmp(a.s, b.s), "file and pipe output differ:\n%s\n---\n%s", a.s, b.s);

	/* The stream's features reach perf too. */
	char *cmd = xasprintf("cat '%s' | perf report -i - --header-only -I 2>&1", ppath);
	run(cmd, &b);
	free(cmd);
	CHECK(strstr(b.s, "# cmdline : ember record --fmt-test-flag") &&
	      strstr(b.s, "# CPU 1: Core ID 1, Die ID 0, Socket ID 0"),
	      "pipe header:\n%s", b.s);
	sb_free(&a);
	sb_free(&b);
	free(fpath);
	free(ppath);
}

/* ---- Tracepoints ------------------------------------------------------------- */

struct tp_field {
	char name[64];
	int offset, size;
};

/* Parses "field:TYPE NAME[N];\toffset:O;\tsize:S;" lines of a format file. */
static int parse_fields(const char *fmt, struct tp_field *fl, int max)
{
	int n = 0;
	for (const char *p = fmt; (p = strstr(p, "field:")) && n < max; p++) {
		const char *semi = strchr(p, ';');
		if (!semi)
			break;
		const char *q = semi;
		while (q > p && q[-1] != ' ')
			q--;
		int nl = (int)strcspn(q, "[;");
		snprintf(fl[n].name, sizeof(fl[n].name), "%.*s", nl, q);
		if (sscanf(semi, "; offset:%d; size:%d;", &fl[n].offset, &fl[n].size) == 2 ||
		    sscanf(semi, ";\toffset:%d;\tsize:%d;", &fl[n].offset, &fl[n].size) == 2)
			n++;
	}
	return n;
}

static void put_field(u8 *raw, const struct tp_field *fl, int n, const char *name,
		      const void *v, int vlen)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(fl[i].name, name))
			memcpy(raw + fl[i].offset, v, MIN(vlen, fl[i].size));
}

struct tracefs {
	char *header_page, *header_event, *format;
	size_t hp_len, he_len, fmt_len;
	int id;
};

static const char *load_tracefs(struct tracefs *t)
{
	const char *base = "/sys/kernel/tracing/events";
	char path[256];
	snprintf(path, sizeof(path), "%s/header_page", base);
	t->header_page = read_text_file(path, &t->hp_len);
	snprintf(path, sizeof(path), "%s/header_event", base);
	t->header_event = read_text_file(path, &t->he_len);
	snprintf(path, sizeof(path), "%s/sched/sched_switch/format", base);
	t->format = read_text_file(path, &t->fmt_len);
	snprintf(path, sizeof(path), "%s/sched/sched_switch/id", base);
	char *id = read_text_file(path, NULL);
	t->id = id ? atoi(id) : 0;
	free(id);
	if (!t->header_page || !t->header_event || !t->format || !t->id)
		return "tracefs not readable at /sys/kernel/tracing";
	return NULL;
}

static void free_tracefs(struct tracefs *t)
{
	free(t->header_page);
	free(t->header_event);
	free(t->format);
}

/* A sched_switch sample: raw data built to the format file. */
static size_t build_switch_sample(u64 *rec, const struct tracefs *tf, int i)
{
	struct tp_field fl[32];
	int nf = parse_fields(tf->format, fl, 32);
	int size = 0;
	for (int k = 0; k < nf; k++)
		size = MAX(size, fl[k].offset + fl[k].size);
	/* The kernel pads u32 size + raw data to 8 bytes. */
	u32 raw_size = (u32)((4 + size + 7) / 8 * 8 - 4);
	u8 raw[512] = { 0 };
	u16 type = (u16)tf->id;
	int pid = 111 + i, next = 222 + i, prio = 120;
	long state = 1;
	const char *prev_comm = "alpha-task", *next_comm = "beta-task";
	put_field(raw, fl, nf, "common_type", &type, 2);
	put_field(raw, fl, nf, "common_pid", &pid, 4);
	put_field(raw, fl, nf, "prev_comm", prev_comm, (int)strlen(prev_comm) + 1);
	put_field(raw, fl, nf, "prev_pid", &pid, 4);
	put_field(raw, fl, nf, "prev_prio", &prio, 4);
	put_field(raw, fl, nf, "prev_state", &state, sizeof(state));
	put_field(raw, fl, nf, "next_comm", next_comm, (int)strlen(next_comm) + 1);
	put_field(raw, fl, nf, "next_pid", &next, 4);
	put_field(raw, fl, nf, "next_prio", &prio, 4);

	/* IDENTIFIER, TID, TIME, CPU, PERIOD, RAW */
	u8 *p = (u8 *)rec + 8;
	u64 v[] = { SAMPLE_ID, (u64)pid << 32 | (u32)pid, sample_time(i), 0, 1 };
	memcpy(p, v, sizeof(v));
	p += sizeof(v);
	memcpy(p, &raw_size, 4);
	memcpy(p + 4, raw, raw_size);
	p += 4 + raw_size;
	size_t n = (size_t)(p - (u8 *)rec);
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, (u16)n };
	memcpy(rec, &h, sizeof(h));
	return n;
}

static int write_switch_file(const char *path, bool pipe, const struct tracefs *tf,
			     const char *cmdlines)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_TRACEPOINT, .config = (u64)tf->id, .sample_period = 1,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW,
		.sample_id_all = 1,
	};
	u64 id = SAMPLE_ID;
	struct pd_writer *w = pd_writer_open(path, pipe);
	if (!w)
		return -1;
	int bad = pd_writer_add_attr(w, &a, "sched:sched_switch", &id, 1);
	struct pd_tracing_event ev = { "sched", tf->format, tf->fmt_len };
	struct pd_tracing t = {
		.header_page = tf->header_page, .header_page_len = tf->hp_len,
		.header_event = tf->header_event, .header_event_len = tf->he_len,
		.events = &ev, .nr_events = 1,
		.cmdlines = cmdlines, .cmdlines_len = strlen(cmdlines),
	};
	bad |= pd_writer_feat_tracing_data(w, &t);
	bad |= pd_writer_begin(w);
	u64 rec[64];
	for (int i = 0; i < 3; i++)
		bad |= pd_writer_write(w, rec, build_switch_sample(rec, tf, i));
	bad |= pd_writer_finished_round(w);
	return pd_writer_close(w) || bad ? -1 : 0;
}

/* Bytes of the tracing data write_switch_file sends, from the layout:
 * magic, "0.6", endian, long size, page size, header_page, header_event,
 * no ftrace formats, one system of one event, empty kallsyms and printk,
 * saved cmdlines. */
static size_t tracing_len(const struct tracefs *tf, const char *cmdlines)
{
	return 10 + 4 + 1 + 1 + 4 + 12 + 8 + tf->hp_len + 13 + 8 + tf->he_len + 4 +
	       4 + 6 + 4 + 8 + tf->fmt_len + 4 + 4 + 8 + strlen(cmdlines);
}

/* HEADER_TRACING_DATA: a 12-byte record, the data, zeros to 8 bytes. */
static void check_tracing_record(const char *ppath, size_t want_len)
{
	size_t len;
	u8 *p = slurp(ppath, &len);
	const u8 *r = p + 16;
	while (r + 8 <= p + len && rd32(r) != PD_RECORD_HEADER_TRACING_DATA)
		r += rd16(r + 6) ? rd16(r + 6) : len;
	CHECK(r + 12 <= p + len, "no HEADER_TRACING_DATA record");
	if (r + 12 <= p + len) {
		CHECK(rd16(r + 6) == 12 && rd32(r + 8) == (want_len + 7) / 8 * 8,
		      "tracing record %u, size %u for %zu bytes", rd16(r + 6), rd32(r + 8),
		      want_len);
		CHECK(!memcmp(r + 12, "\027\010\104tracing0.6", 14), "tracing magic/version");
		const u8 *after = r + 12 + rd32(r + 8);
		CHECK(after + 8 <= p + len && rd32(after) == PERF_RECORD_SAMPLE,
		      "record after tracing data: %u", rd32(after));
	}
	free(p);
}

static void check_switch_output(const char *text)
{
	for (int i = 0; i < 3; i++) {
		char want[128];
		snprintf(want, sizeof(want), "prev_comm=alpha-task prev_pid=%d", 111 + i);
		CHECK(strstr(text, want), "missing '%s' in:\n%s", want, text);
		snprintf(want, sizeof(want), "next_comm=beta-task next_pid=%d", 222 + i);
		CHECK(strstr(text, want), "missing '%s' in:\n%s", want, text);
	}
	CHECK(count_lines_with(text, "sched:sched_switch:") == 3, "want 3 events:\n%s", text);
}

/* Two cmdline lengths, so at least one needs padding in the stream. */
static void test_tracepoint(void)
{
	struct tracefs tf = { 0 };
	const char *why = perf_missing ? perf_missing : load_tracefs(&tf);
	if (why) {
		SKIP(test_tracepoint, why);
		free_tracefs(&tf);
		return;
	}
	const char *cmdlines[] = { "111 alpha-task\n", "111 alpha-task\n\n" };
	char *fpath = tmp_path("switch.data"), *ppath = tmp_path("switch.pipe");
	struct strbuf a = { 0 }, b = { 0 };
	for (int v = 0; v < 2; v++) {
		CHECK(write_switch_file(fpath, false, &tf, cmdlines[v]) == 0, "%s", err_msg());
		CHECK(write_switch_file(ppath, true, &tf, cmdlines[v]) == 0, "%s", err_msg());
		char *cmd = xasprintf("perf script -i '%s' 2>&1", fpath);
		int rc = run(cmd, &a);
		free(cmd);
		CHECK(rc == 0, "perf script exited %d:\n%s", rc, a.s);
		check_switch_output(a.s);
		cmd = xasprintf("cat '%s' | perf script -i - 2>&1", ppath);
		rc = run(cmd, &b);
		free(cmd);
		CHECK(rc == 0 && !strcmp(a.s, b.s), "pipe differs (rc %d):\n%s\n---\n%s", rc,
		      a.s, b.s);
		check_tracing_record(ppath, tracing_len(&tf, cmdlines[v]));
	}
	sb_free(&a);
	sb_free(&b);
	free(fpath);
	free(ppath);
	free_tracefs(&tf);
}

/* ---- Tracing data parsed as the reader opens --------------------------------- */

/* A thread that waits until told to end, as a view's symbol threads do. */
struct idle_thread {
	int fds[2];
	pthread_t thread;
};

static void *idle_run(void *arg)
{
	struct idle_thread *it = arg;
	char c;
	while (read(it->fds[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static bool idle_start(struct idle_thread *it)
{
	if (pipe(it->fds) < 0)
		return false;
	return pthread_create(&it->thread, NULL, idle_run, it) == 0;
}

static void idle_stop(struct idle_thread *it)
{
	(void)!write(it->fds[1], "x", 1);
	pthread_join(it->thread, NULL);
	close(it->fds[0]);
	close(it->fds[1]);
}

/* The parse forks, so it must happen before a view's threads start: a
 * reader asked for the tracing data parses it as it opens (asked for
 * after a thread started, it is there), and one opened while another
 * thread runs refuses, saying why, instead of forking. */
static void test_reader_trace_at_open(void)
{
	struct tracefs tf = { 0 };
	const char *why = load_tracefs(&tf);
	if (why) {
		SKIP(test_reader_trace_at_open, why);
		free_tracefs(&tf);
		return;
	}
	char *fpath = tmp_path("trace-open.data"), *ppath = tmp_path("trace-open.pipe");
	CHECK(write_switch_file(fpath, false, &tf, "111 alpha-task\n") == 0, "%s", err_msg());
	CHECK(write_switch_file(ppath, true, &tf, "111 alpha-task\n") == 0, "%s", err_msg());
	const char *paths[] = { fpath, ppath };
	struct pd_reader_opts o = { .tracing = true };
	for (int i = 0; i < 2; i++) {
		struct pd_trace *t = NULL;
		struct pd_reader *plain = pd_reader_open(paths[i], NULL);
		CHECK(plain && pd_reader_trace(plain, &t) == 0 && !t,
		      "%s: tracing data parsed though not asked for", paths[i]);
		pd_reader_close(plain);

		struct pd_reader *r = pd_reader_open(paths[i], &o);
		CHECK(r, "%s: %s", paths[i], err_msg());
		struct idle_thread it;
		bool started = idle_start(&it);
		CHECK(started, "cannot start a thread");
		int rc = r ? pd_reader_trace(r, &t) : -1;
		CHECK(rc == 0 && t, "%s: tracing data not parsed at open: %s", paths[i],
		      rc ? err_msg() : "none");
		const char *name = rc == 0 && t ? pd_trace_name(t, (u64)tf.id) : NULL;
		CHECK(name && !strcmp(name, "sched:sched_switch"), "%s: id %d named %s",
		      paths[i], tf.id, name ? name : "(none)");

		struct pd_reader *late = pd_reader_open(paths[i], &o);
		CHECK(late, "%s: %s", paths[i], err_msg());
		rc = late ? pd_reader_trace(late, &t) : 0;
		CHECK(!started || (rc < 0 && !t && strstr(err_msg(), "threads")),
		      "%s: parsed (rc %d) while another thread ran: %s", paths[i], rc,
		      rc ? err_msg() : "no refusal");
		pd_reader_close(late);
		if (started)
			idle_stop(&it);
		pd_reader_close(r);
	}
	free(fpath);
	free(ppath);
	free_tracefs(&tf);
}

/* ---- Failure paths -------------------------------------------------------------- */

static void test_abort_keeps_data(void)
{
	struct self_map m = { 0 };
	find_text_map(&m);
	dl_iterate_phdr(note_cb, &m);
	char *path = tmp_path("abort.data");
	CHECK(write_clock_file(path, false, &m, false) == 0, "%s", err_msg());
	size_t len;
	u8 *f = slurp(path, &len);
	u64 data_size = rd64(f + 48);
	CHECK(data_size > 0 && rd64(f + 40) + data_size <= len, "aborted data size %llu",
	      (unsigned long long)data_size);
	free(f);
	if (perf_missing) {
		SKIP(test_abort_keeps_data_perf, perf_missing);
	} else {
		struct strbuf out = { 0 };
		CHECK(perf_script(path, false, &out) == 0, "perf script failed");
		check_sample_lines(out.s, &m);
		sb_free(&out);
	}

	/* A record cut in half at abort is left outside data.size. */
	struct perf_event_attr a = clock_attr();
	u64 id = SAMPLE_ID, rec[32];
	struct pd_writer *w = pd_writer_open(path, false);
	pd_writer_add_attr(w, &a, NULL, &id, 1);
	pd_writer_begin(w);
	size_t n = build_sample(rec, 0, 1);
	pd_writer_write(w, rec, n);
	pd_writer_finished_round(w);
	pd_writer_write(w, rec, n);
	pd_writer_write(w, rec, n / 2);
	pd_writer_abort(w);
	f = slurp(path, &len);
	CHECK(rd64(f + 48) == 2 * n + 8, "data size %llu, want %zu (whole records)",
	      (unsigned long long)rd64(f + 48), 2 * n + 8);
	free(f);
	free(path);
}

static void test_full_device(void)
{
	struct perf_event_attr a = clock_attr();
	u64 rec[32];
	for (int pipe = 0; pipe < 2; pipe++) {
		struct pd_writer *w = pd_writer_open("/dev/full", pipe);
		CHECK(w, "%s", err_msg());
		if (!w)
			continue;
		pd_writer_add_attr(w, &a, NULL, NULL, 0);
		int rc = pd_writer_begin(w);
		CHECK(rc < 0 && strstr(err_msg(), "No space left"), "begin: %d %s", rc, err_msg());
		rc = pd_writer_write(w, rec, build_sample(rec, 0, 1));
		CHECK(rc < 0, "write after a failure succeeded");
		rc = pd_writer_close(w);
		CHECK(rc < 0 && strstr(err_msg(), "/dev/full"), "close: %d %s", rc, err_msg());
	}
}

/* A small tmpfs fills up mid-recording: the error is reported, and the
 * file still reads, up to the last whole record on disk. */
static void test_disk_fills_up(void)
{
	char *mnt = tmp_path("small");
	mkdir(mnt, 0700);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=256k") != 0) {
		char *why = xasprintf("cannot mount a small tmpfs: %s", strerror(errno));
		SKIP(test_disk_fills_up, why);
		free(why);
		free(mnt);
		return;
	}
	struct self_map m = { 0 };
	find_text_map(&m);
	char *path = xasprintf("%s/full.data", mnt);
	struct perf_event_attr a = clock_attr();
	u64 id = SAMPLE_ID, rec[32];
	struct pd_writer *w = pd_writer_open(path, false);
	pd_writer_add_attr(w, &a, "cpu-clock", &id, 1);
	CHECK(pd_writer_begin(w) == 0, "%s", err_msg());
	u32 pid = (u32)getpid();
	struct pd_mmap2 mm = { .pid = pid, .tid = pid, .start = m.start,
			       .len = m.end - m.start, .pgoff = m.pgoff,
			       .prot = PROT_READ | PROT_EXEC, .maj = m.maj, .min = m.min,
			       .ino = m.ino, .cpumode = PERF_RECORD_MISC_USER,
			       .filename = m.path };
	pd_write_comm(w, &a, pid, pid, "fmtcomm", false, NULL);
	pd_write_mmap2(w, &a, &mm, NULL);
	int failed_at = -1;
	for (int i = 0; i < 20000 && failed_at < 0; i++) {
		if (pd_writer_write(w, rec, build_sample(rec, i % NSAMPLES, pid)) ||
		    (i % 500 == 499 && pd_writer_finished_round(w)))
			failed_at = i;
	}
	CHECK(failed_at >= 0 && strstr(err_msg(), "No space left"), "failed at %d: %s",
	      failed_at, err_msg());
	CHECK(pd_writer_close(w) < 0, "close after ENOSPC succeeded");
	size_t len;
	u8 *f = slurp(path, &len);
	u64 off = rd64(f + 40), size = rd64(f + 48);
	CHECK(size > 0 && off + size <= len, "data %llu+%llu in a %zu-byte file",
	      (unsigned long long)off, (unsigned long long)size, len);
	/* Whole records up to data.size exactly. */
	u64 pos = 0;
	while (pos + 8 <= size && rd16(f + off + pos + 6) >= 8)
		pos += rd16(f + off + pos + 6);
	CHECK(pos == size, "records end at %llu, data.size %llu", (unsigned long long)pos,
	      (unsigned long long)size);
	free(f);
	if (!perf_missing) {
		struct strbuf out = { 0 };
		char *cmd = xasprintf("perf script -i '%s' -F comm,pid 2>/dev/null | wc -l", path);
		run(cmd, &out);
		free(cmd);
		CHECK(atoi(out.s) > 100, "perf read %s samples from the full disk's file", out.s);
		sb_free(&out);
	}
	umount(mnt);
	free(path);
	free(mnt);
}

static void test_misuse(void)
{
	char *path = tmp_path("misuse.data");
	struct pd_writer *w = pd_writer_open(path, false);
	u64 rec[32];
	CHECK(pd_writer_begin(w) < 0 && strstr(err_msg(), "no events"), "%s", err_msg());
	CHECK(pd_writer_write(w, rec, build_sample(rec, 0, 1)) < 0, "write before begin");
	CHECK(pd_writer_feat_string(w, 0, "x") < 0, "feature 0 accepted");
	CHECK(pd_writer_feat_string(w, PD_FEAT_MAX, "x") < 0, "feature 256 accepted");
	struct perf_event_attr a = clock_attr();
	pd_writer_add_attr(w, &a, NULL, NULL, 0);
	pd_writer_begin(w);
	CHECK(pd_writer_add_attr(w, &a, NULL, NULL, 0) < 0, "attr after begin accepted");
	CHECK(pd_writer_close(w) == 0, "%s", err_msg());
	CHECK(pd_writer_open("/nonexistent/dir/x", false) == NULL &&
	      strstr(err_msg(), "/nonexistent/dir/x"), "%s", err_msg());
	free(path);
}

static const char *find_perf(void)
{
	struct strbuf out = { 0 };
	int rc = run("perf version 2>&1", &out);
	bool ok = rc == 0 && strstr(out.s, "perf version");
	sb_free(&out);
	return ok ? NULL : "perf not installed (Debian package linux-perf)";
}

/* ---- Reading a file larger than the reader's window ------------------------
 * Records of up to 16 KB from two "CPUs", the second drained a round late,
 * so each round's records wait in the queue while the window slides on;
 * one round of ~19 MB makes the window grow.  Each record carries its
 * write order in the period and a payload derived from it. */

#define WIN_ROUNDS 24
#define WIN_PER_CPU(r) ((r) == 10 ? 1200 : 90)

static u32 win_raw_size(u64 seq)
{
	return 4 + 8 * (u32)(seq * 7919 % 2000);   /* 4 mod 8, as the kernel pads */
}

static u8 win_byte(u64 seq, u32 j)
{
	return (u8)(seq * 131 + j);
}

/* A sample of TIME | PERIOD | RAW; returns its size. */
static size_t win_record(u8 *buf, u64 time, u64 seq)
{
	u32 raw = win_raw_size(seq);
	size_t n = 8 + 8 + 8 + 4 + raw;
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, (u16)n };
	memcpy(buf, &h, 8);
	memcpy(buf + 8, &time, 8);
	memcpy(buf + 16, &seq, 8);
	memcpy(buf + 24, &raw, 4);
	for (u32 j = 0; j < raw; j++)
		buf[28 + j] = win_byte(seq, j);
	return n;
}

static u64 win_time(int round, int k, int cpu)
{
	return 1000000000ULL + (u64)round * 1000000 + (u64)k * 2 + (u64)cpu;
}

/* Writes the file (or the stream variant), zstd-compressed at level zlevel
 * unless 0, in batches of 256 KiB (four or five compressed records each,
 * records cut across them); returns the number of records. */
static u64 win_write_z(const char *path, bool rounds, bool pipe, int zlevel)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1,
		.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW };
	struct pd_writer *w = pd_writer_open(path, pipe);
	pd_writer_add_attr(w, &a, NULL, NULL, 0);
	if (zlevel)
		CHECK(pd_writer_set_compression(w, zlevel, 256u << 10) == 0, "%s", err_msg());
	CHECK(pd_writer_begin(w) == 0, "%s", err_msg());
	u8 *buf = xmalloc(65536);
	u64 seq = 0;
	for (int r = 0; r <= WIN_ROUNDS; r++) {
		for (int k = 0; r < WIN_ROUNDS && k < WIN_PER_CPU(r); k++)
			pd_writer_write(w, buf, win_record(buf, win_time(r, k, 0), seq++));
		for (int k = 0; r > 0 && k < WIN_PER_CPU(r - 1); k++)
			pd_writer_write(w, buf, win_record(buf, win_time(r - 1, k, 1), seq++));
		if (rounds)
			pd_writer_finished_round(w);
	}
	free(buf);
	CHECK(pd_writer_close(w) == 0, "%s", err_msg());
	return seq;
}

static u64 win_write(const char *path, bool rounds, bool pipe)
{
	return win_write_z(path, rounds, pipe, 0);
}

/* Reads it back: every record once, intact, in time order (or, unordered,
 * in file order); returns the reader's count of compressed records. */
static u64 win_read(const char *path, bool unordered, u64 want, const char *what)
{
	struct pd_reader_opts o = { .unordered = unordered };
	struct pd_reader *r = pd_reader_open(path, &o);
	CHECK(r, "%s: %s", what, err_msg());
	if (!r)
		return 0;
	struct pd_event ev;
	u64 n = 0, last_time = 0, bad_payload = 0, bad_order = 0;
	int got;
	while ((got = pd_reader_next(r, &ev)) == 1) {
		if (ev.type != PERF_RECORD_SAMPLE)
			continue;
		u64 seq = ev.s.period;
		bool ok = ev.s.raw_size == win_raw_size(seq);
		for (u32 j = 0; ok && j < ev.s.raw_size; j++)
			ok = ev.s.raw[j] == win_byte(seq, j);
		bad_payload += !ok;
		bad_order += unordered ? seq != n : ev.s.time <= last_time;
		last_time = ev.s.time;
		n++;
	}
	CHECK(got == 0, "%s: read ends with %d: %s", what, got, err_msg());
	CHECK(n == want, "%s: %llu records of %llu", what, (unsigned long long)n,
	      (unsigned long long)want);
	CHECK(bad_payload == 0, "%s: %llu payloads damaged", what, (unsigned long long)bad_payload);
	CHECK(bad_order == 0, "%s: %llu out of order", what, (unsigned long long)bad_order);
	CHECK(pd_reader_stats(r)->nr_undecoded == 0, "%s: %llu records undecoded", what,
	      (unsigned long long)pd_reader_stats(r)->nr_undecoded);
	u64 nz = pd_reader_stats(r)->nr_compressed;
	pd_reader_close(r);
	return nz;
}

static void test_reader_window(void)
{
	char *path = tmp_path("window.data");
	u64 n = win_write(path, true, false);
	struct stat st;
	stat(path, &st);
	CHECK(st.st_size > 40 << 20, "file is only %lld bytes", (long long)st.st_size);
	win_read(path, false, n, "rounds, ordered");
	win_read(path, true, n, "rounds, unordered");
	/* Without rounds nothing is released until the end: the window
	 * holds the whole data. */
	n = win_write(path, false, false);
	win_read(path, false, n, "no rounds, ordered");
	/* The stream variant goes through read(), not pread. */
	n = win_write(path, true, true);
	win_read(path, false, n, "stream, ordered");
	win_read(path, true, n, "stream, unordered");
	unlink(path);
	free(path);
}

/* ---- Compressed records (perf record -z) ------------------------------------
 * The window test's records written compressed: the decompressed records
 * of each round wait in the reader's queue while later compressed records
 * are inflated into the same buffer, which slides and grows (round 10
 * holds ~19 MB); records are cut across compressed records.  Then
 * compressed records built by hand: damaged, a bomb, a stream cut inside
 * a record, each one error naming the record. */

static void test_reader_compressed(void)
{
	char *path = tmp_path("zwindow.data"), *plain = tmp_path("zplain.data");
	u64 n = win_write_z(path, true, false, 1);
	win_write(plain, true, false);
	struct stat st, pst;
	stat(path, &st);
	stat(plain, &pst);
	CHECK(st.st_size * 2 < pst.st_size, "compressed file %lld bytes, plain %lld",
	      (long long)st.st_size, (long long)pst.st_size);
	u64 nz = win_read(path, false, n, "compressed, ordered");
	CHECK(nz > 2 * WIN_ROUNDS, "only %llu compressed records", (unsigned long long)nz);
	win_read(path, true, n, "compressed, unordered");
	n = win_write_z(path, false, false, 3);
	win_read(path, false, n, "compressed, no rounds, ordered");
	n = win_write_z(path, true, true, 1);
	win_read(path, false, n, "compressed stream, ordered");
	win_read(path, true, n, "compressed stream, unordered");
	unlink(path);
	unlink(plain);
	free(path);
	free(plain);
}

/* A file of one sample, then a COMPRESSED record of the given payload,
 * then a second sample; the COMPRESSED feature names mmap_len. */
static void write_hand_compressed(const char *path, const void *payload, size_t n, u32 mmap_len)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK, .sample_period = 1,
		.sample_type = PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW };
	struct pd_writer *w = pd_writer_open(path, false);
	pd_writer_add_attr(w, &a, NULL, NULL, 0);
	u32 feat[5] = { 0, 1, 1, 1, mmap_len };
	pd_writer_feat_raw(w, PD_FEAT_COMPRESSED, feat, sizeof(feat));
	CHECK(pd_writer_begin(w) == 0, "%s", err_msg());
	u8 rec[256];   /* sequence numbers 0 and 2000 have 4 bytes of raw data */
	pd_writer_write(w, rec, win_record(rec, 10, 0));
	u8 *c = xmalloc(8 + n);
	struct perf_event_header h = { PD_RECORD_COMPRESSED, 0, (u16)(8 + n) };
	memcpy(c, &h, 8);
	memcpy(c + 8, payload, n);
	pd_writer_write(w, c, 8 + n);
	free(c);
	pd_writer_write(w, rec, win_record(rec, 20, 2000));
	CHECK(pd_writer_close(w) == 0, "%s", err_msg());
}

/* Reads path to its end: how many samples came, and the error at the end
 * (empty when none). */
static u64 read_until_error(const char *path, char *error, size_t size)
{
	struct pd_reader *r = pd_reader_open(path, NULL);
	error[0] = 0;
	if (!r) {
		snprintf(error, size, "open: %s", err_msg());
		return 0;
	}
	struct pd_event ev;
	u64 n = 0;
	int got;
	while ((got = pd_reader_next(r, &ev)) == 1)
		n += ev.type == PERF_RECORD_SAMPLE;
	if (got < 0)
		snprintf(error, size, "%s", err_msg());
	pd_reader_close(r);
	return n;
}

static void test_reader_compressed_damage(void)
{
	char *path = tmp_path("zdamage.data");
	char error[512];
	/* Records as zstd gives them: both samples and the two inside. */
	u8 recs[512];
	size_t len = win_record(recs, 12, 4000);
	len += win_record(recs + len, 14, 6000);
	u8 z[1024];
	size_t zn = ZSTD_compress(z, sizeof(z), recs, len, 1);
	CHECK(!ZSTD_isError(zn), "zstd: %s", ZSTD_getErrorName(zn));
	write_hand_compressed(path, z, zn, 1u << 20);
	u64 n = read_until_error(path, error, sizeof(error));
	CHECK(n == 4 && !error[0], "%llu samples, error '%s'", (unsigned long long)n, error);

	/* Not zstd at all. */
	write_hand_compressed(path, "not a zstd frame", 16, 1u << 20);
	n = read_until_error(path, error, sizeof(error));
	CHECK(n == 1 && strstr(error, "compressed data is damaged (zstd:") &&
	      strstr(error, "offset 0x"), "%llu samples, error '%s'", (unsigned long long)n, error);

	/* The stream stops inside the second record. */
	zn = ZSTD_compress(z, sizeof(z), recs, len - 16, 1);
	write_hand_compressed(path, z, zn, 1u << 20);
	n = read_until_error(path, error, sizeof(error));
	CHECK(n == 3 && strstr(error, "compressed data ends inside a record"),
	      "%llu samples, error '%s'", (unsigned long long)n, error);

	/* 64 MiB of records from 2 KB: more than the 1 MiB ring the feature
	 * names (the reader's floor) allows, stopped at the limit. */
	size_t big = 64u << 20;
	u8 *bomb = xcalloc(1, big);
	for (size_t at = 0; at + 8 <= big; at += 8) {
		struct perf_event_header h = { 200, 0, 8 };
		memcpy(bomb + at, &h, 8);
	}
	size_t bcap = ZSTD_compressBound(big);
	u8 *bz = xmalloc(bcap);
	size_t bn = ZSTD_compress(bz, bcap, bomb, big, 19);
	CHECK(!ZSTD_isError(bn) && bn < 60000, "bomb compressed to %zu bytes", bn);
	write_hand_compressed(path, bz, bn, 4096);
	u64 t0 = now_ns();
	n = read_until_error(path, error, sizeof(error));
	CHECK(n == 1 && strstr(error, "inflates to more than 1048576 bytes"),
	      "%llu samples, error '%s'", (unsigned long long)n, error);
	CHECK(now_ns() - t0 < 2000000000ull, "the bomb took %llu ms",
	      (unsigned long long)((now_ns() - t0) / 1000000));
	free(bomb);
	free(bz);
	unlink(path);
	free(path);
}

/* Records of types the reader does not decode are counted by type. */
static void test_reader_undecoded(void)
{
	char *path = tmp_path("undecoded.data");
	struct perf_event_attr a = clock_attr();
	struct pd_writer *w = pd_writer_open(path, false);
	pd_writer_add_attr(w, &a, NULL, NULL, 0);
	CHECK(pd_writer_begin(w) == 0, "%s", err_msg());
	u64 rec[32];
	pd_writer_write(w, rec, build_sample(rec, 0, 1));
	/* A kernel type ends with the sample_id trailer; perf's own do not. */
	u16 ks_size = (u16)(24 + pd_sample_id_size(&a));
	struct perf_event_header h200 = { 200, 0, 16 }, hks = { PERF_RECORD_KSYMBOL, 0, ks_size };
	u64 r200[2] = { 0 }, rks[16] = { 0 };
	memcpy(r200, &h200, 8);
	memcpy(rks, &hks, 8);
	pd_writer_write(w, r200, 16);
	pd_writer_write(w, rks, ks_size);
	pd_writer_write(w, r200, 16);
	CHECK(pd_writer_close(w) == 0, "%s", err_msg());
	struct pd_reader *r = pd_reader_open(path, NULL);
	CHECK(r, "%s", err_msg());
	if (!r)
		return;
	struct pd_event ev;
	int got;
	while ((got = pd_reader_next(r, &ev)) == 1)
		;
	CHECK(got == 0, "read ends with %d: %s", got, err_msg());
	const struct pd_reader_stats *st = pd_reader_stats(r);
	CHECK(st->nr_undecoded == 3 && st->nr_undecoded_types == 2, "%llu undecoded, %d types",
	      (unsigned long long)st->nr_undecoded, st->nr_undecoded_types);
	for (int i = 0; i < st->nr_undecoded_types; i++)
		CHECK(st->undecoded[i].count == (st->undecoded[i].type == 200 ? 2u : 1u),
		      "type %u counted %llu", st->undecoded[i].type,
		      (unsigned long long)st->undecoded[i].count);
	pd_reader_close(r);
	CHECK(pd_record_name(PERF_RECORD_KSYMBOL) && !strcmp(pd_record_name(PERF_RECORD_KSYMBOL), "KSYMBOL"),
	      "KSYMBOL named %s", pd_record_name(PERF_RECORD_KSYMBOL));
	CHECK(pd_record_name(200) == NULL && pd_record_name(30) == NULL, "unknown types named");
	unlink(path);
	free(path);
}

/* ---- One record outside a reader: pd_decode and pd_sample_rewrite ---------
 * Samples built by hand in the kernel's field order, as the recorder
 * drains them: a kernel callchain (exclude_callchain_user), a tracepoint-
 * like RAW payload, three user regs and a user stack copy. */

#define RW_ID 77
#define RW_PID 1234
#define RW_TID 4321
#define RW_IP 0xffffffff81001234ULL
#define RW_TIME 5000000123ULL
#define RW_CPU 3
#define RW_WEIGHT 0x5555ULL
#define RW_PHYS 0x123456789ULL
#define RW_REGS ((1ULL << 6) | (1ULL << 7) | (1ULL << 8))   /* x86 bp, sp, ip */
#define RW_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |       \
		 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |          \
		 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER |  \
		 PERF_SAMPLE_STACK_USER)
/* Fields before the callchain: IDENTIFIER, IP, TID, TIME, CPU, PERIOD. */
#define RW_CHAIN_OFF (8 + 6 * 8)

static const u64 rw_kernel[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL,
				 0xffffffff81000020ULL };
static const u64 rw_user[] = { 0x401000, 0x401234, 0x402345 };

static struct perf_event_attr rw_attr(u64 sample_type)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(a), .sample_period = PERIOD, .sample_type = sample_type,
		.sample_regs_user = RW_REGS, .sample_stack_user = 256,
		.sample_id_all = 1, .exclude_callchain_user = 1,
	};
	return a;
}

/* What one hand-built sample holds. */
struct rw_in {
	const u64 *chain;
	u64 nchain;
	u32 raw_size;           /* payload bytes 0x40 + j */
	u64 abi;                /* 0: no regs follow */
	u64 stack_size, dyn_size;  /* copy bytes 0x80 + j */
};

static u64 rw_reg(int i)
{
	return 0x7ffc0000ULL + (u64)i * 0x10;
}

static u8 rw_stack_byte(u64 j)
{
	return (u8)(0x80 + j * 5);
}

struct rw_buf {
	u8 *p;
	size_t n;
};

static void rw_add(struct rw_buf *b, const void *src, size_t n)
{
	memcpy(b->p + b->n, src, n);
	b->n += n;
}

static void rw_u64(struct rw_buf *b, u64 v)
{
	rw_add(b, &v, 8);
}

/* The record for attr a's sample_type; returns its size.  buf is 8-byte
 * aligned and large enough. */
static size_t rw_build(u64 *buf, const struct perf_event_attr *a, const struct rw_in *in)
{
	struct rw_buf b = { (u8 *)buf, 8 };
	u64 t = a->sample_type;
	rw_u64(&b, RW_ID);
	rw_u64(&b, RW_IP);
	rw_u64(&b, (u64)RW_TID << 32 | RW_PID);
	rw_u64(&b, RW_TIME);
	rw_u64(&b, RW_CPU);
	rw_u64(&b, PERIOD);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		rw_u64(&b, in->nchain);
		rw_add(&b, in->chain, in->nchain * 8);
	}
	if (t & PERF_SAMPLE_RAW) {
		rw_add(&b, &in->raw_size, 4);
		for (u32 j = 0; j < in->raw_size; j++)
			b.p[b.n++] = (u8)(0x40 + j);
		while (b.n % 8)
			b.p[b.n++] = 0;
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		rw_u64(&b, in->abi);
		for (int i = 0; in->abi && i < 3; i++)
			rw_u64(&b, rw_reg(i));
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		rw_u64(&b, in->stack_size);
		for (u64 j = 0; j < in->stack_size; j++)
			b.p[b.n++] = rw_stack_byte(j);
		if (in->stack_size)
			rw_u64(&b, in->dyn_size);
	}
	if (t & PERF_SAMPLE_WEIGHT)
		rw_u64(&b, RW_WEIGHT);
	if (t & PERF_SAMPLE_PHYS_ADDR)
		rw_u64(&b, RW_PHYS);
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, (u16)b.n };
	memcpy(buf, &h, sizeof(h));
	return b.n;
}

static struct rw_in rw_default(void)
{
	struct rw_in in = { rw_kernel, ARRAY_SIZE(rw_kernel), 13, PERF_SAMPLE_REGS_ABI_64, 64, 40 };
	return in;
}

/* Bytes RAW takes for raw_size payload bytes (u32 size, data, padding). */
static size_t rw_raw_bytes(const struct perf_event_attr *a, u32 raw_size)
{
	return (a->sample_type & PERF_SAMPLE_RAW) ? (4 + raw_size + 7) / 8 * 8 : 0;
}

static size_t rw_tail_bytes(const struct perf_event_attr *a)
{
	return ((a->sample_type & PERF_SAMPLE_WEIGHT) ? 8 : 0) +
	       ((a->sample_type & PERF_SAMPLE_PHYS_ADDR) ? 8 : 0);
}

/* Every field a rewrite must not touch reads the same. */
static void rw_check_same(const struct pd_event *x, const struct pd_event *y, const char *what)
{
	const struct pd_sample *s = &x->s, *t = &y->s;
	CHECK(x->type == y->type && x->misc == y->misc, "%s: type %u/%u misc %x/%x", what,
	      x->type, y->type, x->misc, y->misc);
	CHECK(s->id == t->id && s->ip == t->ip && s->pid == t->pid && s->tid == t->tid,
	      "%s: id/ip/pid/tid changed", what);
	CHECK(s->time == t->time && s->cpu == t->cpu && s->period == t->period,
	      "%s: time/cpu/period changed", what);
	CHECK(s->raw_size == t->raw_size && (!s->raw_size || !memcmp(s->raw, t->raw, s->raw_size)),
	      "%s: raw changed (%u -> %u bytes)", what, s->raw_size, t->raw_size);
	CHECK(s->weight == t->weight && s->phys_addr == t->phys_addr,
	      "%s: weight/phys_addr changed", what);
}

/* The chain of y is kernel[0..nk) + PERF_CONTEXT_USER + rw_user. */
static void rw_check_chain(const struct pd_sample *y, const u64 *kernel, u64 nk,
			   const char *what)
{
	u64 want = nk + 1 + ARRAY_SIZE(rw_user);
	CHECK(y->nr_callchain == want, "%s: chain of %llu entries, want %llu", what,
	      (unsigned long long)y->nr_callchain, (unsigned long long)want);
	if (y->nr_callchain != want)
		return;
	CHECK(!nk || !memcmp(y->callchain, kernel, nk * 8), "%s: kernel part changed", what);
	CHECK(y->callchain[nk] == PERF_CONTEXT_USER, "%s: entry %llu is %#llx, not the user marker",
	      what, (unsigned long long)nk, (unsigned long long)y->callchain[nk]);
	CHECK(!memcmp(y->callchain + nk + 1, rw_user, sizeof(rw_user)), "%s: user frames wrong", what);
}

static void test_decode_sample_record(void)
{
	u64 types[] = { RW_TYPE, RW_TYPE & ~(u64)PERF_SAMPLE_RAW };
	for (size_t k = 0; k < ARRAY_SIZE(types); k++) {
		struct perf_event_attr attr = rw_attr(types[k]);
		struct pd_attr a;
		memset(&a, 0x5a, sizeof(a));   /* init must set every fact */
		pd_attr_init(&a, &attr);
		CHECK(!memcmp(&a.attr, &attr, sizeof(attr)), "attr not copied");
		CHECK(!a.name && !a.ids && !a.nids && !a.index, "name/ids/index not empty");
		CHECK(a.nr_user_regs == 3 && a.nr_intr_regs == 0, "regs %d/%d", a.nr_user_regs,
		      a.nr_intr_regs);
		CHECK(a.id_trailer_size == 32, "trailer %zu (TID, TIME, CPU, IDENTIFIER)",
		      a.id_trailer_size);

		u64 rec[64];
		struct rw_in in = rw_default();
		size_t n = rw_build(rec, &attr, &in);
		struct pd_event ev;
		memset(&ev, 0x5a, sizeof(ev));
		CHECK(pd_decode(&a, rec, &ev) == 0, "sample %zu does not decode", k);
		const struct pd_sample *s = &ev.s;
		CHECK(ev.type == PERF_RECORD_SAMPLE && ev.size == n && ev.offset == 0 &&
		      ev.raw == (const void *)rec && ev.attr == &a && ev.has_time,
		      "event header fields wrong");
		CHECK(s->id == RW_ID && s->ip == RW_IP && s->pid == RW_PID && s->tid == RW_TID,
		      "id %llu ip %#llx pid %u tid %u", (unsigned long long)s->id,
		      (unsigned long long)s->ip, s->pid, s->tid);
		CHECK(s->time == RW_TIME && s->cpu == RW_CPU && s->period == PERIOD, "time/cpu/period");
		CHECK(s->nr_callchain == 3 && s->callchain == (const u64 *)((u8 *)rec + RW_CHAIN_OFF + 8) &&
		      s->callchain[2] == rw_kernel[2], "chain");
		bool raw = attr.sample_type & PERF_SAMPLE_RAW;
		CHECK(s->raw_size == (raw ? 13 : 0) && (!raw || s->raw[12] == 0x40 + 12), "raw");
		CHECK(s->user_abi == PERF_SAMPLE_REGS_ABI_64 && s->user_regs &&
		      s->user_regs[2] == rw_reg(2), "user regs");
		CHECK(s->stack_size == 64 && s->stack_dyn_size == 40 && s->stack &&
		      s->stack[63] == rw_stack_byte(63), "user stack");
		/* The offsets the rewriter copies by. */
		size_t chain_end = RW_CHAIN_OFF + 8 + 3 * 8;
		size_t user_off = chain_end + rw_raw_bytes(&attr, 13);
		CHECK(s->chain_off == RW_CHAIN_OFF && s->chain_end == chain_end,
		      "chain at %u..%u, want %d..%zu", s->chain_off, s->chain_end, RW_CHAIN_OFF,
		      chain_end);
		CHECK(s->user_off == user_off && s->user_end == n,
		      "user state at %u..%u, want %zu..%zu", s->user_off, s->user_end, user_off, n);
		/* Cut short anywhere, the record is malformed. */
		struct perf_event_header h;
		memcpy(&h, rec, sizeof(h));
		h.size = (u16)(n - 8);
		memcpy(rec, &h, sizeof(h));
		CHECK(pd_decode(&a, rec, &ev) < 0, "a truncated sample decoded");
	}
	u64 rec[64];
	struct perf_event_attr attr = rw_attr(RW_TYPE);
	struct rw_in in = rw_default();
	rw_build(rec, &attr, &in);
	struct pd_event ev;
	CHECK(pd_decode(NULL, rec, &ev) < 0, "a sample without its attr decoded");
}

/* User frames in, user state out: for each chain a recorder may drain (a
 * kernel part only; none, a sample taken in user mode; a user part
 * recorded already) and each layout (RAW or not, fields after the stack). */
static void test_rewrite_user_frames(void)
{
	u64 types[] = { RW_TYPE, RW_TYPE & ~(u64)PERF_SAMPLE_RAW,
			RW_TYPE | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_PHYS_ADDR };
	u64 with_user[] = { PERF_CONTEXT_KERNEL, 0xffffffff81000010ULL, PERF_CONTEXT_USER,
			    0x409999, 0x408888 };
	struct { const u64 *chain; u64 n, nkernel; } chains[] = {
		{ rw_kernel, ARRAY_SIZE(rw_kernel), ARRAY_SIZE(rw_kernel) },
		{ rw_kernel, 0, 0 },
		{ with_user, ARRAY_SIZE(with_user), 2 },
	};
	for (size_t k = 0; k < ARRAY_SIZE(types); k++) {
		for (size_t c = 0; c < ARRAY_SIZE(chains); c++) {
			char what[32];
			snprintf(what, sizeof(what), "layout %zu chain %zu", k, c);
			struct perf_event_attr attr = rw_attr(types[k]);
			struct pd_attr a;
			pd_attr_init(&a, &attr);
			u64 rec[64], out[64];
			struct rw_in in = rw_default();
			in.chain = chains[c].chain;
			in.nchain = chains[c].n;
			size_t n = rw_build(rec, &attr, &in);
			struct pd_event e1, e2;
			CHECK(pd_decode(&a, rec, &e1) == 0, "%s: does not decode", what);
			struct pd_rewrite rw = { rw_user, ARRAY_SIZE(rw_user), false };
			size_t m = pd_sample_rewrite(&a, rec, &e1.s, &rw, out, sizeof(out));
			u64 nk = chains[c].nkernel;
			size_t want = RW_CHAIN_OFF + 8 * (1 + nk + 1 + ARRAY_SIZE(rw_user)) +
				      rw_raw_bytes(&attr, 13) + 8 + 8 + rw_tail_bytes(&attr);
			CHECK(m == want, "%s: %zu bytes (from %zu), want %zu", what, m, n, want);
			if (m != want)
				continue;
			CHECK(rd16((u8 *)out + 6) == m, "%s: header size %u", what, rd16((u8 *)out + 6));
			CHECK(!memcmp(out, rec, 6), "%s: type/misc changed", what);
			CHECK(!memcmp((u8 *)out + 8, (u8 *)rec + 8, RW_CHAIN_OFF - 8),
			      "%s: fields before the chain changed", what);
			CHECK(pd_decode(&a, out, &e2) == 0, "%s: the rewritten sample does not decode", what);
			rw_check_same(&e1, &e2, what);
			rw_check_chain(&e2.s, chains[c].chain, nk, what);
			CHECK(e2.s.user_abi == 0 && !e2.s.user_regs, "%s: regs kept (abi %llu)", what,
			      (unsigned long long)e2.s.user_abi);
			CHECK(e2.s.stack_size == 0 && e2.s.stack_dyn_size == 0,
			      "%s: stack kept (%llu bytes)", what, (unsigned long long)e2.s.stack_size);
			CHECK(e2.s.user_end == m - rw_tail_bytes(&attr), "%s: user state ends at %u",
			      what, e2.s.user_end);
		}
	}

	/* No frames given: the chain stays as recorded, the state still goes. */
	struct perf_event_attr attr = rw_attr(RW_TYPE);
	struct pd_attr a;
	pd_attr_init(&a, &attr);
	u64 rec[64], out[64];
	struct rw_in in = rw_default();
	size_t n = rw_build(rec, &attr, &in);
	struct pd_event e1, e2;
	pd_decode(&a, rec, &e1);
	struct pd_rewrite keep_chain = { NULL, 0, false };
	size_t m = pd_sample_rewrite(&a, rec, &e1.s, &keep_chain, out, sizeof(out));
	/* regs: abi + 3 -> abi; stack: size + 64 + dyn_size -> size */
	CHECK(m == n - 3 * 8 - (64 + 8), "no frames: %zu bytes from %zu", m, n);
	CHECK(m && !memcmp(out + 1, rec + 1, e1.s.user_off - 8),
	      "no frames: bytes up to the user state changed");
	CHECK(m && pd_decode(&a, out, &e2) == 0 && e2.s.nr_callchain == 3 &&
	      !memcmp(e2.s.callchain, rw_kernel, sizeof(rw_kernel)) && e2.s.user_abi == 0 &&
	      e2.s.stack_size == 0, "no frames: chain changed or state kept");

	/* An attr without CALLCHAIN has no chain to write the frames into. */
	attr = rw_attr(RW_TYPE & ~(u64)PERF_SAMPLE_CALLCHAIN);
	pd_attr_init(&a, &attr);
	n = rw_build(rec, &attr, &in);
	pd_decode(&a, rec, &e1);
	struct pd_rewrite rw = { rw_user, ARRAY_SIZE(rw_user), false };
	m = pd_sample_rewrite(&a, rec, &e1.s, &rw, out, sizeof(out));
	CHECK(m == n - 3 * 8 - (64 + 8), "no CALLCHAIN: %zu bytes from %zu", m, n);
	CHECK(m && pd_decode(&a, out, &e2) == 0 && e2.s.nr_callchain == 0 && !e2.s.callchain,
	      "no CALLCHAIN: a chain appeared");
	if (m)
		rw_check_same(&e1, &e2, "no CALLCHAIN");
}

/* Kept user state: the regs as recorded, the stack copy cut to dyn_size
 * (rounded up to 8, padded with zeros) with dyn_size as recorded. */
static void test_rewrite_keep_user_state(void)
{
	struct perf_event_attr attr = rw_attr(RW_TYPE | PERF_SAMPLE_WEIGHT);
	struct pd_attr a;
	pd_attr_init(&a, &attr);
	u64 rec[64], out[64];
	struct { u64 dyn, want_size; } cases[] = { { 20, 24 }, { 40, 40 }, { 64, 64 }, { 0, 0 } };
	for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
		char what[32];
		snprintf(what, sizeof(what), "dyn_size %llu", (unsigned long long)cases[k].dyn);
		struct rw_in in = rw_default();
		in.dyn_size = cases[k].dyn;
		size_t n = rw_build(rec, &attr, &in);
		struct pd_event e1, e2;
		CHECK(pd_decode(&a, rec, &e1) == 0, "%s: does not decode", what);
		struct pd_rewrite rw = { rw_user, ARRAY_SIZE(rw_user), true };
		size_t m = pd_sample_rewrite(&a, rec, &e1.s, &rw, out, sizeof(out));
		u64 ws = cases[k].want_size;
		size_t want = n + 8 * (1 + ARRAY_SIZE(rw_user)) - 64 + ws - (ws ? 0 : 8);
		CHECK(m == want, "%s: %zu bytes from %zu, want %zu", what, m, n, want);
		if (m != want)
			continue;
		bool decoded = pd_decode(&a, out, &e2) == 0;
		CHECK(decoded, "%s: the rewritten sample does not decode", what);
		if (!decoded)
			continue;
		rw_check_same(&e1, &e2, what);
		rw_check_chain(&e2.s, rw_kernel, ARRAY_SIZE(rw_kernel), what);
		CHECK(e2.s.user_abi == PERF_SAMPLE_REGS_ABI_64 && e2.s.user_regs &&
		      !memcmp(e2.s.user_regs, e1.s.user_regs, 3 * 8), "%s: regs not kept", what);
		CHECK(e2.s.stack_size == ws, "%s: stack of %llu bytes, want %llu", what,
		      (unsigned long long)e2.s.stack_size, (unsigned long long)ws);
		CHECK(e2.s.stack_dyn_size == cases[k].dyn, "%s: dyn_size %llu", what,
		      (unsigned long long)e2.s.stack_dyn_size);
		/* dyn_size is the raw u64 behind the copy: as recorded, not clamped. */
		if (ws) {
			const u8 *dyn_at = e2.s.stack + ws;
			CHECK(rd64(dyn_at) == cases[k].dyn, "%s: written dyn_size %llu", what,
			      (unsigned long long)rd64(dyn_at));
		}
		bool data_ok = !cases[k].dyn || !memcmp(e2.s.stack, e1.s.stack, cases[k].dyn);
		for (u64 j = cases[k].dyn; j < ws; j++)
			data_ok = data_ok && e2.s.stack[j] == 0;
		CHECK(data_ok, "%s: stack bytes or padding wrong", what);
	}

	/* Nothing to change (no frames, dyn_size = size): the same bytes. */
	struct rw_in in = rw_default();
	in.dyn_size = in.stack_size;
	size_t n = rw_build(rec, &attr, &in);
	struct pd_event e1;
	pd_decode(&a, rec, &e1);
	struct pd_rewrite rw = { NULL, 0, true };
	size_t m = pd_sample_rewrite(&a, rec, &e1.s, &rw, out, sizeof(out));
	CHECK(m == n && !memcmp(out, rec, n), "an unchanged rewrite differs (%zu of %zu bytes)",
	      m, n);
}

static void test_rewrite_limits(void)
{
	struct perf_event_attr attr = rw_attr(RW_TYPE);
	struct pd_attr a;
	pd_attr_init(&a, &attr);
	u64 rec[64], out[64];
	struct rw_in in = rw_default();
	rw_build(rec, &attr, &in);
	struct pd_event ev;
	pd_decode(&a, rec, &ev);
	struct pd_rewrite rw = { rw_user, ARRAY_SIZE(rw_user), true };
	size_t need = pd_sample_rewrite(&a, rec, &ev.s, &rw, out, sizeof(out));
	CHECK(need > 0, "the rewrite does not fit %zu bytes", sizeof(out));
	/* One byte short, at each of the pieces the rewriter writes. */
	for (size_t cap = 0; cap < need; cap++) {
		size_t m = pd_sample_rewrite(&a, rec, &ev.s, &rw, out, cap);
		CHECK(m == 0, "%zu bytes written into a %zu-byte buffer", m, cap);
		if (m)
			break;
	}
	CHECK(pd_sample_rewrite(&a, rec, &ev.s, &rw, out, need) == need, "exact fit refused");

	/* Bigger than a record may be: refused however large the buffer. */
	size_t big = 65000;
	u64 *brec = xcalloc(1, 70000), *bout = xcalloc(1, 140000), frames[100];
	for (int i = 0; i < 100; i++)
		frames[i] = 0x400000 + (u64)i;
	in.stack_size = big;
	in.dyn_size = big;
	size_t n = rw_build(brec, &attr, &in);
	CHECK(n < 65536 && pd_decode(&a, brec, &ev) == 0, "big sample (%zu bytes) bad", n);
	struct pd_rewrite many = { frames, 100, true };
	size_t m = pd_sample_rewrite(&a, brec, &ev.s, &many, bout, 140000);
	CHECK(m == 0, "a %zu-byte record was written", m);
	many.keep_user_state = false;
	m = pd_sample_rewrite(&a, brec, &ev.s, &many, bout, 140000);
	CHECK(m > 0 && m < 2000, "without the stack it fits, but %zu bytes", m);
	free(brec);
	free(bout);

	/* A pd_sample that is not rec's decoding is refused. */
	struct pd_sample zero;
	memset(&zero, 0, sizeof(zero));
	CHECK(pd_sample_rewrite(&a, rec, &zero, &rw, out, sizeof(out)) == 0,
	      "rewrote from an undecoded sample");
}

/* MMAP2 of TID | TIME | CPU | IDENTIFIER with sample_id_all: the trailer
 * read, the body decoded, the device/inode and build-id variants. */
static size_t rw_build_mmap2(u64 *buf, bool build_id)
{
	struct rw_buf b = { (u8 *)buf, 8 };
	rw_u64(&b, (u64)RW_TID << 32 | RW_PID);
	rw_u64(&b, 0x7f0000001000ULL);
	rw_u64(&b, 0x5000);
	rw_u64(&b, 0x2000);
	if (build_id) {
		u8 id[24] = { 20, 0, 0, 0 };
		for (int i = 0; i < 20; i++)
			id[4 + i] = (u8)(0xb0 + i);
		rw_add(&b, id, 24);
	} else {
		u32 majmin[2] = { 8, 1 };
		rw_add(&b, majmin, 8);
		rw_u64(&b, 987654);
		rw_u64(&b, 3);
	}
	u32 prot_flags[2] = { PROT_READ | PROT_EXEC, MAP_PRIVATE };
	rw_add(&b, prot_flags, 8);
	const char name[] = "/usr/lib/libfoo.so.1";   /* 21 bytes with the NUL */
	rw_add(&b, name, sizeof(name));
	while (b.n % 8)
		b.p[b.n++] = 0;
	rw_u64(&b, (u64)RW_TID << 32 | RW_PID);
	rw_u64(&b, RW_TIME);
	rw_u64(&b, RW_CPU);
	rw_u64(&b, RW_ID);
	u16 misc = PERF_RECORD_MISC_USER | (build_id ? PERF_RECORD_MISC_MMAP_BUILD_ID : 0);
	struct perf_event_header h = { PERF_RECORD_MMAP2, misc, (u16)b.n };
	memcpy(buf, &h, sizeof(h));
	return b.n;
}

static void test_decode_mmap2_record(void)
{
	struct perf_event_attr attr = rw_attr(RW_TYPE);
	struct pd_attr a;
	pd_attr_init(&a, &attr);
	for (int bid = 0; bid < 2; bid++) {
		u64 rec[32];
		size_t n = rw_build_mmap2(rec, bid);
		struct pd_event ev;
		memset(&ev, 0x5a, sizeof(ev));
		CHECK(pd_decode(&a, rec, &ev) == 0, "mmap2 (build-id %d) does not decode", bid);
		CHECK(ev.type == PERF_RECORD_MMAP2 && ev.size == n && ev.offset == 0 &&
		      ev.raw == (const void *)rec && ev.attr == &a, "header fields");
		CHECK(ev.has_time && ev.s.time == RW_TIME && ev.s.pid == RW_PID &&
		      ev.s.tid == RW_TID && ev.s.cpu == RW_CPU, "trailer: time %llu pid %u cpu %u",
		      (unsigned long long)ev.s.time, ev.s.pid, ev.s.cpu);
		CHECK(ev.u.mmap.pid == RW_PID && ev.u.mmap.tid == RW_TID &&
		      ev.u.mmap.start == 0x7f0000001000ULL && ev.u.mmap.len == 0x5000 &&
		      ev.u.mmap.pgoff == 0x2000, "mmap range");
		CHECK(ev.u.mmap.prot == (PROT_READ | PROT_EXEC) && ev.u.mmap.flags == MAP_PRIVATE,
		      "prot %x flags %x", ev.u.mmap.prot, ev.u.mmap.flags);
		CHECK(ev.u.mmap.filename && !strcmp(ev.u.mmap.filename, "/usr/lib/libfoo.so.1"),
		      "filename %s", ev.u.mmap.filename ? ev.u.mmap.filename : "(none)");
		if (bid) {
			CHECK(ev.u.mmap.build_id_size == 20 && ev.u.mmap.build_id &&
			      ev.u.mmap.build_id[19] == 0xb0 + 19 && ev.u.mmap.ino == 0,
			      "build-id variant");
		} else {
			CHECK(ev.u.mmap.build_id_size == 0 && ev.u.mmap.maj == 8 &&
			      ev.u.mmap.min == 1 && ev.u.mmap.ino == 987654, "device/inode variant");
		}
		/* Without an attr there is no trailer to read, and no time. */
		CHECK(pd_decode(NULL, rec, &ev) == 0 && !ev.has_time && ev.s.pid == 0 &&
		      ev.u.mmap.filename && !strcmp(ev.u.mmap.filename, "/usr/lib/libfoo.so.1"),
		      "mmap2 without its attr");
	}
	/* The trailer eats the name: malformed.  A header under 8 bytes too. */
	u64 rec[32];
	rw_build_mmap2(rec, false);
	struct perf_event_header h;
	memcpy(&h, rec, sizeof(h));
	h.size = 8 + 64 + 24;
	memcpy(rec, &h, sizeof(h));
	struct pd_event ev;
	CHECK(pd_decode(&a, rec, &ev) < 0, "an mmap2 without its name decoded");
	h.size = 4;
	memcpy(rec, &h, sizeof(h));
	CHECK(pd_decode(NULL, rec, &ev) < 0, "a 4-byte record decoded");
	/* A sample's fields would start past its end. */
	struct rw_in in = rw_default();
	rw_build(rec, &attr, &in);
	memcpy(&h, rec, sizeof(h));
	h.size = 4;
	memcpy(rec, &h, sizeof(h));
	CHECK(pd_decode(&a, rec, &ev) < 0, "a 4-byte sample decoded");
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ember-fmt-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		printf("FAIL: setup: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	perf_missing = find_perf();
	RUN(test_file_header_layout);
	RUN(test_sample_id_trailer);
	RUN(test_buffering);
	RUN(test_build_id_feature_layout);
	RUN(test_topology_matches_nrcpus);
	RUN(test_misuse);
	RUN(test_full_device);
	RUN(test_abort_keeps_data);
	RUN(test_disk_fills_up);
	RUN(test_perf_script_file);
	RUN(test_perf_header);
	RUN(test_perf_script_pipe);
	RUN(test_tracepoint);
	RUN(test_reader_trace_at_open);
	RUN(test_reader_window);
	RUN(test_reader_compressed);
	RUN(test_reader_compressed_damage);
	RUN(test_reader_undecoded);
	RUN(test_decode_sample_record);
	RUN(test_rewrite_user_frames);
	RUN(test_rewrite_keep_user_state);
	RUN(test_rewrite_limits);
	RUN(test_decode_mmap2_record);
	/* EMBER_TEST_KEEP=1 keeps the files for a look with perf by hand. */
	char *cmd = xasprintf("rm -rf '%s'", tmpdir);
	if (getenv("EMBER_TEST_KEEP"))
		printf("# files kept in %s\n", tmpdir);
	else if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
	free(cmd);
	return test_summary();
}
