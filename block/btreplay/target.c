/* target.c - the devices a plan is replayed onto: where each recorded
 * device goes (--map, else --replay's device), and what must hold before
 * the first I/O: a block device, every I/O within its end and aligned to
 * its blocks, and for writes a device nothing uses (not mounted, no
 * filesystem or partition table by libblkid, not the recorded device)
 * unless forced.
 *
 * Each refusal is one line naming what is there; --force skips them, and
 * written targets are opened O_EXCL unless forced.  The libblkid probe
 * reads a few pages of the target through the page cache (a recording of
 * the target shows them, in the main thread). */
#include <blkid/blkid.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "block/btreplay/btreplay-internal.h"

static const char force_hint[] = "refusing to write to it (--force writes anyway)";

/* ---- naming ------------------------------------------------------------------ */

/* NAME, /dev/NAME or MAJ:MIN (MAJ,MIN) to a block device's path. */
static int resolve(const char *name, struct blkr_target *t, bool *usage)
{
	unsigned maj, min;
	char sep, end;
	if (sscanf(name, "%u%c%u%c", &maj, &sep, &min, &end) == 3 && (sep == ':' || sep == ',')) {
		char dev[64];
		bio_dev_name(maj << 20 | min, dev, sizeof(dev));
		snprintf(t->path, sizeof(t->path), "/dev/%s", dev);
	} else {
		snprintf(t->path, sizeof(t->path), "%s%s", strchr(name, '/') ? "" : "/dev/", name);
	}
	struct stat st;
	if (stat(t->path, &st) < 0 || !S_ISBLK(st.st_mode)) {
		*usage = true;
		err_set("'%s' is not a block device: give NAME, /dev/NAME or MAJ:MIN of one", name);
		return -1;
	}
	t->dev = major(st.st_rdev) << 20 | minor(st.st_rdev);
	return 0;
}

/* The target a recorded device goes to: its --map, else --replay's. */
static const char *dest_of(const struct blkr_opts *o, u32 dev)
{
	for (size_t i = 0; i < o->nmaps; i++)
		if (o->maps[i].from == dev)
			return o->maps[i].to;
	return o->dest;
}

static int check_unmapped(const struct blkr_plan *p, const struct blkr_opts *o, bool *usage)
{
	u32 unmapped = 0;
	char a[64] = "", b[64] = "";
	for (u32 i = 0; i < p->ndevs; i++) {
		bool mapped = false;
		for (size_t k = 0; k < o->nmaps; k++)
			mapped |= o->maps[k].from == p->devs[i];
		if (mapped)
			continue;
		bio_dev_name(p->devs[i], unmapped ? b : a, sizeof(a));
		unmapped++;
	}
	*usage = true;
	if (unmapped > 1) {
		err_set("the plan's I/O is on %u devices (%s, %s, ...): send each with "
			"--map OLD=NEW, or pick one with -d", unmapped, a, b);
		return -1;
	}
	if (unmapped && !o->dest) {
		err_set("no device for the I/O recorded on %s: give --replay DEV or --map %s=DEV",
			a, a);
		return -1;
	}
	for (size_t k = 0; k < o->nmaps; k++) {
		bool found = false;
		for (u32 i = 0; i < p->ndevs; i++)
			found |= o->maps[k].from == p->devs[i];
		if (!found) {
			bio_dev_name(o->maps[k].from, a, sizeof(a));
			err_set("--map %s=%s: the plan has no I/O on %s", a, o->maps[k].to, a);
			return -1;
		}
	}
	*usage = false;
	return 0;
}

/* One target per distinct device; of_dev maps the plan's devices to them. */
static int name_targets(struct blkr_targets *t, const struct blkr_plan *p, const struct blkr_opts *o,
			bool *usage)
{
	t->of_dev = xcalloc(p->ndevs, sizeof(*t->of_dev));
	t->v = xcalloc(p->ndevs, sizeof(*t->v));
	for (u32 i = 0; i < p->ndevs; i++) {
		struct blkr_target cand = { .fd = -1 };
		if (resolve(dest_of(o, p->devs[i]), &cand, usage) < 0)
			return -1;
		u32 k = 0;
		while (k < t->n && t->v[k].dev != cand.dev)
			k++;
		if (k == t->n)
			t->v[t->n++] = cand;
		t->of_dev[i] = k;
	}
	return 0;
}

/* ---- what is on a device -------------------------------------------------------- */

