// SPDX-License-Identifier: GPL-2.0
/*
 * Interrupt kernel threads (IKT): per-interrupt priorities of the threads
 * that run interrupt handlers, and the report of where each handler runs.
 *
 * IKT builds on genirq's forced threading (irq_setup_forced_threading())
 * and changes three things:
 *
 *  - Forced threading is the default (ikt=off restores the mainline
 *    default, threading only with "threadirqs").
 *  - The primary handler of an IRQF_ONESHOT request moves into the
 *    request's thread too.  Its line stays masked until the requester's
 *    thread function has run, which the same thread does right after the
 *    primary (irq_forced_thread_fn()), so running the primary late loses
 *    nothing.
 *  - Each interrupt's threads run at a SCHED_FIFO priority of its own:
 *
 *      1. the one set with /proc/irq/<N>/thread_priority or
 *         irq_set_thread_priority(), if any, else
 *      2. the first ikt.prio= rule naming the interrupt's number, else
 *      3. the first ikt.prio= rule naming the action (request_irq()'s
 *         @name), else
 *      4. CONFIG_IKT_DEFAULT_PRIO.
 *
 *    A thread takes its priority when it starts (irq_thread_set_prio()),
 *    so interrupts requested after boot follow the same rules.
 *
 * What stays in hard interrupt context, and the reason /proc/irq/ikt gives:
 *
 *   timer          IRQF_TIMER: the clock that drives the scheduler itself
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
 *   ikt_off        booted with ikt=off and without threadirqs
 *   oneshot        booted with ikt=off threadirqs: mainline keeps the
 *                  primary of an IRQF_ONESHOT request hard
 *
 * Architecture vectors that are not interrupt descriptors (the local APIC
 * timer, IPIs, irq_work, ...) always run in hard interrupt context and are
 * not listed.
 *
 * Locking: ikt_prio_mutex orders a priority change against the start of a
 * thread, so that the last one to run applies the current setting;
 * changes hold desc->request_mutex (outside) to keep the action list
 * stable, a starting thread holds only ikt_prio_mutex.
 */

#define pr_fmt(fmt) "ikt: " fmt

