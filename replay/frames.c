/* frames.c - how a resolved frame is named in text, one rule for every
 * view: perf script's chain lines, the report's columns and source-line
 * stand-ins, and the names frames take in folded stacks (stackcollapse-
 * perf.pl's rules, a behaviour we match, not code we share).
 *
 * collapse, flame, offcpu (table, folded, SVG), flame --wall and bio's
 * stacks all name frames here, the process frame too (rp_fold_process:
 * comm, -PID or -PID/TID, spaces made '_').  Each folded name carries its
 * kind (kernel, JIT, user, inlined) for the flame graph's colours, worked
 * out from the frame's fields, with no text to parse back. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"

/* What an inline frame's symbol adds to its function's name. */
#define INLINED_SUFFIX " (inlined)"

const char *rp_dso_name(const struct sym_dso *d)
{
	return d ? sym_dso_short(d) : "[unknown]";
}

/* A frame's file path: its dso's, or a kept frame's own (rp_place_frame). */
static const char *frame_path(const struct rp_frame *f)
{
	return f->dso ? sym_dso_path(f->dso) : f->file ? f->file : "[unknown]";
}

/* The function's own name: an inline frame's symbol is "NAME (inlined)". */
static size_t bare_name_len(const struct rp_frame *f)
{
	const size_t suffix = sizeof(INLINED_SUFFIX) - 1;
	size_t len = strlen(f->sym->name);
	if (f->inlined && len > suffix && !strcmp(f->sym->name + len - suffix, INLINED_SUFFIX))
		return len - suffix;
	return len;
}

/* ---- perf script ------------------------------------------------------- */

void rp_put_frame_text(struct strbuf *sb, const struct rp_frame *f, unsigned what,
		       const char *line)
{
	if (what & RP_TEXT_SYM) {
		if (f->sym) {
			sb_add(sb, f->sym->name, bare_name_len(f));
			/* A symbol without a file is the cut marker: no offset. */
			if ((what & RP_TEXT_SYMOFF) && (f->dso || f->file)) {
				sb_add(sb, "+0x", 3);
				sb_add_hex(sb, f->addr - f->sym->start, 0);
			}
		} else {
			sb_puts(sb, "[unknown]");
		}
	}
	if ((what & RP_TEXT_DSO) && !f->inlined) {   /* perf names no file for those */
		sb_add(sb, " (", 2);
		sb_puts(sb, frame_path(f));
		sb_add(sb, ")", 1);
	}
	/* The line on a line of its own: nothing for a user address without
	 * line information, the kernel's file and address for a kernel one. */
	if (what & RP_TEXT_SRCLINE) {
		if (line) {
			sb_add(sb, "\n  ", 3);
			sb_puts(sb, line);
		} else if (f->kernel) {
			sb_add(sb, "\n  ", 3);
			sb_puts(sb, rp_dso_name(f->dso));
			sb_add(sb, "[", 1);
			sb_add_hex(sb, f->ip, 0);
			sb_add(sb, "]", 1);
		}
	}
	if (f->inlined)
		sb_puts(sb, INLINED_SUFFIX);   /* after the line, where perf puts it */
}

/* ---- report ------------------------------------------------------------ */

char rp_branch_level(const struct rp_frame *f)
{
	return f->kernel ? 'k' : f->dso ? '.' : 'H';
}

void rp_put_sym_column(struct strbuf *sb, const struct sym *sym, u64 addr, char level)
{
	char head[4] = { '[', level, ']', ' ' };
	sb_add(sb, head, 4);
	if (sym) {
		sb_puts(sb, sym->name);
		return;
	}
	/* As printf's %#.16llx: no 0x on zero. */
	if (addr)
		sb_add(sb, "0x", 2);
	size_t at = sb->len;
	sb_add_hex(sb, addr, 16);
	for (size_t i = at; i < sb->len && sb->s[i] == ' '; i++)
		sb->s[i] = '0';
}

void rp_put_line_stand_in(struct strbuf *sb, const struct sym *sym, const struct sym_dso *dso,
			  bool kernel, u64 addr)
{
	rp_put_line_stand_in_file(sb, sym, dso ? sym_dso_short(dso) : NULL, kernel, addr);
}

void rp_put_line_stand_in_file(struct strbuf *sb, const struct sym *sym, const char *file,
			       bool kernel, u64 addr)
{
	if (sym && (file || kernel)) {
		sb_puts(sb, sym->name);
		sb_add(sb, "+", 1);
		sb_add_dec(sb, (s64)(addr - sym->start), 0, ' ');
	} else if (file) {
		sb_puts(sb, file);
		sb_add(sb, "[", 1);
		sb_add_hex(sb, addr, 0);
		sb_add(sb, "]", 1);
	} else {
		sb_puts(sb, sym ? sym->name : "??:0");   /* a marker frame, or nothing */
	}
}

