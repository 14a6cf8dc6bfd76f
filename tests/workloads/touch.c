/* touch.c - page faults known by construction: maps N fresh anonymous
 * pages (no huge pages) and writes one byte to each, so each page costs
 * exactly one minor fault; its own getrusage count is printed as a check.
 *
 * usage: touch [PAGES [DELAY_MS]]   defaults 10000 pages, no delay;
 *        DELAY_MS sleeps first, so a counter can attach with -p.
 * prints: touch: PAGES pages, FAULTS minor faults in all
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long pages = argc > 1 ? atol(argv[1]) : 10000;
	long delay = argc > 2 ? atol(argv[2]) : 0;
	if (pages <= 0 || delay < 0) {
		fprintf(stderr, "usage: touch [PAGES [DELAY_MS]]\n");
		return 2;
	}
	if (delay) {
		struct timespec ts = { delay / 1000, (delay % 1000) * 1000000L };
		while (nanosleep(&ts, &ts))
			;
	}
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)pages * (size_t)page;
	volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("touch: mmap");
		return 1;
	}
	/* A huge page would serve 512 pages with one fault. */
	madvise((void *)p, len, MADV_NOHUGEPAGE);
	for (long i = 0; i < pages; i++)
		p[i * page] = 1;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("touch: %ld pages, %ld minor faults in all\n", pages, ru.ru_minflt);
	return 0;
}
