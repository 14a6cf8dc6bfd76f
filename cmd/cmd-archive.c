/* cmd-archive.c - `ember archive`: one tar of what another machine needs
 * to name a recording's frames, like perf archive: the build-id cache
 * entries (~/.debug, perf's layout) of every file samples fell in, and of
 * the kernel's kallsyms.  Unpacked into ~/.debug elsewhere, report names
 * the frames there as here.  The tar is written by tar(1), which Debian
 * always has (it is Essential), as perf archive does: a tar library would
 * be one more build dependency for this one cold step. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "replay/replay.h"

#define CMD "archive"

/* The files samples fell in, each once. */
struct hits {
	struct u64map seen;        /* dso pointer -> 1 */
	VEC(const struct sym_dso *) files;
	bool kernel;
};

static int on_sample(void *ctx, const struct rp_sample *s)
{
	struct hits *h = ctx;
	for (int i = 0; i < s->nframes; i++) {
		const struct sym_dso *d = s->frames[i].dso;
		if (!d)
			continue;
		if (sym_dso_is_kernel(d)) {
			h->kernel = true;
			continue;
		}
		bool created;
		u64map_slot(&h->seen, (u64)(uintptr_t)d, &created);
		if (created)
			VEC_PUSH(&h->files, d);
	}
	return 0;
}

/* What goes into the tar, relative to the cache root, and what cannot. */
struct pack {
	const char *root;
	VEC(char *) entries;       /* NAME/HEX and its .build-id link, in pairs */
	bool kernel;               /* one pair is the kernel's */
	size_t missing;
	char missing_names[512];
};

static void note_missing(struct pack *p, const char *name, const char *why)
{
	size_t n = strlen(p->missing_names);
	if (n + strlen(name) + strlen(why) + 8 < sizeof(p->missing_names))
		snprintf(p->missing_names + n, sizeof(p->missing_names) - n, "%s%s (%s)",
			 n ? ", " : "", name, why);
	p->missing++;
}

static bool exists(const char *root, const char *entry, const char *leaf)
{
	char *path = xasprintf("%s/%s/%s", root, entry, leaf);
	struct stat st;
	bool ok = stat(path, &st) == 0;
	free(path);
	return ok;
}

static bool same_id(const char *path, const u8 *id, size_t n)
{
	u8 got[64];
	int k = sym_read_build_id(path, got, sizeof(got));
	return k > 0 && (size_t)k == n && !memcmp(got, id, n);
}

static void add_entry(struct pack *p, const char *entry, const u8 *id, size_t n)
{
	VEC_PUSH(&p->entries, xstrdup(entry));
	VEC_PUSH(&p->entries, sym_cache_link(id, n));
}

/* A file's entry under its own name (its link made sure of): already
 * cached, or cached now from the cache under another name or from the
 * file itself.  Pseudo-files ([vdso]: the reporter's own serves) are not
 * packed. */
static void pack_file(struct pack *p, const struct sym_dso *d)
{
	const char *path = sym_dso_path(d);
	size_t n;
	const u8 *id = sym_dso_build_id(d, &n);
	if (path[0] != '/')
		return;
	char *entry = n ? sym_cache_entry(path, id, n) : NULL;
	if (!entry) {
		note_missing(p, path, "no build-id recorded");
		return;
	}
	char *src = NULL;
	if (!exists(p->root, entry, "elf")) {
		src = sym_cache_find(path, id, n, "elf");
		if (!src && same_id(path, id, n))
			src = xstrdup(path);
	}
	if (!src && !exists(p->root, entry, "elf"))
		note_missing(p, path, "not in the cache, and the file here is not the one recorded");
	else if (sym_cache_add(p->root, path, id, n, "elf", src, -1, NULL) < 0)
		note_missing(p, path, err_msg());
	else
		add_entry(p, entry, id, n);
	free(src);
	free(entry);
}

static void pack_kernel(struct pack *p, struct replay *rp)
{
	const struct pd_reader_build_id *k = rp_kernel_build_id(rp);
	if (!k) {
		note_missing(p, "[kernel.kallsyms]", "no build-id recorded");
		return;
	}
	char *entry = sym_cache_entry("[kernel.kallsyms]", k->id, k->size);
	u8 run[64];
	int nrun = sym_kernel_build_id(run, sizeof(run));
	bool cached = exists(p->root, entry, "kallsyms");
	bool running = nrun == (int)k->size && !memcmp(run, k->id, k->size);
	if (!cached && !running)
		note_missing(p, "[kernel.kallsyms]", "not in the cache, and not the running kernel");
	else if ((cached ? sym_cache_add(p->root, "[kernel.kallsyms]", k->id, k->size,
					 "kallsyms", NULL, -1, NULL)
			 : sym_cache_add_kernel(p->root, k->id, k->size)) < 0)
		note_missing(p, "[kernel.kallsyms]", err_msg());
	else {
		add_entry(p, entry, k->id, k->size);
		p->kernel = true;
	}
	free(entry);
}

/* tar(1) reads the NUL-separated list on its standard input and writes
 * the archive to its standard output, out_fd, which we opened: tar never
 * sees the name, so a ':' in it is no remote host (tar's rmt syntax) and
 * a folder that is missing is our one line, not tar's. */
