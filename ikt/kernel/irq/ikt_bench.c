// SPDX-License-Identifier: GPL-2.0
/*
 * Interrupt response time of a hard and a threaded handler, at module load.
 *
 * Copyright (C) 2026 PV-RT Developers
 *
 * The interrupt response time (IRT) of Heursch et al. (2004): from raising
 * an interrupt to the first instruction of its handler.  The interrupt
 * comes from an interrupt simulator line, raised with
 * irq_set_irqchip_state() (an irq_work: a self-IPI on x86), so both
 * handlers see the same hardware path.  It is raised from a hard hrtimer
 * at a random point in time, like a device interrupt, whatever the CPU is
 * doing then: the load runs into the measurement, not around it.  Two
 * requests are measured:
 *
 *   hard    requested with IRQF_NO_THREAD: runs in hard interrupt context
 *   thread  a plain request_irq(): threaded by IKT, or by mainline forced
 *           threading when booted with "ikt=off threadirqs"
 *
 * and the lateness of a timer_list callback, from the jiffy its timer
 * expired at to the jiffy it ran in, so with the resolution of one tick:
 *
 *   timer   run by the TIMER softirq: in ktimers under IKT, in ksoftirqd
 *           when booted with "ikt=off threadirqs"
 *
 * With gate=1 the thread mode stops after one unmeasured interrupt, with
 * the handler's thread in thread_pid, until 1 is written to the go
 * parameter: time to set the thread's priority with chrt, as an
 * administrator of a kernel booted with "threadirqs" would.
 *
 * Printed on the console, one result line per mode:
 *
 *   ikt_bench: result <mode> threaded=<t> prio=<lo> prio_max=<hi> samples=<n>
 *              min=<ns> avg=<ns> p50=<ns> p99=<ns> max=<ns>
 *   ikt_bench: hist <mode> <us> <count>     (non-zero 1 us buckets)
 *   ikt_bench: done
 *
 * where t counts the samples whose handler ran in a thread (for the timer
 * mode: in a softirq thread) and lo..hi is the range of the rt_priority
 * they ran at: every sample is accounted, not the last one.
 */

#include <linux/completion.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irq_sim.h>
#include <linux/irqdomain.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pid.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/timer.h>

static int samples = 1000;
module_param(samples, int, 0444);
MODULE_PARM_DESC(samples, "interrupts raised per handler (default 1000, at most 100000)");

static int gap_us = 500;
module_param(gap_us, int, 0444);
MODULE_PARM_DESC(gap_us, "time between two interrupts, random in gap_us..2*gap_us (default 500)");

static bool gate;
module_param(gate, bool, 0444);
MODULE_PARM_DESC(gate, "before measuring the threaded handler, wait for a write to go (default 0)");

static int thread_pid;
module_param(thread_pid, int, 0444);
MODULE_PARM_DESC(thread_pid, "with gate=1: the pid of the threaded handler's thread, once known");

static DECLARE_COMPLETION(ikt_bench_go);

static int ikt_bench_go_set(const char *val, const struct kernel_param *kp)
{
	bool go;
	int ret = kstrtobool(val, &go);

	if (ret)
		return ret;
	if (!go)
		return -EINVAL;
	complete(&ikt_bench_go);
	return 0;
}

static const struct kernel_param_ops ikt_bench_go_ops = {
	.set = ikt_bench_go_set,
};
module_param_cb(go, &ikt_bench_go_ops, NULL, 0200);
MODULE_PARM_DESC(go, "with gate=1: write 1 to start measuring the threaded handler");

struct ikt_bench {
	struct completion done;
	struct hrtimer timer;
	unsigned int irq;
	int raise_ret;
	u64 raised;
	u64 *ns;
	int n;
	int threaded;
	unsigned int prio_lo;
	unsigned int prio_hi;
	pid_t pid;
};

