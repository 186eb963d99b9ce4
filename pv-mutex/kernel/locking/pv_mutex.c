// SPDX-License-Identifier: GPL-2.0
/*
 * PV mutex: a sleeping lock with transitive priority inheritance, following
 * Yodaiken's repair of the priority inheritance protocol as described by
 * Heursch et al., "Time-critical tasks in Linux 2.6" (2004), section 2.4.
 *
 * Copyright (C) 2026 PV-RT Developers
 *
 * See Documentation/locking/pv-mutex-design.rst for details.
 *
 * The paper's set S(P) of (mutex, highest inherited priority) pairs is
 * task->pv_donors: one entry per pv_mutex P holds that has waiters, keyed by
 * the priority of that mutex's top waiter.  P runs at the best of its
 * normal_prio, the top of S(P) and the top rt_mutex waiter (one shared
 * computation, task_pi_top_donor()).  Entries move both ways: when a waiter
 * leaves or is deboosted, the entry follows; the 2004 protocol only ever
 * raised them.
 *
 * lock->owner:
 *
 *   owner	bit0	state
 *   NULL	0	free, fast path may take it
 *   NULL	1	free, waiters queued: being handed over, slow path only
 *   task	0	held, no waiters: fast unlock possible
 *   task	1	held, waiters queued (or being queued): slow unlock
 *
 * Locking, outermost first, and what protects what:
 *
 *   [L] lock->wait_lock	lock->waiters, waiter->prio/deadline, owner bit0
 *   [P] task->pi_lock		task->pv_donors, task->pv_blocked_on, waiter->pi_*
 *   [R] task reference	keeps a task of the chain alive between steps
 *
 * The chain walk holds at most two of these locks at a time and takes
 * [L] inside [P] only with a trylock (step [5]), so the order [L] -> [P]
 * of the lock and unlock paths cannot deadlock against it.
 */

#include <linux/debugfs.h>
#include <linux/export.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/pv_mutex.h>
#include <linux/rbtree.h>
#include <linux/rtmutex.h>
#include <linux/sched/deadline.h>
#include <linux/sched/debug.h>
#include <linux/sched/rt.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/wake_q.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>

#define PV_HAS_WAITERS	1UL

/**
 * struct pv_mutex_waiter - a task blocked on a pv_mutex
 * @tree:	node in lock->waiters [L]
 * @pi_tree:	node in owner->pv_donors while this is the top waiter [P]
 * @task:	the blocked task
 * @lock:	the mutex it waits for
 * @prio:	sort key in lock->waiters [L]
 * @deadline:	sort key for SCHED_DEADLINE waiters [L]
 * @pi_prio:	copy of @prio, sort key in owner->pv_donors [P]
 * @pi_deadline: copy of @deadline [P]
 */
struct pv_mutex_waiter {
	struct rb_node		tree;
	struct rb_node		pi_tree;
	struct task_struct	*task;
	struct pv_mutex		*lock;
	int			prio;
	u64			deadline;
	int			pi_prio;
	u64			pi_deadline;
};

/* --- owner field ------------------------------------------------------- */

static inline struct task_struct *pv_owner(struct pv_mutex *lock)
{
	return (struct task_struct *)
		(atomic_long_read(&lock->owner) & ~PV_HAS_WAITERS);
}

static inline bool pv_has_waiters(struct pv_mutex *lock)
{
	return !RB_EMPTY_ROOT(&lock->waiters.rb_root);
}

/* Fast paths: one cmpxchg each, no spinlock. */
static __always_inline bool pv_fast_lock(struct pv_mutex *lock)
{
	long free = 0;

	return atomic_long_try_cmpxchg_acquire(&lock->owner, &free,
					       (long)current);
}

static __always_inline bool pv_fast_unlock(struct pv_mutex *lock)
{
	long mine = (long)current;

	return atomic_long_try_cmpxchg_release(&lock->owner, &mine, 0);
}

/*
 * Set bit0 so that a concurrent fast unlock fails and the owner has to come
 * through the slow path, which serializes on wait_lock with us.
 */
static void pv_mark_waiters(struct pv_mutex *lock)
{
	lockdep_assert_held(&lock->wait_lock);
	atomic_long_or(PV_HAS_WAITERS, &lock->owner);
}

