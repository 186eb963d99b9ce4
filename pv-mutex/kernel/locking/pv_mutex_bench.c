// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark pv_mutex against rt_mutex and mutex, at module load.
 *
 * Copyright (C) 2026 PV-RT Developers
 *
 * Two figures, reported in the kernel log, one line each:
 *
 *   pv_mutex_bench: uncontended <lock> <ns per lock+unlock>
 *   pv_mutex_bench: chain <lock> <depth> <ns per boost>
 *
 * "chain" builds a chain of <depth> owners, each blocked on the lock held
 * by the next, with a waiter at its head, then changes the waiter's
 * priority back and forth: every change walks the whole chain (boost, then
 * deboost), through rt_mutex_adjust_pi().  <lock> "pv+rt" is a chain
 * whose locks alternate between pv_mutex and rt_mutex.  The benchmark runs
 * in a kthread of its own at SCHED_FIFO 90 on CPU 0, which module_init()
 * waits for, so the task that loads the module keeps its policy and CPU
 * affinity; every chain thread runs on CPU 0 below it, so nothing else
 * moves while a walk is timed.  Not built with lockdep, whose cost would swamp
 * what is measured (and which would see one lock class nested 64 deep).
 */

#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pv_mutex.h>
#include <linux/rtmutex.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <uapi/linux/sched/types.h>

static int loops = 100000;
module_param(loops, int, 0444);
MODULE_PARM_DESC(loops, "uncontended lock+unlock pairs per run (default 100000)");

static int walks = 1000;
module_param(walks, int, 0444);
MODULE_PARM_DESC(walks, "priority changes timed per chain depth (default 1000)");

static int max_depth = 64;
module_param(max_depth, int, 0444);
MODULE_PARM_DESC(max_depth, "longest chain, doubling from 1 (default 64, at most 256)");

/* One lock under test; the ops vector says which member is in use. */
union bench_lock {
	struct pv_mutex pv;	/* bench_pv_ops */
	struct rt_mutex rt;	/* bench_rt_ops */
	struct mutex m;		/* bench_m_ops */
};

struct bench_ops {
	const char *name;
	void (*init)(union bench_lock *l);
	void (*lock)(union bench_lock *l);
	void (*unlock)(union bench_lock *l);
};

/* Blocked on a pv_mutex or an rt_mutex: both queue an rt_mutex_waiter. */
static bool bench_queued(struct task_struct *t)
{
	return READ_ONCE(t->pi_blocked_on);
}

static void b_pv_init(union bench_lock *l) { pv_mutex_init(&l->pv); }
static void b_pv_lock(union bench_lock *l) { pv_mutex_lock(&l->pv); }
static void b_pv_unlock(union bench_lock *l) { pv_mutex_unlock(&l->pv); }

static void b_rt_init(union bench_lock *l) { rt_mutex_init(&l->rt); }
static void b_rt_lock(union bench_lock *l) { rt_mutex_lock(&l->rt); }
static void b_rt_unlock(union bench_lock *l) { rt_mutex_unlock(&l->rt); }

static void b_m_init(union bench_lock *l) { mutex_init(&l->m); }
static void b_m_lock(union bench_lock *l) { mutex_lock(&l->m); }
static void b_m_unlock(union bench_lock *l) { mutex_unlock(&l->m); }

static const struct bench_ops bench_pv_ops = {
	"pv_mutex", b_pv_init, b_pv_lock, b_pv_unlock,
};

static const struct bench_ops bench_rt_ops = {
	"rt_mutex", b_rt_init, b_rt_lock, b_rt_unlock,
};

static const struct bench_ops bench_m_ops = {
	"mutex", b_m_init, b_m_lock, b_m_unlock,
};

static int bench_set_fifo(struct task_struct *t, int prio)
{
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = SCHED_FIFO,
		.sched_priority = prio,
	};

	return sched_setattr_nocheck(t, &attr);
}

/* Best of five runs of @loops uncontended lock+unlock pairs, in ns/pair. */
static u64 bench_uncontended(const struct bench_ops *ops)
{
	union bench_lock *l = kzalloc(sizeof(*l), GFP_KERNEL);
	u64 best = U64_MAX, t0, dt;
	int run, i;

	if (!l)
		return 0;
	ops->init(l);
	for (run = 0; run < 5; run++) {
		t0 = ktime_get_ns();
		for (i = 0; i < loops; i++) {
			ops->lock(l);
			ops->unlock(l);
		}
		dt = ktime_get_ns() - t0;
		best = min(best, dt);
	}
	kfree(l);
	return div_u64(best, loops);
}

struct chain_link {
	const struct bench_ops	*ops, *next_ops;	/* of @own, of @next */
	union bench_lock	*own, *next;	/* holds @own, then waits on @next */
	struct completion	holding, release;
	struct task_struct	*task;
};

static int chain_fn(void *arg)
{
	struct chain_link *c = arg;

	c->ops->lock(c->own);
	complete(&c->holding);
	if (c->next) {
		c->next_ops->lock(c->next);	/* blocks until the chain unwinds */
		c->next_ops->unlock(c->next);
	} else {
		wait_for_completion(&c->release);
	}
	c->ops->unlock(c->own);
	return 0;
}

