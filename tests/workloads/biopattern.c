/* biopattern.c - a block I/O pattern known by construction, for the replay
 * tests: two threads, each pinned to a CPU of its own when there are two,
 * issue N direct I/Os each at distinct random 4 KiB-aligned offsets, 4-64
 * KiB long, reads and writes mixed, GAP_US apart on average (0.5-1.5x).
 * Each I/O is printed as "THREAD SECTOR BYTES R|W" in the order issued.
 *   biopattern DEV N GAP_US [SEED] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define THREADS 2
#define SLOT 4096
#define MAX_IO (64 * 1024)

struct io {
	uint64_t offset;
	uint32_t bytes;
	char dir;
	unsigned gap_us;
};

struct job {
	int fd, cpu;
	struct io *ios;
	int n;
};

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void *run(void *arg)
{
	struct job *j = arg;
	if (j->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(j->cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	void *buf;
	if (posix_memalign(&buf, SLOT, MAX_IO))
		exit(1);
	memset(buf, 0x5a, MAX_IO);
	for (int i = 0; i < j->n; i++) {
		struct io *io = &j->ios[i];
		ssize_t r = io->dir == 'W' ? pwrite(j->fd, buf, io->bytes, (off_t)io->offset)
					   : pread(j->fd, buf, io->bytes, (off_t)io->offset);
		if (r != (ssize_t)io->bytes) {
			perror("biopattern: I/O");
			exit(1);
		}
		struct timespec ts = { 0, (long)io->gap_us * 1000 };
		nanosleep(&ts, NULL);
	}
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: biopattern DEV N GAP_US [SEED]\n");
		return 2;
	}
	int n = atoi(argv[2]);
	unsigned gap = (unsigned)atoi(argv[3]);
	rng = argc > 4 ? strtoull(argv[4], NULL, 0) : 88172645463325252ull;
	if (!rng)
		rng = 1;
	int fd = open(argv[1], O_RDWR | O_DIRECT);
	uint64_t size;
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &size) < 0) {
		perror(argv[1]);
		return 1;
	}
	/* Distinct starting slots: a shuffle of every slot a 64 KiB I/O fits at. */
	uint64_t nslots = (size - MAX_IO) / SLOT + 1;
	if (n < 1 || (uint64_t)n * THREADS > nslots) {
		fprintf(stderr, "biopattern: %d I/Os do not fit\n", n * THREADS);
		return 2;
	}
	uint64_t *slots = malloc(nslots * sizeof(*slots));
	for (uint64_t i = 0; i < nslots; i++)
		slots[i] = i;
	for (uint64_t i = nslots - 1; i > 0; i--) {
		uint64_t k = next() % (i + 1), t = slots[i];
		slots[i] = slots[k];
		slots[k] = t;
	}
	cpu_set_t allowed;
	sched_getaffinity(0, sizeof(allowed), &allowed);
	int two = CPU_COUNT(&allowed) >= 2;
	struct job jobs[THREADS];
	pthread_t th[THREADS];
	for (int t = 0, cpu = 0; t < THREADS; t++) {
		while (two && cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed))
			cpu++;
		jobs[t] = (struct job){ .fd = fd, .cpu = two ? cpu++ : -1, .n = n,
					.ios = calloc((size_t)n, sizeof(struct io)) };
		for (int i = 0; i < n; i++) {
			struct io *io = &jobs[t].ios[i];
			io->offset = slots[t * n + i] * SLOT;
			io->bytes = (uint32_t)(1 + next() % 16) * SLOT;
			io->dir = next() % 2 ? 'W' : 'R';
			io->gap_us = gap / 2 + (unsigned)(next() % (gap + 1));
		}
	}
	for (int t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, run, &jobs[t]);
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < THREADS; t++)
		for (int i = 0; i < n; i++)
			printf("%d %llu %u %c\n", t, (unsigned long long)(jobs[t].ios[i].offset / 512),
			       jobs[t].ios[i].bytes, jobs[t].ios[i].dir);
	return 0;
}
