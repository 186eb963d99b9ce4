/* SPDX-License-Identifier: GPL-2.0 */
/* excerpt of Linux 6.12.117 include/linux/sched/task.h, lines 228-237 */
static inline void task_lock(struct task_struct *p)
{
	spin_lock(&p->alloc_lock);
}

static inline void task_unlock(struct task_struct *p)
{
	spin_unlock(&p->alloc_lock);
}


