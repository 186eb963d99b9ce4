// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for interrupt kernel threads (IKT): where handlers run, at
 * which priority, what a ONESHOT line does while its thread runs, whom an
 * interrupt thread preempts, and what the priority file accepts.
 *
 * Copyright (C) 2026 PV-RT Developers
 *
 * Interrupts come from an interrupt simulator domain (CONFIG_IRQ_SIM): a
 * simulated interrupt is raised through irq_set_irqchip_state() and
 * delivered from an irq_work, i.e. in hard interrupt context on the CPU
 * that raised it.  The suite needs a kernel that can force-thread
 * interrupts (x86_64 under QEMU; UML cannot).
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/cred.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irq_sim.h>
#include <linux/irqdomain.h>
#include <linux/irq_work.h>
#include <linux/kernel_stat.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <uapi/linux/sched/types.h>

#include "../internals.h"

#define IKT_TEST_IRQS	2
#define WAIT_LIMIT	(10 * HZ)
#define SPIN_LIMIT_NS	(5 * NSEC_PER_SEC)

/* What a handler saw when it ran. */
struct ikt_seen {
	bool hardirq;
	bool irqs_off;
	struct task_struct *task;
	int policy;
	unsigned int prio;
};

struct ikt_test {
	struct fwnode_handle *fwnode;
	struct irq_domain *domain;
	unsigned int virq[IKT_TEST_IRQS];
	struct completion primary_done;
	struct completion thread_done;
	atomic_t primaries;
	struct ikt_seen primary;
	struct ikt_seen thread;
	bool masked_in_thread;
	int refire_ret;
	struct irq_work level_work;
};

static void ikt_record(struct ikt_seen *seen)
{
	seen->hardirq = in_hardirq();
	seen->irqs_off = irqs_disabled();
	seen->task = current;
	seen->policy = current->policy;
	seen->prio = current->rt_priority;
}

static void ikt_primary_ran(struct ikt_test *t)
{
	ikt_record(&t->primary);
	atomic_inc(&t->primaries);
	complete(&t->primary_done);
}

static irqreturn_t ikt_handler(int irq, void *dev_id)
{
	ikt_primary_ran(dev_id);
	return IRQ_HANDLED;
}

static irqreturn_t ikt_wake_handler(int irq, void *dev_id)
{
	ikt_primary_ran(dev_id);
	return IRQ_WAKE_THREAD;
}

static irqreturn_t ikt_thread_fn(int irq, void *dev_id)
{
	struct ikt_test *t = dev_id;

	ikt_record(&t->thread);
	t->masked_in_thread = irqd_irq_masked(irq_get_irq_data(irq));
	/* The line is masked: this interrupt must not get through now. */
	t->refire_ret = irq_set_irqchip_state(irq, IRQCHIP_STATE_PENDING, true);
	complete(&t->thread_done);
	return IRQ_HANDLED;
}

/*
 * The simulator delivers through handle_simple_irq(), which never masks.
 * A level-triggered line is simulated by running the line's own flow
 * handler (handle_level_irq(), which masks through the simulator's chip)
 * from a hard irq_work.
 */
static void ikt_level_fire(struct irq_work *work)
{
	struct ikt_test *t = container_of(work, struct ikt_test, level_work);

	generic_handle_irq(t->virq[0]);
}

static int ikt_test_init(struct kunit *test)
{
	struct ikt_test *t;
	int i;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	init_completion(&t->primary_done);
	init_completion(&t->thread_done);
	t->level_work = IRQ_WORK_INIT_HARD(ikt_level_fire);

	t->fwnode = irq_domain_alloc_named_fwnode("ikt-kunit");
	KUNIT_ASSERT_NOT_NULL(test, t->fwnode);
	t->domain = irq_domain_create_sim(t->fwnode, IKT_TEST_IRQS);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t->domain));
	for (i = 0; i < IKT_TEST_IRQS; i++) {
		t->virq[i] = irq_create_mapping(t->domain, i);
		KUNIT_ASSERT_NE(test, t->virq[i], 0);
	}
	test->priv = t;
	return 0;
}

