// SPDX-License-Identifier: GPL-2.0
/*
 * PV mutex: a sleeping lock with transitive priority inheritance and
 * deboost on unlock to the best donation left, built on the kernel's
 * rt_mutex priority-inheritance engine.
 *
 * Copyright (C) 2026 PV-RT Developers
 *
 * See Documentation/locking/pv-mutex-design.rst for details.
 *
 * rtmutex.c implements the protocol; this file is one more face of that
 * engine, like rtmutex_api.c, spinlock_rt.c and ww_rt_mutex.c, which
 * include rtmutex.c the same way.  Where the rules live:
 *
 *   the donations a task P receives		task->pi_waiters: the top
 *						waiter of each PI lock P holds
 *						(rt_mutex_enqueue_pi())
 *   P runs at the best of its base priority	rt_mutex_adjust_prio() ->
 *   and its donations				rt_mutex_setprio()
 *   boosting along the PI chain		rt_mutex_adjust_prio_chain(),
 *						steps [1]..[13] in rtmutex.c
 *   deboost on unlock to the best donation	mark_wakeup_next_waiter():
 *   left					dequeue, deboost, then wake
 *
 * Because every PI lock of the kernel (rt_mutex, futex PI, the PREEMPT_RT
 * sleeping spinlocks and mutexes, pv_mutex) queues the same struct
 * rt_mutex_waiter in the same trees, a chain may pass through any mix of
 * them, in either direction, with one depth budget (max_lock_depth) and
 * one deadlock detection.
 *
 * What pv_mutex adds to rt_mutex, and why:
 *
 *  - The int-returning variants walk the whole chain with deadlock
 *    detection (RT_MUTEX_FULL_CHAINWALK) and return -EDEADLK, with the
 *    waiter dequeued and its donation withdrawn, for the cycle they would
 *    close, through locks of any type (AA included), and for a walk longer
 *    than max_lock_depth, which includes running into a cycle that
 *    another waiter closed: then the tasks of that cycle may keep the
 *    donation until it is broken (see pv_mutex_lock_interruptible()).
 *    A cycle closed by a call that cannot fail
 *    (rt_mutex_lock(), an rtlock, pv_mutex_lock()) is reported to nobody:
 *    such calls walk only as far as priorities change
 *    (RT_MUTEX_MIN_CHAINWALK), as rt_mutex does, and their waiters sleep
 *    for good.  rt_mutex detects cycles only with CONFIG_DEBUG_RT_MUTEXES,
 *    and then never returns them.
 *  - A timed lock for kernel callers, in jiffies, which never wraps: any
 *    timeout up to MAX_SCHEDULE_TIMEOUT (which waits for good).
 *  - Misuse checks in every build: unlock by a non-owner warns once and
 *    changes nothing; trylock outside task context warns and fails.
 */

#define RT_MUTEX_BUILD_MUTEX
#include "rtmutex.c"

#include <linux/debugfs.h>
#include <linux/export.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/pv_mutex.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <kunit/visibility.h>

/**
 * pv_mutex_timeout_expiry - the relative expiry of a timeout in jiffies
 * @timeout: a timeout in jiffies, >= 0
 *
 * Converted through whole seconds, so that no intermediate result wraps
 * (jiffies_to_nsecs() goes through an unsigned int of microseconds and
 * wraps after 71.6 minutes).
 *
 * Return: @timeout as a ktime_t, or KTIME_MAX, meaning "never", for
 * MAX_SCHEDULE_TIMEOUT and any timeout beyond the range of ktime_t.
 */
VISIBLE_IF_KUNIT ktime_t pv_mutex_timeout_expiry(long timeout)
{
	if (timeout == MAX_SCHEDULE_TIMEOUT)
		return KTIME_MAX;
	return ktime_set(timeout / HZ, jiffies_to_nsecs(timeout % HZ));
}
EXPORT_SYMBOL_IF_KUNIT(pv_mutex_timeout_expiry);

