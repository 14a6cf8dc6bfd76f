/* cmd-bio-internal.h - what the bio command's two files share:
 * cmd-bio.c (the views) hands --replay and --save-plan to
 * cmd-bio-replay.c (btrecord and btreplay from a recording).  Only those
 * two include it. */
#ifndef EMBER_CMD_BIO_INTERNAL_H
#define EMBER_CMD_BIO_INTERNAL_H

#include "cmd/cmd.h"

/* The replay's options, in bio's table; its parse takes their ids (1
 * taken, 0 not ours, -1 err_set) into *b, made at the first one. */
struct bio_replay;
struct bio_view_opts;
extern const struct opt bio_replay_opts[];
int bio_replay_parse(struct bio_replay **b, int opt, const char *arg);
/* -1 to go on, or EXIT_USAGE having said why (b NULL: no replay). */
int bio_replay_check(const struct bio_replay *b, bool input_set, bool other_view);
/* The plan (of rp's input, filtered by v and rp's filters, or --plan's),
 * saved and/or replayed; returns the exit status, having said why. */
int bio_replay_cmd(struct bio_replay *b, const struct rp_opts *rp, const struct bio_view_opts *v);
void bio_replay_free(struct bio_replay *b);

#endif
