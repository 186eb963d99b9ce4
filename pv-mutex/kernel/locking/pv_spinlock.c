// SPDX-License-Identifier: GPL-2.0
/*
 * Converted spinlocks: PREEMPT_RT's sleeping spinlock for chosen locks on a
 * kernel without PREEMPT_RT.
 *
 * Copyright (C) 2026 PV-RT Developers
 *
 * This is spinlock_rt.c's rt_spin_lock() and rt_spin_unlock() for struct
 * pv_spinlock, on the same rtmutex.c code built the same way
 * (RT_MUTEX_BUILD_SPINLOCKS): rtlock_slowlock() saves the task state and
 * waits in TASK_RTLOCK_WAIT through schedule_rtlock(), which RCU and the
 * scheduler count as a preemption; it spins while the owner runs and does
 * not flush the block plug or notify workqueues, as schedule() would.
 * rtlock waiters are rt_mutex waiters, so the owner inherits their
 * priority through the chains of every priority-inheritance lock.
 *
 * See Documentation/locking/pv-mutex.rst, "Converted spinlocks".
 */
#include <linux/export.h>
#include <linux/pv_spinlock.h>

#define RT_MUTEX_BUILD_SPINLOCKS
#include "rtmutex.c"

/*
 * __might_resched() skips the state check as rtlocks are state preserving,
 * and allows the RCU nesting of a plain rcu_read_lock() reader, as
 * spinlock_rt.c's rtlock_might_resched().
 */
#define pv_rtlock_might_resched()					\
	__might_resched(__FILE__, __LINE__, PV_SPIN_RESCHED_OFFSETS)

static __always_inline void __pv_spin_lock(struct pv_spinlock *l)
{
	struct rt_mutex_base *rtm = &l->lock.rtmutex;

	pv_rtlock_might_resched();
	lockdep_assert(!current->pi_blocked_on);
	if (unlikely(!rt_mutex_cmpxchg_acquire(rtm, NULL, current)))
		rtlock_slowlock(rtm);
	rcu_read_lock();
	migrate_disable();
}

/**
 * pv_spin_lock - take a converted spinlock
 * @l: the lock
 *
 * Spins while the owner runs, else sleeps in TASK_RTLOCK_WAIT, lending the
 * caller's priority to the owner chain; the caller's task state is kept.
 * The holder is in an RCU read-side critical section and cannot migrate
 * until pv_spin_unlock().  May be called wherever PREEMPT_RT allows
 * spin_lock(): see include/linux/pv_spinlock.h.
 */
void __sched pv_spin_lock(struct pv_spinlock *l)
{
	spin_acquire(&l->lock.dep_map, 0, 0, _RET_IP_);
	__pv_spin_lock(l);
}
EXPORT_SYMBOL_GPL(pv_spin_lock);

#ifdef CONFIG_DEBUG_LOCK_ALLOC
/**
 * pv_spin_lock_nested - take a converted spinlock with a lockdep subclass
 * @l: the lock
 * @subclass: lockdep subclass, for nesting locks of one class
 */
void __sched pv_spin_lock_nested(struct pv_spinlock *l, unsigned int subclass)
{
	spin_acquire(&l->lock.dep_map, subclass, 0, _RET_IP_);
	__pv_spin_lock(l);
}
EXPORT_SYMBOL_GPL(pv_spin_lock_nested);
#endif

/**
 * __pv_spin_trylock - take a converted spinlock if it is free; use
 *		       pv_spin_trylock()
 * @l: the lock
 *
 * Task context only, as rt_spin_trylock(): the owner must be a task that
 * can be boosted.
 *
 * Return: 1 if the lock was taken, 0 otherwise.
 */
int __sched __pv_spin_trylock(struct pv_spinlock *l)
{
	if (WARN_ON_ONCE(!in_task()))
		return 0;
	if (!rt_mutex_cmpxchg_acquire(&l->lock.rtmutex, NULL, current) &&
	    !rt_mutex_slowtrylock(&l->lock.rtmutex))
		return 0;
	spin_acquire(&l->lock.dep_map, 0, 1, _RET_IP_);
	rcu_read_lock();
	/* For sparse, pv_spin_trylock()'s __cond_lock() holds it all. */
	__release(RCU);
	migrate_disable();
	return 1;
}
EXPORT_SYMBOL_GPL(__pv_spin_trylock);

/**
 * pv_spin_unlock - release a converted spinlock
 * @l: the lock, held by the caller
 *
 * The caller drops to the best priority still donated to it, and the top
 * waiter is woken in TASK_RTLOCK_WAIT.  Releasing a lock the caller does
 * not hold warns once and changes nothing: no lockdep, RCU or migration
 * state, and not the lock.
 */
void __sched pv_spin_unlock(struct pv_spinlock *l)
{
	struct task_struct *owner = rt_mutex_owner(&l->lock.rtmutex);

	if (WARN_ONCE(owner != current,
		      "pv_spinlock: unlock of %p by %s (%d), owner %p\n", l,
		      current->comm, task_pid_nr(current), owner))
		return;
	spin_release(&l->lock.dep_map, _RET_IP_);
	migrate_enable();

	if (unlikely(!rt_mutex_cmpxchg_release(&l->lock.rtmutex, current, NULL)))
		rt_mutex_slowunlock(&l->lock.rtmutex);

	/*
	 * This must be last, as in rt_spin_unlock(), to prevent the
	 * following use after free:
	 *
	 * T1					T2
	 * pv_spin_lock(&p->lock);		rcu_read_lock();
	 * invalidate(p);			p = rcu_dereference(ptr);
	 * rcu_assign_pointer(ptr, NULL);	if (!p) return;
	 * pv_spin_unlock(&p->lock);		pv_spin_lock(&p->lock);
	 * kfree_rcu(p);			rcu_read_unlock();
	 *					....
	 *					pv_spin_unlock(&p->lock)
	 *					  rcu_read_unlock(); // Ends grace period
	 * rcu_do_batch()
	 *   kfree(p);
	 *			    UAF ->	  rt_mutex_cmpxchg_release(&p->lock.lock.rtmutex...)
	 *
	 * For sparse, the RCU section is part of holding @l.
	 */
	__acquire(RCU);
	rcu_read_unlock();
}
EXPORT_SYMBOL_GPL(pv_spin_unlock);

/**
 * __pv_spin_lock_init - initialize a converted spinlock; use
 *			 pv_spin_lock_init()
 * @l: the lock
 * @name: lockdep name
 * @key: lockdep class key
 */
void __pv_spin_lock_init(struct pv_spinlock *l, const char *name,
			 struct lock_class_key *key)
{
	debug_check_no_locks_freed((void *)l, sizeof(*l));
	__rt_mutex_base_init(&l->lock.rtmutex);
	lockdep_init_map_wait(&l->lock.dep_map, name, key, 0,
			      LD_WAIT_SPIN_SLEEP);
}
EXPORT_SYMBOL_GPL(__pv_spin_lock_init);
