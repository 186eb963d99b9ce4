// SPDX-License-Identifier: GPL-2.0
/*
 * futex-pi-timeout: a FUTEX_LOCK_PI2 waiter with a 100 ms CLOCK_MONOTONIC
 * timeout returns on time while the futex's owner keeps running on the other
 * CPU.  The waiter is a SCHED_FIFO 80 thread on CPU 0; the owner, a
 * SCHED_FIFO 10 thread on CPU 1, took the futex in user space and spins
 * (for 3 s at most, or until the waiter has returned).  Section "futex-pi":
 * three runs; rc 0 if each returned -ETIMEDOUT within LATE_MS of the call
 * and shows that it waited on a running owner, 1 if one did not, 2 if this
 * guest cannot run the test (one CPU, or RT bandwidth limits that could end
 * the spin within the bound).
 *
 * The proof.  A run counts only if the waiter blocked and spun on a running
 * owner: the owner, in each turn of its loop, reads its involuntary context
 * switches (ru_nivcsw of getrusage(RUSAGE_THREAD)) and then the futex word;
 * the first time it sees FUTEX_WAITERS there (the waiter is queued on the
 * futex) it notes the time and that count.  That must be at least
 * QUEUED_MS before the waiter's deadline, so that the waiter was waiting
 * when its timeout expired, and the owner must not have been switched out
 * involuntarily from then until it stopped, after the waiter returned: it
 * ran all along, and the waiter spun on it.  Otherwise a guest stall
 * between computing the deadline and the call (the waiter would find its
 * timeout expired before it ever spun) or an owner preempted while the
 * waiter was queued (the waiter would sleep, not spin) makes a kernel
 * without the fix below return on time too.
 *
 * The bound.  The waiter blocks in rt_mutex_wait_proxy_lock() and, while
 * the owner runs, spins on it in rtmutex_spin_on_owner().  With "locking/
 * rtmutex: Stop spinning on a running owner once the waiter is woken" the
 * expiry of its timeout (hrtimer_wakeup(), which sets it TASK_RUNNING)
 * ends the spin: it returned at the timeout plus a wakeup, after 100, 135
 * and 100 ms, and 102, 104 and 100 ms, in two boots of a two-CPU QEMU
 * (TCG) guest.  Without it the spin ends only when the owner leaves its CPU
 * or need_resched() is set on the waiter's.  Both threads, the owner
 * boosted to the waiter's FIFO 80, run above the interrupt and timer
 * threads; the scheduler's RT bandwidth limits take a CPU from the RT
 * tasks: the fair server (the deferred dl_server that runs starved
 * SCHED_OTHER tasks for its runtime, 50 ms, once they waited its period
 * less its runtime, 950 ms) or RT throttling (sched_rt_runtime_us, 950 ms,
 * of every sched_rt_period_us, 1 s).  Each run therefore starts after
 * REST_S seconds without RT load of its own, so that both start from CPUs
 * that had their SCHED_OTHER tasks run and no RT time carried over, and a
 * waiter without the fix returns some 950 ms less SETTLE_MS after the call,
 * give or take the emulator's timer noise: 1110, 1648 and 938 ms, and 998,
 * 926 and 1099 ms, in two boots.  LATE_MS = 500 leaves 365 ms over the
 * fixed kernel's worst (135 ms) for that noise, and is over 400 ms short
 * of the earliest return without the fix.
 *
 * Refused (rc 2): sched_rt_runtime_us neither -1 nor at least LATE_MS +
 * 100 ms; a sched_rt_period_us over REST_S seconds (the rest would not
 * clear the RT time carried over) while RT throttling is on; a fair server
 * of any CPU, as /sys/kernel/debug/sched/fair_server/ shows them, with its
 * period less its runtime under LATE_MS + 100 ms, or one that cannot be
 * read there.  A kernel without CONFIG_SCHED_DEBUG has no such directory:
 * its fair servers cannot be tuned and keep their default, 50 ms of every
 * 1 s, and the guest is accepted.
 *
 * Built static by scripts/initramfs into the guest's /pvrt.  By hand:
 *
 *   gcc -O2 -Wall -static -pthread -o futex-pi-timeout futex-pi-timeout.c
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
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

#define RUNS		3
#define TIMEOUT_MS	100
#define LATE_MS		500
#define QUEUED_MS	(TIMEOUT_MS / 2)	/* queued this long before the deadline */
#define SETTLE_MS	10	/* the owner spins this long before the call */
#define REST_S		3	/* without RT load before each run */
#define OWNER_MAX_NS	3000000000LL

static _Atomic uint32_t lockword;
static atomic_int held, stop;