static u32 read_dev_file(const char *path)
{
	char *s = read_text_file(path, NULL);
	unsigned maj, min;
	u32 dev = s && sscanf(s, "%u:%u", &maj, &min) == 2 ? maj << 20 | min : 0;
	free(s);
	return dev;
}

/* The device and its partitions (sysfs: the subfolders with a partition file). */
static size_t with_partitions(u32 dev, u32 *devs, size_t max)
{
	char dir[64], path[PATH_MAX];
	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u", BIO_MAJOR(dev), BIO_MINOR(dev));
	size_t n = 0;
	devs[n++] = dev;
	DIR *d = opendir(dir);
	for (struct dirent *e; d && n < max && (e = readdir(d));) {
		snprintf(path, sizeof(path), "%s/%s/partition", dir, e->d_name);
		if (e->d_name[0] == '.' || access(path, F_OK) < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/dev", dir, e->d_name);
		u32 part = read_dev_file(path);
		if (part)
			devs[n++] = part;
	}
	if (d)
		closedir(d);
	return n;
}

/* Where the device or one of its partitions is mounted: 1 with what
 * said, 0 when nowhere. */
static int mounted(const struct blkr_target *t, char *what, size_t size)
{
	u32 devs[256];
	size_t n = with_partitions(t->dev, devs, ARRAY_SIZE(devs));
	char *text = read_text_file("/proc/self/mountinfo", NULL);
	int found = 0;
	for (char *line = text, *next; line && *line && !found; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		unsigned maj, min;
		char point[512], fstype[64] = "?";
		if (sscanf(line, "%*s %*s %u:%u %*s %511s", &maj, &min, point) != 3)
			continue;
		const char *dash = strstr(line, " - ");
		if (dash)
			sscanf(dash + 3, "%63s", fstype);
		for (size_t i = 0; i < n && !found; i++) {
			if (devs[i] != (maj << 20 | min))
				continue;
			char part[64] = "";
			if (i)
				bio_dev_name(devs[i], part, sizeof(part));
			snprintf(what, size, "%s%s%s is mounted at %s (%s)", t->path, i ? ": its partition " : "",
				 part, point, fstype);
			found = 1;
		}
	}
	free(text);
	return found;
}

/* A device mapper, md or other device built on it (sysfs holders). */
static int held(const struct blkr_target *t, char *what, size_t size)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u/holders", BIO_MAJOR(t->dev),
		 BIO_MINOR(t->dev));
	DIR *d = opendir(dir);
	int found = 0;
	for (struct dirent *e; d && !found && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(what, size, "%s is in use by %s", t->path, e->d_name);
		found = 1;
	}
	if (d)
		closedir(d);
	return found;
}

/* A filesystem, RAID member, swap or partition table on it, by libblkid:
 * 1 with what said, 0 when none. */
static int signature(const struct blkr_target *t, char *what, size_t size)
{
	blkid_probe pr = blkid_new_probe_from_filename(t->path);
	if (!pr) {
		snprintf(what, size, "%s could not be probed for a filesystem (libblkid)", t->path);
		return 1;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
					      BLKID_SUBLKS_LABEL);
	blkid_probe_enable_partitions(pr, 1);
	int rc = blkid_do_safeprobe(pr), found = 1;
	const char *type = NULL, *usage = NULL, *label = NULL, *pt = NULL;
	if (rc == 0) {
		blkid_probe_lookup_value(pr, "TYPE", &type, NULL);
		blkid_probe_lookup_value(pr, "USAGE", &usage, NULL);
		blkid_probe_lookup_value(pr, "LABEL", &label, NULL);
		blkid_probe_lookup_value(pr, "PTTYPE", &pt, NULL);
	}
	if (rc == 1 || (rc == 0 && !type && !pt))
		found = 0;
	else if (rc == -2)
		snprintf(what, size, "%s holds more than one signature (libblkid)", t->path);
	else if (rc < 0)
		snprintf(what, size, "%s could not be probed for a filesystem (libblkid)", t->path);
	else if (type && usage && !strcmp(usage, "filesystem"))
		snprintf(what, size, "%s holds a%s %s filesystem%s%s%s", t->path,
			 strchr("aeiouAEIOU", type[0]) ? "n" : "", type, label ? " labelled '" : "",
			 label ? label : "", label ? "'" : "");
	else if (type)
		snprintf(what, size, "%s holds a %s signature (%s)", t->path, type,
			 usage ? usage : "unknown use");
	else
		snprintf(what, size, "%s holds a %s partition table", t->path, pt);
	blkid_free_probe(pr);
	return found;
}

