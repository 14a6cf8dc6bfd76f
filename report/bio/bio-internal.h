/* bio-internal.h - what the views of report/bio/ share and nobody else
 * needs: log2 slots and their histogram lines (biolatency's layout). */
#ifndef EMBER_REPORT_BIO_INTERNAL_H
#define EMBER_REPORT_BIO_INTERNAL_H

#include "report/bio/bio.h"

/* The log2 slot of v: 0 for 0 and 1, then floor(log2 v), at most n - 1. */
int bio_log2_slot(u64 v, int n);
/* "UNIT : count distribution" and a line per slot up to the last used,
 * from slot 0 or, with from_first, from the first used. */
void bio_print_log2(FILE *out, const char *unit, const u64 *slot, int n, bool from_first);

#endif