/*
 * The slow path, out of line ("noinline __sched", as in mutex.c) so that the
 * fast paths need no stack frame and the slow path shows up on perf
 * profiles.  A @timeout short of "never" arms an hrtimer sleeper that
 * rt_mutex_slowlock_block() checks on every wakeup.
 */
static noinline int __sched pv_mutex_lock_slowpath(struct pv_mutex *lock,
						   unsigned int state,
						   enum rtmutex_chainwalk chwalk,
						   long timeout,
						   unsigned long ip)
{
	ktime_t expiry = pv_mutex_timeout_expiry(timeout);
	struct hrtimer_sleeper sleeper, *to = NULL;
	int ret;

	if (expiry != KTIME_MAX) {
		to = &sleeper;
		hrtimer_init_sleeper_on_stack(to, CLOCK_MONOTONIC,
					      HRTIMER_MODE_REL);
		hrtimer_set_expires_range_ns(&to->timer, expiry,
					     current->timer_slack_ns);
		hrtimer_sleeper_start_expires(to, HRTIMER_MODE_REL);
	}

	ret = rt_mutex_slowlock_timeout(&lock->rtmutex, NULL, state, chwalk, to);

	if (to) {
		hrtimer_cancel(&to->timer);
		destroy_hrtimer_on_stack(&to->timer);
	}
	if (ret)
		mutex_release(&lock->dep_map, ip);
	return ret;
}

/* The fast path: lockdep's view, then one cmpxchg of the owner. */
static __always_inline bool pv_mutex_lock_fast(struct pv_mutex *lock,
					       unsigned int subclass,
					       unsigned long ip)
{
	might_sleep();
	lockdep_assert(!current->pi_blocked_on);
	mutex_acquire(&lock->dep_map, subclass, 0, ip);
	return likely(rt_mutex_try_acquire(&lock->rtmutex));
}

static __always_inline int __pv_mutex_lock(struct pv_mutex *lock,
					   unsigned int state,
					   long timeout, unsigned long ip)
{
	if (pv_mutex_lock_fast(lock, 0, ip))
		return 0;
	return pv_mutex_lock_slowpath(lock, state, RT_MUTEX_FULL_CHAINWALK,
				      timeout, ip);
}

/*
 * A void lock has no way to report a cycle, so a full chain walk would find
 * nothing it could act on: walk only as far as priorities change, as
 * rt_mutex_lock() does.  A cycle that walk still meets is
 * rt_mutex_handle_deadlock()'s: a WARN() each time, then the caller never
 * gets the lock.  It waits there in TASK_INTERRUPTIBLE: no hung-task
 * report, and with a signal pending it busy-loops.  With
 * CONFIG_DEBUG_RT_MUTEXES every walk detects, so this also happens to a
 * call whose chain runs into a cycle of other tasks, even once that cycle
 * is broken.  So the slow path returns 0 here.
 */
static __always_inline void __pv_mutex_lock_void(struct pv_mutex *lock,
						 unsigned int subclass,
						 unsigned long ip)
{
	if (pv_mutex_lock_fast(lock, subclass, ip))
		return;
	pv_mutex_lock_slowpath(lock, TASK_UNINTERRUPTIBLE, RT_MUTEX_MIN_CHAINWALK,
			       MAX_SCHEDULE_TIMEOUT, ip);
}

#ifdef CONFIG_DEBUG_LOCK_ALLOC
/**
 * pv_mutex_lock_nested - lock a pv_mutex with a lockdep subclass
 * @lock: the mutex
 * @subclass: lockdep subclass, for nesting locks of one class
 */
void __sched pv_mutex_lock_nested(struct pv_mutex *lock, unsigned int subclass)
{
	__pv_mutex_lock_void(lock, subclass, _RET_IP_);
}
EXPORT_SYMBOL_GPL(pv_mutex_lock_nested);
#endif

