// SPDX-License-Identifier: GPL-2.0
/*
 * A fake kernel for guest/futex-pi-timeout.c, linked with -Wl,--wrap=...:
 * FUTEX_LOCK_PI2 as the scenario in $FAKE says, the owner's involuntary
 * switches, /proc and debugfs under $FAKE_ROOT, no real scheduling policy
 * and no rest.  tests/test_futex_pi_timeout.py runs it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif

long __real_syscall(long nr, ...);
FILE *__real_fopen(const char *path, const char *mode);
DIR *__real_opendir(const char *path);

static atomic_long switches;

static const char *scenario(void)
{
	const char *s = getenv("FAKE");

	return s ? s : "spin";
}

static void nap_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

static long lock_pi2(_Atomic uint32_t *word, const struct timespec *to)
{
	const char *s = scenario();

	if (!strcmp(s, "latequeue"))		/* a stall before it queued */
		nap_ms(60);
	if (strcmp(s, "stall"))			/* stall: expired before it queued */
		atomic_fetch_or(word, FUTEX_WAITERS);
	if (!strcmp(s, "preempted")) {		/* the owner left its CPU meanwhile */
		nap_ms(20);
		atomic_fetch_add(&switches, 1);
	}
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, to, NULL);
	if (!strcmp(s, "locked")) {		/* the owner let it go: it is ours */
		atomic_store(word, (uint32_t)__real_syscall(SYS_gettid));
		return 0;
	}
	errno = ETIMEDOUT;
	return -1;
}

long __wrap_syscall(long nr, ...)
{
	_Atomic uint32_t *word;
	const struct timespec *to;
	va_list ap;
	int op;

	if (nr != SYS_futex)
		return __real_syscall(nr);
	va_start(ap, nr);
	word = va_arg(ap, _Atomic uint32_t *);
	op = va_arg(ap, int);
	(void)va_arg(ap, long);
	to = va_arg(ap, const struct timespec *);
	va_end(ap);
	if (op == FUTEX_LOCK_PI2)
		return lock_pi2(word, to);
	if (op == FUTEX_UNLOCK_PI) {
		if ((atomic_load(word) & FUTEX_TID_MASK) != (uint32_t)__real_syscall(SYS_gettid)) {
			printf("fake: FUTEX_UNLOCK_PI by a non-owner: EPERM\n");
			errno = EPERM;
			return -1;
		}
		atomic_store(word, 0);
		return 0;
	}
	errno = ENOSYS;
	return -1;
}

int __wrap_getrusage(int who, struct rusage *ru)
{
	memset(ru, 0, sizeof(*ru));
	ru->ru_nivcsw = atomic_load(&switches);
	return 0;
}

static const char *moved(const char *path, char *buf, size_t len)
{
	const char *root = getenv("FAKE_ROOT");

	if (root && (!strncmp(path, "/proc/", 6) || !strncmp(path, "/sys/", 5))) {
		snprintf(buf, len, "%s%s", root, path);
		return buf;
	}
	return path;
}

FILE *__wrap_fopen(const char *path, const char *mode)
{
	char buf[512];

	return __real_fopen(moved(path, buf, sizeof(buf)), mode);
}

DIR *__wrap_opendir(const char *path)
{
	char buf[512];

	return __real_opendir(moved(path, buf, sizeof(buf)));
}

int __wrap_sched_setaffinity(pid_t pid, size_t len, const cpu_set_t *set)
{
	return 0;
}

int __wrap_sched_setscheduler(pid_t pid, int policy, const struct sched_param *p)
{
	return 0;
}

unsigned int __wrap_sleep(unsigned int s)
{
	return 0;
}

long __wrap_sysconf(int name)
{
	return name == _SC_NPROCESSORS_ONLN ? 2 : -1;
}
