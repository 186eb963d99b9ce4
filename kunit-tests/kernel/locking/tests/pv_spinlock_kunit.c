// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit rules of struct pv_spinlock: where a converted spinlock may be
 * taken, as lockdep and CONFIG_DEBUG_ATOMIC_SLEEP check it, in kernels with
 * and without CONFIG_PV_SPINLOCK.
 *
 * Copyright (C) 2026 PV-RT Developers
 *
 * A lockdep report switches lockdep off (debug_locks_off()), and a
 * might_sleep() report is a splat on the console, so no case takes a lock
 * where it must be reported.  Each case evaluates the predicate the
 * checker evaluates instead, on the real lock maps and the real context:
 *
 *  - lockdep's check_wait_context() reports a lock whose outer wait type
 *    exceeds the inner wait type of a held lock of the same context, or
 *    the context's own (hard interrupt: LD_WAIT_SPIN, threaded interrupt
 *    or softirq: LD_WAIT_CONFIG).  The cases compare the wait types of a
 *    pv_spinlock, static and run-time initialized, with those of real
 *    spinlock_t, rwlock_t, seqlock_t, local_lock_t and mutex maps and of
 *    the RCU readers' maps;
 *  - __might_resched() reports when the preemption count differs from the
 *    offsets the caller passes, interrupts are disabled, or the RCU
 *    nesting differs from the offsets' RCU part.  The cases enter each
 *    context and compare it with the offsets pv_spin_lock() passes.
 */

#include <kunit/test.h>
#include <linux/bottom_half.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/debug_locks.h>
#include <linux/irqflags.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/local_lock.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/panic.h>
#include <linux/preempt.h>
#include <linux/pv_spinlock.h>
#include <linux/rcupdate.h>
#include <linux/rtmutex.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/seqlock.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timer.h>

#ifdef CONFIG_DEBUG_LOCK_ALLOC

static DEFINE_PV_SPINLOCK(pvs_static);

/* One lock of each kind whose lockdep map a rule compares with. */
struct pvs_ctx {
	struct pv_spinlock	dyn;	/* initialized at run time */
	spinlock_t		spin;	/* a held spinlock_t */
	rwlock_t		rw;	/* a held rwlock_t */
	seqlock_t		seq;	/* a seqlock writer */
	local_lock_t		local;	/* a held local_lock_t */
	struct mutex		mutex;	/* a sleeping lock inside */
};

static int pvs_init(struct kunit *test)
{
	struct pvs_ctx *ctx;

	/*
	 * On PREEMPT_RT spinlock_t is an rtlock: a converted lock is
	 * LD_WAIT_CONFIG like every spinlock_t there, spin_lock() leaves the
	 * preemption count alone, and rt_spin_lock()'s own checks apply.
	 */
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		kunit_skip(test, "PREEMPT_RT: rt_spin_lock()'s rules apply");

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	pv_spin_lock_init(&ctx->dyn);
	spin_lock_init(&ctx->spin);
	rwlock_init(&ctx->rw);
	seqlock_init(&ctx->seq);
	local_lock_init(&ctx->local);
	mutex_init(&ctx->mutex);
	test->priv = ctx;
	return 0;
}

static void pvs_exit(struct kunit *test)
{
	struct pvs_ctx *ctx = test->priv;

	mutex_destroy(&ctx->mutex);
}

/* The wait-context check is CONFIG_PROVE_LOCKING's. */
static int pvs_lockdep_init(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_PROVE_LOCKING))
		kunit_skip(test, "needs CONFIG_PROVE_LOCKING");
	return pvs_init(test);
}

/* A pv_spinlock's lockdep map: the same in both builds. */
static struct lockdep_map *pvs_map(struct pv_spinlock *l)
{
	return &l->lock.dep_map;
}

static u8 pvs_outer(const struct lockdep_map *m)
{
	return m->wait_type_outer ?: m->wait_type_inner;
}

/*
 * check_wait_context(): would taking a lock with map @next while a lock with
 * map @held is held (or in a context of inner type @held_inner) be
 * reported?
 */
static bool pvs_invalid(const struct lockdep_map *next, u8 held_inner)
{
	return pvs_outer(next) > held_inner;
}

/* Both a DEFINE_PV_SPINLOCK() and a pv_spin_lock_init() lock. */
#define PVS_EXPECT_INVALID(test, held_inner, what)			\
do {									\
	struct kunit *__test = (test);					\
	struct pvs_ctx *__ctx = __test->priv;				\
	u8 __inner = (held_inner);					\
	const char *__what = (what);					\
									\
	KUNIT_EXPECT_TRUE_MSG(__test, pvs_invalid(pvs_map(&pvs_static),	\
						  __inner),		\
			      "static pv_spinlock not reported %s", __what); \
	KUNIT_EXPECT_TRUE_MSG(__test, pvs_invalid(pvs_map(&__ctx->dyn),	\
						  __inner),		\
			      "pv_spinlock not reported %s", __what);	\
} while (0)

/* Rule: not inside a spinlock_t. */
static void pvs_lockdep_in_spinlock(struct kunit *test)
{
	struct pvs_ctx *ctx = test->priv;

	PVS_EXPECT_INVALID(test, ctx->spin.dep_map.wait_type_inner,
			   "inside a spinlock_t");
}

/* Rule: not inside a rwlock_t. */
static void pvs_lockdep_in_rwlock(struct kunit *test)
{
	struct pvs_ctx *ctx = test->priv;

	PVS_EXPECT_INVALID(test, ctx->rw.dep_map.wait_type_inner,
			   "inside a rwlock_t");
}

/* Rule: not inside a seqlock writer (write_seqlock() takes its spinlock). */
static void pvs_lockdep_in_seqlock_writer(struct kunit *test)
{
	struct pvs_ctx *ctx = test->priv;

	PVS_EXPECT_INVALID(test, ctx->seq.lock.dep_map.wait_type_inner,
			   "inside a seqlock writer");
}