/* What the owner saw: written by it, read by the waiter after pthread_join(). */
static struct {
	int64_t waiters_ns;	/* when it first saw FUTEX_WAITERS, 0 if never */
	long nivcsw_waiters;	/* its involuntary switches just before then */
	long nivcsw_end;	/* ... and when it stopped */
} seen;

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* The calling thread's involuntary context switches so far, -1 on error. */
static long nivcsw(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return -1;
	return ru.ru_nivcsw;
}

static int pin_fifo(int cpu, int prio)
{
	struct sched_param p = { .sched_priority = prio };
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	if (sched_setaffinity(0, sizeof(s), &s)) {
		printf("futex-pi-timeout: sched_setaffinity(CPU %d): %s\n", cpu, strerror(errno));
		return -1;
	}
	if (sched_setscheduler(0, SCHED_FIFO, &p)) {
		printf("futex-pi-timeout: SCHED_FIFO %d: %s\n", prio, strerror(errno));
		return -1;
	}
	return 0;
}

/* Release the futex if @tid holds it: in user space, or in the kernel if it has waiters. */
static void unlock_if_held(uint32_t tid)
{
	uint32_t v = tid;

	if (atomic_compare_exchange_strong(&lockword, &v, 0))
		return;
	if ((v & FUTEX_TID_MASK) == tid &&
	    syscall(SYS_futex, &lockword, FUTEX_UNLOCK_PI, 0, NULL, NULL, 0))
		printf("futex-pi-timeout: FUTEX_UNLOCK_PI: %s\n", strerror(errno));
}

static void *owner(void *arg)
{
	uint32_t zero = 0, tid = syscall(SYS_gettid);
	int64_t until;
	long n;

	if (pin_fifo(1, 10) ||
	    !atomic_compare_exchange_strong(&lockword, &zero, tid)) {
		atomic_store(&held, -1);
		return NULL;
	}
	atomic_store(&held, 1);
	until = now_ns() + OWNER_MAX_NS;
	while (!atomic_load(&stop) && now_ns() < until) {
		/* Read before the futex word: no switch after the waiter queued is missed. */
		n = nivcsw();
		if (!seen.waiters_ns && (atomic_load(&lockword) & FUTEX_WAITERS)) {
			seen.waiters_ns = now_ns();
			seen.nivcsw_waiters = n;
		}
	}
	seen.nivcsw_end = nivcsw();
	printf("futex-pi-timeout: owner: %s\n", atomic_load(&stop) ?
	       "stopped after the waiter returned" : "ran 3 s without the waiter returning");
	unlock_if_held(tid);
	return NULL;
}

/* The number in file @path, or @none if it cannot be read. */
static long long read_number(const char *path, long long none)
{
	FILE *f = fopen(path, "r");
	long long v = none;

	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = none;
		fclose(f);
	}
	return v;
}

/*
 * One run: 0 if it returned -ETIMEDOUT within LATE_MS after it waited on a
 * running owner, 1 if not, 2 on a set-up error.
 */
static int run(int i)
{
	int64_t start, end, deadline, queued_ms = -1, ms;
	long switches = -1;
	const char *verdict;
	struct timespec to;
	bool timed_out;
	pthread_t t;
	long r;
	int err;

	atomic_store(&held, 0);
	atomic_store(&stop, 0);
	atomic_store(&lockword, 0);
	memset(&seen, 0, sizeof(seen));
	if (pin_fifo(0, 80))
		return 2;
	if (pthread_create(&t, NULL, owner, NULL)) {
		printf("futex-pi-timeout: pthread_create failed\n");
		return 2;
	}
	while (!atomic_load(&held))
		sched_yield();
	if (atomic_load(&held) < 0) {
		pthread_join(t, NULL);
		return 2;
	}
	usleep(SETTLE_MS * 1000);
	start = now_ns();
	clock_gettime(CLOCK_MONOTONIC, &to);
	to.tv_nsec += TIMEOUT_MS * 1000000L;
	if (to.tv_nsec >= 1000000000L) {
		to.tv_sec++;
		to.tv_nsec -= 1000000000L;
	}
	deadline = to.tv_sec * 1000000000LL + to.tv_nsec;
	r = syscall(SYS_futex, &lockword, FUTEX_LOCK_PI2, 0, &to, NULL, 0);
	err = errno;
	end = now_ns();
	ms = (end - start) / 1000000;
	/* It got the lock (the owner let it go): give it back. */
	if (r == 0)
		unlock_if_held(syscall(SYS_gettid));
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	timed_out = r == -1 && err == ETIMEDOUT;
	if (seen.waiters_ns) {
		queued_ms = (deadline - seen.waiters_ns) / 1000000;
		if (seen.nivcsw_waiters >= 0 && seen.nivcsw_end >= 0)
			switches = seen.nivcsw_end - seen.nivcsw_waiters;
	}
	if (!timed_out)
		verdict = "FAILED";
	else if (ms > LATE_MS)
		verdict = "LATE";
	else if (queued_ms < QUEUED_MS || switches != 0)
		verdict = "NOT SHOWN (no wait on a running owner)";
	else
		verdict = "ok";
	printf("futex-pi-timeout: run %d: FUTEX_LOCK_PI2 %d ms: returned %ld (%s) after %lld ms,"
	       " queued %lld ms before the deadline (at least %d), owner switched out %ld times"
	       " meanwhile: %s\n",
	       i, TIMEOUT_MS, r, r == 0 ? "locked" : timed_out ? "ETIMEDOUT" : strerror(err),
	       (long long)ms, (long long)queued_ms, QUEUED_MS, switches, verdict);
	return strcmp(verdict, "ok") != 0;
}

