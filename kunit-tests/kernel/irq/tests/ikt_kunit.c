// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for interrupt kernel threads (IKT): where handlers run, at
 * which priority and in which context, what an IRQF_ONESHOT request sees
 * on masked, edge, ONESHOT_SAFE and shared lines and from
 * irq_wake_thread(), that shared lines with unthreaded actions keep
 * working, whom an interrupt thread preempts, that timer_list
 * timers run under a SCHED_FIFO hog, and what the priority file and the
 * report give whom.
 *
 * Copyright (C) 2026 PV-RT Developers
 *
 * Interrupts come from an interrupt simulator domain (CONFIG_IRQ_SIM): a
 * simulated interrupt is raised through irq_set_irqchip_state() and
 * delivered from an irq_work, i.e. in hard interrupt context on the CPU
 * that raised it.  The suite needs a kernel that can force-thread
 * interrupts (x86_64 under QEMU; UML cannot).
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mman.h>
#include <linux/mount.h>
#include <linux/pid_namespace.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irq_sim.h>
#include <linux/irqdomain.h>
#include <linux/init.h>
#include <linux/irq_work.h>
#include <linux/kernel_stat.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <linux/wait.h>
#include <uapi/linux/sched/types.h>

#include "../internals.h"

#define IKT_TEST_IRQS	2
#define WAIT_LIMIT	(10 * HZ)
#define SPIN_LIMIT_NS	(5 * NSEC_PER_SEC)

struct ikt_requester;

/* What a handler saw when it ran. */
struct ikt_seen {
	bool hardirq;
	bool irqs_off;
	bool bh_off;
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
	unsigned int work_irq;	/* what level_work raises */
	struct irq_work level_work;
	/* edge, shared and irq_wake_thread() cases */
	struct completion thread_started;
	struct completion release;
	struct completion next_primary;
	atomic_t threads;
	bool hold_thread;	/* thread_fn waits for @release */
	bool wait_next;		/* thread_fn waits for the next primary */
	bool waited_next;
	bool all_primaries_hard;
	bool device_pending;	/* what a primary checks, as a driver would */
	struct task_struct *refuse_prio;	/* the thread the stub refuses */
	struct ikt_requester *requester;	/* what the stub starts */
	bool leaked;		/* a request of virq[0] never returned: keep it */
};

static void ikt_record(struct ikt_seen *seen)
{
	seen->hardirq = in_hardirq();
	seen->irqs_off = irqs_disabled();
	seen->bh_off = softirq_count();
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

static irqreturn_t ikt_quiet_thread_fn(int irq, void *dev_id)
{
	struct ikt_test *t = dev_id;

	ikt_record(&t->thread);
	complete(&t->thread_done);
	return IRQ_HANDLED;
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

	generic_handle_irq(t->work_irq);
}

static int ikt_test_init(struct kunit *test)
{
	struct ikt_test *t;
	int i;

	/*
	 * Not the test's memory: @t is the dev_id of the actions a case
	 * requests, and ikt_test_exit() keeps it with a leaked request.
	 */
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	init_completion(&t->primary_done);
	init_completion(&t->thread_done);
	init_completion(&t->thread_started);
	init_completion(&t->release);
	init_completion(&t->next_primary);
	t->all_primaries_hard = true;
	t->level_work = IRQ_WORK_INIT_HARD(ikt_level_fire);
	/* From here on, ikt_test_exit() frees what init got. */
	test->priv = t;

	t->fwnode = irq_domain_alloc_named_fwnode("ikt-kunit");
	KUNIT_ASSERT_NOT_NULL(test, t->fwnode);
	t->domain = irq_domain_create_sim(t->fwnode, IKT_TEST_IRQS);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t->domain));
	for (i = 0; i < IKT_TEST_IRQS; i++) {
		t->virq[i] = irq_create_mapping(t->domain, i);
		KUNIT_ASSERT_NE(test, t->virq[i], 0);
	}
	t->work_irq = t->virq[0];
	return 0;
}

static void ikt_test_exit(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	int i;

	if (!t)
		return;
	irq_work_sync(&t->level_work);
	complete_all(&t->release);
	/*
	 * A leaked request of virq[0] keeps virq[0], the domain and @t (its
	 * dev_id): free_irq(virq[0]) would kthread_stop() its thread, blocked
	 * on ikt_prio_mutex, and so wait for ever.  The request dropped
	 * request_mutex before it waited for IRQTF_READY, so the other lines
	 * are still freed.
	 */
	for (i = t->leaked ? 1 : 0; i < IKT_TEST_IRQS && !IS_ERR_OR_NULL(t->domain); i++) {
		if (!t->virq[i])
			continue;
		/*
		 * A case that stopped on a failed assertion left it requested,
		 * maybe with other dev_ids sharing it: free every action here,
		 * since kunit actions would run after the mapping is gone.
		 */
		while (irq_has_action(t->virq[i]))
			free_irq(t->virq[i], irq_to_desc(t->virq[i])->action->dev_id);
		irq_dispose_mapping(t->virq[i]);
	}
	if (t->leaked)
		return;
	if (!IS_ERR_OR_NULL(t->domain))
		irq_domain_remove_sim(t->domain);
	if (t->fwnode)
		irq_domain_free_fwnode(t->fwnode);
	kfree(t);
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
	/* The context Documentation/core-api/irq/ikt.rst states. */
	KUNIT_EXPECT_TRUE(test, t->primary.bh_off);
	KUNIT_EXPECT_EQ(test, t->primary.irqs_off, !IS_ENABLED(CONFIG_PREEMPT_RT));
	KUNIT_EXPECT_EQ(test, t->primary.policy, SCHED_FIFO);
	KUNIT_EXPECT_EQ(test, t->primary.prio, CONFIG_IKT_DEFAULT_PRIO);
	KUNIT_EXPECT_STREQ(test, ikt_mode(irq, &reason), "threaded");
	KUNIT_EXPECT_NULL(test, reason);
	free_irq(irq, t);
}

/* What the first ikt.prio= of the command line gives (@irq, @name). */
static unsigned int ikt_first_boot_rule(struct kunit *test, unsigned int irq,
					const char *name)
{
	struct ikt_prio_rules rules = { };
	const char *p = strstr(saved_command_line, "ikt.prio=");
	char *val;

	KUNIT_ASSERT_NOT_NULL(test, p);
	val = kunit_kstrdup(test, p + strlen("ikt.prio="), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, val);
	val[strcspn(val, " ")] = '\0';
	KUNIT_ASSERT_EQ(test, ikt_parse_prio_rules(val, &rules), 0);
	return ikt_rules_prio(&rules, irq, name);
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
	/* Given twice (as the test runner does), the first one stays. */
	KUNIT_EXPECT_EQ(test, want, ikt_first_boot_rule(test, irq, "ikt-kunit-boot"));

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
	{ "2147483647:50",	0,	2147483647, NULL, 50 },
	{ "2147483648:50",	-EINVAL },
	{ "4294967296:50",	-EINVAL },
	{ "007:50",		0,	7, NULL,	50 },
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

/*
 * IRQF_TIMER (and IRQF_NO_THREAD) handlers stay in hard interrupt context,
 * and their line refuses a thread priority and reads "-": no thread
 * exists, and none takes a priority.
 */
static void ikt_hard_handlers(struct kunit *test)
{
	const struct ikt_mode_case *c = test->param_value;
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	const char *reason;
	char buf[16];

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
	/* A priority for a line whose handlers all run hard is refused. */
	KUNIT_EXPECT_EQ(test, irq_set_thread_priority(irq, 70), c->hardirq ? -EINVAL : 0);
	KUNIT_EXPECT_EQ(test, ikt_thread_priority_store(irq, "70"), c->hardirq ? -EINVAL : 0);
	KUNIT_EXPECT_EQ(test, irq_to_desc(irq)->ikt_prio, c->hardirq ? 0 : 70);
	KUNIT_EXPECT_GT(test, ikt_thread_priority_show(irq, buf, sizeof(buf)), 0);
	KUNIT_EXPECT_STREQ(test, buf, c->hardirq ? "-\n" : "70\n");
	free_irq(irq, t);
}

/* The simulator's chip has no ack and no eoi: a chip for those flows. */
static void ikt_chip_nop(struct irq_data *d)
{
}

static struct irq_chip ikt_mask_chip = {
	.name		= "ikt-kunit-mask",
	.irq_mask	= ikt_chip_nop,
	.irq_unmask	= ikt_chip_nop,
	.irq_ack	= ikt_chip_nop,
	.irq_eoi	= ikt_chip_nop,
};

struct ikt_flow_case {
	const char *name;
	irq_flow_handler_t flow;
	struct irq_chip *chip;	/* NULL: the simulator's */
	bool premask;		/* the line is masked when the interrupt comes */
};

static const struct ikt_flow_case ikt_flow_cases[] = {
	{ "level", handle_level_irq, NULL, false },
	{ "fasteoi", handle_fasteoi_irq, &ikt_mask_chip, false },
	/* A second edge masks the line while the first one is handled. */
	{ "edge, line masked", handle_edge_irq, &ikt_mask_chip, true },
};

static void ikt_flow_desc(const struct ikt_flow_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ikt_flows, ikt_flow_cases, ikt_flow_desc);

/*
 * The primary handler of an IRQF_ONESHOT request runs in hard interrupt
 * context, as request_threaded_irq() promises, whatever the flow and
 * whether or not the line is masked, and /proc/irq/ikt says so; the
 * thread function runs in the request's thread, preemptible, while the
 * line stays masked, and the line is unmasked when it has returned.
 */
static void ikt_oneshot_primary_hard(struct kunit *test)
{
	const struct ikt_flow_case *c = test->param_value;
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[c->chip ? 1 : 0];
	struct irq_desc *desc = irq_to_desc(irq);
	struct irqaction *action;
	const char *reason;

	ikt_require_threading(test);
	if (c->chip)
		irq_set_chip(irq, c->chip);
	irq_set_handler(irq, c->flow);
	t->work_irq = irq;
	KUNIT_ASSERT_EQ(test, request_threaded_irq(irq, ikt_wake_handler, ikt_thread_fn,
						   IRQF_ONESHOT, "ikt-kunit-oneshot", t), 0);
	action = ikt_action(irq);
	KUNIT_EXPECT_NULL(test, action->secondary);
	KUNIT_EXPECT_STREQ(test, ikt_mode(irq, &reason), "hard");
	KUNIT_EXPECT_STREQ(test, reason, "oneshot_primary");

	if (c->premask) {
		raw_spin_lock_irq(&desc->lock);
		mask_irq(desc);
		raw_spin_unlock_irq(&desc->lock);
	}
	irq_work_queue(&t->level_work);
	ikt_wait(test, &t->thread_done);
	synchronize_irq(irq);

	KUNIT_EXPECT_TRUE(test, t->primary.hardirq);
	KUNIT_EXPECT_TRUE(test, t->primary.irqs_off);
	KUNIT_EXPECT_PTR_EQ(test, t->thread.task, action->thread);
	KUNIT_EXPECT_FALSE(test, t->thread.hardirq);
	KUNIT_EXPECT_FALSE(test, t->thread.irqs_off);
	KUNIT_EXPECT_FALSE(test, t->thread.bh_off);
	KUNIT_EXPECT_TRUE(test, t->masked_in_thread);
	if (!c->chip) {
		KUNIT_EXPECT_EQ(test, t->refire_ret, 0);
		/* Raised at the chip while masked: not delivered, then or now. */
		KUNIT_EXPECT_EQ(test, atomic_read(&t->primaries), 1);
	}
	KUNIT_EXPECT_FALSE(test, irqd_irq_masked(irq_get_irq_data(irq)));

	/* Unmasked again: the next interrupt gets through, to a hard primary. */
	reinit_completion(&t->thread_done);
	t->primary.hardirq = false;
	irq_work_queue(&t->level_work);
	ikt_wait(test, &t->thread_done);
	synchronize_irq(irq);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->primaries), 2);
	KUNIT_EXPECT_TRUE(test, t->primary.hardirq);
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