/* Rule: not inside a local_lock_t. */
static void pvs_lockdep_in_local_lock(struct kunit *test)
{
	struct pvs_ctx *ctx = test->priv;

	PVS_EXPECT_INVALID(test, ctx->local.dep_map.wait_type_inner,
			   "inside a local_lock_t");
}

/* Rule: not in an rcu_read_lock_bh() reader. */
static void pvs_lockdep_in_rcu_bh(struct kunit *test)
{
	PVS_EXPECT_INVALID(test, rcu_bh_lock_map.wait_type_inner,
			   "in an rcu_read_lock_bh() reader");
}

/* Rule: not in an rcu_read_lock_sched() reader. */
static void pvs_lockdep_in_rcu_sched(struct kunit *test)
{
	PVS_EXPECT_INVALID(test, rcu_sched_lock_map.wait_type_inner,
			   "in an rcu_read_lock_sched() reader");
}

/*
 * Rule: not in interrupt or softirq context.  task_wait_context() gives a
 * hard interrupt LD_WAIT_SPIN, a threaded one and softirq LD_WAIT_CONFIG.
 */
static void pvs_lockdep_in_irq_context(struct kunit *test)
{
	PVS_EXPECT_INVALID(test, LD_WAIT_SPIN, "in hard interrupt context");
	PVS_EXPECT_INVALID(test, LD_WAIT_CONFIG,
			   "in softirq or threaded interrupt context");
}

/* Rule: allowed in a plain rcu_read_lock() reader. */
static void pvs_lockdep_in_rcu_allowed(struct kunit *test)
{
	struct pvs_ctx *ctx = test->priv;

	KUNIT_EXPECT_FALSE(test, pvs_invalid(pvs_map(&pvs_static),
					     rcu_lock_map.wait_type_inner));
	KUNIT_EXPECT_FALSE(test, pvs_invalid(pvs_map(&ctx->dyn),
					     rcu_lock_map.wait_type_inner));
}

/*
 * Rule: a mutex (sleeping) inside a converted section is reported, a
 * spinlock_t or another converted lock is not.
 */
static void pvs_lockdep_inside(struct kunit *test)
{
	struct pvs_ctx *ctx = test->priv;
	u8 inner = pvs_map(&ctx->dyn)->wait_type_inner;

	KUNIT_EXPECT_EQ(test, pvs_map(&pvs_static)->wait_type_inner, inner);
	KUNIT_EXPECT_TRUE_MSG(test, pvs_invalid(&ctx->mutex.dep_map, inner),
			      "a mutex inside a pv_spinlock is not reported");
	KUNIT_EXPECT_FALSE(test, pvs_invalid(&ctx->spin.dep_map, inner));
	KUNIT_EXPECT_FALSE(test, pvs_invalid(pvs_map(&pvs_static), inner));
}

/*
 * __might_resched(): would a call with offsets @offsets report the current
 * context?  The condition of kernel/sched/core.c, on this context.
 */
static bool pvs_resched_reports(unsigned int offsets)
{
	unsigned int preempt = offsets & MIGHT_RESCHED_PREEMPT_MASK;
	unsigned int nest = offsets >> MIGHT_RESCHED_RCU_SHIFT;

	return preempt_count() != preempt || irqs_disabled() ||
	       rcu_preempt_depth() != nest;
}

/* The offsets pv_spin_lock() passes, evaluated in the current context. */
static unsigned int pvs_offsets(void)
{
	return PV_SPIN_RESCHED_OFFSETS;
}

/*
 * DEBUG_ATOMIC_SLEEP rules: every atomic context is reported, a plain RCU
 * reader is not.  The contexts are entered for real; the lock is not taken.
 */
/* local_lock() takes a per-CPU lock: this_cpu_ptr() of a plain one is wild. */
static DEFINE_PER_CPU(local_lock_t, pvs_local) = INIT_LOCAL_LOCK(pvs_local);

static void pvs_might_sleep_contexts(struct kunit *test)
{
	struct pvs_ctx *ctx = test->priv;
	bool r;

	if (!IS_ENABLED(CONFIG_DEBUG_ATOMIC_SLEEP) ||
	    !IS_ENABLED(CONFIG_PREEMPT_RCU))
		kunit_skip(test, "needs DEBUG_ATOMIC_SLEEP and PREEMPT_RCU");

	KUNIT_EXPECT_FALSE(test, pvs_resched_reports(pvs_offsets()));

	rcu_read_lock();
	r = pvs_resched_reports(pvs_offsets());
	rcu_read_unlock();
	KUNIT_EXPECT_FALSE_MSG(test, r, "reported in a plain RCU reader");

	spin_lock(&ctx->spin);
	r = pvs_resched_reports(pvs_offsets());
	spin_unlock(&ctx->spin);
	KUNIT_EXPECT_TRUE_MSG(test, r, "not reported inside a spinlock_t");

	write_seqlock(&ctx->seq);
	r = pvs_resched_reports(pvs_offsets());
	write_sequnlock(&ctx->seq);
	KUNIT_EXPECT_TRUE_MSG(test, r, "not reported in a seqlock writer");

	local_lock(&pvs_local);
	r = pvs_resched_reports(pvs_offsets());
	local_unlock(&pvs_local);
	KUNIT_EXPECT_TRUE_MSG(test, r, "not reported inside a local_lock_t");

	preempt_disable();
	r = pvs_resched_reports(pvs_offsets());
	preempt_enable();
	KUNIT_EXPECT_TRUE_MSG(test, r, "not reported with preemption disabled");

	local_bh_disable();
	r = pvs_resched_reports(pvs_offsets());
	local_bh_enable();
	KUNIT_EXPECT_TRUE_MSG(test, r, "not reported with BH disabled");

	rcu_read_lock_bh();
	r = pvs_resched_reports(pvs_offsets());
	rcu_read_unlock_bh();
	KUNIT_EXPECT_TRUE_MSG(test, r, "not reported in rcu_read_lock_bh()");

	rcu_read_lock_sched();
	r = pvs_resched_reports(pvs_offsets());
	rcu_read_unlock_sched();
	KUNIT_EXPECT_TRUE_MSG(test, r, "not reported in rcu_read_lock_sched()");

	local_irq_disable();
	r = pvs_resched_reports(pvs_offsets());
	local_irq_enable();
	KUNIT_EXPECT_TRUE_MSG(test, r, "not reported with interrupts disabled");
}