/* ---- folded stacks ----------------------------------------------------- */

/* Go method names like "net/http.(*Client).Do" keep their parentheses. */
static bool looks_like_go(const char *s, size_t len)
{
	const char *open = memmem(s, len, ".(", 2);
	return open && memmem(open + 2, len - (size_t)(open + 2 - s), ").", 2);
}

/* Where the argument list starts: the first '(' that does not open
 * "(anonymous namespace)". */
static size_t args_start(const char *s, size_t len)
{
	static const char anon[] = "anonymous namespace)";
	for (size_t i = 0; i < len; i++)
		if (s[i] == '(' && !(len - i - 1 >= sizeof(anon) - 1 &&
				     !memcmp(s + i + 1, anon, sizeof(anon) - 1)))
			return i;
	return len;
}

/* Appends the tidied name: arguments dropped, ';' made ':' (it separates
 * frames), quotes removed, and Java's leading 'L' of class paths gone. */
static void put_tidy(struct strbuf *sb, const char *s, size_t len, bool java)
{
	size_t keep = looks_like_go(s, len) ? len : args_start(s, len);
	size_t start = sb->len;
	for (size_t i = 0; i < keep; i++) {
		char ch = s[i] == ';' ? ':' : s[i];
		if (ch != '"' && ch != '\'')
			sb_add(sb, &ch, 1);
	}
	if (java && sb->len > start && sb->s[start] == 'L' &&
	    memchr(sb->s + start, '/', sb->len - start)) {
		memmove(sb->s + start, sb->s + start + 1, sb->len - start - 1);
		sb->s[--sb->len] = '\0';
	}
}

static bool is_jit_map(const char *mod, size_t len)
{
	static const char tmp[] = "/tmp/perf-";
	const size_t n = sizeof(tmp) - 1;
	for (const char *p = memmem(mod, len, tmp, n); p;
	     p = memmem(p + 1, len - (size_t)(p + 1 - mod), tmp, n)) {
		const char *end = mod + len, *e = p + n;
		while (e < end && isdigit((unsigned char)*e))
			e++;
		if (e > p + n && end - e >= 4 && !memcmp(e, ".map", 4))
			return true;
	}
	return false;
}

/* The kernel test of the folding rules ("[...]" or ".../vmlinux", not
 * unknown), less [vdso] and [vsyscall]: those run in user space. */
static bool is_kernel_mod(const char *mod, size_t len)
{
	bool bracket = len && mod[0] == '[';
	bool vmlinux = len >= 7 && !memcmp(mod + len - 7, "vmlinux", 7);
	if (!bracket && !vmlinux)
		return false;
	if (memmem(mod, len, "unknown", 7))
		return false;
	return !(len == 6 && !memcmp(mod, "[vdso]", 6)) &&
	       !(len == 10 && !memcmp(mod, "[vsyscall]", 10));
}

static enum rp_frame_kind mod_kind(const char *mod, size_t len)
{
	if (is_kernel_mod(mod, len))
		return RP_FRAME_KERNEL;
	return is_jit_map(mod, len) ? RP_FRAME_JIT : RP_FRAME_USER;
}

/* Drops a trailing "+0x<hex>" symbol offset. */
static size_t strip_offset(const char *s, size_t len)
{
	size_t i = len;
	while (i > 0 && isxdigit((unsigned char)s[i - 1]) && !isupper((unsigned char)s[i - 1]))
		i--;
	if (i < len && i >= 3 && !memcmp(s + i - 3, "+0x", 3))
		return i - 3;
	return len;
}

static void add_part(struct rp_fold *fo, size_t off, enum rp_frame_kind kind)
{
	struct rp_fold_part p = { off, fo->text.len - off, kind };
	VEC_PUSH(&fo->parts, p);
}

/* One part of a function name: a known name, or "[file]" for an unknown
 * one in a known file. */
static void put_part(struct rp_fold *fo, const char *func, size_t len, const char *mod,
		     size_t mlen, bool java)
{
	if (len == 9 && !memcmp(func, "[unknown]", 9) && !(mlen == 9 && !memcmp(mod, "[unknown]", 9))) {
		const char *base = mod + mlen;
		while (base > mod && base[-1] != '/')
			base--;
		sb_reset(&fo->file);
		sb_add(&fo->file, "[", 1);
		sb_add(&fo->file, base, (size_t)(mod + mlen - base));
		sb_add(&fo->file, "]", 1);
		put_tidy(&fo->text, fo->file.s, fo->file.len, java);
		return;
	}
	put_tidy(&fo->text, func, len, java);
}

