/* block-internal.h - what the views of block/ share and nobody else
 * needs: log2 slots and their histogram lines (biolatency's layout), and
 * the phases btt counts at each event of an I/O issued more than once. */
#ifndef EMBER_BLOCK_INTERNAL_H
#define EMBER_BLOCK_INTERNAL_H

#include "block/block.h"

/* The log2 slot of v: 0 for 0 and 1, then floor(log2 v), at most n - 1. */
int bio_log2_slot(u64 v, int n);
/* "UNIT : count distribution" and a line per slot up to the last used,
 * from slot 0 or, with from_first, from the first used. */
void bio_print_log2(FILE *out, const char *unit, const u64 *slot, int n, bool from_first);

/* A phase's MIN, MAX, sum and count. */
struct bio_phase { u64 min, max, sum, n; };
/* Adds to - from when both stamps are seen (not 0), as btt does: a
 * difference that is not positive counts as 1 ns. */
void bio_phase_add(struct bio_phase *p, u64 from, u64 to);
void bio_phase_merge(struct bio_phase *into, const struct bio_phase *p);

/* btt counts G2I at each insert and I2D (M2D for a merged I/O without an
 * insert of its own) at each issue, so a request requeued and issued
 * again counts them again.  An I/O's stamps hold one of each: from the
 * first repeat (a requeue) on, the tracker counts them here instead, for
 * each I/O of the request, from its first insert and issue on. */
struct bio_again { struct bio_phase g2i, i2d, m2d; };
/* The I/O's, or NULL while it has been issued once at most. */
const struct bio_again *bio_again_of(const struct bio_tracker *bt, const struct bio_io *io);

#endif