/*
 * Converted locks nest in one another: without CONFIG_PV_SPINLOCK the outer
 * one is a spinlock_t that raises the preemption count, yet the inner one
 * is not reported (a real acquisition, whose report would be a splat),
 * while a spinlock_t taken inside still makes the context atomic.
 */
static void pvs_might_sleep_nested(struct kunit *test)
{
	struct pvs_ctx *ctx = test->priv;
	bool outer, inner, spin;

	if (!IS_ENABLED(CONFIG_DEBUG_ATOMIC_SLEEP) ||
	    !IS_ENABLED(CONFIG_PREEMPT_RCU))
		kunit_skip(test, "needs DEBUG_ATOMIC_SLEEP and PREEMPT_RCU");

	pv_spin_lock(&pvs_static);
	outer = pvs_resched_reports(pvs_offsets());
	pv_spin_lock(&ctx->dyn);
	inner = pvs_resched_reports(pvs_offsets());
	spin_lock(&ctx->spin);
	spin = pvs_resched_reports(pvs_offsets());
	spin_unlock(&ctx->spin);
	pv_spin_unlock(&ctx->dyn);
	pv_spin_unlock(&pvs_static);

	KUNIT_EXPECT_FALSE_MSG(test, outer, "reported inside a converted lock");
	KUNIT_EXPECT_FALSE_MSG(test, inner, "reported inside two converted locks");
	KUNIT_EXPECT_TRUE_MSG(test, spin,
			      "not reported inside a spinlock_t in a converted lock");
	KUNIT_EXPECT_FALSE_MSG(test, pvs_resched_reports(pvs_offsets()),
			       "converted locks still counted after release");
}

static struct kunit_case pv_spinlock_cases[] = {
	KUNIT_CASE(pvs_lockdep_in_spinlock),
	KUNIT_CASE(pvs_lockdep_in_rwlock),
	KUNIT_CASE(pvs_lockdep_in_seqlock_writer),
	KUNIT_CASE(pvs_lockdep_in_local_lock),
	KUNIT_CASE(pvs_lockdep_in_rcu_bh),
	KUNIT_CASE(pvs_lockdep_in_rcu_sched),
	KUNIT_CASE(pvs_lockdep_in_irq_context),
	KUNIT_CASE(pvs_lockdep_in_rcu_allowed),
	KUNIT_CASE(pvs_lockdep_inside),
	{}
};

static struct kunit_case pv_spinlock_might_sleep_cases[] = {
	KUNIT_CASE(pvs_might_sleep_contexts),
	KUNIT_CASE(pvs_might_sleep_nested),
	{}
};

#else /* !CONFIG_DEBUG_LOCK_ALLOC */

static void pvs_needs_lockdep(struct kunit *test)
{
	kunit_skip(test, "needs CONFIG_DEBUG_LOCK_ALLOC");
}

static int pvs_init(struct kunit *test)
{
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		kunit_skip(test, "PREEMPT_RT: rt_spin_lock()'s rules apply");
	return 0;
}

static void pvs_exit(struct kunit *test) { }

/*
 * An array each: kunit keeps a case's status in its struct kunit_case and
 * does not run a case already KUNIT_SKIPPED again (kunit_run_tests()), so a
 * shared array's second suite would report the skip without its reason.
 */
static struct kunit_case pv_spinlock_cases[] = {
	KUNIT_CASE(pvs_needs_lockdep),
	{}
};

static struct kunit_case pv_spinlock_might_sleep_cases[] = {
	KUNIT_CASE(pvs_needs_lockdep),
	{}
};

#define pvs_lockdep_init		pvs_init

#endif /* CONFIG_DEBUG_LOCK_ALLOC */

static struct kunit_suite pv_spinlock_suite = {
	.name = "pv_spinlock",
	.init = pvs_lockdep_init,
	.exit = pvs_exit,
	.test_cases = pv_spinlock_cases,
};

static struct kunit_suite pv_spinlock_might_sleep_suite = {
	.name = "pv_spinlock_might_sleep",
	.init = pvs_init,
	.exit = pvs_exit,
	.test_cases = pv_spinlock_might_sleep_cases,
};

/*
 * The operations, in every build (PREEMPT_RT and !DEBUG_LOCK_ALLOC
 * included, so that such a build compiles each of them): a held lock
 * cannot be taken again with pv_spin_trylock() (where the lock has a
 * state: not a uniprocessor spinlock_t without CONFIG_DEBUG_SPINLOCK), a
 * released one can, and lockdep (when built) sees the holder.
 */
static DEFINE_PV_SPINLOCK(pvs_api_static);

/*
 * pv_spin_trylock(), released again at once: did it take @l?  The answer
 * goes through memory: sparse follows the lock context of a trylock's
 * branch only when no value merges after it.
 */
static void pvs_trylock_unlock(struct pv_spinlock *l, bool *taken)
{
	*taken = false;
	if (pv_spin_trylock(l)) {
		pv_spin_lock_assert_held(l);
		*taken = true;
		pv_spin_unlock(l);
	}
}

static void pvs_api(struct kunit *test)
{
	struct pv_spinlock *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	bool taken;

	KUNIT_ASSERT_NOT_NULL(test, l);
	pv_spin_lock_init(l);

	pv_spin_lock(l);
	pv_spin_lock_assert_held(l);
	pvs_trylock_unlock(l, &taken);
	pv_spin_unlock(l);
	/*
	 * A uniprocessor spinlock_t without CONFIG_DEBUG_SPINLOCK has no state
	 * (spinlock_up.h): its trylock succeeds whoever holds it.
	 */
	if (IS_ENABLED(CONFIG_RTLOCK) || IS_ENABLED(CONFIG_SMP) ||
	    IS_ENABLED(CONFIG_DEBUG_SPINLOCK))
		KUNIT_EXPECT_FALSE_MSG(test, taken, "trylock of a held lock succeeded");

	pv_spin_lock_nested(&pvs_api_static, 0);
	pv_spin_lock_assert_held(&pvs_api_static);
	pv_spin_unlock(&pvs_api_static);

	pvs_trylock_unlock(l, &taken);
	KUNIT_EXPECT_TRUE_MSG(test, taken, "trylock of a free lock failed");
}