/* Accounts the context of sample B->n: thread or not, and its priority. */
static void ikt_bench_account(struct ikt_bench *b, bool threaded, unsigned int prio)
{
	if (threaded)
		b->threaded++;
	if (!b->n || prio < b->prio_lo)
		b->prio_lo = prio;
	if (!b->n || prio > b->prio_hi)
		b->prio_hi = prio;
}

static irqreturn_t ikt_bench_handler(int irq, void *dev_id)
{
	u64 now = local_clock();
	struct ikt_bench *b = dev_id;

	b->ns[b->n] = now - b->raised;
	b->pid = task_pid_nr(current);
	ikt_bench_account(b, !in_hardirq(), current->rt_priority);
	complete(&b->done);
	return IRQ_HANDLED;
}

/* The "device": raises the interrupt from hard interrupt context. */
static enum hrtimer_restart ikt_bench_raise(struct hrtimer *timer)
{
	struct ikt_bench *b = container_of(timer, struct ikt_bench, timer);

	b->raised = local_clock();
	b->raise_ret = irq_set_irqchip_state(b->irq, IRQCHIP_STATE_PENDING, true);
	if (b->raise_ret)
		complete(&b->done);
	return HRTIMER_NORESTART;
}

struct ikt_bench_timer {
	struct completion done;
	struct timer_list timer;
	u64 late_ns;
	bool threaded;
	unsigned int prio;
};

static void ikt_bench_timer_fn(struct timer_list *timer)
{
	struct ikt_bench_timer *t = container_of(timer, struct ikt_bench_timer, timer);

	t->late_ns = (u64)(jiffies - timer->expires) * TICK_NSEC;
	/* Run by a softirq thread, or by whatever task an interrupt left? */
	t->threaded = !strncmp(current->comm, "ktimers/", 8) ||
		      !strncmp(current->comm, "ksoftirqd/", 10);
	t->prio = current->rt_priority;
	complete(&t->done);
}

static int ikt_bench_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static void ikt_bench_report(const char *mode, struct ikt_bench *b)
{
	u64 sum = 0;
	int i, start;

	sort(b->ns, b->n, sizeof(u64), ikt_bench_cmp, NULL);
	for (i = 0; i < b->n; i++)
		sum += b->ns[i];
	pr_info("ikt_bench: result %s threaded=%d prio=%u prio_max=%u samples=%d min=%llu avg=%llu p50=%llu p99=%llu max=%llu\n",
		mode, b->threaded, b->prio_lo, b->prio_hi, b->n, b->ns[0], div_u64(sum, b->n),
		b->ns[b->n / 2], b->ns[(b->n * 99) / 100], b->ns[b->n - 1]);
	for (start = 0; start < b->n; ) {
		u64 us = div_u64(b->ns[start], NSEC_PER_USEC);

		for (i = start; i < b->n && div_u64(b->ns[i], NSEC_PER_USEC) == us; i++)
			;
		pr_info("ikt_bench: hist %s %llu %d\n", mode, us, i - start);
		start = i;
	}
}

