/* jit.c - symbols a JIT compiler wrote to /tmp/perf-PID.map, one
 * "START SIZE name" line (hexadecimal numbers) per generated function. */
#include <stdlib.h>
#include <string.h>

#include "symbols/symbols-internal.h"

/* Parses one line; false when it is not "START SIZE name". */
static bool parse_jit_line(char *line, u64 *start, u64 *size, char **name)
{
	char *end;
	*start = strtoull(line, &end, 16);
	if (end == line || *end != ' ')
		return false;
	char *p = end + 1;
	*size = strtoull(p, &end, 16);
	if (end == p || *end != ' ')
		return false;
	*name = end + 1;
	/* Names may hold spaces (Java signatures); only the newline ends them. */
	size_t n = strlen(*name);
	while (n && ((*name)[n - 1] == '\r' || (*name)[n - 1] == ' '))
		(*name)[--n] = '\0';
	return n > 0;
}

struct sym_dso *jit_load(struct sym_ctx *c, const char *path)
{
	char *text = read_text_file(path, NULL);
	if (!text)
		return NULL;
	struct symtab_builder b;
	/* JIT names come as the runtime chose to print them; perf leaves
	 * them alone too. */
	stb_init(&b, false);
	for (char *line = text, *next; *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		u64 start, size;
		char *name;
		if (parse_jit_line(line, &start, &size, &name))
			stb_add(&b, start, size, name, STB_GLOBAL, false);
	}
	free(text);
	struct sym_dso *d = dso_new(c, DSO_JIT, path);
	stb_finish(&b, &d->tab);
	d->sym_file = xstrdup(path);
	return d;
}