static void pv_set_owner(struct pv_mutex *lock, struct task_struct *owner)
{
	unsigned long val = (unsigned long)owner;

	lockdep_assert_held(&lock->wait_lock);
	if (pv_has_waiters(lock))
		val |= PV_HAS_WAITERS;
	atomic_long_set_release(&lock->owner, val);
}

/* Clear a bit0 left behind by a failed attempt when nobody waits. */
static void pv_fixup_waiters(struct pv_mutex *lock)
{
	lockdep_assert_held(&lock->wait_lock);
	if (!pv_has_waiters(lock))
		atomic_long_andnot(PV_HAS_WAITERS, &lock->owner);
}

/* --- priority order ---------------------------------------------------- */

/* Non-RT waiters all queue at DEFAULT_PRIO: nice levels do not donate. */
static inline int pv_task_prio(struct task_struct *task)
{
	return rt_or_dl_prio(task->prio) ? task->prio : DEFAULT_PRIO;
}

static inline bool pv_prio_less(int lp, u64 ld, int rp, u64 rd)
{
	if (lp != rp)
		return lp < rp;
	/* Equal dl_prio(): earlier deadline first, as rt_mutex does. */
	return dl_prio(lp) && dl_time_before(ld, rd);
}

static inline bool pv_waiter_is_task_prio(struct pv_mutex_waiter *w,
					  struct task_struct *task)
{
	if (w->prio != pv_task_prio(task))
		return false;
	return !dl_prio(w->prio) || w->deadline == task->dl.deadline;
}

static bool pv_waiter_less(struct rb_node *a, const struct rb_node *b)
{
	struct pv_mutex_waiter *l = rb_entry(a, struct pv_mutex_waiter, tree);
	struct pv_mutex_waiter *r = rb_entry(b, struct pv_mutex_waiter, tree);

	return pv_prio_less(l->prio, l->deadline, r->prio, r->deadline);
}

static bool pv_donor_less(struct rb_node *a, const struct rb_node *b)
{
	struct pv_mutex_waiter *l = rb_entry(a, struct pv_mutex_waiter, pi_tree);
	struct pv_mutex_waiter *r = rb_entry(b, struct pv_mutex_waiter, pi_tree);

	return pv_prio_less(l->pi_prio, l->pi_deadline,
			    r->pi_prio, r->pi_deadline);
}

/* --- the two trees ----------------------------------------------------- */

static struct pv_mutex_waiter *pv_top_waiter(struct pv_mutex *lock)
{
	struct rb_node *n = rb_first_cached(&lock->waiters);

	lockdep_assert_held(&lock->wait_lock);
	return n ? rb_entry(n, struct pv_mutex_waiter, tree) : NULL;
}

static void pv_enqueue(struct pv_mutex *lock, struct pv_mutex_waiter *w)
{
	lockdep_assert_held(&lock->wait_lock);
	w->prio = pv_task_prio(w->task);
	w->deadline = w->task->dl.deadline;
	/* Equal keys go right: FIFO among equal priorities. */
	rb_add_cached(&w->tree, &lock->waiters, pv_waiter_less);
}

static void pv_dequeue(struct pv_mutex *lock, struct pv_mutex_waiter *w)
{
	lockdep_assert_held(&lock->wait_lock);
	if (RB_EMPTY_NODE(&w->tree))
		return;
	rb_erase_cached(&w->tree, &lock->waiters);
	RB_CLEAR_NODE(&w->tree);
}

/* Add (lock, prio of its top waiter @w) to S(owner). */
static void pv_enqueue_donor(struct task_struct *owner,
			     struct pv_mutex_waiter *w)
{
	lockdep_assert_held(&w->lock->wait_lock);
	lockdep_assert_held(&owner->pi_lock);
	w->pi_prio = w->prio;
	w->pi_deadline = w->deadline;
	rb_add_cached(&w->pi_tree, &owner->pv_donors, pv_donor_less);
}

static void pv_dequeue_donor(struct task_struct *owner,
			     struct pv_mutex_waiter *w)
{
	lockdep_assert_held(&owner->pi_lock);
	if (RB_EMPTY_NODE(&w->pi_tree))
		return;
	rb_erase_cached(&w->pi_tree, &owner->pv_donors);
	RB_CLEAR_NODE(&w->pi_tree);
}

