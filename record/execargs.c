/* execargs.c - execsnoop's exec arguments from a tracefs uprobe at the
 * dynamic loader's entry point, where the new image's initial stack is
 * untouched (sp -> argc, argv[], NULL, envp[]): the event fetches argc and
 * the argv strings, which exec wrote, so no random stack gap stops it. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/record-internal.h"
#include "symbols/symbols.h"

#define EXECARGS_EVENT "exec_args"

/* The program interpreter (PT_INTERP) the ELF file at path names, into
 * out; "" for a static binary.  -1 with err_set() when it is not ELF. */
static int read_interp(const char *path, char *out, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
	if (fd < 0) {
		err_set_errno("%s", path);
		return -1;
	}
	out[0] = '\0';
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t n = 0;
	if (!e || elf_getphdrnum(e, &n) < 0) {
		err_set("%s: not an ELF file", path);
		goto out;
	}
	rc = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP && ph.p_filesz &&
		    ph.p_filesz < cap &&
		    pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz)
			out[ph.p_filesz] = '\0';
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

/* The loader the system's dynamic executables name: ember's own (it is
 * one), else /bin/sh's; the symlink resolved, as the kernel maps it; and
 * its entry point's file offset (symbols/), where uprobe_events wants it. */
static int find_loader(char *out, size_t cap, u64 *entry_off)
{
	static const char *const progs[] = { "/proc/self/exe", "/bin/sh" };
	char interp[PATH_MAX] = "";
	for (size_t i = 0; !interp[0] && i < ARRAY_SIZE(progs); i++)
		(void)read_interp(progs[i], interp, sizeof(interp));
	if (!interp[0]) {
		err_set("neither ember nor /bin/sh names a program interpreter (static "
			"binaries)");
		return -1;
	}
	char *real = realpath(interp, NULL);
	if (!real) {
		err_set_errno("the program interpreter %s", interp);
		return -1;
	}
	snprintf(out, cap, "%s", real);
	free(real);
	return sym_entry_offset(out, entry_off);
}

int rec_execargs_create(struct rec_probes *p, char *name, size_t cap)
{
	char loader[PATH_MAX];
	u64 off;
	if (find_loader(loader, sizeof(loader), &off) < 0)
		return -1;
	/* The loader starts with sp at argc: argv[i] is at sp + 8 + 8 i. */
	struct strbuf sb = {0};
	sb_puts(&sb, "argc=+0($stack):u64");
	for (int i = 0; i < REC_EXECARGS_MAX; i++)
		sb_printf(&sb, " a%d=+0(+%d($stack)):ustring", i, 8 + 8 * i);
	int rc = rec_probes_add(p, EXECARGS_EVENT, loader, off, sb.s);
	sb_free(&sb);
	if (rc == 0)
		rec_probes_event_name(p, EXECARGS_EVENT, name, cap);
	return rc;
}