/**
 * pv_mutex_lock - lock a pv_mutex
 * @lock: the mutex
 *
 * Sleeps uninterruptibly until @lock is free.  While it waits, the owner,
 * and every owner down the chain of blocked owners, whatever the type of
 * the priority-inheritance lock it waits on, runs at least at the caller's
 * priority.  Like rt_mutex_lock(), it walks that chain only as far as
 * priorities change and returns no deadlock: a cycle it closes is not
 * reported (a warning if its walk happens to meet it, or with
 * CONFIG_DEBUG_RT_MUTEXES, which also warns for a cycle of other tasks
 * that the chain runs into), and the caller and the other waiters of the
 * cycle sleep for good.  Use the int-returning variants where a cycle is
 * possible.
 */
void __sched pv_mutex_lock(struct pv_mutex *lock)
{
	__pv_mutex_lock_void(lock, 0, _RET_IP_);
}
EXPORT_SYMBOL_GPL(pv_mutex_lock);

/**
 * pv_mutex_lock_interruptible - lock a pv_mutex, interruptible by signals
 * @lock: the mutex
 *
 * Walks the whole chain of blocked owners from @lock, through
 * priority-inheritance locks of any type, to detect a deadlock.
 *
 * Return: 0 when locked; -EINTR when a signal arrived first; -EDEADLK when
 * waiting would close a cycle (the walk comes back to @lock or to the
 * caller), or when the walk takes more than kernel.max_lock_depth steps,
 * as it does when it runs into a cycle without @lock and the caller.  Such
 * a cycle was closed by a call that cannot fail (rt_mutex_lock(), a
 * PREEMPT_RT sleeping spinlock, pv_mutex_lock()): that call got no error,
 * and its waiters sleep for good.  On -EINTR, and on -EDEADLK for a cycle
 * through @lock or the caller, nothing changed: the caller's donation to
 * the owner chain has been withdrawn.  On -EDEADLK for a walk cut by
 * max_lock_depth the caller's waiter is gone, but the walk back stops
 * where priorities stop changing: the tasks of a cycle it went round may
 * keep the caller's priority, requeued on their locks at it, until that
 * cycle is broken.
 */
int __sched pv_mutex_lock_interruptible(struct pv_mutex *lock)
{
	return __pv_mutex_lock(lock, TASK_INTERRUPTIBLE, MAX_SCHEDULE_TIMEOUT,
			       _RET_IP_);
}
EXPORT_SYMBOL_GPL(pv_mutex_lock_interruptible);

/**
 * pv_mutex_lock_killable - lock a pv_mutex, interruptible by fatal signals
 * @lock: the mutex
 *
 * Return: 0 when locked; -EINTR on a fatal signal; -EDEADLK as for
 * pv_mutex_lock_interruptible().
 */
int __sched pv_mutex_lock_killable(struct pv_mutex *lock)
{
	return __pv_mutex_lock(lock, TASK_KILLABLE, MAX_SCHEDULE_TIMEOUT,
			       _RET_IP_);
}
EXPORT_SYMBOL_GPL(pv_mutex_lock_killable);

/**
 * pv_mutex_lock_timeout - lock a pv_mutex, waiting at most @timeout jiffies
 * @lock: the mutex
 * @timeout: how long to wait, in jiffies; 0 tries once;
 *	     MAX_SCHEDULE_TIMEOUT waits for good
 *
 * Return: 0 when locked; -ETIMEDOUT when @timeout passed first; -EDEADLK as
 * for pv_mutex_lock_interruptible(); -EINVAL (with a warning) for a
 * negative @timeout.
 */