/*
 * A kthread whose work is done: sleep until kthread_stop().  TASK_IDLE:
 * it may wait here as long as its case runs, or for good when the case
 * cannot stop it, and should count neither as load nor as a hung task.
 */
static int ikt_wait_for_stop(void)
{
	set_current_state(TASK_IDLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_IDLE);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/*
 * Start @fn(@data) in a kthread bound to @cpu at SCHED_FIFO @prio; the
 * caller holds a reference and stops it with kthread_stop().
 */
static struct task_struct *ikt_start_fifo(int (*fn)(void *), void *data,
					  const char *name, int cpu,
					  unsigned int prio)
{
	struct sched_param sp = { .sched_priority = prio };
	struct task_struct *task;
	int ret;

	task = kthread_create(fn, data, "%s", name);
	if (IS_ERR(task))
		return task;
	get_task_struct(task);
	kthread_bind(task, cpu);
	ret = sched_setscheduler_nocheck(task, SCHED_FIFO, &sp);
	if (ret) {
		kthread_stop(task);
		put_task_struct(task);
		return ERR_PTR(ret);
	}
	wake_up_process(task);
	return task;
}

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

	return ikt_wait_for_stop();
}

/* A FIFO task above an irq thread keeps the CPU; one below is preempted. */
static void ikt_preemption(struct kunit *test)
{
	const struct ikt_preempt_case *c = test->param_value;
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
	task = ikt_start_fifo(ikt_spinner_fn, &s, "ikt-kunit-spin", s.cpu, c->task_prio);
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));

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
 * The priority text takes 1..99; everything else is -EINVAL and leaves
 * the threads and the file alone.
 */
static void ikt_proc_input(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	struct task_struct *thread;
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

/* What the new line's thread was doing while the write held ikt_prio_mutex. */
enum ikt_hold {
	IKT_HOLD_TIMEOUT,	/* none of the below within WAIT_LIMIT */
	IKT_HOLD_RETURNED,	/* request_irq() returned */
	IKT_HOLD_WAITING,	/* the thread waits for the mutex before READY */
};

/* A request made by another task, and what it saw when request_irq() returned. */
struct ikt_requester {
	struct ikt_test *t;
	unsigned int irq;
	struct task_struct *task;
	struct completion requested;
	enum ikt_hold hold;	/* while a priority write held ikt_prio_mutex */
	int ret;
	int policy;
	unsigned int prio;
	char show[16];
};

static int ikt_requester_fn(void *data)
{
	struct ikt_requester *r = data;
	struct task_struct *thread;

	r->ret = request_irq(r->irq, ikt_handler, 0, "ikt-kunit-ready", r->t);
	if (!r->ret) {
		thread = ikt_action(r->irq)->thread;
		r->policy = thread->policy;
		r->prio = thread->rt_priority;
		ikt_thread_priority_show(r->irq, r->show, sizeof(r->show));
	}
	/* Both the stub and the case wait for it. */
	complete_all(&r->requested);
	return ikt_wait_for_stop();
}

/*
 * Stops the requester and frees @r, unless its request_irq() never
 * returned: kthread_stop() would then wait for ever, so the task keeps @r
 * and the case has said so.
 */
static void ikt_stop_requester(void *data)
{
	struct ikt_requester *r = data;

	if (!IS_ERR_OR_NULL(r->task)) {
		if (!completion_done(&r->requested))
			return;
		kthread_stop(r->task);
		put_task_struct(r->task);
	}
	kfree(r);
}

/*
 * Called with ikt_prio_mutex held: waits, a tick at a time (the owner off
 * the CPU, so that a mutex waiter stops spinning and sleeps), until the
 * requester has returned from request_irq(), or the new line's thread is
 * blocked on ikt_prio_mutex before it set IRQTF_READY.
 *
 * The latter is read without a look at the mutex: the requester waits in
 * wait_event(desc->wait_for_threads) in
 * wake_up_and_wait_for_irq_thread_ready(), which it enters only after
 * wake_up_process() of the thread.  A thread woken by it runs kthread()
 * into irq_thread(), whose first step is irq_thread_start():
 * irq_thread_set_prio() takes ikt_prio_mutex, reads the line's priority
 * and calls sched_setscheduler_nocheck() to SCHED_FIFO (which sleeps on
 * cpuset_mutex only for SCHED_DEADLINE), then irq_thread_set_ready()
 * sets IRQTF_READY and wakes the requester.  So a woken thread that
 * sleeps with IRQTF_READY clear is blocked on ikt_prio_mutex, its one
 * sleep point before IRQTF_READY.  In the opposite order (IRQTF_READY
 * first) the requester returns, and the case sees that instead.  The
 * reads take no lock: the state they wait for, once reached, holds until
 * the caller drops the mutex, and a stale read only costs one more tick.
 */
static enum ikt_hold ikt_requester_held(struct ikt_requester *r)
{
	unsigned long end = jiffies + WAIT_LIMIT;
	struct irq_desc *desc = irq_to_desc(r->irq);
	struct irqaction *action;
	struct task_struct *thread;

	do {
		if (completion_done(&r->requested))
			return IKT_HOLD_RETURNED;
		action = READ_ONCE(desc->action);
		thread = action ? READ_ONCE(action->thread) : NULL;
		/* Lockless: the requester in wait_event() for IRQTF_READY. */
		if (thread && waitqueue_active(&desc->wait_for_threads) &&
		    !task_is_running(thread) &&
		    !test_bit(IRQTF_READY, &action->thread_flags))
			return IKT_HOLD_WAITING;
		schedule_timeout_uninterruptible(1);
	} while (time_before(jiffies, end));
	return IKT_HOLD_TIMEOUT;
}

/*
 * Redirects ikt_set_task_prio() in a priority write, which holds
 * ikt_prio_mutex: starts the requester and records what its request and
 * the new thread do (ikt_requester_held()) before the write goes on.
 */
static int ikt_set_task_prio_request(struct task_struct *task, unsigned int prio)
{
	struct ikt_test *t = kunit_get_current_test()->priv;
	struct sched_param sp = { .sched_priority = prio };
	struct ikt_requester *r = t->requester;

	if (r && !r->task) {
		r->task = kthread_create(ikt_requester_fn, r, "ikt-kunit-req");
		if (!IS_ERR(r->task)) {
			get_task_struct(r->task);
			wake_up_process(r->task);
			r->hold = ikt_requester_held(r);
		}
	}
	return sched_setscheduler_nocheck(task, SCHED_FIFO, &sp);
}

/*
 * When request_irq() returns, the new thread already runs at the line's
 * priority: thread_priority reads it at once, with no interrupt fired.
 * The twin makes the order visible: while a priority write on another
 * line holds ikt_prio_mutex, which a starting thread takes to apply its
 * priority, another task requests the line; its thread must wait for the
 * mutex before it sets IRQTF_READY, so that request_irq() does not
 * return before the write is done and the thread has its priority.
 */
static void ikt_prio_when_requested(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	struct task_struct *thread;
	struct ikt_requester *r;

	ikt_require_threading(test);
	/* A line without an action takes a priority for its threads to come. */
	KUNIT_ASSERT_EQ(test, irq_set_thread_priority(irq, 42), 0);
	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, 0, "ikt-kunit-ready", t), 0);
	thread = ikt_action(irq)->thread;
	KUNIT_EXPECT_STREQ(test, ikt_show(test, irq), "42\n");
	KUNIT_EXPECT_EQ(test, thread->policy, SCHED_FIFO);
	KUNIT_EXPECT_EQ(test, thread->rt_priority, 42);
	free_irq(irq, t);

	/* Not the test's memory: a requester that never returns keeps it. */
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->t = t;
	r->irq = irq;
	init_completion(&r->requested);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, ikt_stop_requester, r), 0);
	KUNIT_ASSERT_EQ(test, request_irq(t->virq[1], ikt_handler, 0, "ikt-kunit-hold", t), 0);
	t->requester = r;
	kunit_activate_static_stub(test, ikt_set_task_prio, ikt_set_task_prio_request);
	KUNIT_EXPECT_EQ(test, irq_set_thread_priority(t->virq[1], 43), 0);
	kunit_deactivate_static_stub(test, ikt_set_task_prio);
	t->requester = NULL;
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(r->task));
	if (!wait_for_completion_timeout(&r->requested, WAIT_LIMIT)) {
		t->leaked = true;
		KUNIT_FAIL(test, "request_irq(%u) stuck for %d s: leaking %s and the line",
			   irq, WAIT_LIMIT / HZ, r->task->comm);
		return;
	}
	KUNIT_ASSERT_EQ(test, r->ret, 0);
	KUNIT_EXPECT_EQ_MSG(test, r->hold, IKT_HOLD_WAITING,
			    "%s", r->hold == IKT_HOLD_RETURNED ?
			    "request_irq() returned before the thread could take its priority" :
			    "neither request_irq() returned nor the thread waited for the mutex");
	KUNIT_EXPECT_EQ(test, r->policy, SCHED_FIFO);
	KUNIT_EXPECT_EQ(test, r->prio, 42);
	KUNIT_EXPECT_STREQ(test, r->show, "42\n");
	kunit_release_action(test, ikt_stop_requester, r);
	free_irq(irq, t);
	free_irq(t->virq[1], t);
}

