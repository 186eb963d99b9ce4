// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit scenarios for pv_mutex: priority inversion, PI chains, deboost on
 * unlock, the failure classes earlier priority-inheritance implementations
 * shipped, and the same scenario tables run against rt_mutex (differential
 * test).
 *
 * Copyright (C) 2026 PV-RT Developers
 *
 * Each scenario drives kthreads at exact SCHED_FIFO priorities, all bound
 * to one CPU, through completions: a worker executes one command at a
 * time, and the controller (the test, at FIFO 90 on the same CPU) waits
 * either for the command to finish or until the worker is queued on a lock
 * and off the runqueue.  Priorities are checked at every step through
 * task->prio.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/debug_locks.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/pv_mutex.h>
#include <linux/pv_spinlock.h>
#include <linux/rtmutex.h>
#include <linux/sched.h>
#include <linux/sched/prio.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <uapi/linux/sched/types.h>

/* Kernel priority of SCHED_FIFO priority @p. */
#define FIFO(p)		(MAX_RT_PRIO - 1 - (p))
#define CONTROLLER_PRIO	90
#define WAIT_LIMIT	(10 * HZ)
#define PVK_NLOCKS	4
/* How long an owner that never sleeps runs at most: beyond RT throttling. */
#define PVK_RUN_LIMIT	(3 * HZ)
/* A wait that ends this late has waited for RT throttling (950 ms). */
#define PVK_LATE_MS	500

union pvk_lock {
	struct pv_mutex pv;
	struct rt_mutex rt;
	struct pv_spinlock ps;
};

struct pvk_ops {
	const char *name;
	void (*init)(union pvk_lock *l);
	void (*lock)(union pvk_lock *l);
	int (*lock_interruptible)(union pvk_lock *l);
	int (*lock_timeout)(union pvk_lock *l, long timeout);	/* may be NULL */
	int (*trylock)(union pvk_lock *l);
	void (*unlock)(union pvk_lock *l);
	bool detects_deadlock;
};

/*
 * Blocked on a lock of any priority-inheritance type: pv_mutex and rt_mutex
 * queue the same rt_mutex_waiter.
 */
static bool pvk_queued(struct task_struct *t)
{
	return READ_ONCE(t->pi_blocked_on);
}

static void pv_init(union pvk_lock *l) { pv_mutex_init(&l->pv); }
static void pv_lock(union pvk_lock *l) { pv_mutex_lock(&l->pv); }
static int pv_lock_intr(union pvk_lock *l) { return pv_mutex_lock_interruptible(&l->pv); }
static int pv_lock_to(union pvk_lock *l, long t) { return pv_mutex_lock_timeout(&l->pv, t); }
static int pv_trylock(union pvk_lock *l) { return pv_mutex_trylock(&l->pv); }
static void pv_unlock(union pvk_lock *l) { pv_mutex_unlock(&l->pv); }

static void rt_init(union pvk_lock *l) { rt_mutex_init(&l->rt); }
static void rt_lock(union pvk_lock *l) { rt_mutex_lock(&l->rt); }
static int rt_lock_intr(union pvk_lock *l) { return rt_mutex_lock_interruptible(&l->rt); }
static int rt_trylock(union pvk_lock *l) { return rt_mutex_trylock(&l->rt); }
static void rt_unlock(union pvk_lock *l) { rt_mutex_unlock(&l->rt); }

static const struct pvk_ops pvk_pv_ops = {
	.name = "pv_mutex", .init = pv_init, .lock = pv_lock,
	.lock_interruptible = pv_lock_intr, .lock_timeout = pv_lock_to,
	.trylock = pv_trylock, .unlock = pv_unlock, .detects_deadlock = true,
};

/*
 * rt_mutex differs on purpose in two places: it has no timed lock for
 * kernel users, and it never returns -EDEADLK to them: without
 * CONFIG_DEBUG_RT_MUTEXES a cycle simply blocks, with it the task warns and
 * then blocks for good (rt_mutex_handle_deadlock()).
 */
static const struct pvk_ops pvk_rt_ops = {
	.name = "rt_mutex", .init = rt_init, .lock = rt_lock,
	.lock_interruptible = rt_lock_intr, .trylock = rt_trylock,
	.unlock = rt_unlock, .detects_deadlock = false,
};

/*
 * A converted spinlock runs no scenario here: a worker holds its locks
 * while it sleeps for the next command, which a spinlock_t holder must not
 * do, and pv_spinlock reports, as PREEMPT_RT does.  The pv_spinlock suite
 * covers it.
 */

enum pvk_cmd { CMD_LOCK, CMD_LOCK_INTR, CMD_LOCK_TIMEOUT, CMD_UNLOCK,
	       CMD_PV_LOCK, CMD_PV_UNLOCK, CMD_RT_LOCK, CMD_RT_LOCK_INTR,
	       CMD_RT_UNLOCK, CMD_SPIN, CMD_HOLD_RUN, CMD_RELEASE, CMD_EXIT };

struct pvk_ctx;

struct pvk_worker {
	struct pvk_ctx		*ctx;
	struct task_struct	*task;
	const char		*name;
	struct completion	go, done;
	enum pvk_cmd		cmd;
	union pvk_lock		*lock;
	long			timeout;
	int			result;
	bool			busy;
	unsigned long		held;		/* bit i: holds ctx->locks[i] */
	ktime_t			issued, returned;
};

/*
 * One per case, kmalloc'ed rather than a KUnit resource: a worker that a
 * failed case leaves blocked still points into it, so pvk_exit() frees it
 * only once every worker has finished, and leaks it otherwise.
 */
struct pvk_ctx {
	struct kunit		*test;
	const struct pvk_ops	*ops;
	union pvk_lock		locks[PVK_NLOCKS];
	const struct pvk_ops	*kind[PVK_NLOCKS];	/* how locks[i] unlocks */
	struct lock_class_key	keys[PVK_NLOCKS];
	struct pvk_worker	workers[6];
	int			nworkers;
	bool			stop_spin;
	bool			spin_finished;
	struct completion	owner_runs;	/* CMD_HOLD_RUN holds its lock */
	struct task_struct	*signal_target;	/* CMD_HOLD_RUN signals it */
	ktime_t			signalled;
};

/*
 * The owner of CMD_HOLD_RUN: hold the lock and keep running, never
 * sleeping, until the controller says stop or PVK_RUN_LIMIT passed.  If
 * the case named a signal target, send it SIGUSR1 once it is queued on the
 * lock and running, that is, spinning on this owner.
 */
static void pvk_hold_run(struct pvk_worker *w)
{
	struct pvk_ctx *ctx = w->ctx;
	unsigned long until = jiffies + PVK_RUN_LIMIT;
	struct task_struct *t = READ_ONCE(ctx->signal_target);
	ktime_t queued = 0;

	ctx->ops->lock(w->lock);
	complete(&ctx->owner_runs);
	while (!READ_ONCE(ctx->stop_spin) && time_before(jiffies, until)) {
		cpu_relax();
		/* Queued on the lock and on a run queue: spinning. */
		if (!t || !READ_ONCE(t->pi_blocked_on) || !READ_ONCE(t->on_rq))
			continue;
		/*
		 * Leave the waiter 10 ms to get past its checks into the spin.
		 * If it is not there yet, it meets the signal in its checks or
		 * in schedule() and returns at once: a false pass is possible,
		 * a false fail is not.
		 */
		if (!queued)
			queued = ktime_get();
		if (ktime_ms_delta(ktime_get(), queued) < 10)
			continue;
		send_sig(SIGUSR1, t, 1);
		ctx->signalled = ktime_get();
		t = NULL;
	}
	WRITE_ONCE(ctx->spin_finished, !READ_ONCE(ctx->stop_spin));
	ctx->ops->unlock(w->lock);
}

/* Unlock every lock @w holds, each the way its type unlocks. */
static void pvk_release(struct pvk_worker *w)
{
	struct pvk_ctx *ctx = w->ctx;
	int i;

	for (i = 0; i < PVK_NLOCKS; i++)
		if (w->held & BIT(i))
			ctx->kind[i]->unlock(&ctx->locks[i]);
	w->held = 0;
}

static int pvk_worker_fn(void *arg)
{
	struct pvk_worker *w = arg;
	struct pvk_ctx *ctx = w->ctx;
	unsigned long until, bit;

	allow_signal(SIGUSR1);
	for (;;) {
		wait_for_completion(&w->go);
		bit = w->lock ? BIT(w->lock - ctx->locks) : 0;
		w->result = 0;
		switch (w->cmd) {
		case CMD_LOCK:
			ctx->ops->lock(w->lock);
			break;
		case CMD_LOCK_INTR:
			w->result = ctx->ops->lock_interruptible(w->lock);
			flush_signals(current);
			break;
		case CMD_LOCK_TIMEOUT:
			w->result = ctx->ops->lock_timeout(w->lock, w->timeout);
			break;
		case CMD_UNLOCK:
			ctx->ops->unlock(w->lock);
			break;
		case CMD_PV_LOCK:
			pv_mutex_lock(&w->lock->pv);
			break;
		case CMD_PV_UNLOCK:
			pv_mutex_unlock(&w->lock->pv);
			break;
		case CMD_RT_LOCK:
			rt_mutex_lock(&w->lock->rt);
			break;
		case CMD_RT_LOCK_INTR:
			w->result = rt_mutex_lock_interruptible(&w->lock->rt);
			flush_signals(current);
			break;
		case CMD_RT_UNLOCK:
			rt_mutex_unlock(&w->lock->rt);
			break;
		case CMD_SPIN:
			/* A CPU hog that gives up after a bound, never sleeping. */
			until = jiffies + 2 * HZ;
			while (!READ_ONCE(ctx->stop_spin) && time_before(jiffies, until))
				cpu_relax();
			WRITE_ONCE(ctx->spin_finished, true);
			break;
		case CMD_HOLD_RUN:
			pvk_hold_run(w);
			break;
		case CMD_RELEASE:
			pvk_release(w);
			break;
		case CMD_EXIT:
			complete(&w->done);
			return 0;
		}
		w->returned = ktime_get();
		switch (w->cmd) {
		case CMD_LOCK:
		case CMD_LOCK_INTR:
		case CMD_LOCK_TIMEOUT:
		case CMD_PV_LOCK:
		case CMD_RT_LOCK:
		case CMD_RT_LOCK_INTR:
			if (!w->result)
				w->held |= bit;
			break;
		case CMD_UNLOCK:
		case CMD_PV_UNLOCK:
		case CMD_RT_UNLOCK:
			w->held &= ~bit;
			break;
		default:
			break;
		}
		complete(&w->done);
	}
}

