// SPDX-License-Identifier: GPL-2.0
/*
 * Interrupt kernel threads (IKT): per-interrupt priorities of the threads
 * that run interrupt handlers, and the report of where each handler runs.
 *
 * IKT builds on genirq's forced threading (irq_setup_forced_threading())
 * and changes these things:
 *
 *  - Forced threading is the default (ikt=off restores the mainline
 *    default, threading only with "threadirqs").
 *  - Shared lines whose actions disagree on threading keep working where
 *    forced threading alone would refuse a request with -EBUSY
 *    (__setup_irq(), ikt_shared_oneshot()): a later request that forced
 *    threading would thread, on a line whose first action is not threaded
 *    (IRQF_NO_THREAD, IRQF_TIMER), stays in hard interrupt context, except
 *    on PREEMPT_RT, where an ordinary handler must not run in hard
 *    interrupt context and the request fails with -EBUSY as in mainline;
 *    a later unthreaded request joins a line whose first action forced
 *    threading made IRQF_ONESHOT, on PREEMPT_RT too.
 *  - Each interrupt's threads run at a SCHED_FIFO priority of its own:
 *
 *      1. the one set with /proc/irq/<N>/thread_priority, if any, else
 *      2. the first ikt.prio= rule naming the interrupt's number, else
 *      3. the first ikt.prio= rule naming the action (request_irq()'s
 *         @name), else
 *      4. CONFIG_IKT_DEFAULT_PRIO.
 *
 *    A thread takes its priority when it starts (irq_thread_set_prio()),
 *    before request_irq() returns, so interrupts requested after boot
 *    follow the same rules.
 *
 * What stays in hard interrupt context, and the reason /proc/irq/ikt gives:
 *
 *   timer          IRQF_TIMER: the clock that drives the scheduler itself
 *   timer_gated, no_thread_gated  an IRQF_TIMER or IRQF_NO_THREAD action
 *                  on a line whose other actions are threaded: it runs in
 *                  hard interrupt context, but the line is IRQF_ONESHOT and
 *                  stays masked until their threads have run, so its
 *                  interrupts wait for them (as with threadirqs)
 *   nmi            NMIs cannot sleep, wait or be deferred
 *   percpu         per-CPU interrupts: one thread per line could not serve
 *                  all CPUs, and their handlers touch per-CPU state
 *   no_thread      IRQF_NO_THREAD: the requester needs hard context, e.g.
 *                  a cascade or a handler that must run with the line
 *                  unacknowledged
 *   not_threadable the irqchip marked the line IRQ_NOTHREAD
 *   chained        a chained (demultiplexing) flow handler: it only
 *                  dispatches to the child interrupts, whose handlers are
 *                  threaded in turn
 *   oneshot_primary  the primary handler of an IRQF_ONESHOT request with a
 *                  thread function: request_threaded_irq() runs it in hard
 *                  interrupt context, forced threading or not (its thread
 *                  function runs in the request's thread)
 *   oneshot_no_thread_fn  an IRQF_ONESHOT request without a thread
 *                  function: it asked for its handler to run hard
 *   shared_hard    an ordinary request on a shared line whose first
 *                  action is not threaded: it was left as requested (the
 *                  first action of a shared line decides; not on
 *                  PREEMPT_RT, where such a request fails with -EBUSY)
 *   ikt_off        booted with ikt=off and without threadirqs
 *
 * Architecture vectors that are not interrupt descriptors (the local APIC
 * timer, IPIs, irq_work, ...) always run in hard interrupt context and are
 * not listed.
 *
 * Context: a threaded primary handler (a plain request_irq() handler)
 * runs as forced-threaded handlers do, with bottom halves disabled and,
 * without PREEMPT_RT, interrupts disabled: it must not sleep.  Only a
 * requester's thread function runs preemptible, with interrupts enabled.
 *
 * Locking: ikt_prio_mutex orders a priority change against the start of a
 * thread, so that the last one to run applies the current setting;
 * changes hold desc->request_mutex (outside) to keep the action list
 * stable, a starting thread holds only ikt_prio_mutex.  A starting thread
 * takes ikt_prio_mutex before it sets IRQTF_READY, so request_irq() waits
 * for the mutex: a change allocates before it takes the mutex and holds it
 * only to apply the priority.  Readers take only desc->lock, one
 * interrupt at a time.
 */

#define pr_fmt(fmt) "ikt: " fmt

#include <linux/capability.h>
#include <linux/cleanup.h>
#include <linux/cpumask.h>
#include <linux/ctype.h>
#include <linux/init.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/kstrtox.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/security.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/string_helpers.h>
#include <linux/uaccess.h>
#include <uapi/linux/sched/types.h>
#include <kunit/static_stub.h>
#include <kunit/visibility.h>