static int wait_queued(struct task_struct *t)
{
	unsigned long until = jiffies + 10 * HZ;

	while (!(bench_queued(t) && !READ_ONCE(t->on_rq))) {
		if (time_after(jiffies, until))
			return -ETIMEDOUT;
		schedule_timeout_uninterruptible(1);
	}
	return 0;
}

/*
 * Chain of @depth owners plus a head waiter; returns ns per priority change
 * of the head waiter (each one walks the whole chain), or 0 on failure.
 * The locks are of type @ops, or alternate between @ops and @alt.
 */
static u64 bench_chain(const struct bench_ops *ops,
		       const struct bench_ops *alt, int depth)
{
	union bench_lock *locks;
	struct chain_link *links;
	u64 t0, dt = 0;
	int i, n = depth + 1;	/* links[depth] is the head waiter */
	bool ok = true;

	locks = kcalloc(n, sizeof(*locks), GFP_KERNEL);
	links = kcalloc(n, sizeof(*links), GFP_KERNEL);
	if (!locks || !links)
		goto out_free;
	for (i = 0; i < n; i++) {
		links[i].ops = alt && (i & 1) ? alt : ops;
		links[i].ops->init(&locks[i]);
		links[i].next_ops = i ? links[i - 1].ops : NULL;
		links[i].own = &locks[i];
		links[i].next = i ? &locks[i - 1] : NULL;
		init_completion(&links[i].holding);
		init_completion(&links[i].release);
	}
	for (i = 0; i < n; i++) {
		struct chain_link *c = &links[i];

		c->task = kthread_create(chain_fn, c, "pvbench/%d", i);
		if (IS_ERR(c->task)) {
			ok = false;
			c->task = NULL;
			break;
		}
		get_task_struct(c->task);
		kthread_bind(c->task, 0);
		bench_set_fifo(c->task, 1);
		wake_up_process(c->task);
		wait_for_completion(&c->holding);
		if (i && wait_queued(c->task)) {
			ok = false;
			break;
		}
	}
	if (ok) {
		struct task_struct *head = links[depth].task;

		t0 = ktime_get_ns();
		for (i = 0; i < walks; i++)
			bench_set_fifo(head, i & 1 ? 2 : 3);
		dt = div_u64(ktime_get_ns() - t0, walks);
	}
	complete(&links[0].release);
	for (i = 0; i < n; i++) {
		if (!links[i].task)
			continue;
		kthread_stop(links[i].task);
		put_task_struct(links[i].task);
	}
out_free:
	kfree(links);
	kfree(locks);
	return ok ? dt : 0;
}

static DECLARE_COMPLETION(bench_done);

/* The benchmark, in its own thread; it stops early for kthread_stop(). */
static int pv_mutex_bench_fn(void *unused)
{
	static const struct bench_ops *all[] = { &bench_pv_ops, &bench_rt_ops, &bench_m_ops };
	static const struct bench_ops *pi[] = { &bench_pv_ops, &bench_rt_ops };
	int i, depth;

	for (i = 0; i < ARRAY_SIZE(all); i++) {
		if (kthread_should_stop())
			return -EINTR;
		pr_info("pv_mutex_bench: uncontended %s %llu\n", all[i]->name,
			bench_uncontended(all[i]));
	}
	for (depth = 1; depth <= max_depth; depth *= 2) {
		for (i = 0; i < ARRAY_SIZE(pi); i++) {
			if (kthread_should_stop())
				return -EINTR;
			pr_info("pv_mutex_bench: chain %s %d %llu\n", pi[i]->name,
				depth, bench_chain(pi[i], NULL, depth));
		}
		pr_info("pv_mutex_bench: chain pv+rt %d %llu\n", depth,
			bench_chain(&bench_pv_ops, &bench_rt_ops, depth));
	}
	pr_info("pv_mutex_bench: done\n");
	complete(&bench_done);
	return 0;
}

static int __init pv_mutex_bench_init(void)
{
	struct task_struct *t;
	int ret;

	if (loops < 1 || walks < 1 || max_depth < 1 || max_depth > 256) {
		pr_err("pv_mutex_bench: loops, walks >= 1, max_depth 1..256\n");
		return -EINVAL;
	}
	t = kthread_create(pv_mutex_bench_fn, NULL, "pv_mutex_bench");
	if (IS_ERR(t))
		return PTR_ERR(t);
	kthread_bind(t, 0);
	if (bench_set_fifo(t, 90)) {
		kthread_stop(t);	/* never woken: pv_mutex_bench_fn() does not run */
		return -EPERM;
	}
	get_task_struct(t);
	wake_up_process(t);
	/* Killable: a fatal signal stops the benchmark at its next figure. */
	ret = wait_for_completion_killable(&bench_done);
	kthread_stop(t);
	put_task_struct(t);
	return ret ? -EINTR : 0;
}
module_init(pv_mutex_bench_init);

static void __exit pv_mutex_bench_exit(void)
{
}
module_exit(pv_mutex_bench_exit);

MODULE_DESCRIPTION("pv_mutex versus rt_mutex and mutex: uncontended cost, PI chain walks");
MODULE_LICENSE("GPL");