static bool recorded_on(const struct blkr_plan *p, u32 dev)
{
	for (u32 i = 0; i < p->ndevs; i++)
		if (p->devs[i] == dev)
			return true;
	return false;
}

/* The checks before writing to a device, each named on one line. */
static int check_writable(const struct blkr_target *t, const struct blkr_plan *p)
{
	char what[1024];
	if (recorded_on(p, t->dev))
		snprintf(what, sizeof(what), "%s is the device the recording's I/O was on", t->path);
	else if (!mounted(t, what, sizeof(what)) && !held(t, what, sizeof(what)) &&
		 !signature(t, what, sizeof(what)))
		return 0;
	err_set("%s: %s", what, force_hint);
	return -1;
}

/* ---- opening and fitting ------------------------------------------------------ */

static int open_target(struct blkr_target *t, bool force)
{
	int flags = O_DIRECT | O_CLOEXEC | (t->writes ? O_RDWR | (force ? 0 : O_EXCL) : O_RDONLY);
	t->fd = open(t->path, flags);
	if (t->fd < 0) {
		err_set_errno("%s: cannot open it for %s", t->path, t->writes ? "writing" : "reading");
		return -1;
	}
	int block = 0;
	if (ioctl(t->fd, BLKGETSIZE64, &t->bytes) < 0 || ioctl(t->fd, BLKSSZGET, &block) < 0 ||
	    block <= 0) {
		err_set_errno("%s: cannot read its size", t->path);
		return -1;
	}
	t->block = (u32)block;
	return 0;
}

/* Every I/O issued lies within its target and on its block boundaries,
 * and one read or write can move it (a plan from a recording is not
 * held to planfile.c's checks). */
static int check_fit(const struct blkr_targets *t, const struct blkr_plan *p, bool write)
{
	for (u32 s = 0; s < p->nstreams; s++)
		for (u64 i = 0; i < p->streams[s].n; i++) {
			const struct blkr_io *io = &p->streams[s].ios[i];
			const struct blkr_target *tg = &t->v[t->of_dev[io->dev]];
			if (io->write && !write)
				continue;
			u64 at = io->sector * 512, len = (u64)io->nr_sector * 512;
			const char *bad = len > BLKR_MAX_BYTES ? "is larger than one read or write "
				"moves (2 GiB - 4 KiB), onto" :
					  at + len > tg->bytes ? "ends past the end of" :
					  (at % tg->block || len % tg->block) ?
					  "is not aligned to the logical blocks of" : NULL;
			if (!bad)
				continue;
			err_set("I/O %llu of CPU %u (%s of %llu bytes at sector %llu) %s %s "
				"(%llu bytes, %u-byte blocks): nothing was replayed",
				(unsigned long long)i + 1, p->streams[s].cpu,
				io->write ? "a write" : "a read", (unsigned long long)len,
				(unsigned long long)io->sector, bad, tg->path,
				(unsigned long long)tg->bytes, tg->block);
			return -1;
		}
	return 0;
}

int blkr_targets_open(struct blkr_targets *t, const struct blkr_plan *p, const struct blkr_opts *o,
		    bool *usage)
{
	memset(t, 0, sizeof(*t));
	*usage = false;
	if (check_unmapped(p, o, usage) < 0 || name_targets(t, p, o, usage) < 0)
		return -1;
	for (u32 s = 0; s < p->nstreams; s++)
		for (u64 i = 0; i < p->streams[s].n; i++)
			if (p->streams[s].ios[i].write && o->write)
				t->v[t->of_dev[p->streams[s].ios[i].dev]].writes = true;
	for (u32 k = 0; k < t->n; k++) {
		if (t->v[k].writes && !o->force && check_writable(&t->v[k], p) < 0)
			return -1;
		if (open_target(&t->v[k], o->force) < 0)
			return -1;
	}
	return check_fit(t, p, o->write);
}

void blkr_targets_close(struct blkr_targets *t)
{
	for (u32 k = 0; k < t->n; k++)
		if (t->v[k].fd >= 0)
			close(t->v[k].fd);
	free(t->v);
	free(t->of_dev);
	memset(t, 0, sizeof(*t));
}