#include "internals.h"

static struct ikt_prio_rules ikt_boot_rules __ro_after_init;

static DEFINE_MUTEX(ikt_prio_mutex);

static bool ikt_prio_valid(unsigned int prio)
{
	return prio >= 1 && prio <= MAX_RT_PRIO - 1;
}

/* Parse one "<irq|name>:<prio>" entry of @len bytes at @s into @rule. */
static int ikt_parse_rule(const char *s, size_t len, struct ikt_prio_rule *rule)
{
	char buf[IKT_NAME_LEN + 4];
	unsigned int prio;
	char *colon, *c;
	int irq;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';

	colon = strrchr(buf, ':');
	if (!colon || colon == buf)
		return -EINVAL;
	*colon = '\0';
	if (kstrtouint(colon + 1, 10, &prio) || !ikt_prio_valid(prio))
		return -EINVAL;

	rule->prio = prio;
	for (c = buf; isdigit(*c); c++)
		;
	if (!*c) {
		/* All digits: an interrupt number, which must fit an int. */
		if (kstrtoint(buf, 10, &irq) || irq < 0)
			return -EINVAL;
		rule->irq = irq;
		rule->name[0] = '\0';
	} else {
		if (strlen(buf) >= IKT_NAME_LEN)
			return -EINVAL;
		rule->irq = -1;
		strscpy(rule->name, buf, IKT_NAME_LEN);
	}
	return 0;
}

/**
 * ikt_parse_prio_rules - parse the value of ikt.prio=
 * @str: "<irq|action-name>:<prio>[,...]", prio 1..99
 * @rules: the result, written only if all of @str is valid
 *
 * Return: 0, or -EINVAL if @str is empty, has an empty, malformed or
 * out-of-range entry, or more than IKT_MAX_RULES entries.
 */
VISIBLE_IF_KUNIT int ikt_parse_prio_rules(const char *str,
					  struct ikt_prio_rules *rules)
{
	struct ikt_prio_rule rule[IKT_MAX_RULES];
	unsigned int nr = 0;
	const char *s = str;

	if (!str || !*str)
		return -EINVAL;
	for (;;) {
		size_t len = strcspn(s, ",");

		if (nr == IKT_MAX_RULES || ikt_parse_rule(s, len, &rule[nr]))
			return -EINVAL;
		nr++;
		if (!s[len])
			break;
		s += len + 1;
	}
	memcpy(rules->rule, rule, nr * sizeof(rule[0]));
	rules->nr = nr;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ikt_parse_prio_rules);

/**
 * ikt_rules_prio - the priority @rules give an interrupt's action
 * @rules: parsed ikt.prio= rules
 * @irq: interrupt number
 * @name: the action's name, may be NULL
 *
 * Return: the priority of the first rule naming @irq, else of the first
 * rule naming @name, else 0.
 */
VISIBLE_IF_KUNIT unsigned int ikt_rules_prio(const struct ikt_prio_rules *rules,
					     unsigned int irq, const char *name)
{
	unsigned int i;

	for (i = 0; i < rules->nr; i++)
		if (rules->rule[i].irq >= 0 && rules->rule[i].irq == irq)
			return rules->rule[i].prio;
	for (i = 0; name && i < rules->nr; i++)
		if (rules->rule[i].irq < 0 && !strcmp(rules->rule[i].name, name))
			return rules->rule[i].prio;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ikt_rules_prio);

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * ikt_boot_prio_rules - the rules given with ikt.prio= at boot
 *
 * Return: the parsed rules; none if the parameter was absent or invalid.
 */
const struct ikt_prio_rules *ikt_boot_prio_rules(void)
{
	return &ikt_boot_rules;
}
EXPORT_SYMBOL_IF_KUNIT(ikt_boot_prio_rules);
#endif

/*
 * ikt.prio= is a parameter of the built-in "ikt" (parse_args() sets it
 * before any interrupt thread starts).  A value given twice is refused:
 * the first one stays.
 */
static bool ikt_prio_given __initdata;

static int __init ikt_prio_param_set(const char *val, const struct kernel_param *kp)
{
	if (ikt_prio_given) {
		pr_err("ikt.prio= given twice: '%s' ignored, the first one stays\n",
		       val ?: "");
		return -EINVAL;
	}
	if (ikt_parse_prio_rules(val, &ikt_boot_rules)) {
		pr_err("ikt.prio=%s: expected <irq|name>:<1-%d>[,...] with at most %d entries; ignored\n",
		       val ?: "", MAX_RT_PRIO - 1, IKT_MAX_RULES);
		return -EINVAL;
	}
	ikt_prio_given = true;
	return 0;
}