static int pvk_set_fifo(struct task_struct *t, int prio)
{
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = SCHED_FIFO,
		.sched_priority = prio,
	};

	return sched_setattr_nocheck(t, &attr);
}

static struct pvk_worker *pvk_worker_on(struct pvk_ctx *ctx, const char *name,
					int prio, int cpu)
{
	struct kunit *test = ctx->test;
	struct pvk_worker *w;

	KUNIT_ASSERT_LT(test, ctx->nworkers, (int)ARRAY_SIZE(ctx->workers));
	w = &ctx->workers[ctx->nworkers];
	w->ctx = ctx;
	w->name = name;
	init_completion(&w->go);
	init_completion(&w->done);
	w->task = kthread_create(pvk_worker_fn, w, "pvk-%s", name);
	KUNIT_ASSERT_FALSE(test, IS_ERR(w->task));
	ctx->nworkers++;
	get_task_struct(w->task);
	kthread_bind(w->task, cpu);
	/* Running, so that pvk_exit() can always stop it. */
	wake_up_process(w->task);
	KUNIT_ASSERT_EQ(test, pvk_set_fifo(w->task, prio), 0);
	return w;
}

static struct pvk_worker *pvk_worker(struct pvk_ctx *ctx, const char *name, int prio)
{
	return pvk_worker_on(ctx, name, prio, 0);
}

/* Hand @w a command without waiting for it. */
static void __pvk_issue(struct pvk_worker *w, enum pvk_cmd cmd, union pvk_lock *lock)
{
	w->cmd = cmd;
	w->lock = lock;
	w->busy = true;
	reinit_completion(&w->done);
	w->issued = ktime_get();
	complete(&w->go);
}

static void pvk_issue(struct pvk_worker *w, enum pvk_cmd cmd, union pvk_lock *lock)
{
	KUNIT_ASSERT_FALSE(w->ctx->test, w->busy);
	__pvk_issue(w, cmd, lock);
}

/* Wait until @w's command finished; return its result. */
static int pvk_wait(struct pvk_worker *w)
{
	KUNIT_ASSERT_TRUE(w->ctx->test, w->busy);
	KUNIT_ASSERT_NE_MSG(w->ctx->test,
			    wait_for_completion_timeout(&w->done, WAIT_LIMIT), 0,
			    "%s did not finish its command", w->name);
	w->busy = false;
	return w->result;
}

static int pvk_do(struct pvk_worker *w, enum pvk_cmd cmd, union pvk_lock *lock)
{
	pvk_issue(w, cmd, lock);
	return pvk_wait(w);
}

/* Wait until one of the busy workers @ws[0..@n) finished; return it. */
static struct pvk_worker *pvk_wait_any(struct pvk_worker **ws, int n)
{
	unsigned long until = jiffies + WAIT_LIMIT;
	int i;

	for (;;) {
		for (i = 0; i < n; i++) {
			if (ws[i]->busy && completion_done(&ws[i]->done)) {
				pvk_wait(ws[i]);
				return ws[i];
			}
		}
		KUNIT_ASSERT_TRUE_MSG(ws[0]->ctx->test, time_before(jiffies, until),
				      "no worker finished its command");
		schedule_timeout_uninterruptible(1);
	}
}

/*
 * Issue a blocking lock command and wait until @w is queued on the lock
 * and has left the runqueue: its chain walk has completed by then.
 */
static void pvk_block(struct pvk_worker *w, enum pvk_cmd cmd, union pvk_lock *lock)
{
	unsigned long until = jiffies + WAIT_LIMIT;

	pvk_issue(w, cmd, lock);
	while (!(pvk_queued(w->task) && !READ_ONCE(w->task->on_rq))) {
		KUNIT_ASSERT_TRUE_MSG(w->ctx->test, time_before(jiffies, until),
				      "%s never blocked", w->name);
		KUNIT_ASSERT_FALSE_MSG(w->ctx->test, completion_done(&w->done),
				       "%s did not block", w->name);
		schedule_timeout_uninterruptible(1);
	}
}

static int pvk_prio(struct pvk_worker *w)
{
	return READ_ONCE(w->task->prio);
}

#define EXPECT_PRIO(w, fifo)						\
do {									\
	struct pvk_worker *__w = (w);					\
	int __fifo = (fifo);						\
									\
	KUNIT_EXPECT_EQ_MSG(test, pvk_prio(__w), FIFO(__fifo),		\
			    "%s runs at kernel prio %d, expected FIFO %d", \
			    __w->name, pvk_prio(__w), __fifo);		\
} while (0)

/*
 * (Re)initialize lock @l of @ctx as a lock of @ops.  Each case gets lockdep
 * classes of its own: one case builds a chain in the order another
 * reverses, which is no deadlock across cases.
 */
static void pvk_lock_init(struct pvk_ctx *ctx, union pvk_lock *l,
			  const struct pvk_ops *ops)
{
	struct lock_class_key *key = &ctx->keys[l - ctx->locks];

	ctx->kind[l - ctx->locks] = ops;
	ops->init(l);
	if (ops == &pvk_rt_ops)
		lockdep_set_class(&l->rt, key);
	else
		lockdep_set_class(&l->pv, key);
}

static int pvk_init(struct kunit *test)
{
	const struct pvk_ops * const *param = test->param_value;
	struct pvk_ctx *ctx;
	int i;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	ctx->test = test;
	ctx->ops = param ? *param : &pvk_pv_ops;
	init_completion(&ctx->owner_runs);
	for (i = 0; i < PVK_NLOCKS; i++) {
		lockdep_register_key(&ctx->keys[i]);
		pvk_lock_init(ctx, &ctx->locks[i], ctx->ops);
	}
	/* The controller outranks every worker, on the workers' CPU. */
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(0)), 0);
	KUNIT_ASSERT_EQ(test, pvk_set_fifo(current, CONTROLLER_PRIO), 0);
	return 0;
}

/* Is @w queued on a lock in a wait that SIGUSR1 ends? */
static bool pvk_interruptible_wait(struct pvk_worker *w)
{
	enum pvk_cmd cmd = READ_ONCE(w->cmd);

	return (cmd == CMD_LOCK_INTR || cmd == CMD_RT_LOCK_INTR) &&
	       READ_ONCE(w->task->pi_blocked_on);
}

/*
 * Bring every worker back to idle with no lock held, also after a failed
 * case: stop the running owners, interrupt the interruptible waits
 * (SIGUSR1), and have each idle worker unlock what it holds, which lets
 * the uninterruptible waiters behind it go on.  Only a worker queued on a
 * lock in an interruptible wait is signalled: one that an rt_mutex or
 * pv_mutex_lock() deadlock left in rt_mutex_handle_deadlock() is not
 * queued, and a pending signal would make it busy-loop there.  Return the
 * number of workers still blocked after WAIT_LIMIT.
 */
static int pvk_quiesce(struct pvk_ctx *ctx)
{
	unsigned long until = jiffies + WAIT_LIMIT;
	int i, left;

	WRITE_ONCE(ctx->stop_spin, true);
	for (;;) {
		left = 0;
		for (i = 0; i < ctx->nworkers; i++) {
			struct pvk_worker *w = &ctx->workers[i];

			if (w->busy && try_wait_for_completion(&w->done))
				w->busy = false;
			if (w->busy) {
				if (pvk_interruptible_wait(w))
					send_sig(SIGUSR1, w->task, 1);
				left++;
			} else if (w->held) {
				__pvk_issue(w, CMD_RELEASE, NULL);
				left++;
			}
		}
		if (!left || time_after(jiffies, until))
			return left;
		schedule_timeout_uninterruptible(1);
	}
}

static void pvk_exit(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	int i, stuck;

	if (!ctx)
		return;
	stuck = pvk_quiesce(ctx);
	if (stuck) {
		/*
		 * A failure already reported left workers blocked on locks in
		 * @ctx, of classes of @ctx->keys: leak both, with the workers.
		 * Their code is this module's, so pin it, and take them off
		 * SCHED_FIFO so that one that ever runs cannot starve the CPU.
		 */
		kunit_err(test, "%d worker(s) still blocked: their context is leaked\n",
			  stuck);
		__module_get(THIS_MODULE);
		for (i = 0; i < ctx->nworkers; i++)
			if (ctx->workers[i].busy)
				sched_set_normal(ctx->workers[i].task, 0);
		return;
	}
	for (i = 0; i < ctx->nworkers; i++) {
		struct pvk_worker *w = &ctx->workers[i];

		__pvk_issue(w, CMD_EXIT, NULL);
		wait_for_completion(&w->done);
		kthread_stop(w->task);
		put_task_struct(w->task);
	}
	for (i = 0; i < PVK_NLOCKS; i++)
		lockdep_unregister_key(&ctx->keys[i]);
	kfree(ctx);
}