/**
 * pv_mutex_top_donor - the best waiter of the pv_mutexes @p holds
 * @p: a task; the caller holds @p->pi_lock
 *
 * Return: the task at the top of S(@p), or NULL when no pv_mutex @p holds
 * has waiters.  Used by task_pi_top_donor() to combine pv_mutex and
 * rt_mutex donations.
 */
struct task_struct *pv_mutex_top_donor(struct task_struct *p)
{
	struct rb_node *n;

	lockdep_assert_held(&p->pi_lock);
	n = rb_first_cached(&p->pv_donors);
	return n ? rb_entry(n, struct pv_mutex_waiter, pi_tree)->task : NULL;
}

/* Run @p at the best of its normal_prio and all its donors. */
static void pv_adjust_prio(struct task_struct *p)
{
	lockdep_assert_held(&p->pi_lock);
	rt_mutex_setprio(p, task_pi_top_donor(p));
}

static struct pv_mutex *pv_blocked_lock(struct task_struct *p)
{
	lockdep_assert_held(&p->pi_lock);
	return p->pv_blocked_on ? p->pv_blocked_on->lock : NULL;
}

/*
 * The chain leaves pv_mutex: @owner (referenced by the caller, no locks
 * held) is blocked on an rt_mutex.  Let rt_mutex carry the change on; it
 * re-validates under its own locks.  The reverse direction, an rt_mutex
 * chain reaching a task blocked on a pv_mutex, ends there (see
 * Documentation/locking/pv-mutex-design.rst, "Limitations").
 */
static void pv_chain_to_rt_mutex(struct task_struct *owner)
{
	if (READ_ONCE(owner->pi_blocked_on))
		rt_mutex_adjust_pi(owner);
}

/* --- the chain walk ---------------------------------------------------- */

/*
 * pv_adjust_prio_chain - propagate a priority change along a blocking chain
 * @task:	the task whose priority or blocked-on waiter changed; the
 *		caller holds a reference [R], which this function drops
 * @orig_lock:	the lock the walk started from (NULL for a plain adjust)
 * @next_lock:	the lock @task was blocked on when the caller looked
 * @orig_waiter: the waiter that was just queued (NULL unless blocking)
 * @top_task:	the task that started the walk
 *
 * Walked when a task blocks (with @orig_waiter: full deadlock detection,
 * the walk follows the chain to its end), when a waiter leaves or its
 * priority changes (stops as soon as an owner's priority does not change).
 *
 * Each step holds at most two locks; everything may have changed between
 * steps, so each step re-validates what it relies on:
 *
 *  [1] lock task->pi_lock			[P]
 *  [2] waiter = task->pv_blocked_on
 *  [3] stop if the chain changed: no waiter any more, blocked on another
 *      lock than @next_lock, or the original lock was released
 *  [4] nothing to requeue and no deadlock detection: stop
 *  [5] trylock lock->wait_lock, else drop [P] and retry	[P]+[L]
 *  [6] lock is @orig_lock or owned by @top_task: deadlock, -EDEADLK
 *  [7] requeue waiter in lock->waiters at task's priority
 *  [8] unlock task->pi_lock, drop task reference		[L]
 *  [9] lock has no owner: wake the (new) top waiter, done
 * [10] task = owner, take reference, lock its pi_lock	[L]+[P]
 * [11] top waiter changed: update S(owner), adjust owner priority
 * [12] next_lock = lock owner is blocked on; unlock both
 * [13] continue with owner if it is blocked and (deadlock detection or
 *      the lock's top waiter is the one whose change we carry); an owner
 *      blocked on an rt_mutex hands the change to rt_mutex_adjust_pi()
 *
 * Return: 0, or -EDEADLK for a cycle or a chain longer than
 * kernel.max_lock_depth.
 */