#define FAIR_SERVER "/sys/kernel/debug/sched/fair_server"
#define NO_VALUE (-2LL)

/*
 * Every CPU's fair server (debugfs lists one per possible CPU): 0 if each
 * leaves an RT task at least LATE_MS + 100 ms, or there is none to tune, 2
 * if one does not or cannot be read.
 */
static int fair_servers(void)
{
	DIR *d = opendir(FAIR_SERVER);
	long long runtime, period;
	struct dirent *e;
	char path[300];
	int rc = 0, n = 0;

	if (!d) {
		printf("futex-pi-timeout: fair server: default (not tunable: no %s)\n",
		       FAIR_SERVER);
		return 0;
	}
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "cpu", 3))
			continue;
		n++;
		snprintf(path, sizeof(path), FAIR_SERVER "/%s/runtime", e->d_name);
		runtime = read_number(path, NO_VALUE);
		snprintf(path, sizeof(path), FAIR_SERVER "/%s/period", e->d_name);
		period = read_number(path, NO_VALUE);
		printf("futex-pi-timeout: fair server %s: runtime %lld ns, period %lld ns\n",
		       e->d_name, runtime, period);
		if (runtime == NO_VALUE || period == NO_VALUE) {
			printf("futex-pi-timeout: %s's fair server cannot be read\n", e->d_name);
			rc = 2;
		} else if (runtime > 0 && period - runtime < (LATE_MS + 100) * 1000000LL) {
			printf("futex-pi-timeout: %s's fair server: its period less its runtime must"
			       " be at least %d ms: a waiter without the fix could return within"
			       " %d ms\n", e->d_name, LATE_MS + 100, LATE_MS);
			rc = 2;
		}
	}
	closedir(d);
	if (!n) {
		printf("futex-pi-timeout: no CPU in %s\n", FAIR_SERVER);
		rc = 2;
	}
	return rc;
}

int main(void)
{
	long long runtime = read_number("/proc/sys/kernel/sched_rt_runtime_us", NO_VALUE);
	long long period = read_number("/proc/sys/kernel/sched_rt_period_us", NO_VALUE);
	int i, r, rc = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("PVRT-BEGIN futex-pi\n");
	printf("futex-pi-timeout: %d runs, timeout %d ms, late after %d ms, rest %d s,"
	       " sched_rt_runtime_us %lld, sched_rt_period_us %lld\n",
	       RUNS, TIMEOUT_MS, LATE_MS, REST_S, runtime, period);
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("futex-pi-timeout: needs 2 CPUs\n");
		rc = 2;
	} else if (runtime == NO_VALUE ||
		   (runtime != -1 && runtime < (LATE_MS + 100) * 1000LL)) {
		printf("futex-pi-timeout: sched_rt_runtime_us must be -1 or at least %d:"
		       " a waiter without the fix could return within %d ms\n",
		       (LATE_MS + 100) * 1000, LATE_MS);
		rc = 2;
	} else if (runtime != -1 && (period == NO_VALUE || period > REST_S * 1000000LL)) {
		printf("futex-pi-timeout: sched_rt_period_us must be at most %d: a rest of %d s"
		       " must clear the RT time carried over\n", REST_S * 1000000, REST_S);
		rc = 2;
	} else {
		rc = fair_servers();
	}
	for (i = 1; i <= RUNS && rc < 2; i++) {
		sleep(REST_S);
		r = run(i);
		rc = r > rc ? r : rc;
	}
	printf("PVRT-END futex-pi rc=%d\n", rc);
	return rc;
}