/* --- inversion, chains, deboost on unlock -------------------------------- */

/*
 * Inversion: L holds the lock, H blocks on it, a medium-priority CPU hog
 * becomes runnable.  With inheritance L outruns the hog and H gets the
 * lock while the hog still runs; without, H waits for the hog.
 */
static void pvk_inversion_with_hog(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0];
	struct pvk_worker *l = pvk_worker(ctx, "L", 10);
	struct pvk_worker *m = pvk_worker(ctx, "M", 20);
	struct pvk_worker *h = pvk_worker(ctx, "H", 30);

	KUNIT_ASSERT_EQ(test, pvk_do(l, CMD_LOCK, a), 0);
	pvk_block(h, CMD_LOCK, a);
	EXPECT_PRIO(l, 30);
	pvk_issue(m, CMD_SPIN, NULL);
	pvk_issue(l, CMD_UNLOCK, a);
	KUNIT_EXPECT_EQ(test, pvk_wait(h), 0);
	KUNIT_EXPECT_FALSE_MSG(test, READ_ONCE(ctx->spin_finished),
			       "H got the lock only after the hog finished");
	WRITE_ONCE(ctx->stop_spin, true);
	pvk_wait(m);
	pvk_wait(l);
	EXPECT_PRIO(l, 10);
	pvk_do(h, CMD_UNLOCK, a);
}

/* A PI chain of two locks: boosting must reach the owner at its end. */
static void pvk_chain_two_locks(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0], *b = &ctx->locks[1];
	struct pvk_worker *p1 = pvk_worker(ctx, "P1", 10);
	struct pvk_worker *p2 = pvk_worker(ctx, "P2", 20);
	struct pvk_worker *p4 = pvk_worker(ctx, "P4", 40);

	pvk_do(p1, CMD_LOCK, a);
	pvk_do(p2, CMD_LOCK, b);
	pvk_block(p2, CMD_LOCK, a);
	EXPECT_PRIO(p1, 20);
	pvk_block(p4, CMD_LOCK, b);
	EXPECT_PRIO(p2, 40);
	EXPECT_PRIO(p1, 40);		/* boosted through the chain */

	pvk_do(p1, CMD_UNLOCK, a);
	EXPECT_PRIO(p1, 10);
	KUNIT_EXPECT_EQ(test, pvk_wait(p2), 0);	/* P2 now holds A and B */
	EXPECT_PRIO(p2, 40);
	pvk_do(p2, CMD_UNLOCK, b);
	EXPECT_PRIO(p2, 20);
	pvk_wait(p4);
	pvk_do(p4, CMD_UNLOCK, b);
	pvk_do(p2, CMD_UNLOCK, a);
}

/*
 * Deboost on unlock: P1 holds A and B, P2 waits on B, P3 on A.
 * Releasing B must leave P1 at P3's priority, not at its own.
 */
static void pvk_release_keeps_other_donation(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0], *b = &ctx->locks[1];
	struct pvk_worker *p1 = pvk_worker(ctx, "P1", 10);
	struct pvk_worker *p2 = pvk_worker(ctx, "P2", 20);
	struct pvk_worker *p3 = pvk_worker(ctx, "P3", 30);

	pvk_do(p1, CMD_LOCK, a);
	pvk_do(p1, CMD_LOCK, b);
	pvk_block(p2, CMD_LOCK, b);
	EXPECT_PRIO(p1, 20);
	pvk_block(p3, CMD_LOCK, a);
	EXPECT_PRIO(p1, 30);
	pvk_do(p1, CMD_UNLOCK, b);
	EXPECT_PRIO(p1, 30);
	pvk_wait(p2);
	pvk_do(p1, CMD_UNLOCK, a);
	EXPECT_PRIO(p1, 10);
	pvk_wait(p3);
	pvk_do(p2, CMD_UNLOCK, b);
	pvk_do(p3, CMD_UNLOCK, a);
}

/*
 * The three outcomes of a request by P on a mutex held by P1, and the
 * request made while P1 is itself blocked and boosted:
 *  raise and add:	P1 runs at P3's priority.
 *  add only:		P2 (below the boost) waits on B: P1 stays at P3's
 *			priority, and drops to P2's, not its own, on
 *			releasing A.
 *  unchanged:		P0 (below P1) waits on B: after A, P1 is back at
 *			its own priority.
 */
static void pvk_request_outcomes(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0], *b = &ctx->locks[1];
	struct pvk_worker *p1 = pvk_worker(ctx, "P1", 10);
	struct pvk_worker *p2 = pvk_worker(ctx, "P2", 20);
	struct pvk_worker *p3 = pvk_worker(ctx, "P3", 30);
	struct pvk_worker *p0 = pvk_worker(ctx, "P0", 5);

	pvk_do(p1, CMD_LOCK, a);
	pvk_do(p1, CMD_LOCK, b);
	pvk_block(p0, CMD_LOCK, b);	/* unchanged */
	EXPECT_PRIO(p1, 10);
	pvk_block(p3, CMD_LOCK, a);	/* raise and add */
	EXPECT_PRIO(p1, 30);
	pvk_block(p2, CMD_LOCK, b);	/* add only: P2 is queued before P0 */
	EXPECT_PRIO(p1, 30);
	pvk_do(p1, CMD_UNLOCK, a);
	EXPECT_PRIO(p1, 20);
	pvk_wait(p3);
	pvk_do(p1, CMD_UNLOCK, b);
	EXPECT_PRIO(p1, 10);
	pvk_wait(p2);
	pvk_do(p2, CMD_UNLOCK, b);
	pvk_wait(p0);
	pvk_do(p0, CMD_UNLOCK, b);
	pvk_do(p3, CMD_UNLOCK, a);
}

/*
 * P1, boosted by P3 through A, blocks on C (held by X); then P2 requests
 * B: the pair (B, 20) is added without raising P1, and counts once P1
 * gets C and releases A.
 */
static void pvk_request_while_blocked(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0], *b = &ctx->locks[1], *c = &ctx->locks[2];
	struct pvk_worker *p1 = pvk_worker(ctx, "P1", 10);
	struct pvk_worker *p2 = pvk_worker(ctx, "P2", 20);
	struct pvk_worker *p3 = pvk_worker(ctx, "P3", 30);
	struct pvk_worker *x = pvk_worker(ctx, "X", 5);

	pvk_do(x, CMD_LOCK, c);
	pvk_do(p1, CMD_LOCK, a);
	pvk_do(p1, CMD_LOCK, b);
	pvk_block(p3, CMD_LOCK, a);
	pvk_block(p1, CMD_LOCK, c);
	EXPECT_PRIO(x, 30);		/* transitively through P1 */
	pvk_block(p2, CMD_LOCK, b);
	EXPECT_PRIO(p1, 30);
	EXPECT_PRIO(x, 30);
	pvk_do(x, CMD_UNLOCK, c);
	EXPECT_PRIO(x, 5);
	pvk_wait(p1);			/* P1 holds A, B, C */
	pvk_do(p1, CMD_UNLOCK, a);
	EXPECT_PRIO(p1, 20);
	pvk_do(p1, CMD_UNLOCK, b);
	pvk_do(p1, CMD_UNLOCK, c);
	EXPECT_PRIO(p1, 10);
	pvk_wait(p3);
	pvk_wait(p2);
	pvk_do(p3, CMD_UNLOCK, a);
	pvk_do(p2, CMD_UNLOCK, b);
}

/* --- failure classes of earlier implementations --------------------------- */

/* Release in acquisition order (not LIFO) keeps the other lock's boost. */
static void pvk_non_lifo_release(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0], *b = &ctx->locks[1];
	struct pvk_worker *p1 = pvk_worker(ctx, "P1", 10);
	struct pvk_worker *p2 = pvk_worker(ctx, "P2", 20);
	struct pvk_worker *p3 = pvk_worker(ctx, "P3", 30);

	pvk_do(p1, CMD_LOCK, a);
	pvk_do(p1, CMD_LOCK, b);
	pvk_block(p2, CMD_LOCK, a);
	pvk_block(p3, CMD_LOCK, b);
	EXPECT_PRIO(p1, 30);
	pvk_do(p1, CMD_UNLOCK, a);	/* first taken, first released */
	EXPECT_PRIO(p1, 30);
	pvk_do(p1, CMD_UNLOCK, b);
	EXPECT_PRIO(p1, 10);
	pvk_wait(p2);
	pvk_wait(p3);
	pvk_do(p2, CMD_UNLOCK, a);
	pvk_do(p3, CMD_UNLOCK, b);
}

/*
 * A lock taken while boosted must not make the boost the new baseline
 * (the 2004 "initial priority" rule): after releasing everything P1 is
 * back at its own priority, and in between at the remaining donor's.
 */