/* Raises one interrupt at a random time and waits for its handler. */
static int ikt_bench_one(struct ikt_bench *b)
{
	u32 gap = gap_us + get_random_u32_below(gap_us + 1);

	reinit_completion(&b->done);
	hrtimer_start(&b->timer, ns_to_ktime((u64)gap * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_HARD);
	if (!wait_for_completion_timeout(&b->done, HZ)) {
		hrtimer_cancel(&b->timer);
		return -ETIMEDOUT;
	}
	hrtimer_cancel(&b->timer);
	return b->raise_ret;
}

/*
 * gate=1: one unmeasured interrupt names the handler's thread, then wait
 * until user space has set its priority and writes go.
 */
static int ikt_bench_gate(struct ikt_bench *b)
{
	long left;
	int ret;

	ret = ikt_bench_one(b);
	if (ret)
		return ret;
	if (!b->threaded) {
		pr_err("ikt_bench: gate=1 but the handler ran in hard interrupt context\n");
		return -EINVAL;
	}
	b->threaded = 0;
	WRITE_ONCE(thread_pid, b->pid);
	pr_info("ikt_bench: waiting for go, thread pid %d\n", b->pid);
	left = wait_for_completion_killable_timeout(&ikt_bench_go, 600 * HZ);
	WRITE_ONCE(thread_pid, 0);
	if (!left)
		return -ETIMEDOUT;
	return left < 0 ? -EINTR : 0;
}

static int ikt_bench_run(unsigned int irq, unsigned long flags, const char *mode,
			 u64 *buf)
{
	struct ikt_bench b = { .ns = buf, .irq = irq };
	int ret;

	init_completion(&b.done);
	/* On this stack frame: tell debugobjects, and destroy it before return. */
	hrtimer_init_on_stack(&b.timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	b.timer.function = ikt_bench_raise;
	ret = request_irq(irq, ikt_bench_handler, flags, "ikt-bench", &b);
	if (ret) {
		destroy_hrtimer_on_stack(&b.timer);
		return ret;
	}
	if (gate && !(flags & IRQF_NO_THREAD)) {
		ret = ikt_bench_gate(&b);
		if (ret)
			goto out;
	}
	for (b.n = 0; b.n < samples; b.n++) {
		ret = ikt_bench_one(&b);
		if (ret)
			goto out;
	}
	ikt_bench_report(mode, &b);
out:
	free_irq(irq, &b);
	destroy_hrtimer_on_stack(&b.timer);
	return ret;
}

static int ikt_bench_timers(u64 *buf)
{
	struct ikt_bench b = { .ns = buf };
	struct ikt_bench_timer t = { };
	int ret = 0;

	init_completion(&t.done);
	timer_setup_on_stack(&t.timer, ikt_bench_timer_fn, 0);
	for (b.n = 0; b.n < samples; b.n++) {
		reinit_completion(&t.done);
		mod_timer(&t.timer, jiffies + 1 + get_random_u32_below(3));
		if (!wait_for_completion_timeout(&t.done, 10 * HZ)) {
			ret = -ETIMEDOUT;
			break;
		}
		b.ns[b.n] = t.late_ns;
		ikt_bench_account(&b, t.threaded, t.prio);
	}
	timer_delete_sync(&t.timer);
	destroy_timer_on_stack(&t.timer);
	if (!ret)
		ikt_bench_report("timer", &b);
	return ret;
}

static int __init ikt_bench_init(void)
{
	struct fwnode_handle *fwnode;
	struct irq_domain *domain;
	unsigned int irq;
	u64 *buf;
	int ret;

	if (samples < 1 || samples > 100000 || gap_us < 1 || gap_us > 1000000)
		return -EINVAL;
	buf = kvcalloc(samples, sizeof(u64), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	fwnode = irq_domain_alloc_named_fwnode("ikt-bench");
	if (!fwnode) {
		ret = -ENOMEM;
		goto free_buf;
	}
	domain = irq_domain_create_sim(fwnode, 1);
	if (IS_ERR(domain)) {
		ret = PTR_ERR(domain);
		goto free_fwnode;
	}
	irq = irq_create_mapping(domain, 0);
	if (!irq) {
		ret = -ENOMEM;
		goto remove_domain;
	}

	ret = ikt_bench_run(irq, IRQF_NO_THREAD, "hard", buf);
	if (!ret)
		ret = ikt_bench_run(irq, 0, "thread", buf);
	if (!ret)
		ret = ikt_bench_timers(buf);
	if (ret)
		pr_err("ikt_bench: failed: %d\n", ret);
	else
		pr_info("ikt_bench: done\n");

	irq_dispose_mapping(irq);
remove_domain:
	irq_domain_remove_sim(domain);
free_fwnode:
	irq_domain_free_fwnode(fwnode);
free_buf:
	kvfree(buf);
	return ret;
}
module_init(ikt_bench_init);

static void __exit ikt_bench_exit(void)
{
}
module_exit(ikt_bench_exit);

MODULE_DESCRIPTION("Interrupt response time of hard and threaded handlers");
MODULE_LICENSE("GPL");