/* The edge, ONESHOT_SAFE, shared and irq_wake_thread() cases' handlers. */
static irqreturn_t ikt_edge_primary(int irq, void *dev_id)
{
	struct ikt_test *t = dev_id;

	if (!in_hardirq())
		t->all_primaries_hard = false;
	ikt_record(&t->primary);
	if (atomic_inc_return(&t->primaries) == 2)
		complete(&t->next_primary);
	complete(&t->primary_done);
	return IRQ_WAKE_THREAD;
}

static irqreturn_t ikt_edge_thread_fn(int irq, void *dev_id)
{
	struct ikt_test *t = dev_id;

	if (atomic_inc_return(&t->threads) == 1) {
		ikt_record(&t->thread);
		complete(&t->thread_started);
		if (t->wait_next)
			t->waited_next = wait_for_completion_timeout(&t->next_primary,
								     WAIT_LIMIT) > 0;
		if (t->hold_thread)
			wait_for_completion(&t->release);
	}
	complete(&t->thread_done);
	return IRQ_HANDLED;
}

/* Raise @irq of the simulator and wait until its primary has run. */
static void ikt_fire_one(struct kunit *test, unsigned int irq)
{
	struct ikt_test *t = test->priv;

	reinit_completion(&t->primary_done);
	ikt_fire(test, irq);
	ikt_wait(test, &t->primary_done);
}

/*
 * An IRQF_ONESHOT request on an edge-like line (the simulator's
 * handle_simple_irq() never masks): the primary runs in hard interrupt
 * context, once for every interrupt, also while the thread function is
 * still running, and a thread function that waits for its own next
 * primary gets it.
 */
static void ikt_oneshot_edge(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	const char *reason;

	ikt_require_threading(test);
	t->wait_next = true;
	KUNIT_ASSERT_EQ(test, request_threaded_irq(irq, ikt_edge_primary, ikt_edge_thread_fn,
						   IRQF_ONESHOT, "ikt-kunit-edge", t), 0);
	KUNIT_EXPECT_STREQ(test, ikt_mode(irq, &reason), "hard");
	KUNIT_EXPECT_STREQ(test, reason, "oneshot_primary");

	ikt_fire_one(test, irq);
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&t->thread_started, WAIT_LIMIT), 0);
	/* The thread function is running: two more interrupts, each seen. */
	ikt_fire_one(test, irq);
	ikt_fire_one(test, irq);
	ikt_wait(test, &t->thread_done);
	synchronize_irq(irq);

	KUNIT_EXPECT_TRUE(test, t->waited_next);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->primaries), 3);
	KUNIT_EXPECT_TRUE(test, t->all_primaries_hard);
	KUNIT_EXPECT_FALSE(test, t->thread.hardirq);
	KUNIT_EXPECT_PTR_EQ(test, t->thread.task, ikt_action(irq)->thread);
	free_irq(irq, t);
}

/* A chip like PCI-MSI's: IRQCHIP_ONESHOT_SAFE, nothing to mask. */
static struct irq_chip ikt_oneshot_safe_chip = {
	.name		= "ikt-kunit-msi",
	.irq_mask	= ikt_chip_nop,
	.irq_unmask	= ikt_chip_nop,
	.irq_eoi	= ikt_chip_nop,
	.flags		= IRQCHIP_ONESHOT_SAFE,
};

/*
 * On an ONESHOT_SAFE chip genirq drops IRQF_ONESHOT and the fasteoi flow
 * does not mask: the primary stays in hard interrupt context.
 */
static void ikt_oneshot_safe(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[1];
	const char *reason;

	ikt_require_threading(test);
	irq_set_chip_and_handler(irq, &ikt_oneshot_safe_chip, handle_fasteoi_irq);
	t->work_irq = irq;
	KUNIT_ASSERT_EQ(test, request_threaded_irq(irq, ikt_edge_primary, ikt_edge_thread_fn,
						   IRQF_ONESHOT, "ikt-kunit-safe", t), 0);
	KUNIT_EXPECT_EQ(test, ikt_action(irq)->thread_mask, 0);
	KUNIT_EXPECT_STREQ(test, ikt_mode(irq, &reason), "hard");
	KUNIT_EXPECT_STREQ(test, reason, "oneshot_primary");

	irq_work_queue(&t->level_work);
	ikt_wait(test, &t->thread_done);
	synchronize_irq(irq);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->primaries), 1);
	KUNIT_EXPECT_TRUE(test, t->all_primaries_hard);
	KUNIT_EXPECT_FALSE(test, t->thread.hardirq);
	free_irq(irq, t);
}

/* A primary that, as drivers do, claims the interrupt only if its device did. */
static irqreturn_t ikt_checking_primary(int irq, void *dev_id)
{
	struct ikt_test *t = dev_id;

	ikt_primary_ran(t);
	if (!t->device_pending)
		return IRQ_NONE;
	t->device_pending = false;
	return IRQ_WAKE_THREAD;
}

/*
 * irq_wake_thread() runs the requester's thread function, and only that,
 * for an IRQF_ONESHOT request on a level-triggered line; an interrupt from
 * the device goes through the primary, in hard interrupt context.
 */
static void ikt_wake_thread(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	const char *reason;

	ikt_require_threading(test);
	irq_set_handler(irq, handle_level_irq);
	KUNIT_ASSERT_EQ(test, request_threaded_irq(irq, ikt_checking_primary, ikt_edge_thread_fn,
						   IRQF_ONESHOT, "ikt-kunit-wake", t), 0);
	KUNIT_EXPECT_STREQ(test, ikt_mode(irq, &reason), "hard");

	irq_wake_thread(irq, t);
	ikt_wait(test, &t->thread_done);
	synchronize_irq(irq);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->threads), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->primaries), 0);

	/* An interrupt from the device still goes through the primary. */
	reinit_completion(&t->thread_done);
	t->device_pending = true;
	irq_work_queue(&t->level_work);
	ikt_wait(test, &t->thread_done);
	synchronize_irq(irq);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->primaries), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->threads), 2);
	KUNIT_EXPECT_TRUE(test, t->primary.hardirq);
	KUNIT_EXPECT_FALSE(test, irqd_irq_masked(irq_get_irq_data(irq)));
	free_irq(irq, t);
}