static void pvk_boost_is_not_baseline(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0], *b = &ctx->locks[1];
	struct pvk_worker *p1 = pvk_worker(ctx, "P1", 10);
	struct pvk_worker *p2 = pvk_worker(ctx, "P2", 20);
	struct pvk_worker *p3 = pvk_worker(ctx, "P3", 30);

	pvk_do(p1, CMD_LOCK, a);
	pvk_block(p3, CMD_LOCK, a);
	pvk_do(p1, CMD_LOCK, b);	/* taken at FIFO 30 */
	pvk_block(p2, CMD_LOCK, b);
	pvk_do(p1, CMD_UNLOCK, a);
	EXPECT_PRIO(p1, 20);
	pvk_do(p1, CMD_UNLOCK, b);
	EXPECT_PRIO(p1, 10);
	pvk_wait(p3);
	pvk_wait(p2);
	pvk_do(p3, CMD_UNLOCK, a);
	pvk_do(p2, CMD_UNLOCK, b);
}

/* A waiter that times out withdraws its donation. */
static void pvk_timeout_deboosts(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0];
	struct pvk_worker *p1, *p3;

	if (!ctx->ops->lock_timeout)
		kunit_skip(test, "%s has no timed lock for kernel users", ctx->ops->name);
	p1 = pvk_worker(ctx, "P1", 10);
	p3 = pvk_worker(ctx, "P3", 30);
	pvk_do(p1, CMD_LOCK, a);
	p3->timeout = HZ / 10;
	pvk_block(p3, CMD_LOCK_TIMEOUT, a);
	EXPECT_PRIO(p1, 30);
	KUNIT_EXPECT_EQ(test, pvk_wait(p3), -ETIMEDOUT);
	EXPECT_PRIO(p1, 10);
	KUNIT_EXPECT_FALSE(test, pvk_queued(p3->task));
	pvk_do(p1, CMD_UNLOCK, a);
}

/* A waiter interrupted by a signal withdraws its donation. */
static void pvk_signal_deboosts(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0];
	struct pvk_worker *p1 = pvk_worker(ctx, "P1", 10);
	struct pvk_worker *p3 = pvk_worker(ctx, "P3", 30);

	pvk_do(p1, CMD_LOCK, a);
	pvk_block(p3, CMD_LOCK_INTR, a);
	EXPECT_PRIO(p1, 30);
	send_sig(SIGUSR1, p3->task, 1);
	KUNIT_EXPECT_EQ(test, pvk_wait(p3), -EINTR);
	EXPECT_PRIO(p1, 10);
	pvk_do(p1, CMD_UNLOCK, a);
}

/*
 * An owner that keeps running on another CPU, holding @l, for up to
 * PVK_RUN_LIMIT: a top waiter of at least its priority spins on it rather
 * than sleeping.
 */
static struct pvk_worker *pvk_running_owner(struct kunit *test, union pvk_lock *l)
{
	struct pvk_ctx *ctx = test->priv;
	struct pvk_worker *o;

	o = pvk_worker_on(ctx, "O", 10, cpumask_any_but(cpu_online_mask, 0));
	pvk_issue(o, CMD_HOLD_RUN, l);
	KUNIT_ASSERT_NE_MSG(test, wait_for_completion_timeout(&ctx->owner_runs,
							      WAIT_LIMIT), 0,
			    "the owner never took the lock");
	return o;
}

/*
 * A timed lock returns at its timeout also while it spins on an owner that
 * runs on another CPU: 100 ms, not the 950 ms after which RT throttling
 * takes a CPU from the waiter or the owner.  The waiter is at FIFO 80,
 * above the threaded interrupt handlers at their default priority (50,
 * CONFIG_IKT_DEFAULT_PRIO), so none of those preempts it unless ikt.prio=
 * or /proc/irq/<N>/thread_priority put one higher.
 */
static void pvk_timeout_running_owner(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0];
	struct pvk_worker *o, *w;
	s64 ms;

	if (num_online_cpus() < 2)
		kunit_skip(test, "the owner needs a CPU of its own: one CPU online");
	w = pvk_worker(ctx, "W", 80);
	o = pvk_running_owner(test, a);
	w->timeout = msecs_to_jiffies(100);
	KUNIT_EXPECT_EQ(test, pvk_do(w, CMD_LOCK_TIMEOUT, a), -ETIMEDOUT);
	ms = ktime_ms_delta(w->returned, w->issued);
	KUNIT_EXPECT_FALSE_MSG(test, READ_ONCE(ctx->spin_finished),
			       "the owner stopped running before the waiter returned");
	WRITE_ONCE(ctx->stop_spin, true);
	pvk_wait(o);
	kunit_info(test, "a 100 ms timed lock returned after %lld ms\n", ms);
	KUNIT_EXPECT_LT_MSG(test, ms, PVK_LATE_MS,
			    "a 100 ms timed lock returned after %lld ms", ms);
}

/*
 * The same for a signal: an interruptible lock spinning on a running owner
 * returns -EINTR soon after the signal, not when RT throttling stops the
 * spin.  The owner sends the signal once the waiter spins.
 */
static void pvk_signal_running_owner(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0];
	struct pvk_worker *o, *w;
	s64 ms;

	if (num_online_cpus() < 2)
		kunit_skip(test, "the owner needs a CPU of its own: one CPU online");
	w = pvk_worker(ctx, "W", 80);
	ctx->signal_target = w->task;
	o = pvk_running_owner(test, a);
	KUNIT_EXPECT_EQ(test, pvk_do(w, CMD_LOCK_INTR, a), -EINTR);
	KUNIT_EXPECT_FALSE_MSG(test, READ_ONCE(ctx->spin_finished),
			       "the owner stopped running before the waiter returned");
	WRITE_ONCE(ctx->stop_spin, true);
	pvk_wait(o);
	KUNIT_ASSERT_NE_MSG(test, ctx->signalled, 0, "the owner sent no signal");
	ms = ktime_ms_delta(w->returned, ctx->signalled);
	kunit_info(test, "%s: -EINTR %lld ms after the signal\n", ctx->ops->name, ms);
	KUNIT_EXPECT_LT_MSG(test, ms, PVK_LATE_MS,
			    "an interruptible lock returned %lld ms after the signal", ms);
}

/*
 * sched_setscheduler() on a boosted owner: it runs at the best of its new
 * base and the donation, which is kept.  A waiter whose priority changes
 * carries the change to the owner, both ways.
 */
static void pvk_setscheduler(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0];
	struct pvk_worker *p1 = pvk_worker(ctx, "P1", 10);
	struct pvk_worker *p3 = pvk_worker(ctx, "P3", 30);

	pvk_do(p1, CMD_LOCK, a);
	pvk_block(p3, CMD_LOCK, a);
	EXPECT_PRIO(p1, 30);
	KUNIT_ASSERT_EQ(test, pvk_set_fifo(p1->task, 40), 0);
	EXPECT_PRIO(p1, 40);
	KUNIT_ASSERT_EQ(test, pvk_set_fifo(p1->task, 5), 0);
	EXPECT_PRIO(p1, 30);		/* donation kept */
	KUNIT_ASSERT_EQ(test, pvk_set_fifo(p3->task, 35), 0);
	EXPECT_PRIO(p1, 35);		/* waiter raised */
	KUNIT_ASSERT_EQ(test, pvk_set_fifo(p3->task, 15), 0);
	EXPECT_PRIO(p1, 15);		/* waiter lowered */
	pvk_do(p1, CMD_UNLOCK, a);
	EXPECT_PRIO(p1, 5);
	pvk_wait(p3);
	pvk_do(p3, CMD_UNLOCK, a);
}

/*
 * A 4-deep chain P4 -> C(P3) -> B(P2) -> A(P1) whose middle waiter P3
 * leaves (signal): P3 keeps P4's donation through C, P2 and P1 lose it.
 */
static void pvk_chain_middle_leaves(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0], *b = &ctx->locks[1], *c = &ctx->locks[2];
	struct pvk_worker *p1 = pvk_worker(ctx, "P1", 10);
	struct pvk_worker *p2 = pvk_worker(ctx, "P2", 20);
	struct pvk_worker *p3 = pvk_worker(ctx, "P3", 30);
	struct pvk_worker *p4 = pvk_worker(ctx, "P4", 40);

	pvk_do(p1, CMD_LOCK, a);
	pvk_do(p2, CMD_LOCK, b);
	pvk_do(p3, CMD_LOCK, c);
	pvk_block(p2, CMD_LOCK, a);
	pvk_block(p3, CMD_LOCK_INTR, b);
	pvk_block(p4, CMD_LOCK, c);
	EXPECT_PRIO(p3, 40);
	EXPECT_PRIO(p2, 40);
	EXPECT_PRIO(p1, 40);
	send_sig(SIGUSR1, p3->task, 1);
	KUNIT_EXPECT_EQ(test, pvk_wait(p3), -EINTR);
	EXPECT_PRIO(p3, 40);
	EXPECT_PRIO(p2, 20);
	EXPECT_PRIO(p1, 20);
	pvk_do(p3, CMD_UNLOCK, c);
	pvk_wait(p4);
	pvk_do(p1, CMD_UNLOCK, a);
	pvk_wait(p2);
	pvk_do(p2, CMD_UNLOCK, a);
	pvk_do(p2, CMD_UNLOCK, b);
	pvk_do(p4, CMD_UNLOCK, c);
}

/*
 * lockdep sees an intended deadlock too: it reports the first one of a
 * boot and then switches itself off.  Bracket its report when it will come.
 */
static bool pvk_lockdep_expect(struct kunit *test, const char *what)
{
	if (!IS_ENABLED(CONFIG_PROVE_LOCKING) || !debug_locks)
		return false;
	kunit_info(test, "expect a warning: %s\n", what);
	return true;
}