struct pvs_softirq {
	struct timer_list	timer;
	struct pv_spinlock	lock;	/* taken nowhere else */
	bool			taken;
	struct completion	done;
};

static void pvs_softirq_trylock_fn(struct timer_list *t)
{
	struct pvs_softirq *s = from_timer(s, t, timer);

	if (pv_spin_trylock(&s->lock)) {
		s->taken = true;
		pv_spin_unlock(&s->lock);
	}
	complete(&s->done);
}

/*
 * pv_spin_trylock() from softirq context (a timer_list callback) warns and
 * fails: in the converted build an owner must be a task, and with
 * CONFIG_DEBUG_ATOMIC_SLEEP the spinlock_t build refuses it the same way.
 */
static void pvs_trylock_softirq(struct kunit *test)
{
	struct pvs_softirq *s;
	unsigned long left;

	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		kunit_skip(test, "PREEMPT_RT: rt_spin_trylock()'s rules apply");
	if (!IS_ENABLED(CONFIG_PV_SPINLOCK) &&
	    !IS_ENABLED(CONFIG_DEBUG_ATOMIC_SLEEP))
		kunit_skip(test, "needs PV_SPINLOCK or DEBUG_ATOMIC_SLEEP");
	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	pv_spin_lock_init(&s->lock);
	init_completion(&s->done);
	timer_setup(&s->timer, pvs_softirq_trylock_fn, 0);
	kunit_info(test, "expect a warning: pv_spin_trylock() in softirq\n");
	mod_timer(&s->timer, jiffies + 1);
	left = wait_for_completion_timeout(&s->done, 5 * HZ);
	kunit_info(test, "end of expected warning\n");
	timer_delete_sync(&s->timer);
	KUNIT_ASSERT_NE_MSG(test, left, 0, "the timer did not run");
	KUNIT_EXPECT_FALSE_MSG(test, s->taken,
			       "pv_spin_trylock() succeeded in softirq context");
}

static struct kunit_case pv_spinlock_api_cases[] = {
	KUNIT_CASE(pvs_api),
	KUNIT_CASE(pvs_trylock_softirq),
	{}
};

static struct kunit_suite pv_spinlock_api_suite = {
	.name = "pv_spinlock_api",
	.test_cases = pv_spinlock_api_cases,
};

/*
 * The rtlock wait, with CONFIG_PV_SPINLOCK (or on PREEMPT_RT, where the
 * lock is a spinlock_t, that is an rtlock): a holder and a waiter, each a
 * kthread bound to its own CPU, driven by completions; a thread polls
 * only the state it waits for, with a deadline.
 */
struct pvs_rt {
	struct pv_spinlock	lock;
	struct completion	held;		/* the holder has the lock */
	struct completion	holder_done;
	struct completion	waiter_done;
	struct task_struct	*waiter;
	bool			wake;		/* holder wakes the waiter */
	bool			timed_out;	/* a poll hit its deadline */
	unsigned int		state;		/* waiter's state after lock */
	int			want_prio;	/* the waiter's priority */
	int			prio;		/* holder's, while waited for */
};

#define PVS_RT_DEADLINE	(5 * HZ)

/* Holder: waits until the waiter blocks on the lock, maybe wakes it. */
static int pvs_state_holder(void *arg)
{
	struct pvs_rt *rt = arg;
	unsigned long deadline = jiffies + PVS_RT_DEADLINE;

	pv_spin_lock(&rt->lock);
	complete(&rt->held);
	while (READ_ONCE(rt->waiter->__state) != TASK_RTLOCK_WAIT) {
		if (time_after(jiffies, deadline)) {
			rt->timed_out = true;
			break;
		}
		cpu_relax();
	}
	if (rt->wake)
		wake_up_process(rt->waiter);
	pv_spin_unlock(&rt->lock);
	complete(&rt->holder_done);
	return 0;
}

/* Waiter: takes the lock between set_current_state() and schedule(). */
static int pvs_state_waiter(void *arg)
{
	struct pvs_rt *rt = arg;

	wait_for_completion(&rt->held);
	set_current_state(TASK_UNINTERRUPTIBLE);
	pv_spin_lock(&rt->lock);
	rt->state = READ_ONCE(current->__state);
	pv_spin_unlock(&rt->lock);
	__set_current_state(TASK_RUNNING);
	complete(&rt->waiter_done);
	return 0;
}

/* Holder: spins on its own priority until the waiter's boosts it. */
static int pvs_pi_holder(void *arg)
{
	struct pvs_rt *rt = arg;
	unsigned long deadline = jiffies + PVS_RT_DEADLINE;

	pv_spin_lock(&rt->lock);
	complete(&rt->held);
	while (READ_ONCE(current->prio) != rt->want_prio) {
		if (time_after(jiffies, deadline)) {
			rt->timed_out = true;
			break;
		}
		cpu_relax();
	}
	rt->prio = READ_ONCE(current->prio);
	pv_spin_unlock(&rt->lock);
	complete(&rt->holder_done);
	return 0;
}

static int pvs_pi_waiter(void *arg)
{
	struct pvs_rt *rt = arg;

	wait_for_completion(&rt->held);
	pv_spin_lock(&rt->lock);
	pv_spin_unlock(&rt->lock);
	complete(&rt->waiter_done);
	return 0;
}

static struct pvs_rt *pvs_rt_alloc(struct kunit *test)
{
	struct pvs_rt *rt;

	if (!IS_ENABLED(CONFIG_PV_SPINLOCK) && !IS_ENABLED(CONFIG_PREEMPT_RT))
		kunit_skip(test, "needs CONFIG_PV_SPINLOCK or PREEMPT_RT");
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs 2 CPUs");
	rt = kunit_kzalloc(test, sizeof(*rt), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rt);
	pv_spin_lock_init(&rt->lock);
	init_completion(&rt->held);
	init_completion(&rt->holder_done);
	init_completion(&rt->waiter_done);
	return rt;
}