/*
 * Two IRQF_ONESHOT requests share a level-triggered line: each primary
 * runs in hard interrupt context, each thread function in its own
 * action's thread, and the line stays masked until the last thread
 * function has returned.
 */
static void ikt_oneshot_shared(struct kunit *test)
{
	struct ikt_test *t = test->priv, *u;
	unsigned int irq = t->virq[0];
	struct irq_data *d = irq_get_irq_data(irq);
	struct irqaction *a, *b;

	ikt_require_threading(test);
	u = kunit_kzalloc(test, sizeof(*u), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, u);
	init_completion(&u->primary_done);
	init_completion(&u->thread_done);
	init_completion(&u->thread_started);
	init_completion(&u->release);
	init_completion(&u->next_primary);
	u->all_primaries_hard = true;

	t->hold_thread = true;
	irq_set_handler(irq, handle_level_irq);
	KUNIT_ASSERT_EQ(test, request_threaded_irq(irq, ikt_wake_handler, ikt_edge_thread_fn,
						   IRQF_ONESHOT | IRQF_SHARED,
						   "ikt-kunit-shared-a", t), 0);
	if (request_threaded_irq(irq, ikt_wake_handler, ikt_edge_thread_fn,
				 IRQF_ONESHOT | IRQF_SHARED, "ikt-kunit-shared-b", u)) {
		complete_all(&t->release);
		KUNIT_FAIL(test, "second shared request refused");
		return;
	}
	a = ikt_action(irq);
	b = a->next;

	irq_work_queue(&t->level_work);
	ikt_wait(test, &t->thread_started);
	ikt_wait(test, &u->thread_done);
	/* b is done, a still holds its thread function: still masked. */
	KUNIT_EXPECT_TRUE(test, irqd_irq_masked(d));
	complete_all(&t->release);
	ikt_wait(test, &t->thread_done);
	synchronize_irq(irq);
	KUNIT_EXPECT_FALSE(test, irqd_irq_masked(d));

	KUNIT_EXPECT_TRUE(test, t->primary.hardirq);
	KUNIT_EXPECT_TRUE(test, u->primary.hardirq);
	KUNIT_EXPECT_PTR_EQ(test, t->thread.task, a->thread);
	KUNIT_EXPECT_PTR_EQ(test, u->thread.task, b->thread);
	free_irq(irq, u);
	free_irq(irq, t);
}

struct ikt_shared_case {
	const char *name;
	unsigned long first, second;	/* request flags besides IRQF_SHARED */
	const char *first_reason, *second_reason;	/* NULL: threaded */
};

/*
 * request_irq() adds IRQF_COND_ONESHOT, which lets an unthreaded second
 * request join a line forced threading made IRQF_ONESHOT; a second
 * request through request_threaded_irq() without it is the case IKT must
 * handle itself.
 */
static const struct ikt_shared_case ikt_shared_cases[] = {
	{ "IRQF_NO_THREAD first", IRQF_NO_THREAD, IRQF_COND_ONESHOT, "no_thread", "shared_hard" },
	{ "IRQF_NO_THREAD first, threaded API", IRQF_NO_THREAD, 0, "no_thread", "shared_hard" },
	/* IRQF_NO_SUSPEND (in IRQF_TIMER) shares only with IRQF_COND_SUSPEND. */
	{ "IRQF_TIMER first", IRQF_TIMER, IRQF_COND_SUSPEND | IRQF_COND_ONESHOT,
	  "timer", "shared_hard" },
	{ "IRQF_NO_THREAD second", 0, IRQF_NO_THREAD | IRQF_COND_ONESHOT, NULL,
	  "no_thread_gated" },
	{ "IRQF_NO_THREAD second, threaded API", 0, IRQF_NO_THREAD, NULL, "no_thread_gated" },
};

static void ikt_shared_desc(const struct ikt_shared_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(ikt_shared, ikt_shared_cases, ikt_shared_desc);

static void ikt_expect_action(struct kunit *test, struct irqaction *action,
			      struct ikt_test *t, const char *want_reason)
{
	struct irq_desc *desc = irq_to_desc(action->irq);
	const char *mode, *reason;

	raw_spin_lock_irq(&desc->lock);
	mode = ikt_action_mode(desc, action, &reason);
	raw_spin_unlock_irq(&desc->lock);
	KUNIT_EXPECT_STREQ(test, mode, want_reason ? "hard" : "threaded");
	if (want_reason)
		KUNIT_EXPECT_STREQ(test, reason, want_reason);
	KUNIT_EXPECT_EQ(test, !action->thread, !!want_reason);
	KUNIT_EXPECT_GT_MSG(test, wait_for_completion_timeout(&t->primary_done, WAIT_LIMIT),
			    0, "%s: the handler did not run", action->name);
	KUNIT_EXPECT_EQ_MSG(test, t->primary.hardirq, !!want_reason, "%s", action->name);
}

/*
 * A shared line with an action that is not threaded (IRQF_NO_THREAD,
 * IRQF_TIMER) and an ordinary one, in either order: both requests
 * succeed, as without IKT; the ordinary one stays in hard interrupt
 * context on a line whose first action is not threaded, and is threaded
 * on a line whose first action is; the unthreaded one is then reported
 * as gated by the other's thread.  Both handlers see the interrupt.  On
 * PREEMPT_RT an ordinary handler must not run in hard interrupt context:
 * the request after an unthreaded first action fails with -EBUSY, as in
 * mainline.
 */
static void ikt_shared_unthreaded(struct kunit *test)
{
	const struct ikt_shared_case *c = test->param_value;
	struct ikt_test *t = test->priv, *u;
	unsigned int irq = t->virq[0];
	struct irqaction *a, *b;
	int ret;

	ikt_require_threading(test);
	u = kunit_kzalloc(test, sizeof(*u), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, u);
	init_completion(&u->primary_done);

	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, IRQF_SHARED | c->first,
					  "ikt-kunit-shared-1", t), 0);
	/* request_irq(), or request_threaded_irq() without a thread function. */
	ret = request_threaded_irq(irq, ikt_handler, NULL, IRQF_SHARED | c->second,
				   "ikt-kunit-shared-2", u);
	if (IS_ENABLED(CONFIG_PREEMPT_RT) && c->first_reason) {
		KUNIT_EXPECT_EQ(test, ret, -EBUSY);
		if (!ret)
			free_irq(irq, u);
		free_irq(irq, t);
		return;
	}
	/* The first action is freed by the exit function. */
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "the second request on the shared line");
	a = ikt_action(irq);
	b = a->next;

	KUNIT_EXPECT_EQ(test, irq_set_irqchip_state(irq, IRQCHIP_STATE_PENDING, true), 0);
	ikt_expect_action(test, a, t, c->first_reason);
	ikt_expect_action(test, b, u, c->second_reason);
	/* Only hard handlers on the line: no priority to set, "-" to read. */
	if (c->first_reason && c->second_reason) {
		char buf[16];

		KUNIT_EXPECT_EQ(test, irq_set_thread_priority(irq, 70), -EINVAL);
		KUNIT_EXPECT_GT(test, ikt_thread_priority_show(irq, buf, sizeof(buf)), 0);
		KUNIT_EXPECT_STREQ(test, buf, "-\n");
	}
	free_irq(irq, u);
	free_irq(irq, t);

	/* Alone on the line again, an ordinary request is threaded. */
	reinit_completion(&t->primary_done);
	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, IRQF_SHARED,
					  "ikt-kunit-shared-1", t), 0);
	ikt_fire(test, irq);
	ikt_expect_action(test, ikt_action(irq), t, NULL);
	free_irq(irq, t);
}

/*
 * A request with a handler and a thread function on a shared line whose
 * first action is IRQF_NO_THREAD: forced threading would have given it a
 * secondary thread; it keeps its handler in hard interrupt context and
 * its thread function in its own thread, as without IKT.  On PREEMPT_RT
 * the request fails with -EBUSY, as in mainline.
 */