#include <linux/capability.h>
#include <linux/cleanup.h>
#include <linux/init.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/kstrtox.h>
#include <linux/mutex.h>
#include <linux/proc_fs.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <uapi/linux/sched/types.h>
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
	unsigned int prio, irq;
	char *colon;

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
	if (!kstrtouint(buf, 10, &irq) && irq <= INT_MAX) {
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

/**
 * ikt_boot_prio_rules - the rules given with ikt.prio= at boot
 *
 * Return: the parsed rules; none if the parameter was absent or invalid.
 */
VISIBLE_IF_KUNIT const struct ikt_prio_rules *ikt_boot_prio_rules(void)
{
	return &ikt_boot_rules;
}
EXPORT_SYMBOL_IF_KUNIT(ikt_boot_prio_rules);

static int __init ikt_prio_setup(char *str)
{
	if (ikt_parse_prio_rules(str, &ikt_boot_rules)) {
		pr_err("ikt.prio=%s: expected <irq|name>:<1-%d>[,...] with at most %d entries; ignored\n",
		       str ?: "", MAX_RT_PRIO - 1, IKT_MAX_RULES);
		return -EINVAL;
	}
	return 0;
}
early_param("ikt.prio", ikt_prio_setup);

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

static void ikt_set_task_prio(struct task_struct *t, unsigned int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	WARN_ON_ONCE(sched_setscheduler_nocheck(t, SCHED_FIFO, &sp));
}

/**
 * irq_thread_set_prio - give a starting interrupt thread its priority
 * @desc: the interrupt's descriptor
 * @action: the action (primary or secondary) the thread serves
 *
 * Called by the thread itself, in place of mainline's sched_set_fifo().
 */
void irq_thread_set_prio(struct irq_desc *desc, struct irqaction *action)
{
	guard(mutex)(&ikt_prio_mutex);
	ikt_set_task_prio(current, ikt_config_prio(desc, action->name));
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
 * thread (chrt) still wins for that thread until the next call.
 *
 * Context: process context, may sleep.
 * Return: 0 on success, -EINVAL if @prio is out of range or @irq has no
 * descriptor; nothing is changed then.
 */
int irq_set_thread_priority(unsigned int irq, unsigned int prio)
{
	struct irqaction *action;
	struct irq_desc *desc;

	if (!ikt_prio_valid(prio))
		return -EINVAL;
	desc = irq_to_desc(irq);
	if (!desc)
		return -EINVAL;

	guard(mutex)(&desc->request_mutex);
	guard(mutex)(&ikt_prio_mutex);
	WRITE_ONCE(desc->ikt_prio, prio);
	for_each_action_of_desc(desc, action) {
		if (action->thread)
			ikt_set_task_prio(action->thread, prio);
		if (action->secondary && action->secondary->thread)
			ikt_set_task_prio(action->secondary->thread, prio);
	}
	return 0;
}
EXPORT_SYMBOL_GPL(irq_set_thread_priority);

/**
 * ikt_thread_priority_show - what /proc/irq/<N>/thread_priority reads
 * @irq: interrupt number
 * @buf: output
 * @size: size of @buf
 *
 * The distinct SCHED_FIFO priorities of @irq's threads, ascending and
 * separated by spaces (one number unless a thread was changed by hand), or,
 * if @irq has no thread, the priority a new thread would get.
 *
 * Return: the length written, or -EINVAL if @irq has no descriptor.
 */
VISIBLE_IF_KUNIT int ikt_thread_priority_show(unsigned int irq, char *buf,
					      size_t size)
{
	DECLARE_BITMAP(seen, MAX_RT_PRIO) = { };
	struct irqaction *action;
	struct irq_desc *desc;
	unsigned int prio;
	int len = 0;

	desc = irq_to_desc(irq);
	if (!desc)
		return -EINVAL;

	scoped_guard(mutex, &desc->request_mutex) {
		for_each_action_of_desc(desc, action) {
			if (action->thread)
				__set_bit(action->thread->rt_priority, seen);
			if (action->secondary && action->secondary->thread)
				__set_bit(action->secondary->thread->rt_priority, seen);
		}
		if (bitmap_empty(seen, MAX_RT_PRIO))
			__set_bit(ikt_config_prio(desc, NULL), seen);
	}
	for_each_set_bit(prio, seen, MAX_RT_PRIO)
		len += scnprintf(buf + len, size - len, "%s%u", len ? " " : "", prio);
	len += scnprintf(buf + len, size - len, "\n");
	return len;
}
EXPORT_SYMBOL_IF_KUNIT(ikt_thread_priority_show);

/**
 * ikt_thread_priority_store - what a write to /proc/irq/<N>/thread_priority does
 * @irq: interrupt number
 * @str: the written text, NUL-terminated: a decimal 1..99, blanks around
 *
 * Return: 0, -EPERM without CAP_SYS_NICE, -EINVAL for anything but a
 * priority in range; nothing is changed on error.
 */
VISIBLE_IF_KUNIT int ikt_thread_priority_store(unsigned int irq, const char *str)
{
	char buf[IKT_PRIO_BUF];
	unsigned int prio;

	if (!capable(CAP_SYS_NICE))
		return -EPERM;
	if (strscpy(buf, str, sizeof(buf)) < 0)
		return -EINVAL;
	if (kstrtouint(strim(buf), 10, &prio))
		return -EINVAL;
	return irq_set_thread_priority(irq, prio);
}
EXPORT_SYMBOL_IF_KUNIT(ikt_thread_priority_store);

/**
 * ikt_action_mode - where an action's primary handler runs, and why
 * @desc: the interrupt's descriptor, desc->lock held
 * @action: one of @desc's actions
 * @reason: set to why a "hard" handler is not threaded, else NULL
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
	else if (action->flags & __IRQF_TIMER)
		*reason = "timer";
	else if ((action->flags & IRQF_PERCPU) ||
		 irq_settings_is_per_cpu_devid(desc))
		*reason = "percpu";
	else if (action->flags & IRQF_NO_THREAD)
		*reason = "no_thread";
	else if (!irq_settings_can_thread(desc))
		*reason = "not_threadable";
	else if (!force_irqthreads())
		*reason = "ikt_off";
	else if ((action->flags & IRQF_ONESHOT) && !ikt_enabled)
		*reason = "oneshot";
	else
		*reason = "unknown";
	return "hard";
}
EXPORT_SYMBOL_IF_KUNIT(ikt_action_mode);

#ifdef CONFIG_PROC_FS
static void ikt_report_thread(struct seq_file *m, struct task_struct *t)
{
	if (t)
		seq_printf(m, " %7d %4u", task_pid_nr(t), t->rt_priority);
	else
		seq_printf(m, " %7s %4s", "-", "-");
}

static int ikt_report_show(struct seq_file *m, void *v)
{
	struct irqaction *action;
	struct irq_desc *desc;
	unsigned int irq;

	seq_printf(m, "# IKT %s; threads default to SCHED_FIFO %d\n",
		   ikt_enabled ? "on" : "off (ikt=off)",
		   ikt_enabled ? CONFIG_IKT_DEFAULT_PRIO : MAX_RT_PRIO / 2);
	seq_printf(m, "# %4s %-20s %-8s %7s %4s %s\n",
		   "irq", "action", "mode", "pid", "prio", "reason");

	irq_lock_sparse();
	for_each_irq_desc(irq, desc) {
		raw_spin_lock_irq(&desc->lock);
		for_each_action_of_desc(desc, action) {
			const char *mode, *reason;
			char name[24];

			mode = ikt_action_mode(desc, action, &reason);
			if (action->name)
				strscpy(name, action->name, sizeof(name));
			else
				snprintf(name, sizeof(name), "%ps", desc->handle_irq);
			seq_printf(m, "%6u %-20s %-8s", irq, name, mode);
			ikt_report_thread(m, action->thread);
			seq_printf(m, " %s\n", reason ?: "-");
			if (action->secondary) {
				seq_printf(m, "%6u %-20s %-8s", irq, name, "threaded");
				ikt_report_thread(m, action->secondary->thread);
				seq_puts(m, " secondary\n");
			}
		}
		raw_spin_unlock_irq(&desc->lock);
	}
	irq_unlock_sparse();
	seq_puts(m, "# not listed: architecture vectors that are not interrupt descriptors\n"
		    "# (local APIC timer, IPIs, irq_work, ...): always hard\n");
	return 0;
}

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

static ssize_t ikt_prio_proc_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	unsigned int irq = (unsigned int)(long)pde_data(file_inode(file));
	char buf[IKT_PRIO_BUF];
	int ret;

	if (!capable(CAP_SYS_NICE))
		return -EPERM;
	if (!count || count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	ret = ikt_thread_priority_store(irq, buf);
	return ret ?: count;
}

static const struct proc_ops ikt_prio_proc_ops = {
	.proc_open	= ikt_prio_proc_open,
	.proc_read	= seq_read,
	.proc_lseek	= seq_lseek,
	.proc_release	= single_release,
	.proc_write	= ikt_prio_proc_write,
};

void ikt_register_irq_proc(struct irq_desc *desc, void *data)
{
	proc_create_data("thread_priority", 0644, desc->dir, &ikt_prio_proc_ops,
			 data);
}

void ikt_unregister_irq_proc(struct irq_desc *desc)
{
	remove_proc_entry("thread_priority", desc->dir);
}

static int __init ikt_proc_init(void)
{
	if (!proc_create_single("irq/ikt", 0444, NULL, ikt_report_show))
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
		pr_info("off (ikt=off): mainline forced threading%s\n",
			force_irqthreads() ? " (threadirqs)" : " disabled");
	return 0;
}
early_initcall(ikt_announce);
