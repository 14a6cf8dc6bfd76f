/* demangle.c - C++ and Rust symbol names made readable, through
 * libiberty's cplus_demangle (Debian libiberty-dev), which knows the
 * Itanium C++ ABI and both Rust manglings.  Built without it
 * (HAVE_LIBIBERTY undefined) names stay as they are. */
#include <stdlib.h>
#include <string.h>

#include "symbols/symbols-internal.h"

#ifdef HAVE_LIBIBERTY
#include <libiberty/demangle.h>

/* Only these prefixes can be mangled C++ or Rust; checking them first
 * keeps a libc-sized table from paying for a failed demangle per name. */
static bool looks_mangled(const char *name)
{
	return (name[0] == '_' && (name[1] == 'Z' || name[1] == 'R')) ||
	       (name[0] == '_' && name[1] == '_' && name[2] == 'Z');
}

char *sym_demangle_name(const char *name)
{
	if (!looks_mangled(name))
		return NULL;
	/* No DMGL_PARAMS: perf report and perf script show "ns::f<int>",
	 * not the argument list; without DMGL_VERBOSE legacy Rust names
	 * lose their ::h<hash> suffix, as perf shows them. */
	return cplus_demangle(name, DMGL_ANSI | DMGL_AUTO);
}

#else

char *sym_demangle_name(const char *name)
{
	return NULL;
}

#endif