static void ikt_test_exit(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	int i;

	if (!t || IS_ERR_OR_NULL(t->domain))
		return;
	irq_work_sync(&t->level_work);
	for (i = 0; i < IKT_TEST_IRQS; i++) {
		if (!t->virq[i])
			continue;
		/* A case that stopped on a failed assertion left it requested. */
		if (irq_has_action(t->virq[i]))
			free_irq(t->virq[i], t);
		irq_dispose_mapping(t->virq[i]);
	}
	irq_domain_remove_sim(t->domain);
	irq_domain_free_fwnode(t->fwnode);
}

static void ikt_fire(struct kunit *test, unsigned int irq)
{
	KUNIT_ASSERT_EQ(test, irq_set_irqchip_state(irq, IRQCHIP_STATE_PENDING, true), 0);
}

static void ikt_wait(struct kunit *test, struct completion *done)
{
	KUNIT_ASSERT_GT_MSG(test, wait_for_completion_timeout(done, WAIT_LIMIT), 0,
			    "the handler did not run within %d s", WAIT_LIMIT / HZ);
}

static void ikt_require_threading(struct kunit *test)
{
	if (!ikt_enabled || !force_irqthreads())
		kunit_skip(test, "booted with ikt=off");
}

static struct irqaction *ikt_action(unsigned int irq)
{
	return irq_to_desc(irq)->action;
}

static const char *ikt_mode(unsigned int irq, const char **reason)
{
	struct irq_desc *desc = irq_to_desc(irq);
	const char *mode;

	raw_spin_lock_irq(&desc->lock);
	mode = ikt_action_mode(desc, desc->action, reason);
	raw_spin_unlock_irq(&desc->lock);
	return mode;
}

/* A plain request_irq() handler runs in a SCHED_FIFO kthread at the default. */
static void ikt_threaded_by_default(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	const char *reason;

	ikt_require_threading(test);
	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, 0, "ikt-kunit-plain", t), 0);
	ikt_fire(test, irq);
	ikt_wait(test, &t->primary_done);

	KUNIT_EXPECT_FALSE(test, t->primary.hardirq);
	KUNIT_EXPECT_TRUE(test, t->primary.task->flags & PF_KTHREAD);
	KUNIT_EXPECT_PTR_EQ(test, t->primary.task, ikt_action(irq)->thread);
	KUNIT_EXPECT_EQ(test, t->primary.policy, SCHED_FIFO);
	KUNIT_EXPECT_EQ(test, t->primary.prio, CONFIG_IKT_DEFAULT_PRIO);
	KUNIT_EXPECT_STREQ(test, ikt_mode(irq, &reason), "threaded");
	KUNIT_EXPECT_NULL(test, reason);
	free_irq(irq, t);
}

/* The boot rule ikt.prio=ikt-kunit-boot:<p> gives that action's thread p. */
static void ikt_boot_param_prio(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	unsigned int want;

	ikt_require_threading(test);
	want = ikt_rules_prio(ikt_boot_prio_rules(), irq, "ikt-kunit-boot");
	if (!want)
		kunit_skip(test, "boot with ikt.prio=ikt-kunit-boot:<prio> to run this");

	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, 0, "ikt-kunit-boot", t), 0);
	ikt_fire(test, irq);
	ikt_wait(test, &t->primary_done);
	KUNIT_EXPECT_FALSE(test, t->primary.hardirq);
	KUNIT_EXPECT_EQ(test, t->primary.policy, SCHED_FIFO);
	KUNIT_EXPECT_EQ(test, t->primary.prio, want);
	free_irq(irq, t);
}

struct ikt_rules_case {
	const char *str;
	int ret;
	unsigned int irq;
	const char *name;
	unsigned int prio;	/* what the rules give (irq, name) */
};