/*
 * Start the waiter on one CPU (at SCHED_FIFO if @fifo) and the holder on
 * another, and wait until both are done.
 */
static void pvs_rt_run(struct kunit *test, struct pvs_rt *rt,
		       int (*holder)(void *), int (*waiter)(void *),
		       bool fifo)
{
	unsigned int c0 = cpumask_first(cpu_online_mask);
	unsigned int c1 = cpumask_next(c0, cpu_online_mask);
	struct task_struct *h, *w;

	w = kthread_create_on_cpu(waiter, rt, c1, "pvs_waiter/%u");
	KUNIT_ASSERT_FALSE(test, IS_ERR(w));
	if (fifo)
		sched_set_fifo(w);
	rt->waiter = w;
	rt->want_prio = w->prio;
	h = kthread_create_on_cpu(holder, rt, c0, "pvs_holder/%u");
	if (IS_ERR(h)) {
		kthread_stop(w);
		KUNIT_FAIL(test, "no holder thread: %pe", h);
		return;
	}
	wake_up_process(w);
	wake_up_process(h);
	wait_for_completion(&rt->holder_done);
	wait_for_completion(&rt->waiter_done);
	KUNIT_EXPECT_FALSE_MSG(test, rt->timed_out, "a poll hit its deadline");
}

/* The caller's task state survives a contended acquisition. */
static void pvs_rtlock_keeps_state(struct kunit *test)
{
	struct pvs_rt *rt = pvs_rt_alloc(test);

	pvs_rt_run(test, rt, pvs_state_holder, pvs_state_waiter, false);
	KUNIT_EXPECT_EQ(test, rt->state, TASK_UNINTERRUPTIBLE);
}

/*
 * A regular wakeup during the wait is not lost: the saved state becomes
 * TASK_RUNNING, as for an rtlock on PREEMPT_RT (ttwu_state_match()).
 */
static void pvs_rtlock_keeps_wakeup(struct kunit *test)
{
	struct pvs_rt *rt = pvs_rt_alloc(test);

	rt->wake = true;
	pvs_rt_run(test, rt, pvs_state_holder, pvs_state_waiter, false);
	KUNIT_EXPECT_EQ(test, rt->state, TASK_RUNNING);
}

/* The holder inherits a SCHED_FIFO waiter's priority while it waits. */
static void pvs_rtlock_boosts_owner(struct kunit *test)
{
	struct pvs_rt *rt = pvs_rt_alloc(test);

	pvs_rt_run(test, rt, pvs_pi_holder, pvs_pi_waiter, true);
	KUNIT_EXPECT_EQ(test, rt->prio, rt->want_prio);
}

#ifdef CONFIG_RTLOCK
/*
 * A plain rcu_read_lock() reader blocked on a converted lock.  The holder
 * cannot sleep with the lock held (it is in an RCU read-side section
 * itself), so it spins until it is released; a SCHED_FIFO hog on its CPU
 * preempts it, so that the reader on the other CPU stops spinning on the
 * owner and sleeps in the rtlock wait.  The context is kmalloc'ed rather
 * than a KUnit resource: pvs_rcu_release(), a KUnit action, stops the hog,
 * releases the holder and frees the context once every thread has
 * finished, or leaks it (and pins the module) if one is still blocked.
 */
struct pvs_rcu_thread {
	struct task_struct	*task;		/* a reference, once started */
	struct completion	done;		/* completed as it exits */
	bool			finished;	/* done was seen */
};

struct pvs_rcu {
	struct pv_spinlock	lock;
	struct completion	held;		/* the holder has the lock */
	struct pvs_rcu_thread	holder, reader, hog;
	struct pvs_rcu_thread	syncer;		/* done: synchronize_rcu() returned */
	bool			release;	/* the holder may unlock */
	bool			hog_stop;
	bool			timed_out;	/* holder or hog hit its bound */
	bool			reader_out;	/* set before rcu_read_unlock() */
	bool			out_at_gp_end;	/* reader_out after the GP */
	unsigned long		window;		/* jiffies: ten grace periods */
	int			rcu_depth;	/* reader's nesting, lock held */
	int			ld_depth[2];	/* reader's held locks: before, after */
	unsigned long		csw[2];		/* its nvcsw, nivcsw taking the lock */
};

#define PVS_RCU_LIMIT		(10 * HZ)
/*
 * The hog runs while the reader goes to sleep (at most PVS_RCU_ASLEEP) and
 * for the window (at most PVS_RCU_WINDOW_MAX), with PVS_RCU_HOG_MARGIN for
 * starting the threads: its bound is their sum, below sched_rt_runtime_us
 * (950 ms a second), so RT throttling never lets the holder run early.
 */
#define PVS_RCU_ASLEEP		(HZ / 5)
#define PVS_RCU_WINDOW_MIN	(HZ / 10)
#define PVS_RCU_WINDOW_MAX	(HZ * 2 / 5)
#define PVS_RCU_HOG_MARGIN	(HZ / 4)
#define PVS_RCU_HOG_LIMIT	(PVS_RCU_ASLEEP + PVS_RCU_WINDOW_MAX + PVS_RCU_HOG_MARGIN)
static_assert(PVS_RCU_HOG_LIMIT * 100 / HZ < 95);

/* How many locks lockdep records current as holding. */
static int pvs_lockdep_depth(void)
{
#ifdef CONFIG_DEBUG_LOCK_ALLOC
	return current->lockdep_depth;
#else
	return 0;
#endif
}

/*
 * Starts the lockdep part of a case, made last.  Lockdep records held
 * locks and reports only while debug_locks is on, and a report (an
 * earlier suite's expected one) switches it off for good: then the part
 * would pass without checking anything, so the case is marked skipped
 * instead, unless it failed already.  Returns whether to check.
 */