static int run_tar(const struct pack *p, const char *out, int out_fd)
{
	int fds[2];
	if (pipe(fds) < 0) {
		err_set_errno("pipe");
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		err_set_errno("fork");
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fds[0], 0);
		dup2(out_fd, 1);
		close(fds[0]);
		close(fds[1]);
		execlp("tar", "tar", "--create", "--file=-", "--directory", p->root,
		       "--null", "--files-from=-", (char *)NULL);
		fprintf(stderr, "ember archive: tar: %s\n", strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	int rc = 0;
	for (size_t i = 0; i < p->entries.n && rc == 0; i++)
		rc = write_all(fds[1], p->entries.v[i], strlen(p->entries.v[i]) + 1);
	close(fds[1]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		err_set("tar could not write %s (see its message above)", out);
		return -1;
	}
	return 0;
}

struct args {
	const char *input, *output;
};

#define A(f) offsetof(struct args, f)

/* Replays the recording for the files its samples fell in. */
static int find_hits(const char *input, struct hits *h, struct replay **rpp)
{
	struct rp_opts o;
	rp_opts_init(&o);
	o.input = input;
	rp_progress_if_tty(&o);
	struct replay *rp = rp_open(&o);
	if (!rp)
		return -1;
	rp_set_callchains(rp, rp_has_callchains(rp));
	struct rp_sink sink = { .ctx = h, .sample = on_sample };
	if (rp_run(rp, &sink) < 0 || rp_summary(rp)->input_error) {
		if (rp_summary(rp)->input_error)
			err_set("%s", rp_summary(rp)->error);
		rp_close(rp);
		return -1;
	}
	*rpp = rp;
	return 0;
}

/* The tar, opened before the recording is read, so a bad -o fails at
 * once; -1 with err_set(). */
static int open_out(const char *out)
{
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		err_set_errno("%s: cannot create the tar", out);
	return fd;
}

static int archive(const char *input, const char *out)
{
	struct hits h = {0};
	u64map_init(&h.seen);
	struct replay *rp = NULL;
	struct pack p = {0};
	int rc = EXIT_RUNTIME;
	char *root = sym_cache_root();
	int out_fd = root ? open_out(out) : -1;
	if (out_fd < 0 || find_hits(input, &h, &rp) < 0) {
		cmd_error(CMD, "%s", err_msg());
		goto out;
	}
	p.root = root;
	for (size_t i = 0; i < h.files.n; i++)
		pack_file(&p, h.files.v[i]);
	if (h.kernel)
		pack_kernel(&p, rp);
	if (!p.entries.n) {
		cmd_error(CMD, "%s: no file its samples fell in could be packed%s%s", input,
			  p.missing ? ": " : "", p.missing_names);
		goto out;
	}
	if (run_tar(&p, out, out_fd) < 0) {
		cmd_error(CMD, "%s", err_msg());
		goto out;
	}
	if (p.missing)
		cmd_warn(CMD, "%zu files left out: %s", p.missing, p.missing_names);
	/* tar would take a ':' in the name for a remote host there too. */
	printf("%zu files%s in %s; where you report: mkdir -p ~/.debug && "
	       "tar xf %s%s -C ~/.debug\n", p.entries.n / 2 - p.kernel,
	       p.kernel ? " and the kernel's kallsyms" : "", out, out,
	       strchr(out, ':') ? " --force-local" : "");
	rc = EXIT_OK;
out:
	if (out_fd >= 0 && (close(out_fd) < 0 || rc != EXIT_OK)) {
		if (rc == EXIT_OK)
			cmd_error(CMD, "%s: %s", out, strerror(errno));
		unlink(out);   /* no half tar left behind */
		rc = EXIT_RUNTIME;
	}
	for (size_t i = 0; i < p.entries.n; i++)
		free(p.entries.v[i]);
	VEC_FREE(&p.entries);
	VEC_FREE(&h.files);
	u64map_free(&h.seen);
	rp_close(rp);
	free(root);
	return rc;
}

static const struct opt options[] = {
	OPT_STRING('i', "input", A(input), "FILE", "data file (default ember.data; - for stdin)"),
	OPT_STRING('o', "output", A(output), "OUT", "the tar to write (default FILE.tar)"),
	OPT_END,
};

const struct opt_cmd archive_cmd = {
	.name = CMD,
	.summary = "pack the symbols a recording needs, like perf archive",
	.synopsis =
	"usage: ember archive [-i FILE] [-o OUT.tar]\n"
	"\n"
	"Packs the build-id cache entries (~/.debug) of every file the samples of\n"
	"FILE fell in, and the kernel's kallsyms, into one tar.  On the machine\n"
	"that reports, unpack it with 'mkdir -p ~/.debug && tar xf OUT.tar -C\n"
	"~/.debug': report, script and the other views then name the frames as\n"
	"here.  Files missing from the cache are added to it first when the file\n"
	"on disk is the one recorded (same build-id).\n"
	"\n",
	.opts = options,
};

int cmd_archive(int argc, char **argv)
{
	struct args a = { "ember.data", NULL };
	int rc = opt_parse(&archive_cmd, argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return cmd_extra_argument(CMD, CMD, argv[optind]);
	if (!strcmp(a.input, "-") && !a.output) {
		cmd_error(CMD, "-i -: name the tar with -o");
		return EXIT_USAGE;
	}
	char *out = a.output ? xstrdup(a.output) : xasprintf("%s.tar", a.input);
	rc = archive(a.input, out);
	free(out);
	return rc;
}