/* AA: locking a mutex one holds is reported, nothing changes. */
static void pvk_deadlock_aa(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0];
	struct pvk_worker *p1;
	bool lockdep;

	if (!ctx->ops->detects_deadlock)
		kunit_skip(test, "%s does not return -EDEADLK", ctx->ops->name);
	p1 = pvk_worker(ctx, "P1", 10);
	pvk_do(p1, CMD_LOCK, a);
	lockdep = pvk_lockdep_expect(test, "lockdep reports the recursive locking");
	KUNIT_EXPECT_EQ(test, pvk_do(p1, CMD_LOCK_INTR, a), -EDEADLK);
	if (lockdep)
		kunit_info(test, "end of expected warning\n");
	EXPECT_PRIO(p1, 10);
	KUNIT_EXPECT_FALSE(test, pvk_queued(p1->task));
	pvk_do(p1, CMD_UNLOCK, a);
}

/*
 * ABBA: P1 holds A and waits on B, P2 holds B and asks for A.  P2 gets
 * -EDEADLK with its donation withdrawn; P1 gets B once P2 lets go.
 */
static void pvk_deadlock_abba(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0], *b = &ctx->locks[1];
	struct pvk_worker *p1, *p2;
	bool lockdep;

	if (!ctx->ops->detects_deadlock)
		kunit_skip(test, "%s does not return -EDEADLK", ctx->ops->name);
	p1 = pvk_worker(ctx, "P1", 10);
	p2 = pvk_worker(ctx, "P2", 20);
	pvk_do(p1, CMD_LOCK, a);
	pvk_do(p2, CMD_LOCK, b);
	pvk_block(p1, CMD_LOCK, b);
	EXPECT_PRIO(p2, 20);
	lockdep = pvk_lockdep_expect(test, "lockdep reports the circular dependency");
	KUNIT_EXPECT_EQ(test, pvk_do(p2, CMD_LOCK_INTR, a), -EDEADLK);
	if (lockdep)
		kunit_info(test, "end of expected warning\n");
	EXPECT_PRIO(p1, 10);		/* P2's donation withdrawn */
	KUNIT_EXPECT_FALSE(test, pvk_queued(p2->task));
	pvk_do(p2, CMD_UNLOCK, b);
	KUNIT_EXPECT_EQ(test, pvk_wait(p1), 0);
	pvk_do(p1, CMD_UNLOCK, b);
	pvk_do(p1, CMD_UNLOCK, a);
}

/*
 * Hand-off, part 1: waiters of equal priority get the lock in the order
 * they queued (FIFO), each when its predecessor unlocks.
 */
static void pvk_handoff_fifo(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0];
	struct pvk_worker *o = pvk_worker(ctx, "O", 10);
	struct pvk_worker *w[3] = {
		pvk_worker(ctx, "W1", 20),
		pvk_worker(ctx, "W2", 20),
		pvk_worker(ctx, "W3", 20),
	};
	struct pvk_worker *next;
	int i;

	pvk_do(o, CMD_LOCK, a);
	for (i = 0; i < 3; i++)
		pvk_block(w[i], CMD_LOCK, a);
	pvk_do(o, CMD_UNLOCK, a);
	for (i = 0; i < 3; i++) {
		next = pvk_wait_any(w, 3);
		KUNIT_EXPECT_PTR_EQ_MSG(test, next, w[i],
					"%s got the lock in turn %d, expected %s",
					next->name, i + 1, w[i]->name);
		pvk_do(next, CMD_UNLOCK, a);
	}
}

/*
 * Hand-off, part 2: the unlock leaves the lock free for its top waiter W,
 * which has not run yet.  A task of W's priority may not take it (trylock
 * fails), a task of strictly higher priority may (trylock steals it); W
 * then waits again and gets it at the next unlock.  The controller is that
 * task, lowered to W's priority for the first attempt: lowered, it stays
 * at the head of its new run queue, so W does not run in between.
 */
static void pvk_handoff_steal(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	const struct pvk_ops *ops = ctx->ops;
	union pvk_lock *a = &ctx->locks[0];
	struct pvk_worker *w = pvk_worker(ctx, "W", 20);
	int equal, higher = 0;

	ops->lock(a);
	pvk_block(w, CMD_LOCK, a);
	ops->unlock(a);			/* W is woken but cannot run */
	KUNIT_ASSERT_EQ(test, pvk_set_fifo(current, 20), 0);
	equal = ops->trylock(a);
	KUNIT_ASSERT_EQ(test, pvk_set_fifo(current, CONTROLLER_PRIO), 0);
	KUNIT_EXPECT_FALSE_MSG(test, equal,
			       "a task of the waiter's priority took the lock handed to it");
	if (!equal) {
		higher = ops->trylock(a);
		KUNIT_EXPECT_TRUE_MSG(test, higher,
				      "a task of higher priority could not steal the lock");
	}
	if (equal || higher)
		ops->unlock(a);
	KUNIT_EXPECT_EQ(test, pvk_wait(w), 0);
	pvk_do(w, CMD_UNLOCK, a);
}

/* --- pv_mutex only --------------------------------------------------------- */

/*
 * Coexistence with rt_mutex: P1 holds pv A and rt R with a waiter on each.
 * P1 runs at the best donor of both; releasing either keeps the other's
 * boost, whichever type is released first.
 */
static void pvk_rt_mutex_coexistence(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0], *r = &ctx->locks[1];
	struct pvk_worker *p1 = pvk_worker(ctx, "P1", 10);
	struct pvk_worker *p2 = pvk_worker(ctx, "P2", 20);
	struct pvk_worker *p3 = pvk_worker(ctx, "P3", 30);

	pvk_lock_init(ctx, r, &pvk_rt_ops);
	/* pv donor on top, pv released first */
	pvk_do(p1, CMD_PV_LOCK, a);
	pvk_do(p1, CMD_RT_LOCK, r);
	pvk_block(p2, CMD_RT_LOCK, r);
	EXPECT_PRIO(p1, 20);
	pvk_block(p3, CMD_PV_LOCK, a);
	EXPECT_PRIO(p1, 30);
	pvk_do(p1, CMD_PV_UNLOCK, a);
	EXPECT_PRIO(p1, 20);		/* rt_mutex boost kept */
	pvk_do(p1, CMD_RT_UNLOCK, r);
	EXPECT_PRIO(p1, 10);
	pvk_wait(p3);
	pvk_wait(p2);
	pvk_do(p3, CMD_PV_UNLOCK, a);
	pvk_do(p2, CMD_RT_UNLOCK, r);

	/* rt donor on top, rt released first */
	pvk_do(p1, CMD_PV_LOCK, a);
	pvk_do(p1, CMD_RT_LOCK, r);
	pvk_block(p2, CMD_PV_LOCK, a);
	pvk_block(p3, CMD_RT_LOCK, r);
	EXPECT_PRIO(p1, 30);
	pvk_do(p1, CMD_RT_UNLOCK, r);
	EXPECT_PRIO(p1, 20);		/* pv_mutex boost kept */
	pvk_do(p1, CMD_PV_UNLOCK, a);
	EXPECT_PRIO(p1, 10);
	pvk_wait(p3);
	pvk_wait(p2);
	pvk_do(p3, CMD_RT_UNLOCK, r);
	pvk_do(p2, CMD_PV_UNLOCK, a);
}

/*
 * A chain that leaves pv_mutex for rt_mutex: X holds rt R, P1 holds pv A
 * and blocks on R, then P3 blocks on A.  P3's priority reaches X.
 */
static void pvk_chain_pv_to_rt(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0], *r = &ctx->locks[1];
	struct pvk_worker *x = pvk_worker(ctx, "X", 5);
	struct pvk_worker *p1 = pvk_worker(ctx, "P1", 10);
	struct pvk_worker *p3 = pvk_worker(ctx, "P3", 30);

	pvk_lock_init(ctx, r, &pvk_rt_ops);
	pvk_do(x, CMD_RT_LOCK, r);
	pvk_do(p1, CMD_PV_LOCK, a);
	pvk_block(p1, CMD_RT_LOCK, r);
	EXPECT_PRIO(x, 10);
	pvk_block(p3, CMD_PV_LOCK, a);
	EXPECT_PRIO(p1, 30);
	EXPECT_PRIO(x, 30);
	pvk_do(x, CMD_RT_UNLOCK, r);
	EXPECT_PRIO(x, 5);
	pvk_wait(p1);
	pvk_do(p1, CMD_RT_UNLOCK, r);
	pvk_do(p1, CMD_PV_UNLOCK, a);
	EXPECT_PRIO(p1, 10);
	pvk_wait(p3);
	pvk_do(p3, CMD_PV_UNLOCK, a);
}

/* SCHED_DEADLINE waiters donate, as with rt_mutex. */
static void pvk_deadline_donor(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0];
	struct pvk_worker *p1 = pvk_worker(ctx, "P1", 10);
	struct pvk_worker *d = pvk_worker(ctx, "D", 1);
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = SCHED_DEADLINE,
		.sched_runtime = 2 * NSEC_PER_MSEC,
		.sched_deadline = 20 * NSEC_PER_MSEC,
		.sched_period = 20 * NSEC_PER_MSEC,
	};

	KUNIT_ASSERT_EQ(test, sched_setattr_nocheck(d->task, &attr), 0);
	pvk_do(p1, CMD_LOCK, a);
	pvk_block(d, CMD_LOCK, a);
	KUNIT_EXPECT_EQ(test, pvk_prio(p1), MAX_DL_PRIO - 1);
	pvk_do(p1, CMD_UNLOCK, a);
	EXPECT_PRIO(p1, 10);
	pvk_wait(d);
	pvk_do(d, CMD_UNLOCK, a);
}

