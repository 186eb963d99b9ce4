/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PV mutex: a sleeping lock with transitive priority inheritance and
 * deboost on unlock to the best donation left, on the kernel's rt_mutex
 * priority-inheritance engine.
 *
 * See Documentation/locking/pv-mutex.rst and pv-mutex-design.rst.
 */
#ifndef __LINUX_PV_MUTEX_H
#define __LINUX_PV_MUTEX_H

#include <linux/lockdep.h>
#include <linux/rtmutex.h>
#include <linux/types.h>

struct task_struct;

/**
 * struct pv_mutex - a priority-inheritance mutex
 * @rtmutex:	the rt_mutex core: owner, waiters, wait_lock.  Every
 *		priority-inheritance lock of the kernel (rt_mutex, futex PI,
 *		PREEMPT_RT locks, pv_mutex) shares it, so they form one chain.
 * @dep_map:	lockdep
 */
struct pv_mutex {
	struct rt_mutex_base	rtmutex;
#ifdef CONFIG_DEBUG_LOCK_ALLOC
	struct lockdep_map	dep_map;
#endif
};

/* The layout of struct rt_mutex, and so its initializer. */
#define __PV_MUTEX_INITIALIZER(name)	__RT_MUTEX_INITIALIZER(name)

/**
 * DEFINE_PV_MUTEX - define and initialize an unlocked pv_mutex
 * @name: name of the variable
 */
#define DEFINE_PV_MUTEX(name)						\
	struct pv_mutex name = __PV_MUTEX_INITIALIZER(name)

void __pv_mutex_init(struct pv_mutex *lock, const char *name,
		     struct lock_class_key *key);

/**
 * pv_mutex_init - initialize a pv_mutex to the unlocked state
 * @lock: the mutex
 *
 * Each call site gets its own lockdep class.
 */
#define pv_mutex_init(lock)						\
do {									\
	static struct lock_class_key __key;				\
									\
	__pv_mutex_init((lock), #lock, &__key);				\
} while (0)

void pv_mutex_lock(struct pv_mutex *lock);
#ifdef CONFIG_DEBUG_LOCK_ALLOC
void pv_mutex_lock_nested(struct pv_mutex *lock, unsigned int subclass);
#else
static inline void pv_mutex_lock_nested(struct pv_mutex *lock,
					unsigned int subclass)
{
	pv_mutex_lock(lock);
}
#endif
int __must_check pv_mutex_lock_interruptible(struct pv_mutex *lock);
int __must_check pv_mutex_lock_killable(struct pv_mutex *lock);
int __must_check pv_mutex_lock_timeout(struct pv_mutex *lock, long timeout);
int pv_mutex_trylock(struct pv_mutex *lock);
void pv_mutex_unlock(struct pv_mutex *lock);
struct task_struct *pv_mutex_owner(struct pv_mutex *lock);

#if IS_ENABLED(CONFIG_KUNIT)
struct seq_file;

ktime_t pv_mutex_timeout_expiry(long timeout);
int pv_mutex_pi_chains_show(struct seq_file *m, void *v);
#endif

/**
 * pv_mutex_is_locked - is the mutex locked?
 * @lock: the mutex
 *
 * Return: true if some task owns @lock.  Only a snapshot.
 */
static inline bool pv_mutex_is_locked(struct pv_mutex *lock)
{
	return rt_mutex_base_is_locked(&lock->rtmutex);
}

#endif /* __LINUX_PV_MUTEX_H */
