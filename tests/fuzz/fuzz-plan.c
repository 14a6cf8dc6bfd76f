/* fuzz-plan.c - libFuzzer target for the block replay's plan files
 * (block/btreplay/planfile.c): the header, the device and stream tables
 * and every I/O checked against the bytes there are.  A plan that reads is
 * written again and must read back the same, I/O for I/O.
 *
 * Input: a plan file. */
#include "tests/fuzz/fuzz.h"

#include "block/btreplay/btreplay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);

/* A second memfd for the plan written back. */
static const char *scratch_path(void)
{
	static char path[64];
	if (!path[0]) {
		int fd = memfd_create("ember-fuzz-plan", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	return path;
}

static void touch_plan(const struct blkr_plan *p)
{
	fuzz_touch(p->devs, p->ndevs * sizeof(*p->devs));
	for (u32 s = 0; s < p->nstreams; s++)
		fuzz_touch(p->streams[s].ios, p->streams[s].n * sizeof(*p->streams[s].ios));
	fuzz_sink += blkr_plan_nios(p) + blkr_plan_span(p);
}

static bool same_plan(const struct blkr_plan *a, const struct blkr_plan *b)
{
	if (a->ndevs != b->ndevs || a->nstreams != b->nstreams || a->start != b->start ||
	    a->left_out != b->left_out || memcmp(a->devs, b->devs, a->ndevs * sizeof(*a->devs)))
		return false;
	for (u32 s = 0; s < a->nstreams; s++)
		if (a->streams[s].cpu != b->streams[s].cpu || a->streams[s].n != b->streams[s].n ||
		    memcmp(a->streams[s].ios, b->streams[s].ios,
			   a->streams[s].n * sizeof(*a->streams[s].ios)))
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct blkr_plan p, again;
	if (blkr_plan_load(&p, fuzz_as_file(data, len)) < 0) {
		fuzz_touch_str(err_msg());
		return 0;
	}
	touch_plan(&p);
	const char *path = scratch_path();
	if (blkr_plan_save(&p, path) < 0 || blkr_plan_load(&again, path) < 0 ||
	    !same_plan(&p, &again)) {
		fprintf(stderr, "fuzz-plan: a plan read did not write back the same: %s\n",
			err_msg());
		abort();
	}
	blkr_plan_free(&again);
	blkr_plan_free(&p);
	return 0;
}