static int pv_adjust_prio_chain(struct task_struct *task,
				struct pv_mutex *orig_lock,
				struct pv_mutex *next_lock,
				struct pv_mutex_waiter *orig_waiter,
				struct task_struct *top_task)
{
	struct pv_mutex_waiter *waiter, *top_waiter, *prerequeue_top;
	bool detect = !!orig_waiter;
	struct pv_mutex *lock;
	int depth = 0, ret = 0;
	bool requeue;

again:
	if (++depth > max_lock_depth) {
		pr_warn_once("pv_mutex: lock chain longer than max_lock_depth %d, task %s (%d)\n",
			     max_lock_depth, top_task->comm, task_pid_nr(top_task));
		put_task_struct(task);
		return -EDEADLK;
	}
retry:
	/* [1] */
	raw_spin_lock_irq(&task->pi_lock);
	/* [2] */
	waiter = task->pv_blocked_on;
	/* [3] */
	if (!waiter || waiter->lock != next_lock)
		goto out_unlock_pi;
	if (orig_lock && !pv_owner(orig_lock))
		goto out_unlock_pi;
	/* [4] */
	requeue = !pv_waiter_is_task_prio(waiter, task);
	if (!requeue && !detect)
		goto out_unlock_pi;
	/* [5] */
	lock = waiter->lock;
	if (!raw_spin_trylock(&lock->wait_lock)) {
		raw_spin_unlock_irq(&task->pi_lock);
		cpu_relax();
		goto retry;
	}
	/* [6] */
	if (lock == orig_lock || pv_owner(lock) == top_task) {
		ret = -EDEADLK;
		raw_spin_unlock(&lock->wait_lock);
		goto out_unlock_pi;
	}
	/* [7] */
	prerequeue_top = pv_top_waiter(lock);
	if (requeue) {
		pv_dequeue(lock, waiter);
		pv_enqueue(lock, waiter);
	}
	/* [8] */
	raw_spin_unlock(&task->pi_lock);
	put_task_struct(task);
	/* [9] */
	if (!pv_owner(lock)) {
		top_waiter = pv_top_waiter(lock);
		if (prerequeue_top != top_waiter)
			wake_up_process(top_waiter->task);
		raw_spin_unlock_irq(&lock->wait_lock);
		return 0;
	}
	/* [10] */
	task = get_task_struct(pv_owner(lock));
	raw_spin_lock(&task->pi_lock);
	/* [11] */
	if (requeue) {
		if (waiter == pv_top_waiter(lock)) {
			/* Boost, or deboost of a waiter that stays on top. */
			pv_dequeue_donor(task, prerequeue_top);
			pv_enqueue_donor(task, waiter);
			pv_adjust_prio(task);
		} else if (prerequeue_top == waiter) {
			/* Deboosted below another waiter: that one donates now. */
			pv_dequeue_donor(task, waiter);
			waiter = pv_top_waiter(lock);
			pv_enqueue_donor(task, waiter);
			pv_adjust_prio(task);
		}
	}
	/* [12] */
	next_lock = pv_blocked_lock(task);
	top_waiter = pv_top_waiter(lock);
	raw_spin_unlock(&task->pi_lock);
	raw_spin_unlock_irq(&lock->wait_lock);
	/* [13] */
	if (!next_lock) {
		pv_chain_to_rt_mutex(task);
		goto out_put_task;
	}
	if (!detect && waiter != top_waiter)
		goto out_put_task;
	goto again;

out_unlock_pi:
	raw_spin_unlock_irq(&task->pi_lock);
out_put_task:
	put_task_struct(task);
	return ret;
}

/* --- acquire ------------------------------------------------------------- */

/*
 * Try to take @lock for @task, called with wait_lock held.  @waiter is
 * @task's queued waiter, or NULL for a first attempt or a trylock.
 *
 * Hand-off and steal policy: the unlocker frees the lock and wakes the top
 * waiter; until that waiter runs, a task of strictly better priority may
 * take (steal) the lock.  Among equal priorities the order is FIFO.
 */
static bool pv_try_to_take(struct pv_mutex *lock, struct task_struct *task,
			   struct pv_mutex_waiter *waiter)
{
	struct pv_mutex_waiter *top = pv_top_waiter(lock);

	lockdep_assert_held(&lock->wait_lock);
	pv_mark_waiters(lock);
	if (pv_owner(lock))
		return false;

	if (waiter) {
		if (waiter != top &&
		    !pv_prio_less(waiter->prio, waiter->deadline,
				  top->prio, top->deadline))
			return false;
		pv_dequeue(lock, waiter);
	} else if (top &&
		   !pv_prio_less(pv_task_prio(task), task->dl.deadline,
				 top->prio, top->deadline)) {
		return false;
	}

