/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PV mutex: a sleeping lock with transitive priority inheritance that
 * follows Yodaiken's repair of the priority inheritance protocol.
 *
 * See Documentation/locking/pv-mutex.rst and pv-mutex-design.rst.
 */
#ifndef __LINUX_PV_MUTEX_H
#define __LINUX_PV_MUTEX_H

#include <linux/atomic.h>
#include <linux/lockdep.h>
#include <linux/rbtree_types.h>
#include <linux/spinlock_types_raw.h>
#include <linux/types.h>

struct task_struct;

/**
 * struct pv_mutex - a priority-inheritance mutex
 * @owner:	owning task, or NULL; bit 0 set when the lock has waiters
 * @wait_lock:	protects @waiters and the waiters bit of @owner
 * @waiters:	blocked tasks, best priority first (FIFO among equals)
 * @dep_map:	lockdep
 */
struct pv_mutex {
	atomic_long_t		owner;
	raw_spinlock_t		wait_lock;
	struct rb_root_cached	waiters;
#ifdef CONFIG_DEBUG_LOCK_ALLOC
	struct lockdep_map	dep_map;
#endif
};

#ifdef CONFIG_DEBUG_LOCK_ALLOC
#define __PV_MUTEX_INITIALIZER(name)					\
{									\
	.owner = ATOMIC_LONG_INIT(0),					\
	.wait_lock = __RAW_SPIN_LOCK_UNLOCKED(name.wait_lock),		\
	.waiters = RB_ROOT_CACHED,					\
	.dep_map = {							\
		.name = #name,						\
		.wait_type_inner = LD_WAIT_SLEEP,			\
	},								\
}
#else
#define __PV_MUTEX_INITIALIZER(name)					\
{									\
	.owner = ATOMIC_LONG_INIT(0),					\
	.wait_lock = __RAW_SPIN_LOCK_UNLOCKED(name.wait_lock),		\
	.waiters = RB_ROOT_CACHED,					\
}
#endif

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

/**
 * pv_mutex_is_locked - is the mutex locked?
 * @lock: the mutex
 *
 * Return: true if some task owns @lock.  Only a snapshot.
 */
static inline bool pv_mutex_is_locked(struct pv_mutex *lock)
{
	return atomic_long_read(&lock->owner) != 0;
}

/* For the scheduler and the rt_mutex code: see kernel/locking/pv_mutex.c. */
#ifdef CONFIG_PV_MUTEX
struct task_struct *pv_mutex_top_donor(struct task_struct *p);
void pv_mutex_adjust_pi(struct task_struct *task);
#else
static inline struct task_struct *pv_mutex_top_donor(struct task_struct *p)
{
	return NULL;
}

static inline void pv_mutex_adjust_pi(struct task_struct *task) { }
#endif

#endif /* __LINUX_PV_MUTEX_H */