static const struct ikt_rules_case ikt_rules_cases[] = {
	{ "5:70",		0,	5, NULL,	70 },
	{ "eth0:80,3:90",	0,	3, "eth0",	90 },
	{ "eth0:80,3:90",	0,	4, "eth0",	80 },
	{ "eth0:80,3:90",	0,	4, "eth1",	0 },
	{ "a:b:7",		0,	9, "a:b",	7 },
	{ "ttyS0:1,ttyS0:99",	0,	4, "ttyS0",	1 },
	{ "",			-EINVAL },
	{ ":50",		-EINVAL },
	{ "x:0",		-EINVAL },
	{ "x:100",		-EINVAL },
	{ "x:-1",		-EINVAL },
	{ "x:",			-EINVAL },
	{ "x",			-EINVAL },
	{ "x:5O",		-EINVAL },
	{ "x:50,",		-EINVAL },
	{ ",x:50",		-EINVAL },
	{ "x:4294967346",	-EINVAL },
	{ "irq-name-of-31-characters-is-ok:50", 0, 9, "irq-name-of-31-characters-is-ok", 50 },
	{ "irq-name-of-32-characters-ok-not:50", -EINVAL },
	{ "1:1,2:1,3:1,4:1,5:1,6:1,7:1,8:1,9:1,10:1,11:1,12:1,13:1,14:1,15:1,16:1,17:1",
				-EINVAL },
};

static void ikt_rules_desc(const struct ikt_rules_case *c, char *desc)
{
	if (c->ret)
		snprintf(desc, KUNIT_PARAM_DESC_SIZE, "\"%.40s\" rejected", c->str);
	else
		snprintf(desc, KUNIT_PARAM_DESC_SIZE, "\"%.40s\" gives irq %u/%s %u",
			 c->str, c->irq, c->name ?: "-", c->prio);
}

KUNIT_ARRAY_PARAM(ikt_rules, ikt_rules_cases, ikt_rules_desc);

/* ikt.prio= parsing: valid rules apply in order, bad ones change nothing. */
static void ikt_prio_rules_parse(struct kunit *test)
{
	const struct ikt_rules_case *c = test->param_value;
	struct ikt_prio_rules rules = { .nr = 1, .rule = { { .irq = 1, .prio = 42 } } };

	KUNIT_ASSERT_EQ(test, ikt_parse_prio_rules(c->str, &rules), c->ret);
	if (c->ret) {
		KUNIT_EXPECT_EQ(test, rules.nr, 1);
		KUNIT_EXPECT_EQ(test, ikt_rules_prio(&rules, 1, NULL), 42);
		return;
	}
	KUNIT_EXPECT_EQ(test, ikt_rules_prio(&rules, c->irq, c->name), c->prio);
}

/* irq_set_thread_priority() moves the primary and the secondary thread. */
static void ikt_runtime_prio(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	struct irqaction *action;
	char buf[32];

	ikt_require_threading(test);
	/* A primary handler and a thread function: forced into two threads. */
	KUNIT_ASSERT_EQ(test, request_threaded_irq(irq, ikt_wake_handler, ikt_thread_fn,
						   0, "ikt-kunit-runtime", t), 0);
	action = ikt_action(irq);
	KUNIT_ASSERT_NOT_NULL(test, action->thread);
	KUNIT_ASSERT_NOT_NULL(test, action->secondary);
	KUNIT_ASSERT_NOT_NULL(test, action->secondary->thread);

	KUNIT_ASSERT_EQ(test, irq_set_thread_priority(irq, 71), 0);
	KUNIT_EXPECT_EQ(test, action->thread->rt_priority, 71);
	KUNIT_EXPECT_EQ(test, action->secondary->thread->rt_priority, 71);
	KUNIT_EXPECT_EQ(test, ikt_thread_priority_show(irq, buf, sizeof(buf)), 3);
	KUNIT_EXPECT_STREQ(test, buf, "71\n");

	ikt_fire(test, irq);
	ikt_wait(test, &t->primary_done);
	ikt_wait(test, &t->thread_done);
	KUNIT_EXPECT_FALSE(test, t->primary.hardirq);
	KUNIT_EXPECT_EQ(test, t->primary.prio, 71);
	KUNIT_EXPECT_FALSE(test, t->thread.hardirq);
	KUNIT_EXPECT_EQ(test, t->thread.prio, 71);
	KUNIT_EXPECT_PTR_NE(test, t->primary.task, t->thread.task);
	free_irq(irq, t);

	/* A thread created later for the same interrupt starts at 71 too. */
	reinit_completion(&t->primary_done);
	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, 0, "ikt-kunit-later", t), 0);
	ikt_fire(test, irq);
	ikt_wait(test, &t->primary_done);
	KUNIT_EXPECT_EQ(test, t->primary.prio, 71);
	free_irq(irq, t);
}