static void ikt_shared_unthreaded_thread_fn(struct kunit *test)
{
	struct ikt_test *t = test->priv, *u;
	unsigned int irq = t->virq[0];
	struct irq_desc *desc = irq_to_desc(irq);
	const char *mode, *reason;
	struct irqaction *b;

	ikt_require_threading(test);
	u = kunit_kzalloc(test, sizeof(*u), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, u);
	init_completion(&u->primary_done);
	init_completion(&u->thread_done);
	init_completion(&u->thread_started);
	init_completion(&u->release);
	init_completion(&u->next_primary);
	u->all_primaries_hard = true;

	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, IRQF_SHARED | IRQF_NO_THREAD,
					  "ikt-kunit-shared-1", t), 0);
	if (IS_ENABLED(CONFIG_PREEMPT_RT)) {
		int ret = request_threaded_irq(irq, ikt_edge_primary, ikt_edge_thread_fn,
					       IRQF_SHARED, "ikt-kunit-shared-2", u);

		KUNIT_EXPECT_EQ(test, ret, -EBUSY);
		if (!ret)
			free_irq(irq, u);
		free_irq(irq, t);
		return;
	}
	/* The first action is freed by the exit function. */
	KUNIT_ASSERT_EQ(test, request_threaded_irq(irq, ikt_edge_primary, ikt_edge_thread_fn,
						   IRQF_SHARED, "ikt-kunit-shared-2", u), 0);
	b = ikt_action(irq)->next;
	KUNIT_EXPECT_NULL(test, b->secondary);
	KUNIT_EXPECT_NOT_NULL(test, b->thread);
	raw_spin_lock_irq(&desc->lock);
	mode = ikt_action_mode(desc, b, &reason);
	raw_spin_unlock_irq(&desc->lock);
	KUNIT_EXPECT_STREQ(test, mode, "hard");
	KUNIT_EXPECT_STREQ(test, reason, "shared_hard");

	KUNIT_EXPECT_EQ(test, irq_set_irqchip_state(irq, IRQCHIP_STATE_PENDING, true), 0);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&u->thread_done, WAIT_LIMIT), 0);
	KUNIT_EXPECT_TRUE(test, u->all_primaries_hard);
	KUNIT_EXPECT_EQ(test, atomic_read(&u->primaries), 1);
	KUNIT_EXPECT_PTR_EQ(test, u->thread.task, b->thread);
	KUNIT_EXPECT_FALSE(test, u->thread.hardirq);
	free_irq(irq, u);
	free_irq(irq, t);
}

struct ikt_hog {
	int cpu;
	struct timer_list timer;
	bool fired;
	struct task_struct *ran_in;
	bool fired_while_hogging;
	struct completion done;
};

static void ikt_hog_timer_fn(struct timer_list *timer)
{
	struct ikt_hog *h = container_of(timer, struct ikt_hog, timer);

	h->ran_in = current;
	WRITE_ONCE(h->fired, true);
}

#define IKT_HOG_TIMER_MS	20
#define IKT_HOG_SPIN_MS		500	/* below the RT throttling limit */

/* SCHED_FIFO 90 on one CPU: arm a timer there, spin until it fired or 500 ms. */
static int ikt_hog_fn(void *data)
{
	struct ikt_hog *h = data;
	u64 end = ktime_get_ns() + IKT_HOG_SPIN_MS * NSEC_PER_MSEC;

	h->timer.expires = jiffies + msecs_to_jiffies(IKT_HOG_TIMER_MS);
	add_timer_on(&h->timer, h->cpu);
	while (!READ_ONCE(h->fired) && ktime_get_ns() < end)
		cpu_relax();
	h->fired_while_hogging = READ_ONCE(h->fired);
	complete(&h->done);

	return ikt_wait_for_stop();
}

/*
 * A timer_list timer fires on time while a SCHED_FIFO 90 task hogs its
 * CPU, run by that CPU's ktimers thread at the priority set for it (91).
 * In ksoftirqd, at SCHED_OTHER, it would wait for the hog.
 */
static void ikt_timer_under_hog(struct kunit *test)
{
	struct ikt_hog h = { };
	struct task_struct *task;
	unsigned int old;

	ikt_require_threading(test);
	old = ikt_get_timers_prio();
	KUNIT_EXPECT_EQ(test, ikt_set_timers_prio(0), -EINVAL);
	KUNIT_EXPECT_EQ(test, ikt_set_timers_prio(MAX_RT_PRIO), -EINVAL);
	KUNIT_EXPECT_EQ(test, ikt_get_timers_prio(), old);
	KUNIT_ASSERT_EQ(test, ikt_set_timers_prio(91), 0);

	h.cpu = cpumask_first(cpu_online_mask);
	KUNIT_EXPECT_EQ(test, ikt_timers_task(h.cpu)->rt_priority, 91);
	KUNIT_EXPECT_EQ(test, ikt_timers_task(h.cpu)->policy, SCHED_FIFO);
	init_completion(&h.done);
	timer_setup_on_stack(&h.timer, ikt_hog_timer_fn, 0);
	task = ikt_start_fifo(ikt_hog_fn, &h, "ikt-kunit-hog", h.cpu, 90);
	if (IS_ERR(task)) {
		ikt_set_timers_prio(old);
		destroy_timer_on_stack(&h.timer);
		KUNIT_FAIL(test, "starting the hog: %pe", task);
		return;
	}

	wait_for_completion(&h.done);
	kthread_stop(task);
	put_task_struct(task);
	timer_delete_sync(&h.timer);
	destroy_timer_on_stack(&h.timer);
	KUNIT_EXPECT_EQ(test, ikt_set_timers_prio(old), 0);

	KUNIT_EXPECT_TRUE_MSG(test, h.fired_while_hogging,
			      "a %d ms timer did not fire within %d ms of FIFO 90 load",
			      IKT_HOG_TIMER_MS, IKT_HOG_SPIN_MS);
	KUNIT_EXPECT_PTR_EQ(test, h.ran_in, ikt_timers_task(h.cpu));
}

struct ikt_softirq_probe {
	struct timer_list timer;
	struct tasklet_struct tasklet;
	struct task_struct *timer_in;
	struct task_struct *tasklet_in;
	struct completion done;
};

static void ikt_probe_tasklet_fn(struct tasklet_struct *tl)
{
	struct ikt_softirq_probe *p = from_tasklet(p, tl, tasklet);

	p->tasklet_in = current;
	complete(&p->done);
}

static void ikt_probe_timer_fn(struct timer_list *timer)
{
	struct ikt_softirq_probe *p = from_timer(p, timer, timer);

	p->timer_in = current;
	tasklet_schedule(&p->tasklet);
}

/*
 * ktimers runs the timer softirqs only: a tasklet that a timer callback
 * schedules (TASKLET_SOFTIRQ, raised from ktimers) runs elsewhere, not at
 * the priority given to timers.
 */
static void ikt_ktimers_timers_only(struct kunit *test)
{
	struct ikt_softirq_probe *p;
	struct task_struct *ktimers;
	unsigned long left;
	int cpu;

	ikt_require_threading(test);
	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	init_completion(&p->done);
	tasklet_setup(&p->tasklet, ikt_probe_tasklet_fn);
	timer_setup(&p->timer, ikt_probe_timer_fn, 0);
	cpu = cpumask_first(cpu_online_mask);
	ktimers = ikt_timers_task(cpu);
	KUNIT_ASSERT_NOT_NULL(test, ktimers);

	p->timer.expires = jiffies + 1;
	add_timer_on(&p->timer, cpu);
	left = wait_for_completion_timeout(&p->done, WAIT_LIMIT);
	timer_delete_sync(&p->timer);
	tasklet_kill(&p->tasklet);
	KUNIT_ASSERT_GT_MSG(test, left, 0, "the tasklet did not run");

	KUNIT_EXPECT_PTR_EQ(test, p->timer_in, ktimers);
	KUNIT_EXPECT_PTR_NE_MSG(test, p->tasklet_in, ktimers,
				"the tasklet ran in %s", p->tasklet_in->comm);
}

static void ikt_unmount(void *mnt)
{
	kern_unmount(mnt);
}

/*
 * A private proc mount, as user space would see /proc; unmounted by
 * kunit_release_action(test, ikt_unmount, mnt) or when the case ends.
 */
static struct vfsmount *ikt_proc_mount(struct kunit *test, const char *opts)
{
	struct file_system_type *fs = get_fs_type("proc");
	struct vfsmount *mnt;
	char *data = NULL;

	KUNIT_ASSERT_NOT_NULL(test, fs);
	if (opts) {
		data = kunit_kstrdup(test, opts, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, data);
	}
	mnt = vfs_kern_mount(fs, 0, "proc", data);
	put_filesystem(fs);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mnt));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, ikt_unmount, mnt), 0);
	return mnt;
}

/* Credentials of uid @uid with only the capabilities in @caps. */
static const struct cred *ikt_become(struct kunit *test, uid_t uid,
				     const kernel_cap_t *caps)
{
	struct cred *cred = prepare_creds();
	const struct cred *old;

	KUNIT_ASSERT_NOT_NULL(test, cred);
	cred->uid = KUIDT_INIT(uid);
	cred->euid = cred->uid;
	cred->fsuid = cred->uid;
	cred->gid = KGIDT_INIT(uid);
	cred->egid = cred->gid;
	cred->fsgid = cred->gid;
	if (caps)
		cred->cap_effective = *caps;
	old = override_creds(cred);
	put_cred(cred);
	return old;
}

static struct file *ikt_open_as(struct kunit *test, struct vfsmount *mnt,
				const char *path, uid_t uid, const kernel_cap_t *caps)
{
	const struct cred *old = ikt_become(test, uid, caps);
	struct file *f = file_open_root_mnt(mnt, path, O_RDWR, 0);

	revert_creds(old);
	return f;
}

/* pwrite(2) as user space does it: from user memory, through vfs_write(). */
static ssize_t ikt_pwrite(struct file *f, char __user *ubuf, const char *buf,
			  size_t len, loff_t pos)
{
	if (copy_to_user(ubuf, buf, len))
		return -EFAULT;
	return vfs_write(f, ubuf, len, &pos);
}

struct ikt_threadless_case {
	const char *name;
	unsigned int flag;	/* irq_settings flag set on the line */
};