static const struct kernel_param_ops ikt_prio_param_ops __initconst = {
	.set = ikt_prio_param_set,
};
module_param_cb(prio, &ikt_prio_param_ops, NULL, 0);

/* Priority for a thread of @desc that has none set explicitly. */
static unsigned int ikt_config_prio(struct irq_desc *desc, const char *name)
{
	unsigned int prio = READ_ONCE(desc->ikt_prio);

	if (prio)
		return prio;
	if (!ikt_enabled)
		return MAX_RT_PRIO / 2;
	prio = ikt_rules_prio(&ikt_boot_rules, irq_desc_get_irq(desc), name);
	return prio ?: CONFIG_IKT_DEFAULT_PRIO;
}

/*
 * Set one interrupt or ktimers thread to SCHED_FIFO @prio.  KUnit may
 * redirect it to fail one thread of a write and so reach the rollback of
 * ikt_set_threads().
 */
VISIBLE_IF_KUNIT int ikt_set_task_prio(struct task_struct *t, unsigned int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	KUNIT_STATIC_STUB_REDIRECT(ikt_set_task_prio, t, prio);
	return sched_setscheduler_nocheck(t, SCHED_FIFO, &sp);
}
EXPORT_SYMBOL_IF_KUNIT(ikt_set_task_prio);

/**
 * irq_thread_set_prio - give a starting interrupt thread its priority
 * @desc: the interrupt's descriptor
 * @action: the action (primary or secondary) the thread serves
 *
 * Called by the thread itself, in place of mainline's sched_set_fifo(),
 * before it sets IRQTF_READY: __setup_irq() waits for that, so
 * request_irq() returns with the thread at its priority.
 */
void irq_thread_set_prio(struct irq_desc *desc, struct irqaction *action)
{
	unsigned int prio;

	guard(mutex)(&ikt_prio_mutex);
	prio = ikt_config_prio(desc, action->name);
	if (ikt_set_task_prio(current, prio))
		pr_warn_ratelimited("irq %u: thread %s stays at its priority, SCHED_FIFO %u refused\n",
				    irq_desc_get_irq(desc), current->comm, prio);
}

/* The administrator's interface: /proc/irq/<N>/thread_priority, /proc/irq/ikt. */
#if defined(CONFIG_PROC_FS) || IS_ENABLED(CONFIG_KUNIT)
/*
 * Whether @desc has actions and none has a thread: all its handlers run
 * in hard interrupt context (IRQF_TIMER, IRQF_NO_THREAD, ONESHOT requests
 * without a thread function, ikt=off).  A priority would not be in effect
 * for them; a later request with a thread function would still get a
 * thread, so this holds only for the actions the line has now.
 */
static bool ikt_desc_all_hard(struct irq_desc *desc)
{
	struct irqaction *action;

	lockdep_assert_held(&desc->lock);
	for_each_action_of_desc(desc, action)
		if (action->thread || action->secondary)
			return false;
	return !!desc->action;
}

/*
 * Lines whose handlers can never run in a thread of their own, and lines
 * whose handlers all run in hard interrupt context.  IRQ_NOTHREAD is
 * neither: it keeps forced threading off the line, but __setup_irq()
 * still gives a request with a thread function its thread.  desc->lock
 * held.
 */
static bool ikt_desc_threadless(struct irq_desc *desc)
{
	lockdep_assert_held(&desc->lock);
	return irq_desc_is_chained(desc) || irq_settings_is_nested_thread(desc) ||
	       irq_settings_is_per_cpu(desc) || irq_settings_is_per_cpu_devid(desc) ||
	       irq_is_nmi(desc) || ikt_desc_all_hard(desc);
}

/* A thread of an interrupt and its scheduling parameters before a change. */
struct ikt_saved_thread {
	struct task_struct *task;
	struct sched_attr attr;
};

/* What sched_setattr_nocheck() needs to put @t back as it is now. */
static void ikt_save_sched(struct task_struct *t, struct sched_attr *attr)
{
	*attr = (struct sched_attr) {
		.size		= sizeof(*attr),
		.sched_policy	= t->policy,
		.sched_flags	= t->sched_reset_on_fork ? SCHED_FLAG_RESET_ON_FORK : 0,
		.sched_nice	= task_nice(t),
	};
	switch (t->policy) {
	case SCHED_NORMAL:
	case SCHED_BATCH:
	case SCHED_IDLE:
		/* A slice set with sched_setattr(), as get_params() reads it. */
		attr->sched_runtime = t->se.custom_slice ? t->se.slice : 0;
		break;
	case SCHED_FIFO:
	case SCHED_RR:
		attr->sched_priority = t->rt_priority;
		break;
	case SCHED_DEADLINE:
		attr->sched_runtime = t->dl.dl_runtime;
		attr->sched_deadline = t->dl.dl_deadline;
		attr->sched_period = t->dl.dl_period;
		attr->sched_flags |= t->dl.flags;
		break;
	}
}