/*
 * One engine, both directions.  An rt_mutex stands in for a PI futex here:
 * futex PI queues on the rt_mutex_base of its pi_state with the same
 * rt_mutex_waiter (rt_mutex_start_proxy_lock()), so the chain is the same.
 *
 * rt -> pv: U holds pv B; T holds rt F and blocks on B; X blocks on F.
 * X's priority must reach U through T.
 */
static void pvk_chain_rt_to_pv(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *b = &ctx->locks[0], *f = &ctx->locks[1];
	struct pvk_worker *u = pvk_worker(ctx, "U", 10);
	struct pvk_worker *t = pvk_worker(ctx, "T", 20);
	struct pvk_worker *x = pvk_worker(ctx, "X", 40);

	pvk_lock_init(ctx, f, &pvk_rt_ops);
	pvk_do(u, CMD_PV_LOCK, b);
	pvk_do(t, CMD_RT_LOCK, f);
	pvk_block(t, CMD_PV_LOCK, b);
	EXPECT_PRIO(u, 20);
	pvk_block(x, CMD_RT_LOCK, f);
	EXPECT_PRIO(t, 40);
	EXPECT_PRIO(u, 40);		/* through the rt_mutex, into the pv_mutex */
	pvk_do(u, CMD_PV_UNLOCK, b);
	EXPECT_PRIO(u, 10);
	pvk_wait(t);			/* T holds F and B */
	EXPECT_PRIO(t, 40);
	pvk_do(t, CMD_PV_UNLOCK, b);
	pvk_do(t, CMD_RT_UNLOCK, f);
	EXPECT_PRIO(t, 20);
	pvk_wait(x);
	pvk_do(x, CMD_RT_UNLOCK, f);
}

/*
 * rt -> pv, deboost: X blocks on rt R (owner T), T blocks on pv B (owner
 * U), then X leaves (signal).  T and U must both drop back, at once.
 */
static void pvk_chain_rt_to_pv_deboost(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *b = &ctx->locks[0], *r = &ctx->locks[1];
	struct pvk_worker *u = pvk_worker(ctx, "U", 10);
	struct pvk_worker *t = pvk_worker(ctx, "T", 20);
	struct pvk_worker *x = pvk_worker(ctx, "X", 40);

	pvk_lock_init(ctx, r, &pvk_rt_ops);
	pvk_do(t, CMD_RT_LOCK, r);
	pvk_do(u, CMD_PV_LOCK, b);
	pvk_block(x, CMD_RT_LOCK_INTR, r);
	EXPECT_PRIO(t, 40);
	pvk_block(t, CMD_PV_LOCK, b);
	EXPECT_PRIO(u, 40);
	send_sig(SIGUSR1, x->task, 1);
	KUNIT_EXPECT_EQ(test, pvk_wait(x), -EINTR);
	EXPECT_PRIO(t, 20);
	EXPECT_PRIO(u, 20);		/* no stale boost left in B */
	pvk_do(u, CMD_PV_UNLOCK, b);
	EXPECT_PRIO(u, 10);
	pvk_wait(t);
	pvk_do(t, CMD_PV_UNLOCK, b);
	pvk_do(t, CMD_RT_UNLOCK, r);
}

/*
 * A 4-deep chain of alternating types, P5 -pv A-> P4 -rt B-> P3 -pv C-> P2
 * -rt D-> P1, whose middle waiter P3 leaves (signal): P3 keeps P5's
 * donation through B, P2 and P1 lose it.
 */
static void pvk_chain_mixed_middle_leaves(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0], *b = &ctx->locks[1];
	union pvk_lock *c = &ctx->locks[2], *d = &ctx->locks[3];
	struct pvk_worker *p1 = pvk_worker(ctx, "P1", 10);
	struct pvk_worker *p2 = pvk_worker(ctx, "P2", 20);
	struct pvk_worker *p3 = pvk_worker(ctx, "P3", 30);
	struct pvk_worker *p4 = pvk_worker(ctx, "P4", 40);
	struct pvk_worker *p5 = pvk_worker(ctx, "P5", 50);

	pvk_lock_init(ctx, b, &pvk_rt_ops);
	pvk_lock_init(ctx, d, &pvk_rt_ops);
	pvk_do(p1, CMD_RT_LOCK, d);
	pvk_do(p2, CMD_PV_LOCK, c);
	pvk_do(p3, CMD_RT_LOCK, b);
	pvk_do(p4, CMD_PV_LOCK, a);
	pvk_block(p2, CMD_RT_LOCK, d);
	pvk_block(p3, CMD_LOCK_INTR, c);
	pvk_block(p4, CMD_RT_LOCK, b);
	pvk_block(p5, CMD_PV_LOCK, a);
	EXPECT_PRIO(p4, 50);
	EXPECT_PRIO(p3, 50);
	EXPECT_PRIO(p2, 50);
	EXPECT_PRIO(p1, 50);
	send_sig(SIGUSR1, p3->task, 1);
	KUNIT_EXPECT_EQ(test, pvk_wait(p3), -EINTR);
	EXPECT_PRIO(p4, 50);
	EXPECT_PRIO(p3, 50);
	EXPECT_PRIO(p2, 20);
	EXPECT_PRIO(p1, 20);
	pvk_do(p3, CMD_RT_UNLOCK, b);
	EXPECT_PRIO(p3, 30);
	pvk_wait(p4);
	pvk_do(p4, CMD_RT_UNLOCK, b);
	pvk_do(p4, CMD_PV_UNLOCK, a);
	pvk_wait(p5);
	pvk_do(p5, CMD_PV_UNLOCK, a);
	pvk_do(p1, CMD_RT_UNLOCK, d);
	EXPECT_PRIO(p1, 10);
	pvk_wait(p2);
	pvk_do(p2, CMD_RT_UNLOCK, d);
	pvk_do(p2, CMD_PV_UNLOCK, c);
}

/*
 * Timeouts never wrap.  The expiry the timed lock arms, for timeouts whose
 * microseconds do not fit 32 bits (71.6 minutes and more), and "never" for
 * MAX_SCHEDULE_TIMEOUT.  Then a real wait with the first timeout that
 * wraps in jiffies_to_usecs(): it must wait, not expire within a jiffy.
 */
static void pvk_timeout_no_wrap(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0];
	long wrap = DIV_ROUND_UP_ULL(1ULL << 32, jiffies_to_usecs(1));
	struct pvk_worker *p1, *p3;

	KUNIT_EXPECT_EQ(test, pv_mutex_timeout_expiry(HZ), (ktime_t)NSEC_PER_SEC);
	KUNIT_EXPECT_EQ(test, pv_mutex_timeout_expiry(72L * 60 * HZ),
			(ktime_t)72 * 60 * NSEC_PER_SEC);
	KUNIT_EXPECT_GE(test, pv_mutex_timeout_expiry(wrap),
			(ktime_t)(1ULL << 32) * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, pv_mutex_timeout_expiry(MAX_SCHEDULE_TIMEOUT),
			KTIME_MAX);
	if (BITS_PER_LONG == 64) {
		/* Beyond ktime_t (292 years): never, not a wrapped expiry. */
		KUNIT_EXPECT_EQ(test, pv_mutex_timeout_expiry(MAX_SCHEDULE_TIMEOUT - 1),
				KTIME_MAX);
	}

	p1 = pvk_worker(ctx, "P1", 10);
	p3 = pvk_worker(ctx, "P3", 30);
	pvk_do(p1, CMD_LOCK, a);
	p3->timeout = wrap;
	pvk_block(p3, CMD_LOCK_TIMEOUT, a);
	EXPECT_PRIO(p1, 30);
	pvk_do(p1, CMD_UNLOCK, a);
	KUNIT_EXPECT_EQ(test, pvk_wait(p3), 0);
	pvk_do(p3, CMD_UNLOCK, a);
}

/*
 * A cycle that neither the lock asked for nor its caller is part of, closed
 * by rt_mutex_lock_interruptible(), which walks the chain only as far as
 * priorities change and so reports nothing: T1 holds rt A and waits on pv
 * B, T2 holds B and waits on A.  T4 holds pv C and waits on A behind T2.
 * Each waiter is interruptible, so the case can break the cycle again.
 * Locks A, B, C are ctx->locks[0..2]; T4 is returned.
 */
static struct pvk_worker *pvk_outer_cycle(struct kunit *test, struct pvk_worker **t1,
					  struct pvk_worker **t2)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0], *b = &ctx->locks[1], *c = &ctx->locks[2];
	struct pvk_worker *t4;
	bool lockdep;

	if (IS_ENABLED(CONFIG_DEBUG_RT_MUTEXES))
		kunit_skip(test, "with CONFIG_DEBUG_RT_MUTEXES a closed cycle sleeps for good");
	*t1 = pvk_worker(ctx, "T1", 20);
	*t2 = pvk_worker(ctx, "T2", 10);
	t4 = pvk_worker(ctx, "T4", 5);
	pvk_lock_init(ctx, a, &pvk_rt_ops);
	pvk_do(*t1, CMD_RT_LOCK, a);
	pvk_do(*t2, CMD_PV_LOCK, b);
	pvk_do(t4, CMD_PV_LOCK, c);
	pvk_block(*t1, CMD_LOCK_INTR, b);
	EXPECT_PRIO(*t2, 20);
	/* T2 runs at T1's priority: its walk changes none and stops at T1. */
	lockdep = pvk_lockdep_expect(test, "lockdep reports the circular dependency");
	pvk_block(*t2, CMD_RT_LOCK_INTR, a);
	if (lockdep)
		kunit_info(test, "end of expected warning\n");
	pvk_block(t4, CMD_RT_LOCK_INTR, a);
	return t4;
}