int __sched pv_mutex_lock_timeout(struct pv_mutex *lock, long timeout)
{
	if (WARN_ONCE(timeout < 0, "pv_mutex: negative timeout %ld\n", timeout))
		return -EINVAL;
	if (!timeout)
		return pv_mutex_trylock(lock) ? 0 : -ETIMEDOUT;
	return __pv_mutex_lock(lock, TASK_UNINTERRUPTIBLE, timeout, _RET_IP_);
}
EXPORT_SYMBOL_GPL(pv_mutex_lock_timeout);

/**
 * pv_mutex_trylock - try to lock a pv_mutex without waiting
 * @lock: the mutex
 *
 * Does not take the lock from a queued waiter of equal or better priority.
 * Must be called in task context (an owner must be a task that can be
 * boosted): from hard or soft interrupt or NMI context it warns and fails.
 *
 * Return: 1 if the lock was taken, 0 otherwise.
 */
int __sched pv_mutex_trylock(struct pv_mutex *lock)
{
	if (WARN_ON_ONCE(!in_task()))
		return 0;
	if (!__rt_mutex_trylock(&lock->rtmutex))
		return 0;
	mutex_acquire(&lock->dep_map, 0, 1, _RET_IP_);
	return 1;
}
EXPORT_SYMBOL_GPL(pv_mutex_trylock);

/*
 * The fast path failed: waiters, CONFIG_DEBUG_RT_MUTEXES, or misuse.  Only
 * the owner may go on: rt_mutex_slowunlock() would release the lock for
 * anyone.
 */
static noinline void __sched pv_mutex_slowunlock(struct pv_mutex *lock,
						 unsigned long ip)
{
	struct task_struct *owner = rt_mutex_owner(&lock->rtmutex);

	if (WARN_ONCE(owner != current,
		      "pv_mutex: unlock of %p by %s (%d), owner %p\n", lock,
		      current->comm, task_pid_nr(current), owner))
		return;
	mutex_release(&lock->dep_map, ip);
	rt_mutex_slowunlock(&lock->rtmutex);
}

/**
 * pv_mutex_unlock - unlock a pv_mutex
 * @lock: the mutex, owned by the caller
 *
 * The caller drops to the best priority still donated to it by the other
 * locks it holds, or to its own priority, before the top waiter is woken
 * to take @lock.  Unlocking a mutex the caller does not own
 * warns once and changes nothing.
 */
void __sched pv_mutex_unlock(struct pv_mutex *lock)
{
	/* Succeeds only for the owner of a mutex without waiters. */
	if (likely(rt_mutex_cmpxchg_release(&lock->rtmutex, current, NULL))) {
		mutex_release(&lock->dep_map, _RET_IP_);
		return;
	}
	pv_mutex_slowunlock(lock, _RET_IP_);
}
EXPORT_SYMBOL_GPL(pv_mutex_unlock);

/**
 * pv_mutex_owner - the task that holds a pv_mutex
 * @lock: the mutex
 *
 * Return: the owner, or NULL.  Only a snapshot unless the caller is the
 * owner.
 */
struct task_struct *pv_mutex_owner(struct pv_mutex *lock)
{
	return rt_mutex_owner(&lock->rtmutex);
}
EXPORT_SYMBOL_GPL(pv_mutex_owner);

/**
 * __pv_mutex_init - initialize a pv_mutex; use pv_mutex_init()
 * @lock: the mutex
 * @name: lockdep name
 * @key: lockdep class key
 */
void __pv_mutex_init(struct pv_mutex *lock, const char *name,
		     struct lock_class_key *key)
{
	debug_check_no_locks_freed((void *)lock, sizeof(*lock));
	__rt_mutex_base_init(&lock->rtmutex);
	lockdep_init_map_wait(&lock->dep_map, name, key, 0, LD_WAIT_SLEEP);
}
EXPORT_SYMBOL_GPL(__pv_mutex_init);

/* --- introspection ------------------------------------------------------- */