/*
 * Record every thread of @desc (primary and secondary, of every action)
 * in @saved, holding a reference to each, if @saved is not NULL.
 * Return: the number of threads.
 */
static unsigned int ikt_desc_threads(struct irq_desc *desc,
				     struct ikt_saved_thread *saved)
{
	struct irqaction *action;
	unsigned int n = 0;

	lockdep_assert_held(&desc->request_mutex);
	for_each_action_of_desc(desc, action) {
		struct task_struct *t[2] = {
			action->thread,
			action->secondary ? action->secondary->thread : NULL,
		};
		int i;

		for (i = 0; i < ARRAY_SIZE(t); i++) {
			if (!t[i])
				continue;
			if (saved) {
				saved[n].task = get_task_struct(t[i]);
				ikt_save_sched(t[i], &saved[n].attr);
			}
			n++;
		}
	}
	return n;
}

/*
 * Set the @n threads of @saved to SCHED_FIFO @prio.  The caller's right
 * to change each is checked first (security_task_setscheduler(), as
 * sched_setscheduler() does): one refusal refuses all.  If the scheduler
 * fails one, those already set are put back as they were, also where
 * that was not IKT's setting (chrt).
 */
static int ikt_set_threads(struct ikt_saved_thread *saved, unsigned int n,
			   unsigned int prio)
{
	unsigned int i, j;
	int ret;

	for (i = 0; i < n; i++) {
		ret = security_task_setscheduler(saved[i].task);
		if (ret)
			return ret;
	}
	for (i = 0; i < n; i++) {
		ret = ikt_set_task_prio(saved[i].task, prio);
		if (!ret)
			continue;
		for (j = 0; j < i; j++)
			if (sched_setattr_nocheck(saved[j].task, &saved[j].attr))
				pr_warn("irq thread %s: its previous policy could not be restored\n",
					saved[j].task->comm);
		return ret;
	}
	return 0;
}

/**
 * irq_set_thread_priority - set the SCHED_FIFO priority of an interrupt's threads
 * @irq: interrupt number
 * @prio: SCHED_FIFO priority, 1..99
 *
 * Sets the priority of every thread serving @irq, primary and secondary,
 * of every action sharing the line, and of threads that request_irq()
 * creates for @irq later.  It overrides ikt.prio= and
 * CONFIG_IKT_DEFAULT_PRIO for @irq.  A later sched_setscheduler() on one
 * thread (chrt) still wins for that thread until the next call.  This is
 * the administrator's policy (/proc/irq/<N>/thread_priority), not a
 * driver interface, and is not exported.  A write to the proc file is
 * checked in this order: the opener's CAP_SYS_NICE (file_ns_capable()),
 * the writer's CAP_SYS_NICE in the initial user namespace (capable()),
 * both in the write handler, then here the security modules, for the
 * calling task and each thread (security_task_setscheduler()).  A value
 * stored while @irq has no thread yet is not checked by
 * security_task_setscheduler(), since there is no thread to check it
 * against: only by CAP_SYS_NICE of the opener and the writer; the threads
 * that request_irq() creates later take it unchecked.
 *
 * Context: process context, may sleep.
 * Return: 0 on success; -EINVAL if @prio is out of range, @irq has no
 * descriptor, its handlers can never run in a thread (chained, nested,
 * per-CPU or NMI lines), or all its actions run in hard
 * interrupt context without a thread (decided under request_mutex, so
 * against the actions the line has while the priority is stored);
 * -ENOMEM; the security module's
 * error if it refuses any thread; the scheduler's error if a thread
 * refused the priority.  Nothing is changed on error: every thread keeps
 * its policy and priority, however they were set.
 */