static bool pvs_lockdep_part(struct kunit *test, bool was_on)
{
	if (!IS_ENABLED(CONFIG_DEBUG_LOCK_ALLOC))
		return false;		/* no lockdep to check */
	if (!was_on && test->status != KUNIT_FAILURE)
		kunit_skip(test, "lockdep was off (debug_locks=0): its part is not checked");
	return was_on;
}

/* Spins until @flag is set or @limit passes (then notes a time-out). */
static void pvs_rcu_spin(struct pvs_rcu *r, bool *flag, unsigned long limit)
{
	unsigned long deadline = jiffies + limit;

	while (!READ_ONCE(*flag)) {
		if (time_after(jiffies, deadline)) {
			WRITE_ONCE(r->timed_out, true);
			return;
		}
		cpu_relax();
	}
}

/* Holder: keeps the lock, spinning, until the case releases it. */
static int pvs_rcu_holder(void *arg)
{
	struct pvs_rcu *r = arg;

	pv_spin_lock(&r->lock);
	complete_all(&r->held);		/* the reader and the case */
	pvs_rcu_spin(r, &r->release, PVS_RCU_LIMIT);
	pv_spin_unlock(&r->lock);
	kthread_complete_and_exit(&r->holder.done, 0);
}

/* SCHED_FIFO (lowest) on the holder's CPU: keeps the holder off it. */
static int pvs_rcu_hog(void *arg)
{
	struct pvs_rcu *r = arg;

	pvs_rcu_spin(r, &r->hog_stop, PVS_RCU_HOG_LIMIT);
	kthread_complete_and_exit(&r->hog.done, 0);
}

/*
 * Reader: blocks on the lock inside a plain RCU read-side section.  Once it
 * has the lock it keeps it for the window, or until the grace period ends:
 * the holder's own RCU section (the one of holding the lock) ends with its
 * unlock, and a grace period that missed this reader would end then.
 */
static int pvs_rcu_reader(void *arg)
{
	struct pvs_rcu *r = arg;
	unsigned long deadline;

	wait_for_completion(&r->held);
	rcu_read_lock();
	r->ld_depth[0] = pvs_lockdep_depth();
	r->csw[0] = current->nvcsw;
	r->csw[1] = current->nivcsw;
	pv_spin_lock(&r->lock);
	r->csw[0] = current->nvcsw - r->csw[0];
	r->csw[1] = current->nivcsw - r->csw[1];
	r->ld_depth[1] = pvs_lockdep_depth();
	r->rcu_depth = rcu_preempt_depth();
	deadline = jiffies + r->window;
	while (!completion_done(&r->syncer.done) &&
	       time_before(jiffies, deadline))
		cpu_relax();
	pv_spin_unlock(&r->lock);
	WRITE_ONCE(r->reader_out, true);
	rcu_read_unlock();
	kthread_complete_and_exit(&r->reader.done, 0);
}

/* A grace period started while the reader is blocked. */
static int pvs_rcu_syncer(void *arg)
{
	struct pvs_rcu *r = arg;

	synchronize_rcu();
	r->out_at_gp_end = READ_ONCE(r->reader_out);
	kthread_complete_and_exit(&r->syncer.done, 0);
}

/* The rt_mutex a converted lock is built on. */
static struct rt_mutex_base *pvs_rtm(struct pv_spinlock *l)
{
#ifdef CONFIG_PV_SPINLOCK
	return &l->lock.rtmutex;
#else
	return &l->lock.lock;	/* PREEMPT_RT: a spinlock_t */
#endif
}

/* Has @t been switched out?  Uniprocessor: the case skips. */
static bool pvs_off_cpu(struct task_struct *t)
{
#ifdef CONFIG_SMP
	return !READ_ONCE(t->on_cpu);
#else
	return t != current;
#endif
}

/*
 * Is @t asleep in the rtlock wait for @l: the lock has a waiter, @t is
 * blocked on an rt_mutex, in TASK_RTLOCK_WAIT and switched out?
 */
static bool pvs_rtlock_asleep(struct pv_spinlock *l, struct task_struct *t)
{
	struct rt_mutex_base *rtm = pvs_rtm(l);
	bool waiters;

	raw_spin_lock_irq(&rtm->wait_lock);
	waiters = !RB_EMPTY_ROOT(&rtm->waiters.rb_root);
	raw_spin_unlock_irq(&rtm->wait_lock);
	return waiters && READ_ONCE(t->pi_blocked_on) &&
	       READ_ONCE(t->__state) == TASK_RTLOCK_WAIT && pvs_off_cpu(t);
}

/* Has @t (if started) exited, waiting at most @timeout for it? */
static bool pvs_rcu_wait(struct pvs_rcu_thread *t, unsigned long timeout)
{
	if (t->task && !t->finished &&
	    wait_for_completion_timeout(&t->done, timeout))
		t->finished = true;
	return !t->task || t->finished;
}

static void pvs_rcu_release(void *arg)
{
	struct pvs_rcu *r = arg;
	struct pvs_rcu_thread *t[] = {
		&r->hog, &r->holder, &r->reader, &r->syncer,
	};
	int i, stuck = 0;

	WRITE_ONCE(r->hog_stop, true);
	WRITE_ONCE(r->release, true);
	for (i = 0; i < ARRAY_SIZE(t); i++)
		if (!pvs_rcu_wait(t[i], PVS_RCU_LIMIT))
			stuck++;
	if (stuck) {
		/* The threads still use @r and run this module's code. */
		pr_err("pv_spinlock: %d thread(s) still blocked: context leaked\n",
		       stuck);
		__module_get(THIS_MODULE);
		return;
	}
	for (i = 0; i < ARRAY_SIZE(t); i++)
		if (t[i]->task)
			put_task_struct(t[i]->task);
	kfree(r);
}

/*
 * Starts @fn as thread @t on @cpu (any CPU if negative), at the lowest
 * SCHED_FIFO priority if @fifo (enough to keep a SCHED_NORMAL task off the
 * CPU, below interrupt threads and timers); keeps a reference to it.
 */
