/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct pv_spinlock: a spinlock_t that CONFIG_PV_SPINLOCK turns into a pv_mutex.
 *
 * Chosen spinlocks are converted one at a time, where lock statistics show
 * that a sleeping lock with priority inheritance pays (the mean hold time
 * exceeds 4 * T_sched * p / (1 - p), with T_sched the cost of a wake-up and
 * p the fraction of contended acquisitions) and the lock is only ever taken
 * in process context.  A converted lock is declared
 * struct pv_spinlock and taken with pv_spin_lock() and pv_spin_unlock():
 *
 *  - without CONFIG_PV_SPINLOCK it is a spinlock_t and the operations are
 *    spin_lock() and spin_unlock(): the code the conversion replaced;
 *  - with it, it is a pv_mutex: the holder can be preempted and inherits
 *    the priority of its waiters, through chains of pv_mutex, rt_mutex and
 *    futex PI locks.  Like PREEMPT_RT's substitute for spinlock_t, the
 *    holder cannot migrate (migrate_disable()), so that a per-CPU pointer
 *    taken under the lock stays valid.  Unlike it, the lock does not
 *    preserve a caller's task state and does not make the section an RCU
 *    read-side critical section.
 *
 * There are no _irq, _irqsave or _bh variants: a lock taken in interrupt
 * or softirq context, or with interrupts or bottom halves disabled, cannot
 * sleep and is not converted.  Lockdep sees what the lock is in each
 * configuration: a spinlock_t (LD_WAIT_CONFIG) or a sleeping lock
 * (LD_WAIT_SLEEP), so that CONFIG_PROVE_RAW_LOCK_NESTING and
 * CONFIG_DEBUG_ATOMIC_SLEEP report a converted lock taken where it cannot
 * sleep.  See Documentation/locking/pv-mutex.rst, "Converted spinlocks".
 */
#ifndef __LINUX_PV_SPINLOCK_H
#define __LINUX_PV_SPINLOCK_H

#include <linux/lockdep.h>
#include <linux/preempt.h>
#include <linux/spinlock.h>

#ifdef CONFIG_PV_SPINLOCK

#include <linux/pv_mutex.h>

/**
 * struct pv_spinlock - a converted spinlock
 * @lock: with CONFIG_PV_SPINLOCK, a pv_mutex
 */
struct pv_spinlock {
	struct pv_mutex		lock;
};

#define __PV_SPIN_LOCK_UNLOCKED(name)					\
	{ .lock = __PV_MUTEX_INITIALIZER(name.lock) }

#define pv_spin_lock_init(l)						\
do {									\
	static struct lock_class_key __key;				\
									\
	__pv_mutex_init(&(l)->lock, #l, &__key);			\
} while (0)

/**
 * pv_spin_lock - take a converted spinlock
 * @l: the lock
 *
 * Sleeps until @l is free, lending the caller's priority to the owner
 * chain; then disables migration until pv_spin_unlock().  Process context
 * only.
 */
static inline void pv_spin_lock(struct pv_spinlock *l)
	__acquires(l)
{
	pv_mutex_lock(&l->lock);
	__acquire(l);
	migrate_disable();
}

/**
 * pv_spin_lock_nested - take a converted spinlock with a lockdep subclass
 * @l: the lock
 * @subclass: lockdep subclass, for nesting locks of one class
 */
static inline void pv_spin_lock_nested(struct pv_spinlock *l, unsigned int subclass)
	__acquires(l)
{
	pv_mutex_lock_nested(&l->lock, subclass);
	__acquire(l);
	migrate_disable();
}

/* pv_spin_trylock() without the annotation for sparse. */
static inline int __pv_spin_trylock(struct pv_spinlock *l)
{
	if (!pv_mutex_trylock(&l->lock))
		return 0;
	migrate_disable();
	return 1;
}

/**
 * pv_spin_trylock - take a converted spinlock if it is free
 * @l: the lock
 *
 * Return: 1 if the lock was taken, 0 otherwise.
 */
#define pv_spin_trylock(l)	__cond_lock(l, __pv_spin_trylock(l))

/**
 * pv_spin_unlock - release a converted spinlock
 * @l: the lock, held by the caller
 */
static inline void pv_spin_unlock(struct pv_spinlock *l)
	__releases(l)
{
	migrate_enable();
	__release(l);
	pv_mutex_unlock(&l->lock);
}

#else /* !CONFIG_PV_SPINLOCK */

struct pv_spinlock {
	spinlock_t		lock;	/* without CONFIG_PV_SPINLOCK */
};

#define __PV_SPIN_LOCK_UNLOCKED(name)					\
	{ .lock = __SPIN_LOCK_UNLOCKED(name.lock) }

#ifdef CONFIG_DEBUG_SPINLOCK
#define pv_spin_lock_init(l)						\
do {									\
	static struct lock_class_key __key;				\
									\
	__raw_spin_lock_init(spinlock_check(&(l)->lock), #l, &__key,	\
			     LD_WAIT_CONFIG);				\
} while (0)
#else
#define pv_spin_lock_init(l)	spin_lock_init(&(l)->lock)
#endif

static __always_inline void pv_spin_lock(struct pv_spinlock *l)
	__acquires(l)
{
	spin_lock(&l->lock);
}

static __always_inline void pv_spin_lock_nested(struct pv_spinlock *l,
						unsigned int subclass)
	__acquires(l)
{
	spin_lock_nested(&l->lock, subclass);
}

#define pv_spin_trylock(l)	spin_trylock(&(l)->lock)

static __always_inline void pv_spin_unlock(struct pv_spinlock *l)
	__releases(l)
{
	spin_unlock(&l->lock);
}

#endif /* CONFIG_PV_SPINLOCK */

/**
 * DEFINE_PV_SPINLOCK - define and initialize an unlocked converted spinlock
 * @name: name of the variable
 */
#define DEFINE_PV_SPINLOCK(name)					\
	struct pv_spinlock name = __PV_SPIN_LOCK_UNLOCKED(name)

/**
 * pv_spin_lock_assert_held - lockdep: the caller must hold @l
 * @l: the lock
 */
#define pv_spin_lock_assert_held(l)	lockdep_assert_held(&(l)->lock)

#endif /* __LINUX_PV_SPINLOCK_H */
