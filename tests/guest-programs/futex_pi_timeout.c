// SPDX-License-Identifier: GPL-2.0
/*
 * FUTEX_LOCK_PI2 with a 100 ms timeout against an owner that keeps running
 * in user space on the other CPU.  Prints the time to -ETIMEDOUT, three
 * runs; exit status 1 if one took more than 150 ms.  The figures of the
 * rtmutex spin fix's changelog ("locking/rtmutex: Stop spinning on a
 * running owner once the waiter is woken") come from it.  Not run by
 * scripts/check: before the fix only the first of three runs overran.
 * Build and run (the boot copies MODULES/lib/modules into the guest):
 *
 *   gcc -O2 -static -pthread -o futex_pi_timeout futex_pi_timeout.c
 *   cp -a build/out/project/modroot /tmp/m && cp futex_pi_timeout /tmp/m/lib/modules/
 *   scripts/boot --kernel build/out/project/arch/x86/boot/bzImage \
 *	--modules /tmp/m --smp 2 --cmd /lib/modules/futex_pi_timeout
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif

static _Atomic uint32_t lockword;
static atomic_int held, stop;

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void pin_fifo(int cpu, int prio)
{
	cpu_set_t s;
	struct sched_param p = { .sched_priority = prio };

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s))
		perror("sched_setaffinity");
	if (sched_setscheduler(0, SCHED_FIFO, &p))
		perror("sched_setscheduler");
}

static void *owner(void *arg)
{
	uint32_t zero = 0, tid = syscall(SYS_gettid);
	int64_t until;

	pin_fifo(1, 10);
	if (!atomic_compare_exchange_strong(&lockword, &zero, tid))
		return NULL;
	atomic_store(&held, 1);
	until = now_ns() + 3000000000LL;
	while (!atomic_load(&stop) && now_ns() < until)
		;
	printf("owner: %s\n", atomic_load(&stop) ? "stopped by the waiter" :
	       "ran 3 s without the waiter returning");
	/* Unlock: the waiter gave up, so no waiters bit is left normally. */
	zero = tid;
	if (!atomic_compare_exchange_strong(&lockword, &zero, 0))
		syscall(SYS_futex, &lockword, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0);
	return NULL;
}

int main(void)
{
	pthread_t t;
	struct timespec to;
	int64_t start, ms;
	long r;
	int err, i, bad = 0;

	for (i = 0; i < 3; i++) {
		atomic_store(&held, 0);
		atomic_store(&stop, 0);
		atomic_store(&lockword, 0);
		pthread_create(&t, NULL, owner, NULL);
		pin_fifo(0, 80);
		while (!atomic_load(&held))
			sched_yield();
		usleep(10000);	/* let the owner settle into its spin */
		start = now_ns();
		clock_gettime(CLOCK_MONOTONIC, &to);
		to.tv_nsec += 100000000;
		if (to.tv_nsec >= 1000000000) {
			to.tv_sec++;
			to.tv_nsec -= 1000000000;
		}
		r = syscall(SYS_futex, &lockword, FUTEX_LOCK_PI2, 0, &to, NULL, 0);
		err = errno;
		ms = (now_ns() - start) / 1000000;
		atomic_store(&stop, 1);
		pthread_join(t, NULL);
		printf("futex-pi-timeout: FUTEX_LOCK_PI2 100 ms: returned %ld (%s) after %lld ms\n",
		       r, r ? (err == ETIMEDOUT ? "ETIMEDOUT" : "other") : "locked",
		       (long long)ms);
		if (r != -1 || err != ETIMEDOUT || ms > 150)
			bad = 1;
	}
	return bad;
}