static bool pvs_rcu_start(struct kunit *test, struct pvs_rcu_thread *t,
			  int (*fn)(void *), struct pvs_rcu *r, int cpu,
			  bool fifo, const char *name)
{
	struct task_struct *task;

	if (cpu < 0)
		task = kthread_create(fn, r, "%s", name);
	else
		task = kthread_create_on_cpu(fn, r, cpu, name);
	if (IS_ERR(task)) {
		KUNIT_FAIL(test, "no %s thread: %pe", name, task);
		return false;
	}
	get_task_struct(task);
	t->task = task;
	if (fifo)
		sched_set_fifo_low(task);
	wake_up_process(task);
	return true;
}

/* A context that pvs_rcu_release() frees when the case ends. */
static struct pvs_rcu *pvs_rcu_alloc(struct kunit *test)
{
	struct pvs_rcu *r = kzalloc(sizeof(*r), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	pv_spin_lock_init(&r->lock);
	init_completion(&r->held);
	init_completion(&r->holder.done);
	init_completion(&r->reader.done);
	init_completion(&r->hog.done);
	init_completion(&r->syncer.done);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, pvs_rcu_release, r), 0);
	return r;
}

/*
 * A converted lock may be taken in a plain rcu_read_lock() reader once it
 * waits as an rtlock: the wait is noted as a preemption, so RCU neither
 * warns ("Voluntary context switch within RCU read-side critical section",
 * a console WARNING that fails the run) nor lets a grace period end while
 * the reader is blocked.  Once the reader is asleep in the rtlock wait (RCU
 * has queued it as a blocked reader), a synchronize_rcu() is started and
 * given a window of ten times what one took before (at least 100 ms, at
 * most 400 ms); then the holder releases the lock, the reader keeps it for
 * the window, and that grace period must end only after the reader's
 * rcu_read_unlock().
 */
static void pvs_rtlock_in_rcu_reader(struct kunit *test)
{
	unsigned long start, deadline;
	bool warned = test_taint(TAINT_WARN);
	bool locks = debug_locks;
	unsigned int c0, c1;
	struct pvs_rcu *r;
	bool asleep;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs 2 CPUs");
	r = pvs_rcu_alloc(test);

	/* How long a grace period takes here, with no reader in the way. */
	start = jiffies;
	synchronize_rcu();
	r->window = clamp_t(unsigned long, 10 * (jiffies - start),
			    PVS_RCU_WINDOW_MIN, PVS_RCU_WINDOW_MAX);
	kunit_info(test, "a grace period took %u ms, the window is %u ms\n",
		   jiffies_to_msecs(jiffies - start), jiffies_to_msecs(r->window));

	c0 = cpumask_first(cpu_online_mask);
	c1 = cpumask_next(c0, cpu_online_mask);
	KUNIT_ASSERT_TRUE(test, pvs_rcu_start(test, &r->holder, pvs_rcu_holder, r,
					      c0, false, "pvs_holder/%u"));
	KUNIT_ASSERT_TRUE(test, pvs_rcu_start(test, &r->reader, pvs_rcu_reader, r,
					      c1, false, "pvs_reader/%u"));
	KUNIT_ASSERT_NE_MSG(test, wait_for_completion_timeout(&r->held, PVS_RCU_LIMIT),
			    0, "the holder did not take the lock");
	KUNIT_ASSERT_TRUE(test, pvs_rcu_start(test, &r->hog, pvs_rcu_hog, r, c0,
					      true, "pvs_hog/%u"));

	deadline = jiffies + PVS_RCU_ASLEEP;
	while (!(asleep = pvs_rtlock_asleep(&r->lock, r->reader.task)) &&
	       time_before(jiffies, deadline))
		schedule_timeout_uninterruptible(1);
	KUNIT_ASSERT_TRUE_MSG(test, asleep,
			      "the reader did not sleep on the held lock");
#ifdef CONFIG_PREEMPT_RCU
	{
		/* rcu_note_context_switch() queued it as a blocked reader */
		struct task_struct *t = r->reader.task;
		bool blocked = READ_ONCE(t->rcu_read_unlock_special.b.blocked);

		KUNIT_EXPECT_TRUE_MSG(test, blocked,
				      "RCU does not count the sleeping task as a reader");
	}
#endif

	KUNIT_ASSERT_TRUE(test, pvs_rcu_start(test, &r->syncer, pvs_rcu_syncer, r,
					      -1, false, "pvs_syncer"));
	KUNIT_EXPECT_FALSE_MSG(test, pvs_rcu_wait(&r->syncer, r->window),
			       "a grace period ended inside the holder's RCU section (it holds the lock)");
	KUNIT_EXPECT_TRUE_MSG(test, pvs_rtlock_asleep(&r->lock, r->reader.task),
			      "the reader woke before the lock was released");

	WRITE_ONCE(r->hog_stop, true);
	WRITE_ONCE(r->release, true);
	KUNIT_ASSERT_TRUE_MSG(test, pvs_rcu_wait(&r->reader, PVS_RCU_LIMIT),
			      "the reader did not get the lock");
	KUNIT_ASSERT_TRUE_MSG(test, pvs_rcu_wait(&r->syncer, PVS_RCU_LIMIT),
			      "the grace period did not end");
	KUNIT_EXPECT_FALSE_MSG(test, READ_ONCE(r->timed_out),
			       "the holder or the hog hit its bound");
	/* the reader's own section and the one of holding the lock */
	KUNIT_EXPECT_EQ_MSG(test, r->rcu_depth, 2,
			    "the reader's RCU nesting while it held the lock");
	KUNIT_EXPECT_TRUE_MSG(test, r->out_at_gp_end,
			      "the grace period ended before the reader's rcu_read_unlock()");
	/*
	 * __schedule() counts a sleep in nvcsw whatever its mode (only
	 * SM_PREEMPT goes to nivcsw): this shows the sleep, not its kind.
	 */
	kunit_info(test, "the reader's context switches taking the lock: %lu voluntary, %lu involuntary\n",
		   r->csw[0], r->csw[1]);
	/*
	 * RCU's "Voluntary context switch" warning is WARN_ONCE(): once the
	 * kernel is tainted (expected warnings of earlier suites), only the
	 * console shows it.
	 */
	if (warned)
		kunit_info(test, "already tainted W: a warning is checked on the console only\n");
	else
		KUNIT_EXPECT_FALSE_MSG(test, test_taint(TAINT_WARN),
				       "a warning while the reader was blocked");

	if (!pvs_lockdep_part(test, locks))
		return;
	/* the lock and the RCU section of holding it, recorded as held */
	KUNIT_EXPECT_EQ_MSG(test, r->ld_depth[1] - r->ld_depth[0], 2,
			    "the locks lockdep recorded the reader taking");
	KUNIT_EXPECT_TRUE_MSG(test, debug_locks,
			      "lockdep or RCU reported the blocked reader");
}