static const struct ikt_threadless_case ikt_threadless_cases[] = {
	{ "nested thread", _IRQ_NESTED_THREAD },
	{ "per-CPU", _IRQ_PER_CPU },
};

/*
 * /proc/irq/<N>/thread_priority: the opener's CAP_SYS_NICE decides, not
 * its uid, and the writer needs CAP_SYS_NICE too; an offset or an
 * embedded NUL is refused; lines that can never have a thread refuse
 * every priority; nothing changes after a refusal.
 */
static void ikt_proc_file(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	kernel_cap_t nice = CAP_EMPTY_SET, none = CAP_EMPTY_SET;
	struct task_struct *thread;
	const struct cred *old;
	struct vfsmount *mnt;
	char __user *ubuf;
	struct file *f;
	char path[48], buf[16];
	loff_t pos = 0;
	ssize_t ret;
	int i;

	ikt_require_threading(test);
	cap_raise(nice, CAP_SYS_NICE);
	ubuf = (char __user *)kunit_vm_mmap(test, NULL, 0, PAGE_SIZE,
					   PROT_READ | PROT_WRITE,
					   MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, (unsigned long)ubuf, 0, "no user memory");
	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, 0, "ikt-kunit-file", t), 0);
	thread = ikt_action(irq)->thread;
	KUNIT_ASSERT_EQ(test, irq_set_thread_priority(irq, 55), 0);
	mnt = ikt_proc_mount(test, NULL);
	snprintf(path, sizeof(path), "irq/%u/thread_priority", irq);

	/* Not root, but CAP_SYS_NICE: may open and write. */
	f = ikt_open_as(test, mnt, path, 1000, &nice);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(f), "open as uid 1000 with CAP_SYS_NICE: %pe", f);
	KUNIT_EXPECT_EQ(test, ikt_pwrite(f, ubuf, "60\n", 3, 0), 3);
	KUNIT_EXPECT_EQ(test, thread->rt_priority, 60);
	/* An offset, an embedded NUL: refused, nothing changed. */
	KUNIT_EXPECT_EQ(test, ikt_pwrite(f, ubuf, "61", 2, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, ikt_pwrite(f, ubuf, "61\0junk", 7, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, thread->rt_priority, 60);
	KUNIT_EXPECT_EQ(test, kernel_read(f, buf, sizeof(buf) - 1, &pos), 3);
	buf[3] = '\0';
	KUNIT_EXPECT_STREQ(test, buf, "60\n");
	fput(f);

	/* Opened without CAP_SYS_NICE, written by this privileged task. */
	f = ikt_open_as(test, mnt, path, 0, &none);
	KUNIT_ASSERT_FALSE(test, IS_ERR(f));
	KUNIT_EXPECT_EQ(test, ikt_pwrite(f, ubuf, "62", 2, 0), -EPERM);
	KUNIT_EXPECT_EQ(test, thread->rt_priority, 60);
	fput(f);

	/*
	 * A line without a thread yet, written by a task without
	 * CAP_SYS_NICE through a file opened with it: no security module
	 * sees a thread to check, the writer's own capability is needed.
	 * The first request made the line's /proc/irq/<N>/ directory.
	 */
	KUNIT_ASSERT_EQ(test, request_irq(t->virq[1], ikt_handler, 0, "ikt-kunit-gone", t), 0);
	free_irq(t->virq[1], t);
	snprintf(path, sizeof(path), "irq/%u/thread_priority", t->virq[1]);
	f = ikt_open_as(test, mnt, path, 1000, &nice);
	KUNIT_ASSERT_FALSE(test, IS_ERR(f));
	old = ikt_become(test, 1000, &none);
	ret = ikt_pwrite(f, ubuf, "99", 2, 0);
	revert_creds(old);
	KUNIT_EXPECT_EQ(test, ret, -EPERM);
	KUNIT_EXPECT_EQ(test, irq_to_desc(t->virq[1])->ikt_prio, 0);
	/* The control: the same write with CAP_SYS_NICE is taken. */
	old = ikt_become(test, 1000, &nice);
	ret = ikt_pwrite(f, ubuf, "99", 2, 0);
	revert_creds(old);
	fput(f);
	KUNIT_EXPECT_EQ(test, ret, 2);
	KUNIT_EXPECT_EQ(test, irq_to_desc(t->virq[1])->ikt_prio, 99);
	snprintf(path, sizeof(path), "irq/%u/thread_priority", irq);

	/* Lines that can never have a thread of their own. */
	for (i = 0; i < ARRAY_SIZE(ikt_threadless_cases); i++) {
		const struct ikt_threadless_case *c = &ikt_threadless_cases[i];
		struct irq_desc *desc = irq_to_desc(irq);
		unsigned int before = desc->ikt_prio;

		irq_set_status_flags(irq, c->flag);
		f = file_open_root_mnt(mnt, path, O_RDWR, 0);
		KUNIT_ASSERT_FALSE(test, IS_ERR(f));
		KUNIT_EXPECT_EQ_MSG(test, ikt_pwrite(f, ubuf, "70", 2, 0), -EINVAL, "%s", c->name);
		fput(f);
		KUNIT_EXPECT_EQ_MSG(test, irq_set_thread_priority(irq, 70), -EINVAL, "%s", c->name);
		irq_clear_status_flags(irq, c->flag);
		KUNIT_EXPECT_EQ(test, desc->ikt_prio, before);
		KUNIT_EXPECT_EQ(test, thread->rt_priority, 60);
	}
	kunit_release_action(test, ikt_unmount, mnt);
	free_irq(irq, t);
}

/*
 * IRQ_NOTHREAD keeps forced threading off a line, but a request with a
 * thread function still gets its thread (__setup_irq()): the line takes
 * a priority like any other.
 */
static void ikt_nothread_thread_fn(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	struct task_struct *thread;
	char buf[8];

	irq_set_status_flags(irq, _IRQ_NOTHREAD);
	KUNIT_ASSERT_EQ(test, request_threaded_irq(irq, ikt_wake_handler, ikt_quiet_thread_fn,
						   IRQF_ONESHOT, "ikt-kunit-nothread", t), 0);
	thread = ikt_action(irq)->thread;
	KUNIT_ASSERT_NOT_NULL(test, thread);
	KUNIT_EXPECT_EQ(test, irq_set_thread_priority(irq, 70), 0);
	KUNIT_EXPECT_EQ(test, irq_to_desc(irq)->ikt_prio, 70);
	KUNIT_EXPECT_EQ(test, thread->policy, SCHED_FIFO);
	KUNIT_EXPECT_EQ(test, thread->rt_priority, 70);
	KUNIT_EXPECT_EQ(test, ikt_thread_priority_show(irq, buf, sizeof(buf)), 3);
	KUNIT_EXPECT_STREQ(test, buf, "70\n");
	free_irq(irq, t);
	irq_clear_status_flags(irq, _IRQ_NOTHREAD);
}

/* The report line of the action named @name, read as uid @uid with @caps. */
static bool ikt_report_line(struct kunit *test, struct vfsmount *mnt, uid_t uid,
			    const kernel_cap_t *caps, const char *name, char *line,
			    size_t size)
{
	const struct cred *old;
	size_t len = 64 * 1024;
	char *text, *p, *end;
	loff_t pos = 0;
	struct file *f;
	ssize_t n;

	text = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, text);
	old = ikt_become(test, uid, caps);
	f = file_open_root_mnt(mnt, "irq/ikt", O_RDONLY, 0);
	if (!IS_ERR(f)) {
		/* Small reads: the report is built one interrupt at a time. */
		while (pos < len - 1 &&
		       (n = kernel_read(f, text + pos, min_t(size_t, 100, len - 1 - pos),
					&pos)) > 0)
			;
		fput(f);
	}
	revert_creds(old);
	KUNIT_ASSERT_FALSE(test, IS_ERR(f));
	p = strstr(text, name);
	if (!p)
		return false;
	while (p > text && p[-1] != '\n')
		p--;
	end = strchrnul(p, '\n');
	strscpy(line, p, min_t(size_t, size, end - p + 1));
	return true;
}

/*
 * The priority column of the report line of the action named @name, read
 * as root through @mnt, in @prio.
 */
static void ikt_report_prio(struct kunit *test, struct vfsmount *mnt,
			    const char *name, char *prio)
{
	char line[128], field[3][24];
	unsigned int irq;
	int n;

	KUNIT_ASSERT_TRUE_MSG(test, ikt_report_line(test, mnt, 0, NULL, name, line,
						    sizeof(line)), "no line %s", name);
	/* irq, name, mode, pid, prio, reason */
	n = sscanf(line, "%u %23s %23s %23s %7s", &irq, field[0], field[1], field[2], prio);
	KUNIT_ASSERT_EQ_MSG(test, n, 5, "line: %s", line);
}

/*
 * thread_priority and the report's priority column read what a started
 * thread runs at: its SCHED_RR priority after chrt -r, "other" after
 * chrt -o (not "-", which a line that refuses a priority reads, or the
 * report where there is no thread); the configured priority only stands
 * in for a thread that has not started.
 */