struct ikt_mode_case {
	const char *name;
	unsigned long flags;
	bool hardirq;
	const char *reason;
};

static const struct ikt_mode_case ikt_mode_cases[] = {
	{ "plain",	0,		false,	NULL },
	{ "timer",	IRQF_TIMER,	true,	"timer" },
	{ "no_thread",	IRQF_NO_THREAD,	true,	"no_thread" },
};

static void ikt_mode_desc(const struct ikt_mode_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ikt_modes, ikt_mode_cases, ikt_mode_desc);

/* IRQF_TIMER (and IRQF_NO_THREAD) handlers stay in hard interrupt context. */
static void ikt_hard_handlers(struct kunit *test)
{
	const struct ikt_mode_case *c = test->param_value;
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	const char *reason;

	ikt_require_threading(test);
	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, c->flags, "ikt-kunit-mode", t), 0);
	ikt_fire(test, irq);
	ikt_wait(test, &t->primary_done);
	KUNIT_EXPECT_EQ(test, t->primary.hardirq, c->hardirq);
	KUNIT_EXPECT_STREQ(test, ikt_mode(irq, &reason), c->hardirq ? "hard" : "threaded");
	if (c->reason)
		KUNIT_EXPECT_STREQ(test, reason, c->reason);
	else
		KUNIT_EXPECT_NULL(test, reason);
	KUNIT_EXPECT_EQ(test, !ikt_action(irq)->thread, c->hardirq);
	free_irq(irq, t);
}

/*
 * An IRQF_ONESHOT request on a level-triggered line: IKT runs the primary
 * handler in the thread, with interrupts off, then the thread function in
 * the same thread, preemptible, while the line stays masked; the line is
 * unmasked only when the thread function has returned.
 */
static void ikt_oneshot_masked(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	struct irqaction *action;

	ikt_require_threading(test);
	irq_set_handler(irq, handle_level_irq);
	KUNIT_ASSERT_EQ(test, request_threaded_irq(irq, ikt_wake_handler, ikt_thread_fn,
						   IRQF_ONESHOT, "ikt-kunit-oneshot", t), 0);
	action = ikt_action(irq);
	KUNIT_EXPECT_NULL(test, action->secondary);

	irq_work_queue(&t->level_work);
	ikt_wait(test, &t->thread_done);
	synchronize_irq(irq);

	KUNIT_EXPECT_FALSE(test, t->primary.hardirq);
	KUNIT_EXPECT_TRUE(test, t->primary.irqs_off);
	KUNIT_EXPECT_PTR_EQ(test, t->primary.task, action->thread);
	KUNIT_EXPECT_PTR_EQ(test, t->thread.task, action->thread);
	KUNIT_EXPECT_FALSE(test, t->thread.hardirq);
	KUNIT_EXPECT_FALSE(test, t->thread.irqs_off);
	KUNIT_EXPECT_TRUE(test, t->masked_in_thread);
	KUNIT_EXPECT_EQ(test, t->refire_ret, 0);
	/* Raised at the chip while masked: not delivered, neither then nor now. */
	KUNIT_EXPECT_EQ(test, atomic_read(&t->primaries), 1);
	KUNIT_EXPECT_FALSE(test, irqd_irq_masked(irq_get_irq_data(irq)));

	/* Unmasked again: the next interrupt gets through. */
	reinit_completion(&t->thread_done);
	irq_work_queue(&t->level_work);
	ikt_wait(test, &t->thread_done);
	synchronize_irq(irq);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->primaries), 2);
	free_irq(irq, t);
}

struct ikt_preempt_case {
	const char *name;
	unsigned int task_prio;
	bool preempted;
};