VISIBLE_IF_KUNIT int irq_set_thread_priority(unsigned int irq, unsigned int prio)
{
	struct ikt_saved_thread *saved;
	struct irq_desc *desc;
	unsigned int i, n;
	int ret;

	if (!ikt_prio_valid(prio))
		return -EINVAL;
	desc = irq_to_desc(irq);
	if (!desc)
		return -EINVAL;

	guard(mutex)(&desc->request_mutex);
	/* Request and free hold request_mutex: the actions stay as checked. */
	scoped_guard(raw_spinlock_irqsave, &desc->lock) {
		if (ikt_desc_threadless(desc))
			return -EINVAL;
	}
	/*
	 * Allocate before ikt_prio_mutex, which every starting thread takes
	 * before request_irq() returns: the count is stable under
	 * request_mutex, and no request waits for this write's reclaim.
	 */
	n = ikt_desc_threads(desc, NULL);
	saved = kcalloc(n, sizeof(*saved), GFP_KERNEL);
	if (n && !saved)
		return -ENOMEM;
	scoped_guard(mutex, &ikt_prio_mutex) {
		ikt_desc_threads(desc, saved);
		ret = ikt_set_threads(saved, n, prio);
		if (!ret)
			WRITE_ONCE(desc->ikt_prio, prio);
	}
	for (i = 0; i < n; i++)
		put_task_struct(saved[i].task);
	kfree(saved);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(irq_set_thread_priority);

/*
 * What the thread of @action (a primary or a secondary one; @name is the
 * request's) reads as: the priority it takes at its start if it has not
 * started yet (irq_thread() sets IRQTF_READY once it has taken it), else
 * its SCHED_FIFO or SCHED_RR priority, also one set with chrt; -1 for
 * another policy.
 */
static int ikt_thread_prio(struct irq_desc *desc, struct irqaction *action,
			   const char *name)
{
	struct task_struct *t = action->thread;

	if (!test_bit(IRQTF_READY, &action->thread_flags))
		return ikt_config_prio(desc, name);
	if (t->policy != SCHED_FIFO && t->policy != SCHED_RR)
		return -1;
	return t->rt_priority;
}

/**
 * ikt_thread_priority_show - what /proc/irq/<N>/thread_priority reads
 * @irq: interrupt number
 * @buf: output
 * @size: size of @buf
 *
 * The distinct real-time priorities of @irq's threads, ascending and
 * separated by spaces (one number unless a thread was changed by hand),
 * led by "other" if a thread runs at a policy other than SCHED_FIFO or
 * SCHED_RR (chrt -o), or, if @irq has no thread, the priority a new thread
 * would get; "-" for a line that refuses a priority
 * (irq_set_thread_priority()), where none is in effect.  A thread that
 * has not started yet counts with the priority it will take.
 *
 * Context: takes desc->lock only.
 * Return: the length written, or -EINVAL if @irq has no descriptor.
 */
VISIBLE_IF_KUNIT int ikt_thread_priority_show(unsigned int irq, char *buf,
					      size_t size)
{
	DECLARE_BITMAP(seen, MAX_RT_PRIO) = { };
	struct irqaction *action;
	bool other = false;
	struct irq_desc *desc;
	unsigned int prio;
	int len = 0;

	guard(rcu)();
	desc = irq_to_desc(irq);
	if (!desc)
		return -EINVAL;

	scoped_guard(raw_spinlock_irqsave, &desc->lock) {
		if (ikt_desc_threadless(desc))
			return scnprintf(buf, size, "-\n");
		for_each_action_of_desc(desc, action) {
			struct irqaction *a[2] = { action, action->secondary };
			int i, p;

			for (i = 0; i < ARRAY_SIZE(a); i++) {
				if (!a[i] || !a[i]->thread)
					continue;
				p = ikt_thread_prio(desc, a[i], action->name);
				if (p < 0)
					other = true;
				else
					__set_bit(p, seen);
			}
		}
		if (!other && bitmap_empty(seen, MAX_RT_PRIO))
			__set_bit(ikt_config_prio(desc, NULL), seen);
	}
	if (other)
		len = scnprintf(buf, size, "other");
	for_each_set_bit(prio, seen, MAX_RT_PRIO)
		len += scnprintf(buf + len, size - len, "%s%u", len ? " " : "", prio);
	len += scnprintf(buf + len, size - len, "\n");
	return len;
}
EXPORT_SYMBOL_IF_KUNIT(ikt_thread_priority_show);

/**
 * ikt_thread_priority_store - set @irq's thread priority from text
 * @irq: interrupt number
 * @str: NUL-terminated: a decimal 1..99, blanks around
 *
 * The caller checks the writer's right (the file's opener and the writer
 * need CAP_SYS_NICE).
 *
 * Return: 0, or -EINVAL for anything but a priority in range and an
 * interrupt that can have threads, or irq_set_thread_priority()'s error;
 * nothing is changed on error.
 */
VISIBLE_IF_KUNIT int ikt_thread_priority_store(unsigned int irq, const char *str)
{
	char buf[IKT_PRIO_BUF];
	unsigned int prio;

	if (strscpy(buf, str, sizeof(buf)) < 0)
		return -EINVAL;
	if (kstrtouint(strim(buf), 10, &prio))
		return -EINVAL;
	return irq_set_thread_priority(irq, prio);
}
EXPORT_SYMBOL_IF_KUNIT(ikt_thread_priority_store);

/*
 * Whether another action of @desc has an IRQF_ONESHOT thread: the line
 * stays masked until it has run, so @action's interrupts wait for it.
 */
static bool ikt_desc_gated(struct irq_desc *desc, struct irqaction *action)
{
	struct irqaction *other;

	for_each_action_of_desc(desc, other)
		if (other != action && (other->flags & IRQF_ONESHOT) &&
		    (other->thread || other->secondary))
			return true;
	return false;
}

/**
 * ikt_action_mode - where an action's primary handler runs, and why
 * @desc: the interrupt's descriptor, desc->lock held
 * @action: one of @desc's actions
 * @reason: set to why a "hard" handler is not threaded, else NULL
 *
 * Decided from the action as __setup_irq() left it, which is what the
 * flow handler runs: a primary handler replaced by forced threading runs
 * in the thread, any other one in hard interrupt context.
 *
 * Return: "threaded", "hard" or "nested" (the handler runs in the thread
 * of the parent interrupt that demultiplexes it).
 */
VISIBLE_IF_KUNIT const char *ikt_action_mode(struct irq_desc *desc,
					     struct irqaction *action,
					     const char **reason)
{
	lockdep_assert_held(&desc->lock);

	*reason = NULL;
	if (irq_desc_is_chained(desc)) {
		*reason = "chained";
		return "hard";
	}
	if (irq_settings_is_nested_thread(desc))
		return "nested";
	if (irq_action_primary_threaded(action))
		return "threaded";

	if (irq_is_nmi(desc))
		*reason = "nmi";
	else if ((action->flags & __IRQF_TIMER) && ikt_desc_gated(desc, action))
		*reason = "timer_gated";
	else if (action->flags & __IRQF_TIMER)
		*reason = "timer";
	else if ((action->flags & IRQF_PERCPU) ||
		 irq_settings_is_per_cpu_devid(desc))
		*reason = "percpu";
	else if ((action->flags & IRQF_NO_THREAD) && ikt_desc_gated(desc, action))
		*reason = "no_thread_gated";
	else if (action->flags & IRQF_NO_THREAD)
		*reason = "no_thread";
	else if (!irq_settings_can_thread(desc))
		*reason = "not_threadable";
	else if (!force_irqthreads())
		*reason = "ikt_off";
	else if (test_bit(IRQTF_IKT_SHARED_HARD, &action->thread_flags))
		*reason = "shared_hard";
	else if (action->thread_fn)
		/*
		 * Forced threading skips only IRQF_ONESHOT requests here,
		 * also those whose flag an ONESHOT_SAFE chip dropped since.
		 */
		*reason = "oneshot_primary";
	else
		*reason = "oneshot_no_thread_fn";
	return "hard";
}
EXPORT_SYMBOL_IF_KUNIT(ikt_action_mode);
#endif /* CONFIG_PROC_FS || CONFIG_KUNIT */

#ifdef CONFIG_PROC_FS
/* One line of /proc/irq/ikt, taken under desc->lock and printed after. */
struct ikt_report_line {
	char name[24];
	const char *mode;
	const char *reason;
	struct task_struct *task;	/* a reference, or NULL */
	bool holds_line;		/* primary thread of an IRQF_ONESHOT action */
};

#define IKT_REPORT_LINES	16

/*
 * The pid of @t as the reader of @m sees it: in the pid namespace of the
 * proc mount, and only where /proc lists @t to the reader under that
 * mount's hidepid= and gid= (proc_pid_visible()); else 0.
 */
static pid_t ikt_report_pid(struct seq_file *m, struct task_struct *t)
{
	struct super_block *sb = file_inode(m->file)->i_sb;

	if (!proc_pid_visible(sb, t))
		return 0;
	return task_pid_nr_ns(t, proc_sb_info(sb)->pid_ns);
}

/*
 * A thread's pid and priority columns: its SCHED_FIFO or SCHED_RR
 * priority, "other" for another policy (chrt -o, or a priority the
 * scheduler refused); "-" for both where there is no thread.
 */
static void ikt_report_task(struct seq_file *m, struct task_struct *t)
{
	pid_t pid;

	if (!t) {
		seq_printf(m, " %7s %4s", "-", "-");
		return;
	}
	pid = ikt_report_pid(m, t);
	if (pid)
		seq_printf(m, " %7d", pid);
	else
		seq_printf(m, " %7s", "-");
	if (t->policy == SCHED_FIFO || t->policy == SCHED_RR)
		seq_printf(m, " %4u", t->rt_priority);
	else
		seq_printf(m, " %5s", "other");
}

static void ikt_report_take(struct ikt_report_line *l, const char *name,
			    const char *mode, const char *reason,
			    struct task_struct *t)
{
	strscpy(l->name, name ?: "-", sizeof(l->name));
	l->mode = mode;
	l->reason = reason;
	l->task = t;
	l->holds_line = false;
	if (t)
		get_task_struct(t);
}

/* The lines of one interrupt; the number of lines, and how many did not fit. */
static unsigned int ikt_report_collect(struct irq_desc *desc,
				       struct ikt_report_line *line,
				       unsigned int *more)
{
	struct irqaction *action;
	unsigned long flags;
	unsigned int n = 0;

	*more = 0;
	raw_spin_lock_irqsave(&desc->lock, flags);
	for_each_action_of_desc(desc, action) {
		const char *mode, *reason;

		if (n + 2 > IKT_REPORT_LINES) {
			(*more)++;
			continue;
		}
		mode = ikt_action_mode(desc, action, &reason);
		ikt_report_take(&line[n++], action->name, mode, reason,
				action->thread);
		line[n - 1].holds_line = action->flags & IRQF_ONESHOT;
		if (action->secondary)
			ikt_report_take(&line[n++], action->name, "threaded",
					"secondary", action->secondary->thread);
	}
	raw_spin_unlock_irqrestore(&desc->lock, flags);
	return n;
}

/*
 * The lowest and highest priority of the threads that hold one
 * interrupt's line masked until they have run (the primary threads of
 * IRQF_ONESHOT actions; a secondary thread has no bit in thread_mask and
 * a non-ONESHOT action does not hold the line), among its @n lines;
 * equal if they agree or there are fewer than two such threads.
 */
static void ikt_report_prio_range(const struct ikt_report_line *line,
				  unsigned int n, unsigned int *lo,
				  unsigned int *hi)
{
	unsigned int i;

	*lo = MAX_RT_PRIO;
	*hi = 0;
	for (i = 0; i < n; i++) {
		struct task_struct *t = line[i].task;

		/* Threads that have not taken their priority yet do not count. */
		if (!t || !line[i].holds_line ||
		    (t->policy != SCHED_FIFO && t->policy != SCHED_RR))
			continue;
		*lo = min(*lo, t->rt_priority);
		*hi = max(*hi, t->rt_priority);
	}
	if (*lo > *hi)
		*lo = *hi;
}

static void ikt_report_irq(struct seq_file *m, unsigned int irq)
{
	struct ikt_report_line line[IKT_REPORT_LINES];
	char name[4 * sizeof(line[0].name)];
	unsigned int i, n, more, lo, hi;
	struct irq_desc *desc;
	int len;

	/* Every byte of a full name may take four, "\\ooo", and the NUL one. */
	BUILD_BUG_ON(sizeof(name) < 4 * (sizeof(line[0].name) - 1) + 1);
	scoped_guard(rcu) {
		desc = irq_to_desc(irq);
		if (!desc)
			return;
		n = ikt_report_collect(desc, line, &more);
	}
	ikt_report_prio_range(line, n, &lo, &hi);
	for (i = 0; i < n; i++) {
		/*
		 * One field: blanks (the "PCIe PME" action) and backslashes
		 * octal-escaped, as /proc/mounts does.
		 */
		len = string_escape_str(line[i].name, name, sizeof(name) - 1,
					ESCAPE_OCTAL, " \t\n\\");
		name[len] = '\0';
		seq_printf(m, "%6u %-20s %-8s", irq, name, line[i].mode);
		ikt_report_task(m, line[i].task);
		seq_printf(m, " %s\n", line[i].reason ?: "-");
		if (line[i].task)
			put_task_struct(line[i].task);
	}
	if (more)
		seq_printf(m, "%6u (%u more actions)\n", irq, more);
	/*
	 * Threads of one line at different priorities, e.g. from ikt.prio=
	 * rules naming the actions of a shared line: the line stays masked
	 * until every IRQF_ONESHOT thread has run, so the lowest one delays
	 * the next interrupt of the others.
	 */
	if (lo != hi)
		seq_printf(m, "# %u: threads at different priorities (%u-%u): the line waits for the lowest\n",
			   irq, lo, hi);
}

/* Position i < nr_irqs: interrupt i; nr_irqs: the footer. */
static void *ikt_report_start(struct seq_file *m, loff_t *pos)
{
	return *pos <= nr_irqs ? pos : NULL;
}

static void *ikt_report_next(struct seq_file *m, void *v, loff_t *pos)
{
	(*pos)++;
	return ikt_report_start(m, pos);
}

static void ikt_report_stop(struct seq_file *m, void *v)
{
}

static int ikt_report_show(struct seq_file *m, void *v)
{
	loff_t i = *(loff_t *)v;

	if (!i) {
		if (ikt_enabled)
			seq_printf(m, "# IKT on; threads default to SCHED_FIFO %d\n",
				   CONFIG_IKT_DEFAULT_PRIO);
		else
			seq_printf(m, "# IKT off (%s); threads default to SCHED_FIFO %d\n",
				   ikt_off_reason, MAX_RT_PRIO / 2);
		seq_printf(m, "# %4s %-20s %-8s %7s %4s %s\n",
			   "irq", "action", "mode", "pid", "prio", "reason");
	}
	if (i < nr_irqs) {
		ikt_report_irq(m, i);
		return 0;
	}
	seq_puts(m, "# not listed: architecture vectors that are not interrupt descriptors\n"
		    "# (local APIC timer, IPIs, irq_work, ...): always hard\n");
	return 0;
}

static const struct seq_operations ikt_report_ops = {
	.start	= ikt_report_start,
	.next	= ikt_report_next,
	.stop	= ikt_report_stop,
	.show	= ikt_report_show,
};

static int ikt_prio_proc_show(struct seq_file *m, void *v)
{
	char buf[4 * MAX_RT_PRIO];
	int len;

	len = ikt_thread_priority_show((unsigned int)(long)m->private, buf,
				       sizeof(buf));
	if (len < 0)
		return len;
	seq_write(m, buf, len);
	return 0;
}

static int ikt_prio_proc_open(struct inode *inode, struct file *file)
{
	return single_open(file, ikt_prio_proc_show, pde_data(inode));
}

/*
 * The file is 0666: whether a write may change priorities is decided by
 * capabilities, as for sched_setscheduler() on another user's task, not
 * by uid, in this order: the opener's CAP_SYS_NICE (file_ns_capable()),
 * the writer's CAP_SYS_NICE in the initial user namespace (capable(), as
 * /proc/<pid>/timerslack_ns checks it: a line without a thread yet has no
 * thread for the security modules to check the writer against), then the
 * security modules for the writer and each thread
 * (security_task_setscheduler() in irq_set_thread_priority()).
 */
static ssize_t ikt_prio_proc_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	unsigned int irq = (unsigned int)(long)pde_data(file_inode(file));
	char buf[IKT_PRIO_BUF];
	int ret;

	if (!file_ns_capable(file, &init_user_ns, CAP_SYS_NICE) ||
	    !capable(CAP_SYS_NICE))
		return -EPERM;
	if (*ppos || !count || count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	if (memchr(buf, '\0', count))
		return -EINVAL;
	buf[count] = '\0';
	ret = ikt_thread_priority_store(irq, buf);
	return ret ?: count;
}

static const struct proc_ops ikt_prio_proc_ops = {
	.proc_open	= ikt_prio_proc_open,
	.proc_read_iter	= seq_read_iter,
	.proc_lseek	= seq_lseek,
	.proc_release	= single_release,
	.proc_write	= ikt_prio_proc_write,
};

void ikt_register_irq_proc(struct irq_desc *desc, void *data)
{
	proc_create_data("thread_priority", 0666, desc->dir, &ikt_prio_proc_ops,
			 data);
}

void ikt_unregister_irq_proc(struct irq_desc *desc)
{
	remove_proc_entry("thread_priority", desc->dir);
}

static int __init ikt_proc_init(void)
{
	if (!proc_create_seq("irq/ikt", 0444, NULL, &ikt_report_ops))
		pr_warn("cannot create /proc/irq/ikt\n");
	return 0;
}
fs_initcall(ikt_proc_init);
#endif /* CONFIG_PROC_FS */

static int __init ikt_announce(void)
{
	if (ikt_enabled)
		pr_info("interrupt handlers but the timer's run in threads, SCHED_FIFO %d by default\n",
			CONFIG_IKT_DEFAULT_PRIO);
	else
		pr_info("off (%s): mainline forced threading%s\n", ikt_off_reason,
			force_irqthreads() ? " (threadirqs)" : " disabled");
	return 0;
}
early_initcall(ikt_announce);