/* The owner of the rt_mutex under @l, without its waiters bit. */
static struct task_struct *pvs_owner(struct pv_spinlock *l)
{
	unsigned long owner = (unsigned long)READ_ONCE(pvs_rtm(l)->owner);

	return (struct task_struct *)(owner & ~1UL);
}

/* current's migrate_disable() nesting; uniprocessor: none is kept. */
static int pvs_migration_disabled(void)
{
#ifdef CONFIG_SMP
	return current->migration_disabled;
#else
	return -1;
#endif
}

/* The misuse: @l is not held.  For sparse, as if it were. */
static void pvs_unlock_not_held(struct pv_spinlock *l)
{
	__acquire(l);
	pv_spin_unlock(l);
}

/*
 * With CONFIG_PV_SPINLOCK, pv_spin_unlock() of a lock another task holds
 * warns and changes nothing: the lock keeps its owner, and the caller's
 * RCU nesting, migration state and lockdep are left alone.
 */
static void pvs_rtlock_unlock_not_owner(struct kunit *test)
{
	bool locks = debug_locks, taken;
	int depth = rcu_preempt_depth(), now;
	int ld_depth, ld_now, held = 0, mig;
	struct pvs_rcu *r;

	if (!IS_ENABLED(CONFIG_PV_SPINLOCK))
		kunit_skip(test, "needs CONFIG_PV_SPINLOCK (else spin_unlock()'s own checks)");
	r = pvs_rcu_alloc(test);
	KUNIT_ASSERT_TRUE(test, pvs_rcu_start(test, &r->holder, pvs_rcu_holder, r,
					      -1, false, "pvs_holder"));
	KUNIT_ASSERT_NE_MSG(test, wait_for_completion_timeout(&r->held, PVS_RCU_LIMIT),
			    0, "the holder did not take the lock");

	/*
	 * Inside an RCU section and with migration disabled, as a caller
	 * holding the lock would be: a release would end one of each.
	 */
	migrate_disable();
	rcu_read_lock();
	ld_depth = pvs_lockdep_depth();
	kunit_info(test, "expect a warning: pv_spin_unlock() by a task that does not own the lock\n");
	pvs_unlock_not_held(&r->lock);
	kunit_info(test, "end of expected warning\n");
	ld_now = pvs_lockdep_depth();
#ifdef CONFIG_DEBUG_LOCK_ALLOC
	held = lock_is_held(&r->lock.lock.dep_map);
#endif
	now = rcu_preempt_depth();
	mig = pvs_migration_disabled();
	rcu_read_unlock();
	migrate_enable();

	KUNIT_EXPECT_PTR_EQ_MSG(test, pvs_owner(&r->lock), r->holder.task,
				"the lock changed owner");
	KUNIT_EXPECT_EQ_MSG(test, now, depth + 1, "the caller's RCU nesting changed");
	if (IS_ENABLED(CONFIG_SMP))
		KUNIT_EXPECT_EQ_MSG(test, mig, 1, "the caller's migration state changed");
	pvs_trylock_unlock(&r->lock, &taken);
	KUNIT_EXPECT_FALSE_MSG(test, taken, "the held lock could be taken");

	WRITE_ONCE(r->release, true);
	KUNIT_EXPECT_TRUE_MSG(test, pvs_rcu_wait(&r->holder, PVS_RCU_LIMIT),
			      "the holder did not finish");
	KUNIT_EXPECT_FALSE_MSG(test, READ_ONCE(r->timed_out),
			       "the holder hit its bound");

	if (!pvs_lockdep_part(test, locks))
		return;
	KUNIT_EXPECT_EQ_MSG(test, ld_now, ld_depth,
			    "lockdep's held locks changed: the misuse was released");
	KUNIT_EXPECT_EQ_MSG(test, held, 0, "lockdep records the caller as the holder");
	KUNIT_EXPECT_TRUE_MSG(test, debug_locks,
			      "lockdep reported the misuse as a release");
}
#else
static void pvs_rtlock_in_rcu_reader(struct kunit *test)
{
	kunit_skip(test, "needs CONFIG_PV_SPINLOCK or PREEMPT_RT");
}

static void pvs_rtlock_unlock_not_owner(struct kunit *test)
{
	kunit_skip(test, "needs CONFIG_PV_SPINLOCK");
}
#endif /* CONFIG_RTLOCK */

static struct kunit_case pv_spinlock_rtlock_cases[] = {
	KUNIT_CASE(pvs_rtlock_keeps_state),
	KUNIT_CASE(pvs_rtlock_keeps_wakeup),
	KUNIT_CASE(pvs_rtlock_boosts_owner),
	KUNIT_CASE(pvs_rtlock_in_rcu_reader),
	KUNIT_CASE(pvs_rtlock_unlock_not_owner),
	{}
};

static struct kunit_suite pv_spinlock_rtlock_suite = {
	.name = "pv_spinlock_rtlock",
	.test_cases = pv_spinlock_rtlock_cases,
};

kunit_test_suites(&pv_spinlock_suite, &pv_spinlock_might_sleep_suite,
		  &pv_spinlock_api_suite, &pv_spinlock_rtlock_suite);

MODULE_DESCRIPTION("KUnit rules of converted spinlocks");
MODULE_LICENSE("GPL");