#define IKT_PREEMPT_IRQ_PRIO	50

static const struct ikt_preempt_case ikt_preempt_cases[] = {
	{ "task above the irq thread", IKT_PREEMPT_IRQ_PRIO + 10, false },
	{ "task below the irq thread", IKT_PREEMPT_IRQ_PRIO - 10, true },
};

static void ikt_preempt_desc(const struct ikt_preempt_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ikt_preempt, ikt_preempt_cases, ikt_preempt_desc);

struct ikt_spinner {
	struct ikt_test *t;
	unsigned int irq;
	int cpu;
	bool handler_ran;	/* when the hard interrupt had been taken */
	bool timed_out;
	struct completion done;
};

/*
 * Raise the interrupt on this CPU and spin until its hard part has run
 * here.  The thread is bound to this CPU too, so when the spinner sees the
 * interrupt counted, either the thread already preempted it and ran the
 * handler, or it is still waiting for the spinner to give up the CPU.
 */
static int ikt_spinner_fn(void *data)
{
	struct ikt_spinner *s = data;
	unsigned int before = kstat_irqs_cpu(s->irq, s->cpu);
	u64 start = ktime_get_ns();

	if (!irq_set_irqchip_state(s->irq, IRQCHIP_STATE_PENDING, true)) {
		while (kstat_irqs_cpu(s->irq, s->cpu) == before) {
			if (ktime_get_ns() - start > SPIN_LIMIT_NS) {
				s->timed_out = true;
				break;
			}
			cpu_relax();
		}
	}
	s->handler_ran = completion_done(&s->t->primary_done);
	complete(&s->done);

	set_current_state(TASK_UNINTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_UNINTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/* A FIFO task above an irq thread keeps the CPU; one below is preempted. */
static void ikt_preemption(struct kunit *test)
{
	const struct ikt_preempt_case *c = test->param_value;
	struct sched_param sp = { .sched_priority = c->task_prio };
	struct ikt_test *t = test->priv;
	struct ikt_spinner s = { .t = t, .irq = t->virq[0] };
	struct task_struct *irq_thread, *task;

	ikt_require_threading(test);
	if (!IS_ENABLED(CONFIG_PREEMPTION))
		kunit_skip(test, "needs a preemptible kernel (CONFIG_PREEMPT)");

	KUNIT_ASSERT_EQ(test, request_irq(s.irq, ikt_handler, 0, "ikt-kunit-preempt", t), 0);
	KUNIT_ASSERT_EQ(test, irq_set_thread_priority(s.irq, IKT_PREEMPT_IRQ_PRIO), 0);
	/* Let the thread run once: it applies the interrupt's affinity then. */
	ikt_fire(test, s.irq);
	ikt_wait(test, &t->primary_done);
	reinit_completion(&t->primary_done);

	s.cpu = cpumask_first(cpu_online_mask);
	irq_thread = ikt_action(s.irq)->thread;
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(irq_thread, cpumask_of(s.cpu)), 0);

	init_completion(&s.done);
	task = kthread_create(ikt_spinner_fn, &s, "ikt-kunit-spin");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	get_task_struct(task);
	kthread_bind(task, s.cpu);
	KUNIT_ASSERT_EQ(test, sched_setscheduler_nocheck(task, SCHED_FIFO, &sp), 0);
	wake_up_process(task);

	ikt_wait(test, &s.done);
	kthread_stop(task);
	put_task_struct(task);
	ikt_wait(test, &t->primary_done);

	KUNIT_EXPECT_FALSE(test, s.timed_out);
	KUNIT_EXPECT_EQ_MSG(test, s.handler_ran, c->preempted,
			    "FIFO %u task vs FIFO %u irq thread", c->task_prio,
			    IKT_PREEMPT_IRQ_PRIO);
	KUNIT_EXPECT_PTR_EQ(test, t->primary.task, irq_thread);
	free_irq(s.irq, t);
}

/* Writes to /proc/irq/<N>/thread_priority that must change nothing. */
static const char * const ikt_bad_prio_input[] = {
	"0", "100", "-1", "", " ", "\n", "abc", "50x", "0x32", "5 0", "+", "1e2",
	"4294967297", "99999999999999999999", "12345678901234567890123",
};

static const char *ikt_show(struct kunit *test, unsigned int irq)
{
	char *buf = kunit_kzalloc(test, 64, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_GT(test, ikt_thread_priority_show(irq, buf, 64), 0);
	return buf;
}

/*
 * The priority file takes 1..99 from a CAP_SYS_NICE writer; everything
 * else is -EINVAL (or -EPERM) and leaves the threads and the file alone.
 */
static void ikt_proc_input(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	struct task_struct *thread;
	const struct cred *old;
	struct cred *cred;
	int i;

	ikt_require_threading(test);
	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, 0, "ikt-kunit-proc", t), 0);
	thread = ikt_action(irq)->thread;
	KUNIT_ASSERT_NOT_NULL(test, thread);
	KUNIT_ASSERT_EQ(test, ikt_thread_priority_store(irq, " 77\n"), 0);
	KUNIT_EXPECT_EQ(test, thread->rt_priority, 77);
	KUNIT_EXPECT_STREQ(test, ikt_show(test, irq), "77\n");

	for (i = 0; i < ARRAY_SIZE(ikt_bad_prio_input); i++) {
		KUNIT_EXPECT_EQ_MSG(test, ikt_thread_priority_store(irq, ikt_bad_prio_input[i]),
				    -EINVAL, "input \"%s\"", ikt_bad_prio_input[i]);
		KUNIT_EXPECT_EQ(test, thread->rt_priority, 77);
		KUNIT_EXPECT_EQ(test, thread->policy, SCHED_FIFO);
		KUNIT_EXPECT_STREQ(test, ikt_show(test, irq), "77\n");
	}

	/* Without CAP_SYS_NICE even a valid priority is refused. */
	cred = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, cred);
	cap_lower(cred->cap_effective, CAP_SYS_NICE);
	old = override_creds(cred);
	KUNIT_EXPECT_EQ(test, ikt_thread_priority_store(irq, "60"), -EPERM);
	revert_creds(old);
	put_cred(cred);
	KUNIT_EXPECT_EQ(test, thread->rt_priority, 77);

	/* The in-kernel call checks the same range, and the interrupt. */
	KUNIT_EXPECT_EQ(test, irq_set_thread_priority(irq, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, irq_set_thread_priority(irq, MAX_RT_PRIO), -EINVAL);
	KUNIT_EXPECT_EQ(test, irq_set_thread_priority(INT_MAX, 50), -EINVAL);
	KUNIT_EXPECT_EQ(test, thread->rt_priority, 77);
	KUNIT_EXPECT_EQ(test, ikt_thread_priority_store(irq, "1"), 0);
	KUNIT_EXPECT_EQ(test, thread->rt_priority, 1);
	KUNIT_EXPECT_EQ(test, ikt_thread_priority_store(irq, "99"), 0);
	KUNIT_EXPECT_EQ(test, thread->rt_priority, 99);
	free_irq(irq, t);
}

static struct kunit_case ikt_test_cases[] = {
	KUNIT_CASE(ikt_threaded_by_default),
	KUNIT_CASE(ikt_boot_param_prio),
	KUNIT_CASE_PARAM(ikt_prio_rules_parse, ikt_rules_gen_params),
	KUNIT_CASE(ikt_runtime_prio),
	KUNIT_CASE_PARAM(ikt_hard_handlers, ikt_modes_gen_params),
	KUNIT_CASE(ikt_oneshot_masked),
	KUNIT_CASE_PARAM(ikt_preemption, ikt_preempt_gen_params),
	KUNIT_CASE(ikt_proc_input),
	{}
};

static struct kunit_suite ikt_test_suite = {
	.name = "ikt",
	.init = ikt_test_init,
	.exit = ikt_test_exit,
	.test_cases = ikt_test_cases,
};
kunit_test_suite(ikt_test_suite);

MODULE_DESCRIPTION("KUnit tests for interrupt kernel threads");
MODULE_LICENSE("GPL");