#ifdef CONFIG_DEBUG_FS
/*
 * Print the chain from @task, which is blocked, to the final owner, one
 * lock and owner at a time, with the locking of the chain walk: [P] of the
 * task, then a trylock of [L] (the reverse of the lock paths' order), and a
 * task reference [R] to step on.  Bounded by max_lock_depth.
 */
static void pi_chain_show(struct seq_file *m, struct task_struct *task)
{
	struct rt_mutex_waiter *waiter;
	struct task_struct *owner;
	struct rt_mutex_base *lock;
	int depth = 0;

	get_task_struct(task);
	while (depth++ < max_lock_depth) {
		raw_spin_lock_irq(&task->pi_lock);
		waiter = task->pi_blocked_on;
		if (!waiter) {
			raw_spin_unlock_irq(&task->pi_lock);
			break;
		}
		lock = waiter->lock;
		if (!raw_spin_trylock(&lock->wait_lock)) {
			raw_spin_unlock_irq(&task->pi_lock);
			cpu_relax();
			depth--;
			continue;
		}
		owner = rt_mutex_owner(lock);
		if (owner)
			get_task_struct(owner);
		raw_spin_unlock(&lock->wait_lock);
		raw_spin_unlock_irq(&task->pi_lock);
		put_task_struct(task);

		seq_printf(m, " -> [%p]", lock);
		if (!owner) {
			seq_puts(m, " -> (handed over)");
			return;
		}
		seq_printf(m, " -> %d/%d", task_pid_nr(owner), owner->prio);
		task = owner;
	}
	put_task_struct(task);
}

/*
 * /sys/kernel/debug/pv_mutex/pi_chains: every task that holds a
 * priority-inheritance lock with waiters or is blocked on one, whatever
 * the lock's type (pv_mutex, rt_mutex, futex PI, PREEMPT_RT locks):
 *
 *   pid/prio/normal_prio comm: S(P) = {[lock] waiter/prio ...}, best first
 *   blocked: pid/prio -> [lock] -> owner/prio -> ... -> final owner
 *
 * Priorities are kernel priorities (0..98 real-time, lower is better).
 */
VISIBLE_IF_KUNIT int pv_mutex_pi_chains_show(struct seq_file *m, void *v)
{
	struct rt_mutex_waiter *w;
	struct task_struct *g, *t;
	struct rb_node *n;
	bool blocked;

	seq_puts(m, "# pid/prio/normal_prio comm: S(P) = {[lock] top-waiter/inherited-prio ...}\n");
	seq_puts(m, "#   blocked: pid/prio -> [lock] -> owner/prio -> ...\n");
	rcu_read_lock();
	for_each_process_thread(g, t) {
		raw_spin_lock_irq(&t->pi_lock);
		n = rb_first_cached(&t->pi_waiters);
		blocked = t->pi_blocked_on;
		if (n || blocked) {
			seq_printf(m, "%d/%d/%d %s: S(P) = {", task_pid_nr(t),
				   t->prio, t->normal_prio, t->comm);
			for (; n; n = rb_next(n)) {
				w = rb_entry(n, struct rt_mutex_waiter,
					     pi_tree.entry);
				seq_printf(m, " [%p] %d/%d", w->lock,
					   task_pid_nr(w->task),
					   w->pi_tree.prio);
			}
			seq_puts(m, " }\n");
		}
		raw_spin_unlock_irq(&t->pi_lock);
		if (blocked) {
			seq_printf(m, "  blocked: %d/%d", task_pid_nr(t),
				   t->prio);
			pi_chain_show(m, t);
			seq_putc(m, '\n');
		}
	}
	rcu_read_unlock();
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(pv_mutex_pi_chains_show);
DEFINE_SHOW_ATTRIBUTE(pv_mutex_pi_chains);

static int __init pv_mutex_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("pv_mutex", NULL);

	debugfs_create_file("pi_chains", 0400, dir, NULL,
			    &pv_mutex_pi_chains_fops);
	return 0;
}
late_initcall(pv_mutex_debugfs_init);
#endif