	if (waiter || top) {
		raw_spin_lock(&task->pi_lock);
		task->pv_blocked_on = NULL;
		/*
		 * The remaining waiters donate to the new owner.  They are no
		 * better than @task, so its priority does not change here.
		 */
		top = pv_top_waiter(lock);
		if (top)
			pv_enqueue_donor(task, top);
		raw_spin_unlock(&task->pi_lock);
	}
	pv_set_owner(lock, task);
	return true;
}

/*
 * Queue @waiter for @task on @lock and boost the owner chain.  Called with
 * wait_lock held; drops and retakes it around the chain walk.
 *
 * Return: 0, or -EDEADLK with @waiter still queued (the caller removes it).
 */
static int pv_task_blocks_on(struct pv_mutex *lock,
			     struct pv_mutex_waiter *waiter,
			     struct task_struct *task)
{
	struct task_struct *owner = pv_owner(lock);
	struct pv_mutex_waiter *top;
	struct pv_mutex *next_lock;
	int ret;

	lockdep_assert_held(&lock->wait_lock);

	waiter->task = task;
	waiter->lock = lock;
	top = pv_top_waiter(lock);

	raw_spin_lock(&task->pi_lock);
	pv_enqueue(lock, waiter);
	task->pv_blocked_on = waiter;
	raw_spin_unlock(&task->pi_lock);

	if (!owner)
		return 0;	/* being handed over: the new owner inherits us */

	raw_spin_lock(&owner->pi_lock);
	if (waiter == pv_top_waiter(lock)) {
		/* The paper's "raise and add" or "add only": S(owner) changes. */
		if (top)
			pv_dequeue_donor(owner, top);
		pv_enqueue_donor(owner, waiter);
		pv_adjust_prio(owner);
	}
	next_lock = pv_blocked_lock(owner);
	raw_spin_unlock(&owner->pi_lock);

	if (!next_lock && !READ_ONCE(owner->pi_blocked_on))
		return 0;

	/* The owner is blocked itself: walk on, detecting deadlocks. */
	get_task_struct(owner);
	raw_spin_unlock_irq(&lock->wait_lock);
	if (next_lock) {
		ret = pv_adjust_prio_chain(owner, lock, next_lock, waiter, task);
	} else {
		pv_chain_to_rt_mutex(owner);
		put_task_struct(owner);
		ret = 0;
	}
	raw_spin_lock_irq(&lock->wait_lock);
	return ret;
}

/*
 * Dequeue current's @waiter that did not get the lock (timeout, signal,
 * deadlock) and undo its donation along the chain.  wait_lock held, dropped
 * and retaken around the chain walk.
 */
static void pv_remove_waiter(struct pv_mutex *lock,
			     struct pv_mutex_waiter *waiter)
{
	bool was_top = waiter == pv_top_waiter(lock);
	struct task_struct *owner = pv_owner(lock);
	struct pv_mutex *next_lock;
	struct pv_mutex_waiter *top;

	lockdep_assert_held(&lock->wait_lock);

	raw_spin_lock(&current->pi_lock);
	pv_dequeue(lock, waiter);
	current->pv_blocked_on = NULL;
	raw_spin_unlock(&current->pi_lock);

	if (!owner) {
		/* Handed over to us, and we give up: pass it on. */
		top = pv_top_waiter(lock);
		if (was_top && top)
			wake_up_process(top->task);
		return;
	}
	if (!was_top)
		return;

	raw_spin_lock(&owner->pi_lock);
	pv_dequeue_donor(owner, waiter);
	top = pv_top_waiter(lock);
	if (top)
		pv_enqueue_donor(owner, top);
	pv_adjust_prio(owner);
	next_lock = pv_blocked_lock(owner);
	raw_spin_unlock(&owner->pi_lock);

	if (!next_lock && !READ_ONCE(owner->pi_blocked_on))
		return;

	get_task_struct(owner);
	raw_spin_unlock_irq(&lock->wait_lock);
	if (next_lock) {
		pv_adjust_prio_chain(owner, NULL, next_lock, NULL, current);
	} else {
		pv_chain_to_rt_mutex(owner);
		put_task_struct(owner);
	}
	raw_spin_lock_irq(&lock->wait_lock);
}

static int __sched pv_mutex_slowlock(struct pv_mutex *lock, unsigned int state,
				     struct hrtimer_sleeper *timeout)
{
	struct pv_mutex_waiter waiter;
	int ret = 0;

