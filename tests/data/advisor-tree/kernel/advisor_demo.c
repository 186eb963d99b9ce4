// SPDX-License-Identifier: GPL-2.0
/*
 * Not kernel code: the static pass's rules on locks of its own.  demo_lock
 * is taken in process context (a system call), in a plain RCU reader, and
 * by demo_count() inside demo_drop(), which drops its caller's other_lock
 * around it.  late_lock is taken under other_lock, which a branch that
 * returns released; bh_demo_lock in a timer callback; found_lock after a
 * loop that a break may leave with other_lock held; tasklet_lock in a
 * function a system call calls and a file-scope DECLARE_TASKLET() runs;
 * after_lock after a label that only an unlocked goto reaches (the loop
 * of collapse_file() in mm/khugepaged.c).
 */
static DEFINE_SPINLOCK(demo_lock);
static DEFINE_SPINLOCK(other_lock);

static void demo_count(void)
{
	spin_lock(&demo_lock);
	demo_value++;
	spin_unlock(&demo_lock);
}

static void demo_reader(void)
{
	rcu_read_lock();
	spin_lock(&demo_lock);
	demo_value--;
	spin_unlock(&demo_lock);
	rcu_read_unlock();
}

static void demo_drop(void)
	__releases(&other_lock)
{
	spin_unlock(&other_lock);
	demo_count();
	spin_lock(&other_lock);
}

static int demo_early(int x)
{
	spin_lock(&other_lock);
	if (x) {
		spin_unlock(&other_lock);
		return 0;
	}
	demo_drop();
	spin_unlock(&other_lock);
	demo_count();
	return 1;
}

SYSCALL_DEFINE1(advisor_demo, int, x)
{
	demo_reader();
	return demo_early(x);
}

static DEFINE_SPINLOCK(late_lock);

static int late_early(int x)
{
	spin_lock(&other_lock);
	if (x) {
		spin_unlock(&other_lock);
		return 0;
	}
	spin_lock(&late_lock);
	spin_unlock(&late_lock);
	spin_unlock(&other_lock);
	return 1;
}

SYSCALL_DEFINE1(advisor_late, int, x)
{
	return late_early(x);
}

static void late_timer(struct timer_list *t)
{
	spin_lock(&bh_demo_lock);
	spin_unlock(&bh_demo_lock);
}

static int late_init(void)
{
	timer_setup(&late_timer_list, late_timer, 0);
	return 0;
}
module_init(late_init);

static DEFINE_SPINLOCK(found_lock);

static void found_loop(struct demo *d)
{
	struct demo *p;

	for_each_demo(p, d) {
		spin_lock(&other_lock);
		if (p->found)
			break;
		spin_unlock(&other_lock);
	}
	spin_lock(&found_lock);
	spin_unlock(&found_lock);
}

SYSCALL_DEFINE1(advisor_found, struct demo *, d)
{
	found_loop(d);
	return 0;
}

static DEFINE_SPINLOCK(tasklet_lock);

static void tasklet_fn(struct tasklet_struct *t)
{
	spin_lock(&tasklet_lock);
	spin_unlock(&tasklet_lock);
}

static DECLARE_TASKLET(demo_tasklet, tasklet_fn);

SYSCALL_DEFINE0(advisor_tasklet)
{
	tasklet_fn(NULL);
	return 0;
}

static DEFINE_SPINLOCK(after_lock);

static int after_loop(struct demo *d)
{
	struct demo *p;

	spin_lock(&other_lock);
	for_each_demo(p, d) {
		if (p->skip) {
			spin_unlock(&other_lock);
			goto out_skip;
		}
		continue;
out_skip:
		demo_value++;
		goto out_unlocked;
	}
	spin_unlock(&other_lock);
out_unlocked:
	spin_lock(&after_lock);
	spin_unlock(&after_lock);
	return 0;
}

SYSCALL_DEFINE1(advisor_after, struct demo *, d)
{
	return after_loop(d);
}