/* The last " (" of s, or NULL. */
static const char *last_paren(const char *s)
{
	const char *open = NULL;
	for (const char *p = strstr(s, " ("); p; p = strstr(p + 1, " ("))
		open = p;
	return open;
}

/* The function and file of frame f as the folding rules read them from
 * perf script's "FUNC+0xOFF (FILE)": FILE is what the last " (...)"
 * holds, so a file name holding " (" itself ("/memfd:x (deleted)") splits
 * where the rules split it, the rest of it going with FUNC (composed in
 * fo->scratch then).  Returns whether the split is the plain one. */
static bool fold_split(struct rp_fold *fo, const struct rp_frame *f, const char **func,
		       size_t *flen, const char **mod, size_t *mlen)
{
	const char *path = f->inlined ? "inlined" : frame_path(f);
	const char *open = last_paren(path);
	*func = f->sym ? f->sym->name : "[unknown]";
	*flen = f->sym ? bare_name_len(f) : 9;
	if (!open) {
		*mod = path;
		*mlen = strlen(path);
		return true;
	}
	sb_reset(&fo->scratch);
	sb_add(&fo->scratch, *func, *flen);
	if (f->sym) {
		sb_add(&fo->scratch, "+0x", 3);
		sb_add_hex(&fo->scratch, f->addr - f->sym->start, 0);
	}
	sb_add(&fo->scratch, " (", 2);
	sb_add(&fo->scratch, path, (size_t)(open - path));
	*func = fo->scratch.s;
	*flen = strip_offset(fo->scratch.s, fo->scratch.len);
	*mod = open + 2;
	*mlen = strlen(*mod);
	return false;
}

bool rp_fold_frame(struct rp_fold *fo, const struct rp_frame *f, bool java)
{
	const char *func, *mod;
	size_t flen, mlen;
	bool plain = fold_split(fo, f, &func, &flen, &mod, &mlen);
	if (func[0] == '(')
		return plain;             /* the rules skip these */
	enum rp_frame_kind kind = mod_kind(mod, mlen);
	for (size_t part = 0, pos = 0;; part++) {
		const char *arrow = memmem(func + pos, flen - pos, "->", 2);
		size_t end = arrow ? (size_t)(arrow - func) : flen;
		size_t off = fo->text.len;
		put_part(fo, func + pos, end - pos, mod, mlen, java);
		add_part(fo, off, part ? RP_FRAME_INLINED : kind);
		if (!arrow)
			break;
		pos = end + 2;
	}
	return plain;
}

void rp_fold_process(struct rp_fold *fo, const char *comm, u32 pid, u32 tid,
		     enum rp_fold_thread show)
{
	size_t off = fo->text.len;
	sb_puts(&fo->text, comm);
	if (show == RP_FOLD_TID)
		sb_printf(&fo->text, "-%u/%u", pid, tid);
	else if (show == RP_FOLD_PID)
		sb_printf(&fo->text, "-%u", pid);
	for (size_t i = off; i < fo->text.len; i++)
		if (fo->text.s[i] == ' ')
			fo->text.s[i] = '_';
	add_part(fo, off, RP_FRAME_USER);
}

void rp_fold_literal(struct rp_fold *fo, const char *name, enum rp_frame_kind kind)
{
	size_t off = fo->text.len;
	sb_puts(&fo->text, name);
	add_part(fo, off, kind);
}

bool rp_fold_java(const char *comm)
{
	return !strncmp(comm, "java", 4);
}

void rp_fold_reset(struct rp_fold *fo)
{
	sb_reset(&fo->text);
	fo->parts.n = 0;
}

void rp_fold_free(struct rp_fold *fo)
{
	sb_free(&fo->text);
	sb_free(&fo->scratch);
	sb_free(&fo->file);
	VEC_FREE(&fo->parts);
}

void rp_fold_name(struct strbuf *sb, struct rp_fold *fo, const struct rp_frame *f, bool java)
{
	rp_fold_reset(fo);
	rp_fold_frame(fo, f, java);
	for (size_t i = 0; i < fo->parts.n; i++) {
		if (i)
			sb_add(sb, ";", 1);
		sb_add(sb, rp_fold_at(fo, i), fo->parts.v[i].len);
	}
}