	RB_CLEAR_NODE(&waiter.tree);
	RB_CLEAR_NODE(&waiter.pi_tree);

	/* Submit plugged I/O and the like now, not while we are queued. */
	rt_mutex_pre_schedule();
	raw_spin_lock_irq(&lock->wait_lock);

	if (pv_try_to_take(lock, current, NULL))
		goto out_fixup;

	if (pv_owner(lock) == current) {
		/* AA: the simplest cycle, no walk needed. */
		ret = -EDEADLK;
		goto out_fixup;
	}

	set_current_state(state);
	ret = pv_task_blocks_on(lock, &waiter, current);
	if (!ret && timeout)
		hrtimer_sleeper_start_expires(timeout, HRTIMER_MODE_REL);

	while (!ret) {
		if (pv_try_to_take(lock, current, &waiter))
			break;
		if (timeout && !timeout->task) {
			ret = -ETIMEDOUT;
			break;
		}
		if (signal_pending_state(state, current)) {
			ret = -EINTR;
			break;
		}
		raw_spin_unlock_irq(&lock->wait_lock);
		rt_mutex_schedule();
		raw_spin_lock_irq(&lock->wait_lock);
		set_current_state(state);
	}
	__set_current_state(TASK_RUNNING);

	if (ret)
		pv_remove_waiter(lock, &waiter);
out_fixup:
	pv_fixup_waiters(lock);
	raw_spin_unlock_irq(&lock->wait_lock);
	rt_mutex_post_schedule();
	return ret;
}

/*
 * The slow paths are out of line ("noinline __sched", as in mutex.c): the
 * fast paths then need no stack frame and the slow paths show up on perf
 * profiles.
 */
static noinline int __sched pv_mutex_lock_slowpath(struct pv_mutex *lock,
						   unsigned int state,
						   struct hrtimer_sleeper *to,
						   unsigned long ip)
{
	int ret = pv_mutex_slowlock(lock, state, to);

	if (ret)
		mutex_release(&lock->dep_map, ip);
	return ret;
}

/* A void lock has no way to report a cycle: say so, then block for good. */
static noinline void __sched pv_mutex_lock_slowpath_void(struct pv_mutex *lock,
							 unsigned long ip)
{
	if (!pv_mutex_lock_slowpath(lock, TASK_UNINTERRUPTIBLE, NULL, ip))
		return;
	WARN_ONCE(1, "pv_mutex: deadlock detected acquiring %p\n", lock);
	for (;;) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		schedule();
	}
}

static __always_inline int __pv_mutex_lock(struct pv_mutex *lock,
					   unsigned int state,
					   unsigned int subclass)
{
	might_sleep();
	mutex_acquire(&lock->dep_map, subclass, 0, _RET_IP_);
	if (likely(pv_fast_lock(lock)))
		return 0;
	return pv_mutex_lock_slowpath(lock, state, NULL, _RET_IP_);
}

static __always_inline void __pv_mutex_lock_void(struct pv_mutex *lock,
						 unsigned int subclass)
{
	might_sleep();
	mutex_acquire(&lock->dep_map, subclass, 0, _RET_IP_);
	if (likely(pv_fast_lock(lock)))
		return;
	pv_mutex_lock_slowpath_void(lock, _RET_IP_);
}

#ifdef CONFIG_DEBUG_LOCK_ALLOC
/**
 * pv_mutex_lock_nested - lock a pv_mutex with a lockdep subclass
 * @lock: the mutex
 * @subclass: lockdep subclass, for nesting locks of one class
 */
void __sched pv_mutex_lock_nested(struct pv_mutex *lock, unsigned int subclass)
{
	__pv_mutex_lock_void(lock, subclass);
}
EXPORT_SYMBOL_GPL(pv_mutex_lock_nested);
#endif

/**
 * pv_mutex_lock - lock a pv_mutex
 * @lock: the mutex
 *
 * Sleeps uninterruptibly until @lock is free.  While it waits, the owner,
 * and every owner down the chain of blocked owners, runs at least at the
 * caller's priority.  A deadlock (the caller already owns @lock, or the
 * chain leads back to the caller) is reported with a warning, and the
 * caller then sleeps for good: use the int-returning variants where a
 * cycle is possible.
 */
void __sched pv_mutex_lock(struct pv_mutex *lock)
{
	__pv_mutex_lock_void(lock, 0);
}
EXPORT_SYMBOL_GPL(pv_mutex_lock);