static void ikt_prio_show_policy(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	struct sched_param rr = { .sched_priority = 33 }, normal = { };
	struct task_struct *thread;
	struct vfsmount *mnt;
	char buf[8];

	ikt_require_threading(test);
	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, 0, "ikt-kunit-show", t), 0);
	/* Once the thread has run, it has taken its own priority. */
	ikt_fire(test, irq);
	ikt_wait(test, &t->primary_done);
	thread = ikt_action(irq)->thread;
	mnt = ikt_proc_mount(test, NULL);

	/* As chrt -r -p 33 would. */
	KUNIT_ASSERT_EQ(test, sched_setscheduler_nocheck(thread, SCHED_RR, &rr), 0);
	KUNIT_EXPECT_EQ(test, ikt_thread_priority_show(irq, buf, sizeof(buf)), 3);
	KUNIT_EXPECT_STREQ(test, buf, "33\n");
	ikt_report_prio(test, mnt, " ikt-kunit-show ", buf);
	KUNIT_EXPECT_STREQ(test, buf, "33");
	/* As chrt -o -p 0 would. */
	KUNIT_ASSERT_EQ(test, sched_setscheduler_nocheck(thread, SCHED_NORMAL, &normal), 0);
	KUNIT_EXPECT_EQ(test, ikt_thread_priority_show(irq, buf, sizeof(buf)), 6);
	KUNIT_EXPECT_STREQ(test, buf, "other\n");
	ikt_report_prio(test, mnt, " ikt-kunit-show ", buf);
	KUNIT_EXPECT_STREQ(test, buf, "other");
	kunit_release_action(test, ikt_unmount, mnt);
	free_irq(irq, t);
}

/*
 * /proc/irq/ikt gives a thread's pid only to readers that may see it
 * under the mount's hidepid=, and in the mount's pid namespace; a
 * nameless action is "-", blanks and backslashes in a name are escaped.
 */
static void ikt_report_pids(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	kernel_cap_t none = CAP_EMPTY_SET;
	char line[128], want[16];
	struct vfsmount *mnt;

	ikt_require_threading(test);
	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, 0, "ikt-kunit-report", t), 0);
	snprintf(want, sizeof(want), " %d ",
		 task_pid_nr_ns(ikt_action(irq)->thread, task_active_pid_ns(current)));

	mnt = ikt_proc_mount(test, "hidepid=invisible");
	KUNIT_ASSERT_TRUE(test, ikt_report_line(test, mnt, 0, NULL, "ikt-kunit-report",
						line, sizeof(line)));
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(line, want), "root reads: %s", line);
	KUNIT_ASSERT_TRUE(test, ikt_report_line(test, mnt, 1000, &none, "ikt-kunit-report",
						line, sizeof(line)));
	KUNIT_EXPECT_NULL_MSG(test, strstr(line, want), "uid 1000 under hidepid reads: %s",
			      line);
	kunit_release_action(test, ikt_unmount, mnt);

	mnt = ikt_proc_mount(test, NULL);
	KUNIT_ASSERT_TRUE(test, ikt_report_line(test, mnt, 1000, &none, "ikt-kunit-report",
						line, sizeof(line)));
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(line, want), "uid 1000 reads: %s", line);

	/* An action without a name shows "-", nothing of the kernel's. */
	KUNIT_ASSERT_EQ(test, request_irq(t->virq[1], ikt_handler, 0, NULL, t), 0);
	snprintf(want, sizeof(want), "%6u - ", t->virq[1]);
	KUNIT_EXPECT_TRUE_MSG(test, ikt_report_line(test, mnt, 1000, &none, want, line,
						    sizeof(line)), "no line \"%s\"", want);
	free_irq(t->virq[1], t);

	/*
	 * A blank in a name ("PCIe PME") is octal-escaped, so that the line
	 * keeps its six fields; the name is cut to 23 characters.
	 */
	KUNIT_ASSERT_EQ(test, request_irq(t->virq[1], ikt_handler, 0,
					  "ikt kunit\\blank-0123456789", t), 0);
	KUNIT_EXPECT_TRUE_MSG(test, ikt_report_line(test, mnt, 0, NULL,
						    " ikt\\040kunit\\134blank-0123456 ",
						    line, sizeof(line)),
			      "no escaped, cut name in the report");
	free_irq(t->virq[1], t);
	kunit_release_action(test, ikt_unmount, mnt);
	free_irq(irq, t);
}

/*
 * A write is checked in this order: the opener's CAP_SYS_NICE, the
 * writer's CAP_SYS_NICE in the initial user namespace (the write
 * handler), then security_task_setscheduler() for each thread, as
 * sched_setscheduler() does.  Through a file a privileged task opened, a
 * writer without CAP_SYS_NICE is refused by the write handler
 * (CAP_SYS_NICE through capable(): the capability module plus
 * SELinux/AppArmor capability policy) before security_task_setscheduler()
 * is asked for any thread; called directly, the capability module
 * refuses it too.  The refusal changes no thread, also not one set by
 * hand.
 */
static void ikt_proc_lsm(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	struct sched_param rr = { .sched_priority = 33 };
	kernel_cap_t none = CAP_EMPTY_SET;
	struct task_struct *thread;
	const struct cred *old;
	struct vfsmount *mnt;
	char __user *ubuf;
	struct cred *cred;
	char path[48];
	struct file *f;
	ssize_t ret;
	int lsm;

	ikt_require_threading(test);
	ubuf = (char __user *)kunit_vm_mmap(test, NULL, 0, PAGE_SIZE,
					   PROT_READ | PROT_WRITE,
					   MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, (unsigned long)ubuf, 0, "no user memory");
	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, 0, "ikt-kunit-lsm", t), 0);
	/* Once the thread has run, it has taken its own priority. */
	ikt_fire(test, irq);
	ikt_wait(test, &t->primary_done);
	thread = ikt_action(irq)->thread;
	/* As chrt -r -p 33 would. */
	KUNIT_ASSERT_EQ(test, sched_setscheduler_nocheck(thread, SCHED_RR, &rr), 0);

	mnt = ikt_proc_mount(test, NULL);
	snprintf(path, sizeof(path), "irq/%u/thread_priority", irq);
	f = file_open_root_mnt(mnt, path, O_RDWR, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(f));
	/* The writer: uid 1000, no capability, none permitted either. */
	cred = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, cred);
	cred->uid = KUIDT_INIT(1000);
	cred->euid = cred->uid;
	cred->fsuid = cred->uid;
	cred->cap_effective = none;
	cred->cap_permitted = none;
	old = override_creds(cred);
	put_cred(cred);
	ret = ikt_pwrite(f, ubuf, "70", 2, 0);
	/* The security module's own refusal, past the write handler's check. */
	lsm = irq_set_thread_priority(irq, 70);
	revert_creds(old);
	fput(f);
	kunit_release_action(test, ikt_unmount, mnt);

	KUNIT_EXPECT_EQ(test, ret, -EPERM);
	KUNIT_EXPECT_EQ(test, lsm, -EPERM);
	KUNIT_EXPECT_EQ(test, thread->policy, SCHED_RR);
	KUNIT_EXPECT_EQ(test, thread->rt_priority, 33);
	KUNIT_EXPECT_EQ(test, irq_to_desc(irq)->ikt_prio, 0);
	free_irq(irq, t);
}

/*
 * hidepid=ptraceable hides a pid from every reader that may not ptrace
 * the task, members of the gid= group included, as /proc does.
 */
static void ikt_report_hidepid_ptraceable(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	kernel_cap_t none = CAP_EMPTY_SET;
	char line[128], want[16];
	struct vfsmount *mnt;

	ikt_require_threading(test);
	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, 0, "ikt-kunit-ptrace", t), 0);
	snprintf(want, sizeof(want), " %d ",
		 task_pid_nr_ns(ikt_action(irq)->thread, task_active_pid_ns(current)));

	/* gid 1000: the reader's group (ikt_become() sets gid = uid). */
	mnt = ikt_proc_mount(test, "hidepid=ptraceable,gid=1000");
	KUNIT_ASSERT_TRUE(test, ikt_report_line(test, mnt, 1000, &none, "ikt-kunit-ptrace",
						line, sizeof(line)));
	KUNIT_EXPECT_NULL_MSG(test, strstr(line, want),
			      "uid 1000 in gid= under hidepid=ptraceable reads: %s", line);
	KUNIT_ASSERT_TRUE(test, ikt_report_line(test, mnt, 0, NULL, "ikt-kunit-ptrace",
						line, sizeof(line)));
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(line, want), "root reads: %s", line);
	kunit_release_action(test, ikt_unmount, mnt);

	/* hidepid=invisible: the gid= group sees every pid. */
	mnt = ikt_proc_mount(test, "hidepid=invisible,gid=1000");
	KUNIT_ASSERT_TRUE(test, ikt_report_line(test, mnt, 1000, &none, "ikt-kunit-ptrace",
						line, sizeof(line)));
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(line, want),
				  "uid 1000 in gid= under hidepid=invisible reads: %s", line);
	kunit_release_action(test, ikt_unmount, mnt);
	free_irq(irq, t);
}

/*
 * Threads of one shared line at different priorities, here from an
 * ikt.prio= rule naming one of the actions, are flagged in the report.
 */