/* Break the cycle of pvk_outer_cycle() (signal T2) and unwind it. */
static void pvk_outer_cycle_unwind(struct kunit *test, struct pvk_worker *t1,
				   struct pvk_worker *t2, struct pvk_worker *t4)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0], *b = &ctx->locks[1], *c = &ctx->locks[2];

	send_sig(SIGUSR1, t2->task, 1);
	KUNIT_EXPECT_EQ(test, pvk_wait(t2), -EINTR);
	EXPECT_PRIO(t1, 20);		/* only T4 (5) waits on A */
	pvk_do(t2, CMD_PV_UNLOCK, b);
	KUNIT_EXPECT_EQ(test, pvk_wait(t1), 0);
	pvk_do(t1, CMD_PV_UNLOCK, b);
	pvk_do(t1, CMD_RT_UNLOCK, a);
	KUNIT_EXPECT_EQ(test, pvk_wait(t4), 0);
	pvk_do(t4, CMD_RT_UNLOCK, a);
	pvk_do(t4, CMD_PV_UNLOCK, c);
}

/*
 * A chain walk longer than kernel.max_lock_depth steps counts as a
 * deadlock.  T3 asks for C: the full walk goes to T4, then round the cycle
 * of pvk_outer_cycle() without meeting C or T3 again, until it has made
 * max_lock_depth steps, whatever that limit is.  On the way it raised T4,
 * T1 and T2 to 30 and requeued T2's waiter on A at 30.  T3's waiter goes,
 * and the walk back lowers T4 and requeues its waiter on A at 5, but stops
 * there: T2's waiter (30) is A's top waiter now, so T1 and T2 keep 30,
 * which nobody donates, until the cycle is broken.
 */
static void pvk_chain_too_deep(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *c = &ctx->locks[2];
	struct pvk_worker *t1, *t2, *t3, *t4;

	t4 = pvk_outer_cycle(test, &t1, &t2);
	t3 = pvk_worker(ctx, "T3", 30);
	KUNIT_EXPECT_EQ(test, pvk_do(t3, CMD_LOCK_INTR, c), -EDEADLK);
	KUNIT_EXPECT_FALSE(test, pvk_queued(t3->task));
	KUNIT_EXPECT_PTR_EQ(test, pv_mutex_owner(&c->pv), t4->task);
	EXPECT_PRIO(t4, 5);		/* T3's donation withdrawn ... */
	EXPECT_PRIO(t1, 30);		/* ... but not inside the cycle */
	EXPECT_PRIO(t2, 30);
	pvk_outer_cycle_unwind(test, t1, t2, t4);
}

/*
 * pv_mutex_lock() cannot return -EDEADLK, so a full chain walk brings it
 * nothing: like rt_mutex_lock(), it walks only as far as priorities change.
 * T5, below T4, asks for C: its walk stops at T4, and it gets C once the
 * cycle beyond T4 is broken.  A full walk would run round the cycle into
 * max_lock_depth and leave T5 asleep for good.
 */
static void pvk_void_lock_short_walk(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *c = &ctx->locks[2];
	struct pvk_worker *t1, *t2, *t4, *t5;

	t4 = pvk_outer_cycle(test, &t1, &t2);
	t5 = pvk_worker(ctx, "T5", 3);
	pvk_block(t5, CMD_PV_LOCK, c);
	EXPECT_PRIO(t4, 5);
	pvk_outer_cycle_unwind(test, t1, t2, t4);
	KUNIT_EXPECT_EQ(test, pvk_wait(t5), 0);
	pvk_do(t5, CMD_PV_UNLOCK, c);
}

/*
 * The debugfs view (/sys/kernel/debug/pv_mutex/pi_chains) across types:
 * P3 -pv A-> P2 -rt R-> P1.  It shows S(P1) and S(P2) with their pairs, and
 * the chain from P3 to the final owner P1.
 */
static void pvk_pi_chains_view(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0], *r = &ctx->locks[1];
	struct rt_mutex_base *la = &a->pv.rtmutex, *lr = &r->rt.rtmutex;
	struct pvk_worker *p1, *p2, *p3;
	struct seq_file m = { .size = 16384 };
	char want[160];

	if (!IS_ENABLED(CONFIG_DEBUG_FS))
		kunit_skip(test, "the view is in debugfs: CONFIG_DEBUG_FS=n");
	m.buf = kunit_kzalloc(test, m.size + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m.buf);
	p1 = pvk_worker(ctx, "P1", 10);
	p2 = pvk_worker(ctx, "P2", 20);
	p3 = pvk_worker(ctx, "P3", 30);
	pvk_lock_init(ctx, r, &pvk_rt_ops);
	pvk_do(p1, CMD_RT_LOCK, r);
	pvk_do(p2, CMD_PV_LOCK, a);
	pvk_block(p2, CMD_RT_LOCK, r);
	pvk_block(p3, CMD_PV_LOCK, a);

	pv_mutex_pi_chains_show(&m, NULL);
	KUNIT_ASSERT_LT_MSG(test, m.count, m.size, "the view overflowed 16 KiB");
	m.buf[m.count] = '\0';
	snprintf(want, sizeof(want), "%d/%d/%d pvk-P1: S(P) = { [%p] %d/%d }\n",
		 task_pid_nr(p1->task), FIFO(30), FIFO(10), lr,
		 task_pid_nr(p2->task), FIFO(30));
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(m.buf, want), "no line \"%s\" in:\n%s",
				  want, m.buf);
	snprintf(want, sizeof(want), "%d/%d/%d pvk-P2: S(P) = { [%p] %d/%d }\n",
		 task_pid_nr(p2->task), FIFO(30), FIFO(20), la,
		 task_pid_nr(p3->task), FIFO(30));
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(m.buf, want), "no line \"%s\" in:\n%s",
				  want, m.buf);
	snprintf(want, sizeof(want), "  blocked: %d/%d -> [%p] -> %d/%d -> [%p] -> %d/%d\n",
		 task_pid_nr(p3->task), FIFO(30), la, task_pid_nr(p2->task),
		 FIFO(30), lr, task_pid_nr(p1->task), FIFO(30));
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(m.buf, want), "no line \"%s\" in:\n%s",
				  want, m.buf);

	pvk_do(p1, CMD_RT_UNLOCK, r);
	pvk_wait(p2);
	pvk_do(p2, CMD_RT_UNLOCK, r);
	pvk_do(p2, CMD_PV_UNLOCK, a);
	pvk_wait(p3);
	pvk_do(p3, CMD_PV_UNLOCK, a);
}

struct pvk_softirq {
	struct timer_list	timer;
	struct pv_mutex		*lock;
	int			ret;
	struct completion	done;
};

static void pvk_softirq_trylock_fn(struct timer_list *t)
{
	struct pvk_softirq *s = from_timer(s, t, timer);

	s->ret = pv_mutex_trylock(s->lock);
	complete(&s->done);
}

/*
 * trylock from softirq context (a timer_list callback) warns and fails: an
 * owner must be a task that priority inheritance can boost.
 */
static void pvk_trylock_softirq(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0];
	struct pvk_softirq s = { .lock = &a->pv, .ret = -1 };
	unsigned long left;

	init_completion(&s.done);
	timer_setup_on_stack(&s.timer, pvk_softirq_trylock_fn, 0);
	kunit_info(test, "expect a warning: trylock from softirq\n");
	mod_timer(&s.timer, jiffies + 1);
	left = wait_for_completion_timeout(&s.done, WAIT_LIMIT);
	kunit_info(test, "end of expected warning\n");
	timer_delete_sync(&s.timer);
	destroy_timer_on_stack(&s.timer);
	KUNIT_ASSERT_NE(test, left, 0);
	KUNIT_EXPECT_EQ(test, s.ret, 0);
	KUNIT_EXPECT_FALSE(test, pv_mutex_is_locked(&a->pv));
}

/*
 * Misuse warns once and changes nothing: unlock by a task that does not
 * own the mutex, unlock of a free mutex, a negative timeout.  Each warning is
 * bracketed by "expect a warning" and "end of expected warning" lines, so
 * that a console checker can require it and tell it from a real one.
 */
static void pvk_misuse(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0], *b = &ctx->locks[1];
	struct pvk_worker *p1 = pvk_worker(ctx, "P1", 10);
	struct pvk_worker *p2 = pvk_worker(ctx, "P2", 20);

	pvk_do(p1, CMD_PV_LOCK, a);
	kunit_info(test, "expect a warning: unlock by a non-owner\n");
	pvk_do(p2, CMD_PV_UNLOCK, a);
	kunit_info(test, "end of expected warning\n");
	KUNIT_EXPECT_PTR_EQ(test, pv_mutex_owner(&a->pv), p1->task);
	EXPECT_PRIO(p1, 10);

	/* The unlock warning has fired once; this one only changes nothing. */
	pvk_do(p2, CMD_PV_UNLOCK, b);
	KUNIT_EXPECT_FALSE(test, pv_mutex_is_locked(&b->pv));

	kunit_info(test, "expect a warning: negative timeout\n");
	p2->timeout = -1;
	KUNIT_EXPECT_EQ(test, pvk_do(p2, CMD_LOCK_TIMEOUT, a), -EINVAL);
	kunit_info(test, "end of expected warning\n");
	KUNIT_EXPECT_FALSE(test, pvk_queued(p2->task));
	KUNIT_EXPECT_PTR_EQ(test, pv_mutex_owner(&a->pv), p1->task);

	pvk_do(p1, CMD_PV_UNLOCK, a);
	KUNIT_EXPECT_FALSE(test, pv_mutex_is_locked(&a->pv));
}