/**
 * pv_mutex_lock_interruptible - lock a pv_mutex, interruptible by signals
 * @lock: the mutex
 *
 * Return: 0 when locked; -EINTR when a signal arrived first; -EDEADLK when
 * waiting would close a cycle.  On error nothing changed: the caller's
 * donation to the owner chain has been withdrawn.
 */
int __sched pv_mutex_lock_interruptible(struct pv_mutex *lock)
{
	return __pv_mutex_lock(lock, TASK_INTERRUPTIBLE, 0);
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
	return __pv_mutex_lock(lock, TASK_KILLABLE, 0);
}
EXPORT_SYMBOL_GPL(pv_mutex_lock_killable);

/**
 * pv_mutex_lock_timeout - lock a pv_mutex, waiting at most @timeout jiffies
 * @lock: the mutex
 * @timeout: how long to wait, in jiffies; 0 tries once
 *
 * Return: 0 when locked; -ETIMEDOUT when @timeout passed first; -EDEADLK as
 * for pv_mutex_lock_interruptible(); -EINVAL (with a warning) for a
 * negative @timeout.
 */
int __sched pv_mutex_lock_timeout(struct pv_mutex *lock, long timeout)
{
	struct hrtimer_sleeper to;
	int ret;

	if (WARN_ONCE(timeout < 0, "pv_mutex: negative timeout %ld\n", timeout))
		return -EINVAL;
	if (!timeout)
		return pv_mutex_trylock(lock) ? 0 : -ETIMEDOUT;

	might_sleep();
	mutex_acquire(&lock->dep_map, 0, 0, _RET_IP_);
	if (likely(pv_fast_lock(lock)))
		return 0;
	hrtimer_init_sleeper_on_stack(&to, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	hrtimer_set_expires_range_ns(&to.timer,
				     ns_to_ktime(jiffies_to_nsecs(timeout)),
				     current->timer_slack_ns);
	ret = pv_mutex_slowlock(lock, TASK_UNINTERRUPTIBLE, &to);
	hrtimer_cancel(&to.timer);
	destroy_hrtimer_on_stack(&to.timer);
	if (ret)
		mutex_release(&lock->dep_map, _RET_IP_);
	return ret;
}
EXPORT_SYMBOL_GPL(pv_mutex_lock_timeout);

/**
 * pv_mutex_trylock - try to lock a pv_mutex without waiting
 * @lock: the mutex
 *
 * Does not take the lock from a queued waiter of equal or better priority.
 * Must not be called from interrupt context: an owner must be a task.
 *
 * Return: 1 if the lock was taken, 0 otherwise.
 */
int __sched pv_mutex_trylock(struct pv_mutex *lock)
{
	unsigned long flags;
	bool taken;

	if (WARN_ON_ONCE(in_hardirq() || in_nmi()))
		return 0;

	taken = pv_fast_lock(lock);
	if (!taken && !pv_owner(lock)) {
		/* Free but with waiters: respect their priority. */
		raw_spin_lock_irqsave(&lock->wait_lock, flags);
		taken = pv_try_to_take(lock, current, NULL);
		pv_fixup_waiters(lock);
		raw_spin_unlock_irqrestore(&lock->wait_lock, flags);
	}
	if (taken)
		mutex_acquire(&lock->dep_map, 0, 1, _RET_IP_);
	return taken;
}
EXPORT_SYMBOL_GPL(pv_mutex_trylock);

/* --- release ------------------------------------------------------------- */

static noinline void __sched pv_mutex_slowunlock(struct pv_mutex *lock,
						 unsigned long ip)
{
	struct pv_mutex_waiter *top;
	DEFINE_WAKE_Q(wake_q);
	unsigned long flags;

	/* The fast path failed: waiters, or misuse.  Only the owner unlocks. */
	if (WARN_ONCE(pv_owner(lock) != current,
		      "pv_mutex: unlock of %p by %s (%d), owner %p\n", lock,
		      current->comm, task_pid_nr(current), pv_owner(lock)))
		return;
	mutex_release(&lock->dep_map, ip);

	raw_spin_lock_irqsave(&lock->wait_lock, flags);
	top = pv_top_waiter(lock);
	if (!top) {
		atomic_long_set_release(&lock->owner, 0);
		raw_spin_unlock_irqrestore(&lock->wait_lock, flags);
		return;
	}

	/*
	 * Yodaiken's rule: drop (lock, prio) from S(current) and run at the
	 * best priority left, before the next owner can run.
	 */
	raw_spin_lock(&current->pi_lock);
	pv_dequeue_donor(current, top);
	pv_adjust_prio(current);
	raw_spin_unlock(&current->pi_lock);

	/* Free, with the waiters bit: only the slow path can take it now. */
	atomic_long_set_release(&lock->owner, PV_HAS_WAITERS);
	wake_q_add(&wake_q, top->task);

	preempt_disable();
	raw_spin_unlock_irqrestore(&lock->wait_lock, flags);
	wake_up_q(&wake_q);
	preempt_enable();
}

/**
 * pv_mutex_unlock - unlock a pv_mutex
 * @lock: the mutex, owned by the caller
 *
 * The caller drops to the best priority still donated to it by the other
 * locks it holds (Yodaiken's rule), or to its own priority, before the top
 * waiter is woken to take @lock.  Unlocking a mutex the caller does not own
 * warns once and changes nothing.
 */
void __sched pv_mutex_unlock(struct pv_mutex *lock)
{
	/* Succeeds only for the owner of a mutex without waiters. */
	if (likely(pv_fast_unlock(lock))) {
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
	return pv_owner(lock);
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
	atomic_long_set(&lock->owner, 0);
	raw_spin_lock_init(&lock->wait_lock);
	lock->waiters = RB_ROOT_CACHED;
	debug_check_no_locks_freed((void *)lock, sizeof(*lock));
	lockdep_init_map_wait(&lock->dep_map, name, key, 0, LD_WAIT_SLEEP);
}
EXPORT_SYMBOL_GPL(__pv_mutex_init);

/**
 * pv_mutex_adjust_pi - propagate a blocked task's priority change
 * @task: a task whose priority was just changed (sched_setscheduler())
 *
 * If @task waits on a pv_mutex, requeue it and carry the change along the
 * chain of owners, upwards or downwards.
 */
void pv_mutex_adjust_pi(struct task_struct *task)
{
	struct pv_mutex_waiter *waiter;
	struct pv_mutex *next_lock;
	unsigned long flags;

	raw_spin_lock_irqsave(&task->pi_lock, flags);
	waiter = task->pv_blocked_on;
	if (!waiter || pv_waiter_is_task_prio(waiter, task)) {
		raw_spin_unlock_irqrestore(&task->pi_lock, flags);
		return;
	}
	next_lock = waiter->lock;
	raw_spin_unlock_irqrestore(&task->pi_lock, flags);

	get_task_struct(task);
	pv_adjust_prio_chain(task, NULL, next_lock, NULL, task);
}

/* --- introspection ------------------------------------------------------- */

#ifdef CONFIG_DEBUG_FS
/*
 * /sys/kernel/debug/pv_mutex/donors: each task whose S(P) is not empty,
 * with its priorities and its (lock, inherited priority) pairs, best first.
 */
static int pv_donors_show(struct seq_file *m, void *v)
{
	struct task_struct *g, *t;
	struct pv_mutex_waiter *w;
	struct rb_node *n;
	unsigned long flags;

	seq_puts(m, "# pid comm prio normal_prio: {(lock, inherited prio) ...}\n");
	rcu_read_lock();
	for_each_process_thread(g, t) {
		raw_spin_lock_irqsave(&t->pi_lock, flags);
		n = rb_first_cached(&t->pv_donors);
		if (n) {
			seq_printf(m, "%d %s %d %d:", task_pid_nr(t), t->comm,
				   t->prio, t->normal_prio);
			for (; n; n = rb_next(n)) {
				w = rb_entry(n, struct pv_mutex_waiter, pi_tree);
				seq_printf(m, " (%p, %d)", w->lock, w->pi_prio);
			}
			seq_putc(m, '\n');
		}
		raw_spin_unlock_irqrestore(&t->pi_lock, flags);
	}
	rcu_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pv_donors);

static int __init pv_mutex_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("pv_mutex", NULL);

	debugfs_create_file("donors", 0400, dir, NULL, &pv_donors_fops);
	return 0;
}
late_initcall(pv_mutex_debugfs_init);
#endif
