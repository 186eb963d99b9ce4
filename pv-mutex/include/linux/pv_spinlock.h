/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct pv_spinlock: a spinlock_t that CONFIG_PV_SPINLOCK turns into
 * PREEMPT_RT's sleeping spinlock, on a kernel without PREEMPT_RT.
 *
 * A converted lock is declared struct pv_spinlock and taken with
 * pv_spin_lock() and pv_spin_unlock():
 *
 *  - with CONFIG_PV_SPINLOCK it is an rtlock, the lock PREEMPT_RT makes of
 *    every spinlock_t (kernel/locking/spinlock_rt.c), built from the same
 *    rtmutex.c code: the holder can be preempted and inherits the priority
 *    of its waiters, through chains of rt_mutex, pv_mutex and futex PI
 *    locks; a waiter spins while the owner runs, then sleeps in
 *    TASK_RTLOCK_WAIT with its task state saved and restored, and the wait
 *    counts as a preemption for RCU and the scheduler.  The holder is in
 *    an RCU read-side critical section, as a spinlock_t holder is, and
 *    cannot migrate;
 *  - without it, it is a spinlock_t and the operations are spin_lock() and
 *    spin_unlock(): the code the conversion replaced.
 *
 * So a converted lock may be taken wherever PREEMPT_RT allows a spinlock_t,
 * a plain rcu_read_lock() reader included (CONFIG_PV_SPINLOCK depends on
 * PREEMPT_RCU), and nowhere a !PREEMPT_RT kernel is atomic: not inside a
 * spinlock_t, rwlock_t, seqlock writer, local_lock_t or bit spinlock, not
 * with preemption, bottom halves or interrupts disabled, not in an
 * rcu_read_lock_bh() or rcu_read_lock_sched() reader, not in interrupt or
 * softirq context.  There are no _irq, _irqsave or _bh variants.
 *
 * Both builds check these rules, so that a subsystem's own test kernels
 * enforce them without the conversion: lockdep sees the lock as
 * LD_WAIT_SPIN_SLEEP, which every spinlock_t, rwlock_t, local_lock_t,
 * rcu_read_lock_bh()/_sched() reader and interrupt context forbids and
 * rcu_read_lock() allows, and CONFIG_DEBUG_ATOMIC_SLEEP checks the
 * preemption count, the interrupt state and the RCU nesting at each
 * acquisition as rt_spin_lock() does, plain RCU readers excepted.  In the
 * converted build, sleeping while holding the lock is reported as it is
 * while holding a spinlock_t: lockdep (the mutex's wait type) and
 * might_sleep() (the RCU read-side section) see it.
 *
 * Migration: the holder of a spinlock_t cannot migrate, and pv_spin_lock()
 * disables migration as rt_spin_lock() does, so the CPU a section reads
 * with smp_processor_id() stays its CPU until pv_spin_unlock().  That is
 * all it keeps: the holder can be preempted, so another task on the same
 * CPU can run inside the section, and a __this_cpu_*() read-modify-write
 * or a per-CPU list that relied on preemption being off is no longer
 * protected.  A conversion rule therefore: no section of a converted lock
 * may rely on preemption being disabled for per-CPU data (PREEMPT_RT makes
 * the same demand of every spinlock_t section).  It costs a per-task
 * counter, and a preempted holder waits for its own CPU.
 *
 * Gap without PREEMPT_RCU: there rcu_read_lock() disables preemption, so
 * CONFIG_DEBUG_ATOMIC_SLEEP cannot tell a plain RCU reader from another
 * atomic section by the preemption count, and pv_spin_lock() makes no
 * atomic-context check at all; only lockdep's wait-type check
 * (PROVE_LOCKING) reports a misplaced acquisition in such a kernel.
 * CONFIG_PV_SPINLOCK itself depends on PREEMPT_RCU.
 *
 * Misuse: pv_spin_unlock() of a lock the caller does not hold warns and
 * changes nothing in the converted build; without it, it is spin_unlock(),
 * whose own debugging (CONFIG_DEBUG_SPINLOCK, lockdep) reports it.
 *
 * See Documentation/locking/pv-mutex.rst, "Converted spinlocks".
 */
#ifndef __LINUX_PV_SPINLOCK_H
#define __LINUX_PV_SPINLOCK_H

#include <linux/kernel.h>
#include <linux/lockdep.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/spinlock.h>

#ifdef CONFIG_DEBUG_LOCK_ALLOC
# define PV_SPIN_DEP_MAP_INIT(lockname)					\
	.dep_map = {							\
		.name = #lockname,					\
		.wait_type_inner = LD_WAIT_SPIN_SLEEP,			\
	}
#else
# define PV_SPIN_DEP_MAP_INIT(lockname)	SPIN_DEP_MAP_INIT(lockname)
#endif

/*
 * Without CONFIG_PV_SPINLOCK (and PREEMPT_RT) a converted lock is a
 * spinlock_t: each one the task holds adds PREEMPT_LOCK_OFFSET to the
 * preemption count, which a converted lock taken inside it must not count
 * as an atomic section.  With CONFIG_DEBUG_ATOMIC_SLEEP the task counts
 * them (task_struct::pv_spin_held), and the context check allows that many
 * PREEMPT_LOCK_OFFSETs, as __might_resched()'s offsets allow the lock a
 * cond_resched_lock() caller holds.
 */
#if defined(CONFIG_DEBUG_ATOMIC_SLEEP) && !defined(CONFIG_RTLOCK)
# define pv_spin_held_inc()	(current->pv_spin_held++)
# define pv_spin_held_dec()	(current->pv_spin_held--)
# define PV_SPIN_HELD_OFFSET	(current->pv_spin_held * PREEMPT_LOCK_OFFSET)
#else
# define pv_spin_held_inc()	do { } while (0)
# define pv_spin_held_dec()	do { } while (0)
# define PV_SPIN_HELD_OFFSET	0
#endif

/*
 * The offsets a converted lock passes to __might_resched() when it is
 * taken: for the preemption count, only the converted locks held (none in
 * the converted build, where they leave the count alone); the caller's RCU
 * nesting, so that a plain rcu_read_lock() reader may take it
 * (rt_spin_lock()'s RTLOCK_RESCHED_OFFSETS).
 */
#define PV_SPIN_RESCHED_OFFSETS						\
	(PV_SPIN_HELD_OFFSET +						\
	 (rcu_preempt_depth() << MIGHT_RESCHED_RCU_SHIFT))

#ifdef CONFIG_PV_SPINLOCK

#include <linux/pv_mutex.h>

/**
 * struct pv_spinlock - a converted spinlock
 * @lock: with CONFIG_PV_SPINLOCK, the rt_mutex core and lockdep map of an
 *	  rtlock, in the layout of a pv_mutex
 */
struct pv_spinlock {
	struct pv_mutex		lock;
};

#define __PV_SPIN_LOCK_UNLOCKED(name)					\
	{ .lock = { .rtmutex = __RT_MUTEX_BASE_INITIALIZER(name.lock.rtmutex), \
		    PV_SPIN_DEP_MAP_INIT(name.lock) } }

void __pv_spin_lock_init(struct pv_spinlock *l, const char *name,
			 struct lock_class_key *key);

#define pv_spin_lock_init(l)						\
do {									\
	static struct lock_class_key __key;				\
									\
	__pv_spin_lock_init((l), #l, &__key);				\
} while (0)

void pv_spin_lock(struct pv_spinlock *l) __acquires(l);
#ifdef CONFIG_DEBUG_LOCK_ALLOC
void pv_spin_lock_nested(struct pv_spinlock *l, unsigned int subclass)
	__acquires(l);
#else
static inline void pv_spin_lock_nested(struct pv_spinlock *l,
				       unsigned int subclass)
	__acquires(l)
{
	pv_spin_lock(l);
}
#endif
int __pv_spin_trylock(struct pv_spinlock *l);
void pv_spin_unlock(struct pv_spinlock *l) __releases(l);

/**
 * pv_spin_trylock - take a converted spinlock if it is free
 * @l: the lock
 *
 * Return: 1 if the lock was taken, 0 otherwise.
 */
#define pv_spin_trylock(l)	__cond_lock(l, __pv_spin_trylock(l))

#else /* !CONFIG_PV_SPINLOCK */

struct pv_spinlock {
	spinlock_t		lock;	/* without CONFIG_PV_SPINLOCK */
};

#ifdef CONFIG_PREEMPT_RT
/* spinlock_t is an rtlock already, with rt_spin_lock()'s own checks. */
#define __PV_SPIN_LOCK_UNLOCKED(name)					\
	{ .lock = __SPIN_LOCK_UNLOCKED(name.lock) }
#define pv_spin_lock_init(l)	spin_lock_init(&(l)->lock)
#define pv_spin_might_sleep()	do { } while (0)
#else
#define __PV_SPIN_LOCK_UNLOCKED(name)					\
	{ .lock = { { .rlock = {					\
		.raw_lock = __ARCH_SPIN_LOCK_UNLOCKED,			\
		SPIN_DEBUG_INIT(name.lock)				\
		PV_SPIN_DEP_MAP_INIT(name.lock) } } } }

#ifdef CONFIG_DEBUG_SPINLOCK
#define pv_spin_lock_init(l)						\
do {									\
	static struct lock_class_key __key;				\
									\
	__raw_spin_lock_init(spinlock_check(&(l)->lock), #l, &__key,	\
			     LD_WAIT_SPIN_SLEEP);			\
} while (0)
#else
#define pv_spin_lock_init(l)	spin_lock_init(&(l)->lock)
#endif

/*
 * CONFIG_DEBUG_ATOMIC_SLEEP: report an acquisition where the converted
 * lock could not sleep, as rt_spin_lock()'s rtlock_might_resched() does:
 * no task state check (an rtlock preserves it), RCU nesting allowed.
 * Without PREEMPT_RCU an RCU reader disables preemption and looks like any
 * other atomic section: no check is made (the gap described at the top),
 * and only lockdep's wait-type check remains.
 */
#define pv_spin_might_sleep()						\
do {									\
	if (IS_ENABLED(CONFIG_PREEMPT_RCU))				\
		__might_resched(__FILE__, __LINE__,			\
				PV_SPIN_RESCHED_OFFSETS);		\
} while (0)
#endif /* CONFIG_PREEMPT_RT */

static __always_inline void pv_spin_lock(struct pv_spinlock *l)
	__acquires(l)
{
	pv_spin_might_sleep();
	spin_lock(&l->lock);
	pv_spin_held_inc();
}

static __always_inline void pv_spin_lock_nested(struct pv_spinlock *l,
						unsigned int subclass)
	__acquires(l)
{
	pv_spin_might_sleep();
	spin_lock_nested(&l->lock, subclass);
	pv_spin_held_inc();
}

/*
 * Fails rather than waits, so no atomic-context check.  The converted
 * build refuses (warns and fails) a trylock outside task context, since an
 * owner must be a task that priority inheritance can boost; with
 * CONFIG_DEBUG_ATOMIC_SLEEP this build does the same, so that such a
 * caller is found without the conversion.  lockdep cannot see it: it
 * checks no wait context for a trylock.
 */
#ifdef CONFIG_PREEMPT_RT
/* spinlock_t is an rtlock: rt_spin_trylock()'s own rules. */
#define __pv_spin_trylock(l)	rt_spin_trylock(&(l)->lock)
#else
static __always_inline int __pv_spin_trylock(struct pv_spinlock *l)
{
	if (IS_ENABLED(CONFIG_DEBUG_ATOMIC_SLEEP) && WARN_ON_ONCE(!in_task()))
		return 0;
	/* spin_trylock() without its __cond_lock(): pv_spin_trylock()'s */
	if (!_raw_spin_trylock(&l->lock.rlock))
		return 0;
	pv_spin_held_inc();
	return 1;
}
#endif

/**
 * pv_spin_trylock - take a converted spinlock if it is free
 * @l: the lock
 *
 * Return: 1 if the lock was taken, 0 otherwise.
 */
#define pv_spin_trylock(l)	__cond_lock(l, __pv_spin_trylock(l))

static __always_inline void pv_spin_unlock(struct pv_spinlock *l)
	__releases(l)
{
	pv_spin_held_dec();
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