/*
 * A cycle through locks of both types, pv A -> rt R -> pv B -> A: T1 holds
 * A and waits on R, T2 holds R and waits on B, T3 holds B and asks for A.
 * T3 gets -EDEADLK, and nothing changed: not queued, priorities and
 * owners as before, and the chain still unwinds.
 */
static void pvk_deadlock_mixed(struct kunit *test)
{
	struct pvk_ctx *ctx = test->priv;
	union pvk_lock *a = &ctx->locks[0], *r = &ctx->locks[1];
	union pvk_lock *b = &ctx->locks[2];
	struct pvk_worker *t1 = pvk_worker(ctx, "T1", 30);
	struct pvk_worker *t2 = pvk_worker(ctx, "T2", 20);
	struct pvk_worker *t3 = pvk_worker(ctx, "T3", 10);
	bool lockdep;

	pvk_lock_init(ctx, r, &pvk_rt_ops);
	pvk_do(t1, CMD_PV_LOCK, a);
	pvk_do(t2, CMD_RT_LOCK, r);
	pvk_do(t3, CMD_PV_LOCK, b);
	pvk_block(t1, CMD_RT_LOCK, r);
	pvk_block(t2, CMD_PV_LOCK, b);
	EXPECT_PRIO(t2, 30);
	EXPECT_PRIO(t3, 30);
	lockdep = pvk_lockdep_expect(test, "lockdep reports the circular dependency");
	KUNIT_EXPECT_EQ(test, pvk_do(t3, CMD_LOCK_INTR, a), -EDEADLK);
	if (lockdep)
		kunit_info(test, "end of expected warning\n");
	KUNIT_EXPECT_FALSE(test, pvk_queued(t3->task));
	KUNIT_EXPECT_PTR_EQ(test, pv_mutex_owner(&a->pv), t1->task);
	KUNIT_EXPECT_PTR_EQ(test, pv_mutex_owner(&b->pv), t3->task);
	EXPECT_PRIO(t1, 30);
	EXPECT_PRIO(t2, 30);
	EXPECT_PRIO(t3, 30);
	pvk_do(t3, CMD_PV_UNLOCK, b);
	EXPECT_PRIO(t3, 10);
	pvk_wait(t2);			/* T2 holds R and B */
	pvk_do(t2, CMD_PV_UNLOCK, b);
	pvk_do(t2, CMD_RT_UNLOCK, r);
	EXPECT_PRIO(t2, 20);
	pvk_wait(t1);
	pvk_do(t1, CMD_RT_UNLOCK, r);
	pvk_do(t1, CMD_PV_UNLOCK, a);
}

/* --- converted spinlocks --------------------------------------------------- */

static DEFINE_PV_SPINLOCK(pvk_static_ps);

/*
 * A struct pv_spinlock is an rtlock with CONFIG_PV_SPINLOCK and a spinlock_t
 * without, and lockdep sees one wait type in both (LD_WAIT_SPIN_SLEEP; on
 * PREEMPT_RT, spinlock_t's), defined statically or initialized at run time.
 * Converted, its holder owns the rt_mutex core and cannot migrate.
 */
static void pvk_spinlock_type(struct kunit *test)
{
	u8 want = IS_ENABLED(CONFIG_PREEMPT_RT) ? LD_WAIT_CONFIG : LD_WAIT_SPIN_SLEEP;
	bool locked, pinned = IS_ENABLED(CONFIG_PV_SPINLOCK);
	struct task_struct *owner = current;
	struct pv_spinlock dyn;
	int taken;

	pv_spin_lock_init(&dyn);
#ifdef CONFIG_DEBUG_LOCK_ALLOC
	KUNIT_EXPECT_EQ(test, dyn.lock.dep_map.wait_type_inner, want);
	KUNIT_EXPECT_EQ(test, pvk_static_ps.lock.dep_map.wait_type_inner, want);
#else
	(void)want;
#endif
	/* Nothing that may sleep while a spinlock_t is held: look, then check. */
	pv_spin_lock(&dyn);
	pv_spin_lock_assert_held(&dyn);
	/*
	 * A uniprocessor spinlock_t is no lock (and CONFIG_DEBUG_SPINLOCK
	 * reports a failed trylock as a bug): probe only where it is one.
	 */
	locked = true;
	if ((IS_ENABLED(CONFIG_PV_SPINLOCK) || IS_ENABLED(CONFIG_SMP)) &&
	    pv_spin_trylock(&dyn)) {
		locked = false;
		pv_spin_unlock(&dyn);
	}
#ifdef CONFIG_PV_SPINLOCK
	owner = pv_mutex_owner(&dyn.lock);
#ifdef CONFIG_SMP
	pinned = current->migration_disabled;
#endif
#endif
	pv_spin_unlock(&dyn);
	KUNIT_EXPECT_TRUE(test, locked);
	KUNIT_EXPECT_PTR_EQ(test, owner, current);
	KUNIT_EXPECT_EQ(test, pinned, IS_ENABLED(CONFIG_PV_SPINLOCK));
#if defined(CONFIG_PV_SPINLOCK) && defined(CONFIG_SMP)
	KUNIT_EXPECT_FALSE(test, current->migration_disabled);
#endif
	taken = 0;
	if (pv_spin_trylock(&dyn)) {
		taken = 1;
		pv_spin_unlock(&dyn);
	}
	KUNIT_EXPECT_EQ(test, taken, 1);
	taken = 0;
	if (pv_spin_trylock(&pvk_static_ps)) {
		taken = 1;
		pv_spin_unlock(&pvk_static_ps);
	}
	KUNIT_EXPECT_EQ(test, taken, 1);
}

static const struct pvk_ops *pvk_both[] = { &pvk_pv_ops, &pvk_rt_ops };

/* The scenarios a converted spinlock runs too, when there is one. */
static const struct pvk_ops *pvk_all[] = {
	&pvk_pv_ops, &pvk_rt_ops,
};

static void pvk_ops_desc(const struct pvk_ops **ops, char *desc)
{
	strscpy(desc, (*ops)->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(pvk_locks, pvk_both, pvk_ops_desc);
KUNIT_ARRAY_PARAM(pvk_all_locks, pvk_all, pvk_ops_desc);

static struct kunit_case pv_mutex_cases[] = {
	KUNIT_CASE_PARAM(pvk_inversion_with_hog, pvk_all_locks_gen_params),
	KUNIT_CASE_PARAM(pvk_chain_two_locks, pvk_all_locks_gen_params),
	KUNIT_CASE_PARAM(pvk_release_keeps_other_donation, pvk_all_locks_gen_params),
	KUNIT_CASE_PARAM(pvk_request_outcomes, pvk_locks_gen_params),
	KUNIT_CASE_PARAM(pvk_request_while_blocked, pvk_locks_gen_params),
	KUNIT_CASE_PARAM(pvk_non_lifo_release, pvk_all_locks_gen_params),
	KUNIT_CASE_PARAM(pvk_boost_is_not_baseline, pvk_all_locks_gen_params),
	KUNIT_CASE_PARAM(pvk_timeout_deboosts, pvk_locks_gen_params),
	KUNIT_CASE_PARAM(pvk_signal_deboosts, pvk_locks_gen_params),
	KUNIT_CASE(pvk_timeout_running_owner),
	KUNIT_CASE_PARAM(pvk_signal_running_owner, pvk_locks_gen_params),
	KUNIT_CASE_PARAM(pvk_setscheduler, pvk_all_locks_gen_params),
	KUNIT_CASE_PARAM(pvk_chain_middle_leaves, pvk_locks_gen_params),
	KUNIT_CASE_PARAM(pvk_handoff_fifo, pvk_all_locks_gen_params),
	KUNIT_CASE_PARAM(pvk_handoff_steal, pvk_locks_gen_params),
	KUNIT_CASE(pvk_rt_mutex_coexistence),
	KUNIT_CASE(pvk_chain_pv_to_rt),
	KUNIT_CASE(pvk_chain_rt_to_pv),
	KUNIT_CASE(pvk_chain_rt_to_pv_deboost),
	KUNIT_CASE(pvk_chain_mixed_middle_leaves),
	KUNIT_CASE(pvk_pi_chains_view),
	KUNIT_CASE(pvk_deadline_donor),
	KUNIT_CASE(pvk_timeout_no_wrap),
	KUNIT_CASE(pvk_trylock_softirq),
	KUNIT_CASE(pvk_misuse),
	KUNIT_CASE(pvk_spinlock_type),
	/* Last: with lockdep, the first intended deadlock switches it off. */
	KUNIT_CASE_PARAM(pvk_deadlock_aa, pvk_locks_gen_params),
	KUNIT_CASE_PARAM(pvk_deadlock_abba, pvk_locks_gen_params),
	KUNIT_CASE(pvk_deadlock_mixed),
	KUNIT_CASE(pvk_chain_too_deep),
	KUNIT_CASE(pvk_void_lock_short_walk),
	{}
};

static struct kunit_suite pv_mutex_suite = {
	.name = "pv_mutex",
	.init = pvk_init,
	.exit = pvk_exit,
	.test_cases = pv_mutex_cases,
};
kunit_test_suite(pv_mutex_suite);

MODULE_DESCRIPTION("KUnit scenarios for the PV priority-inheritance mutex");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
