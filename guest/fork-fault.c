// SPDX-License-Identifier: GPL-2.0
/*
 * fork-fault: two throughput figures of guest/throughput, in guest seconds
 * (CLOCK_MONOTONIC: under -icount, executed instructions).
 *
 *   fork-fault fork N KB    N times: fork(), the child _exit(0)s at once,
 *                           the parent waits for it.  The parent first
 *                           writes every 4 KiB page of a KB KiB anonymous
 *                           region, so that each fork copies that many
 *                           page-table entries (copy_pte_range()) and each
 *                           exit zaps them (zap_pte_range()).
 *   fork-fault fault MB R   R times: mmap MB MiB of anonymous memory, write
 *                           one byte to every 4 KiB page (one write fault
 *                           each: a zeroed page from the page allocator),
 *                           munmap it (the pages go back in batches).
 *
 * Both regions are madvise(MADV_NOHUGEPAGE): the figure is the 4 KiB path
 * on every kernel, with or without transparent huge pages (PREEMPT_RT has
 * none).  Prints the seconds the loop took, with microseconds.  Any failed
 * call is an error: a message on stderr and exit status 1 (2 for bad
 * arguments), nothing on stdout.
 *
 * Built static by scripts/initramfs into the guest's /pvrt.  By hand:
 *
 *   gcc -O2 -Wall -static -o fork-fault fork-fault.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL

static void die(const char *what)
{
	fprintf(stderr, "fork-fault: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		die("clock_gettime");
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A region of LEN bytes mapped for 4 KiB pages. */
static char *map(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct stat st;

	if (p == MAP_FAILED)
		die("mmap");
	if (madvise(p, len, MADV_NOHUGEPAGE)) {
		/* EINVAL is a kernel without THP: its faults are 4 KiB anyway. */
		if (errno != EINVAL || stat("/sys/kernel/mm/transparent_hugepage", &st) == 0)
			die("madvise(MADV_NOHUGEPAGE)");
	}
	return p;
}

static void touch(char *p, size_t len)
{
	size_t off;

	for (off = 0; off < len; off += PAGE)
		((volatile char *)p)[off] = 1;
}

static long arg(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > max) {
		fprintf(stderr, "fork-fault: '%s': want a number from 1 to %ld\n", s, max);
		exit(2);
	}
	return v;
}

static double forks(long n, size_t len)
{
	char *p = map(len);
	double t0;
	long i;

	touch(p, len);
	t0 = now();
	for (i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (pid == 0)
			_exit(0);
		if (waitpid(pid, &status, 0) != pid)
			die("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "fork-fault: child %d ended with status %#x\n",
				(int)pid, status);
			exit(1);
		}
	}
	t0 = now() - t0;
	if (munmap(p, len))
		die("munmap");
	return t0;
}

static double faults(size_t len, long reps)
{
	double t0 = now();
	long i;

	for (i = 0; i < reps; i++) {
		char *p = map(len);

		touch(p, len);
		if (munmap(p, len))
			die("munmap");
	}
	return now() - t0;
}

int main(int argc, char **argv)
{
	double secs;

	if (argc == 4 && !strcmp(argv[1], "fork"))
		secs = forks(arg(argv[2], 1000000), arg(argv[3], 1 << 20) * 1024UL);
	else if (argc == 4 && !strcmp(argv[1], "fault"))
		secs = faults(arg(argv[2], 1 << 12) << 20, arg(argv[3], 1000000));
	else {
		fprintf(stderr, "usage: fork-fault fork N KB | fork-fault fault MB REPS\n");
		return 2;
	}
	printf("%.6f\n", secs);
	if (fflush(stdout) || ferror(stdout))
		die("stdout");
	return 0;
}