static void ikt_report_shared_prio(struct kunit *test)
{
	struct ikt_test *t = test->priv, *u;
	unsigned int irq = t->virq[0];
	unsigned int rule = ikt_rules_prio(ikt_boot_prio_rules(), UINT_MAX, "ikt-kunit-boot");
	char line[128], flag[32];
	struct vfsmount *mnt;

	ikt_require_threading(test);
	if (!rule || rule == CONFIG_IKT_DEFAULT_PRIO)
		kunit_skip(test, "needs ikt.prio=ikt-kunit-boot:<p>, p not %d",
			   CONFIG_IKT_DEFAULT_PRIO);
	u = kunit_kzalloc(test, sizeof(*u), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, u);
	init_completion(&u->primary_done);

	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, IRQF_SHARED,
					  "ikt-kunit-boot", t), 0);
	/* On a failed assertion, ikt_test_exit() frees both actions. */
	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, IRQF_SHARED,
					  "ikt-kunit-other", u), 0);
	/* Once both threads have run, each has taken its priority. */
	ikt_fire(test, irq);
	ikt_wait(test, &t->primary_done);
	ikt_wait(test, &u->primary_done);
	KUNIT_EXPECT_EQ(test, ikt_action(irq)->thread->rt_priority, rule);
	KUNIT_EXPECT_EQ(test, ikt_action(irq)->next->thread->rt_priority,
			CONFIG_IKT_DEFAULT_PRIO);

	snprintf(flag, sizeof(flag), "# %u: threads at different", irq);
	mnt = ikt_proc_mount(test, NULL);
	KUNIT_EXPECT_TRUE_MSG(test, ikt_report_line(test, mnt, 0, NULL, flag, line,
						    sizeof(line)),
			      "no line \"%s...\"", flag);
	kunit_release_action(test, ikt_unmount, mnt);
	free_irq(irq, u);
	free_irq(irq, t);
}

/*
 * A secondary thread (a forced-threaded request with a thread_fn) has no
 * bit in thread_mask and does not hold the line masked: a priority of its
 * own is no inversion and is not flagged.
 */
static void ikt_report_secondary_prio(struct kunit *test)
{
	struct ikt_test *t = test->priv;
	unsigned int irq = t->virq[0];
	struct sched_param sp = { .sched_priority = CONFIG_IKT_DEFAULT_PRIO + 1 };
	char line[128], flag[32];
	struct irqaction *action;
	struct vfsmount *mnt;

	ikt_require_threading(test);
	KUNIT_ASSERT_EQ(test, request_threaded_irq(irq, ikt_wake_handler, ikt_quiet_thread_fn,
						   0, "ikt-kunit-second", t), 0);
	action = ikt_action(irq);
	KUNIT_ASSERT_NOT_NULL(test, action->secondary);
	/* Once both threads have run, each has taken its priority. */
	ikt_fire(test, irq);
	ikt_wait(test, &t->thread_done);
	/* As chrt -f -p <default + 1> would, on the secondary thread. */
	KUNIT_ASSERT_EQ(test, sched_setscheduler_nocheck(action->secondary->thread,
							 SCHED_FIFO, &sp), 0);

	snprintf(flag, sizeof(flag), "# %u: threads at different", irq);
	mnt = ikt_proc_mount(test, NULL);
	KUNIT_EXPECT_FALSE_MSG(test, ikt_report_line(test, mnt, 0, NULL, flag, line,
						     sizeof(line)),
			       "flagged: %s", line);
	kunit_release_action(test, ikt_unmount, mnt);
	free_irq(irq, t);
}

/* Redirects ikt_set_task_prio(): refuses the thread in ->refuse_prio. */
static int ikt_set_task_prio_refuse(struct task_struct *task, unsigned int prio)
{
	struct ikt_test *t = kunit_get_current_test()->priv;
	struct sched_param sp = { .sched_priority = prio };

	if (task == t->refuse_prio)
		return -EAGAIN;
	return sched_setscheduler_nocheck(task, SCHED_FIFO, &sp);
}

/*
 * The scheduler refuses the last thread of a shared line's write: the
 * threads already set are put back exactly as they were, one at SCHED_RR
 * 33 as chrt sets it, one at SCHED_NORMAL nice 5 with a slice of its own
 * (sched_setattr()); the error is returned and nothing is stored.
 */
static void ikt_set_prio_rollback(struct kunit *test)
{
	struct ikt_test *t = test->priv, *u, *v;
	unsigned int irq = t->virq[0];
	struct sched_param rr = { .sched_priority = 33 };
	struct sched_attr fair = {
		.size		= sizeof(fair),
		.sched_policy	= SCHED_NORMAL,
		.sched_nice	= 5,
		.sched_runtime	= 2 * NSEC_PER_MSEC,
	};
	struct task_struct *a, *b, *c;
	u64 slice;

	ikt_require_threading(test);
	u = kunit_kzalloc(test, sizeof(*u), GFP_KERNEL);
	v = kunit_kzalloc(test, sizeof(*v), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, u);
	KUNIT_ASSERT_NOT_NULL(test, v);
	init_completion(&u->primary_done);
	init_completion(&v->primary_done);
	/* On a failed assertion, ikt_test_exit() frees every action. */
	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, IRQF_SHARED, "ikt-kunit-a", t), 0);
	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, IRQF_SHARED, "ikt-kunit-b", u), 0);
	KUNIT_ASSERT_EQ(test, request_irq(irq, ikt_handler, IRQF_SHARED, "ikt-kunit-c", v), 0);
	/* Once the threads have run, each has taken its own priority. */
	ikt_fire(test, irq);
	ikt_wait(test, &t->primary_done);
	ikt_wait(test, &u->primary_done);
	ikt_wait(test, &v->primary_done);
	a = ikt_action(irq)->thread;
	b = ikt_action(irq)->next->thread;
	c = ikt_action(irq)->next->next->thread;
	KUNIT_ASSERT_EQ(test, sched_setscheduler_nocheck(a, SCHED_RR, &rr), 0);
	KUNIT_ASSERT_EQ(test, sched_setattr_nocheck(b, &fair), 0);
	KUNIT_ASSERT_TRUE(test, b->se.custom_slice);
	slice = b->se.slice;

	t->refuse_prio = c;
	kunit_activate_static_stub(test, ikt_set_task_prio, ikt_set_task_prio_refuse);
	KUNIT_EXPECT_EQ(test, irq_set_thread_priority(irq, 70), -EAGAIN);
	kunit_deactivate_static_stub(test, ikt_set_task_prio);

	KUNIT_EXPECT_EQ(test, a->policy, SCHED_RR);
	KUNIT_EXPECT_EQ(test, a->rt_priority, 33);
	KUNIT_EXPECT_EQ(test, b->policy, SCHED_NORMAL);
	KUNIT_EXPECT_EQ(test, task_nice(b), 5);
	KUNIT_EXPECT_TRUE(test, b->se.custom_slice);
	KUNIT_EXPECT_EQ(test, b->se.slice, slice);
	KUNIT_EXPECT_EQ(test, c->policy, SCHED_FIFO);
	KUNIT_EXPECT_EQ(test, c->rt_priority, CONFIG_IKT_DEFAULT_PRIO);
	KUNIT_EXPECT_EQ(test, irq_to_desc(irq)->ikt_prio, 0);
	free_irq(irq, v);
	free_irq(irq, u);
	free_irq(irq, t);
}

static struct kunit_case ikt_test_cases[] = {
	KUNIT_CASE(ikt_threaded_by_default),
	KUNIT_CASE(ikt_boot_param_prio),
	KUNIT_CASE_PARAM(ikt_prio_rules_parse, ikt_rules_gen_params),
	KUNIT_CASE(ikt_runtime_prio),
	KUNIT_CASE_PARAM(ikt_hard_handlers, ikt_modes_gen_params),
	KUNIT_CASE_PARAM(ikt_oneshot_primary_hard, ikt_flows_gen_params),
	KUNIT_CASE(ikt_oneshot_edge),
	KUNIT_CASE(ikt_oneshot_safe),
	KUNIT_CASE(ikt_wake_thread),
	KUNIT_CASE(ikt_oneshot_shared),
	KUNIT_CASE_PARAM(ikt_shared_unthreaded, ikt_shared_gen_params),
	KUNIT_CASE(ikt_shared_unthreaded_thread_fn),
	KUNIT_CASE(ikt_timer_under_hog),
	KUNIT_CASE(ikt_ktimers_timers_only),
	KUNIT_CASE_PARAM(ikt_preemption, ikt_preempt_gen_params),
	KUNIT_CASE(ikt_proc_input),
	KUNIT_CASE(ikt_prio_when_requested),
	KUNIT_CASE(ikt_proc_file),
	KUNIT_CASE(ikt_nothread_thread_fn),
	KUNIT_CASE(ikt_prio_show_policy),
	KUNIT_CASE(ikt_report_pids),
	KUNIT_CASE(ikt_proc_lsm),
	KUNIT_CASE(ikt_report_hidepid_ptraceable),
	KUNIT_CASE(ikt_report_shared_prio),
	KUNIT_CASE(ikt_report_secondary_prio),
	KUNIT_CASE(ikt_set_prio_rollback),
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
