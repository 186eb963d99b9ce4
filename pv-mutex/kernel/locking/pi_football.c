// SPDX-License-Identifier: GPL-2.0
/*
 * Priority-inversion tests for sleeping locks: football and chain bound.
 *
 * On each CPU (up to PIF_MAX_CPUS) four SCHED_FIFO players bound to it
 * play a priority inversion through a PI chain of two locks:
 *
 *   holder   priority 10   owns lock A
 *   mid      priority 20   owns lock B, then waits for A
 *   high     priority 40   waits for B
 *   offense  priority 30   spins, moving the "ball", until high owns B
 *                          or game_ms has passed
 *
 * A round, driven by the referee thread:
 *
 *  1. The holder takes A and sleeps until the kick-off; mid takes B and
 *     goes to sleep on A; high goes to sleep on B.  The referee waits
 *     until mid and high are asleep, then reads the holder's priority.
 *  2. The referee kicks off, notes the ball and wakes the offense.
 *  3. The holder works hold_us in A and releases it; mid works hold_us
 *     in A and B and releases both; high, now owner of B, reads the ball
 *     and the time and ends the game.
 *
 * With transitive priority inheritance the holder runs at high's
 * priority until it releases A and mid until it releases B, so the
 * offense never runs before high owns B: the ball does not move.  A lock
 * without inheritance lets the offense preempt the holder, and high
 * waits until the offense gives up.
 *
 * mode=football fails the test when the ball moves, or when the holder
 * was not running at high's priority once the chain was built.
 *
 * mode=chain measures the bound priority inheritance gives high's wait,
 * the two critical sections plus the kick-off's wake-up and two lock
 * hand-offs (the holder's unlock wakes mid, mid's unlock wakes high).
 * First T_sched, the time from a bare wake-up to the woken higher-priority
 * task running on the same CPU (ping_count samples per CPU), shown as the
 * figure (wait - T_cs) / (2 T_sched), which counts two bare wake-ups for
 * the two hand-offs; then rounds alternate between calibration, without offense, and games, which
 * measure high's wait from the kick-off to owning B.
 *
 * High's wait holds time the test does not judge: tasks that outrank the
 * chain (6.12's fair server runs SCHED_OTHER tasks above every real-time
 * one once they have starved; the guest's rmmod at the end of the test is
 * one), interrupt threads, and the referee's kick-off.  Each round counts
 * the CPU time the holder, mid and the offense had during the wait (their
 * sum_exec_runtime, read while none of them runs) and judges that, the
 * chain's time: the offense's time, all that a missing boost adds, stays
 * in it.  Calibration rounds give T_cs, the two critical sections, and
 * T_handoff, the rest of their longest chain time plus the spread of their
 * chain times.  The test fails when a game's chain time exceeds T_cs +
 * T_handoff by more than slack_pct percent.
 *
 * Excluding others' time may not be exact: the switches to them and back
 * are charged to the chain task they preempt.  A round in which others
 * took more than PIF_DISTURBED_NS is therefore counted but not judged,
 * neither as a game nor as a calibration round; more than one such round
 * per CPU fails the test.
 *
 * The test runs until the module is removed, then prints its results and
 * "End of test: SUCCESS" or "End of test: FAILURE".
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pv_mutex.h>
#include <linux/rtmutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <uapi/linux/sched/types.h>

#define PIF_MAX_CPUS	8
#define PIF_PRIO_HOLDER	10
#define PIF_PRIO_MID	20
#define PIF_PRIO_OFFENSE 30
#define PIF_PRIO_HIGH	40
#define PIF_PRIO_REF	90
#define PIF_WAIT_LIMIT	(30 * HZ)

static char *lock = "pv_mutex";
module_param(lock, charp, 0444);
MODULE_PARM_DESC(lock, "Lock to play with: pv_mutex, rt_mutex or mutex");

static char *mode = "football";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "football (the ball must not move) or chain (wait bound)");

static int hold_us = 10000;
module_param(hold_us, int, 0444);
MODULE_PARM_DESC(hold_us, "Work of the holder and of mid in their critical sections (us)");

static int game_ms = 200;
module_param(game_ms, int, 0444);
MODULE_PARM_DESC(game_ms, "Time after which the offense gives up (ms)");

static int ping_count = 100;
module_param(ping_count, int, 0444);
MODULE_PARM_DESC(ping_count, "mode=chain: wake-ups per CPU that measure T_sched");

static int slack_pct;
module_param(slack_pct, int, 0444);
MODULE_PARM_DESC(slack_pct, "mode=chain: tolerated excess over T_cs + T_handoff (%)");

enum pif_kind { PIF_PV_MUTEX, PIF_RT_MUTEX, PIF_MUTEX };
enum pif_phase { PIF_PING, PIF_CALIBRATE, PIF_GAME };

struct pif_cpu {
	int			cpu;
	struct task_struct	*holder, *mid, *high, *offense;
	struct completion	go_holder, go_mid, go_high, go_offense;
	struct completion	has_a, has_b;
	struct completion	done_holder, done_mid, done_high, done_offense;
	struct completion	ping, kick;
	ktime_t			ping_sent;
	bool			mid_waiting, high_waiting, game_over;
	unsigned long		ball;
	/* Results of the round, written by the players. */
	s64			cs_holder, cs_mid;	/* ns */
	ktime_t			high_owns;
	unsigned long		ball_at_end;
	u64			ran_start, ran_end;	/* ns, pif_players_ran() */
	s64			ping_max;		/* ns */
	s64			ping_sum;		/* ns */
};

static enum pif_kind kind;
static bool chain_mode;
static int ncpus;
static struct pif_cpu *pcs;
static struct task_struct *referee;
static enum pif_phase phase;
static ktime_t kickoff_time;

#ifdef CONFIG_PV_MUTEX
static struct pv_mutex pv_locks[2 * PIF_MAX_CPUS];
#endif
static struct rt_mutex rt_locks[2 * PIF_MAX_CPUS];
static struct mutex mx_locks[2 * PIF_MAX_CPUS];
static struct lock_class_key pif_keys[3][2];	/* per kind: A, B */

/* Results of the whole test, written by the referee. */
static long rounds, rounds_offense, ball_moves, ball_max, games_moved, unboosted, errors;
static int holder_prio_worst;
static s64 t_sched_max, t_sched_sum, t_cs_max, wait_cal_max, wait_max;
static s64 chain_cal_min, chain_cal_max, chain_max, others_cal_max, others_max;
/* mode=chain: others' time over which a round is not judged (see above). */
#define PIF_DISTURBED_NS	(200 * NSEC_PER_USEC)
static long disturbed;
static s64 disturbed_max;

static void pif_lock(int idx)
{
	switch (kind) {
	case PIF_PV_MUTEX:
#ifdef CONFIG_PV_MUTEX
		pv_mutex_lock(&pv_locks[idx]);
#endif
		break;
	case PIF_RT_MUTEX:
		rt_mutex_lock(&rt_locks[idx]);
		break;
	case PIF_MUTEX:
		mutex_lock(&mx_locks[idx]);
		break;
	}
}

static void pif_unlock(int idx)
{
	switch (kind) {
	case PIF_PV_MUTEX:
#ifdef CONFIG_PV_MUTEX
		pv_mutex_unlock(&pv_locks[idx]);
#endif
		break;
	case PIF_RT_MUTEX:
		rt_mutex_unlock(&rt_locks[idx]);
		break;
	case PIF_MUTEX:
		mutex_unlock(&mx_locks[idx]);
		break;
	}
}

static int lock_a(struct pif_cpu *pc)
{
	return 2 * (pc - pcs);
}

static int lock_b(struct pif_cpu *pc)
{
	return 2 * (pc - pcs) + 1;
}

/* Wait for @c; false when the thread is asked to stop first. */
static bool pif_wait(struct completion *c)
{
	while (!wait_for_completion_timeout(c, HZ / 10))
		if (kthread_should_stop())
			return false;
	return true;
}

/* The referee's wait: a player that does not answer is an error. */
static bool pif_wait_player(struct completion *c, const char *what, int cpu)
{
	if (wait_for_completion_timeout(c, PIF_WAIT_LIMIT))
		return true;
	pr_alert("!!! CPU %d: %s did not happen within %d s\n", cpu, what,
		 PIF_WAIT_LIMIT / HZ);
	errors++;
	return false;
}

/* Wait until @p, which set *@flag before locking, is asleep in the lock. */
static bool pif_wait_asleep(struct task_struct *p, bool *flag, const char *who, int cpu)
{
	unsigned long end = jiffies + PIF_WAIT_LIMIT;

	while (!READ_ONCE(*flag) || READ_ONCE(p->on_rq)) {
		if (time_after(jiffies, end)) {
			pr_alert("!!! CPU %d: %s never went to sleep in the lock\n", cpu, who);
			errors++;
			return false;
		}
		schedule_timeout_uninterruptible(1);
	}
	return true;
}

/*
 * The CPU time the holder, mid and the offense have had.  Read while none
 * of them runs, at the kick-off and by high once it owns B, it is exact:
 * the scheduler adds to sum_exec_runtime when it switches a task out.
 */
static u64 pif_players_ran(struct pif_cpu *pc)
{
	return READ_ONCE(pc->holder->se.sum_exec_runtime) +
	       READ_ONCE(pc->mid->se.sum_exec_runtime) +
	       READ_ONCE(pc->offense->se.sum_exec_runtime);
}

/* Busy work that a preemption does not shorten. */
static void pif_work(int us)
{
	int i;

	for (i = 0; i < us; i++)
		udelay(1);
}

static int pif_holder(void *arg)
{
	struct pif_cpu *pc = arg;
	ktime_t t;
	int i;

	while (pif_wait(&pc->go_holder)) {
		if (READ_ONCE(phase) == PIF_PING) {
			/* Wake high, which waits on pc->ping, ping_count times. */
			for (i = 0; i < ping_count; i++) {
				while (!READ_ONCE(pc->high_waiting) || READ_ONCE(pc->high->on_rq))
					cpu_relax();
				WRITE_ONCE(pc->high_waiting, false);
				WRITE_ONCE(pc->ping_sent, ktime_get());
				complete(&pc->ping);
			}
			complete(&pc->done_holder);
			continue;
		}
		pif_lock(lock_a(pc));
		complete(&pc->has_a);
		/* Asleep, not spinning: a spinning RT task starves timers. */
		wait_for_completion(&pc->kick);
		t = ktime_get();
		pif_work(hold_us);
		pc->cs_holder = ktime_to_ns(ktime_sub(ktime_get(), t));
		pif_unlock(lock_a(pc));
		complete(&pc->done_holder);
	}
	return 0;
}

static int pif_mid(void *arg)
{
	struct pif_cpu *pc = arg;
	ktime_t t;

	while (pif_wait(&pc->go_mid)) {
		pif_lock(lock_b(pc));
		complete(&pc->has_b);
		WRITE_ONCE(pc->mid_waiting, true);
		pif_lock(lock_a(pc));
		t = ktime_get();
		pif_work(hold_us);
		pc->cs_mid = ktime_to_ns(ktime_sub(ktime_get(), t));
		pif_unlock(lock_a(pc));
		pif_unlock(lock_b(pc));
		complete(&pc->done_mid);
	}
	return 0;
}

static int pif_high(void *arg)
{
	struct pif_cpu *pc = arg;
	ktime_t t;
	s64 d;
	int i;

	while (pif_wait(&pc->go_high)) {
		if (READ_ONCE(phase) == PIF_PING) {
			pc->ping_max = 0;
			pc->ping_sum = 0;
			for (i = 0; i < ping_count; i++) {
				WRITE_ONCE(pc->high_waiting, true);
				wait_for_completion(&pc->ping);
				t = ktime_get();
				d = ktime_to_ns(ktime_sub(t, READ_ONCE(pc->ping_sent)));
				pc->ping_max = max(pc->ping_max, d);
				pc->ping_sum += d;
			}
			complete(&pc->done_high);
			continue;
		}
		WRITE_ONCE(pc->high_waiting, true);
		pif_lock(lock_b(pc));
		pc->high_owns = ktime_get();
		pc->ran_end = pif_players_ran(pc);
		pc->ball_at_end = READ_ONCE(pc->ball);
		WRITE_ONCE(pc->game_over, true);
		pif_unlock(lock_b(pc));
		complete(&pc->done_high);
	}
	return 0;
}

static int pif_offense(void *arg)
{
	struct pif_cpu *pc = arg;
	unsigned long end;

	while (pif_wait(&pc->go_offense)) {
		end = jiffies + msecs_to_jiffies(game_ms);
		while (!READ_ONCE(pc->game_over) && time_before(jiffies, end)) {
			WRITE_ONCE(pc->ball, pc->ball + 1);
			cpu_relax();
		}
		complete(&pc->done_offense);
	}
	return 0;
}

static void pif_reinit(struct pif_cpu *pc)
{
	reinit_completion(&pc->has_a);
	reinit_completion(&pc->has_b);
	reinit_completion(&pc->done_holder);
	reinit_completion(&pc->done_mid);
	reinit_completion(&pc->done_high);
	reinit_completion(&pc->done_offense);
	reinit_completion(&pc->ping);
	reinit_completion(&pc->kick);
	pc->mid_waiting = false;
	pc->high_waiting = false;
	pc->game_over = false;
}

/* T_sched: the worst wake-up to run of high, woken by the holder. */
static void pif_ping_phase(void)
{
	int c;

	WRITE_ONCE(phase, PIF_PING);
	for (c = 0; c < ncpus; c++) {
		pif_reinit(&pcs[c]);
		complete(&pcs[c].go_high);
		complete(&pcs[c].go_holder);
	}
	for (c = 0; c < ncpus; c++) {
		if (!pif_wait_player(&pcs[c].done_holder, "the holder's pings", c) ||
		    !pif_wait_player(&pcs[c].done_high, "high's pongs", c))
			return;
		t_sched_max = max(t_sched_max, pcs[c].ping_max);
		t_sched_sum += pcs[c].ping_sum;
	}
}

/* One round on every CPU; returns false on a player error. */
static bool pif_round(bool offense)
{
	unsigned long ball0[PIF_MAX_CPUS];
	struct pif_cpu *pc;
	int c, prio;
	s64 wait, chain;

	WRITE_ONCE(phase, offense ? PIF_GAME : PIF_CALIBRATE);
	for (c = 0; c < ncpus; c++) {
		pif_reinit(&pcs[c]);
		complete(&pcs[c].go_holder);
	}
	for (c = 0; c < ncpus; c++) {
		pc = &pcs[c];
		if (!pif_wait_player(&pc->has_a, "the holder owning A", c))
			return false;
		complete(&pc->go_mid);
		if (!pif_wait_player(&pc->has_b, "mid owning B", c) ||
		    !pif_wait_asleep(pc->mid, &pc->mid_waiting, "mid", c))
			return false;
		complete(&pc->go_high);
		if (!pif_wait_asleep(pc->high, &pc->high_waiting, "high", c))
			return false;
	}
	/* The chain is built: the holder should run at high's priority. */
	for (c = 0; c < ncpus; c++) {
		pc = &pcs[c];
		prio = READ_ONCE(pc->holder->prio);
		holder_prio_worst = max(holder_prio_worst, prio);
		if (prio > MAX_RT_PRIO - 1 - PIF_PRIO_HIGH) {
			unboosted++;
			if (unboosted <= 5)
				pr_alert("CPU %d round %ld: holder at prio %d with high (prio %d) asleep behind it\n",
					 c, rounds, prio, MAX_RT_PRIO - 1 - PIF_PRIO_HIGH);
		}
	}
	/*
	 * Kick off, then start the offense: from now on the holder, boosted,
	 * must keep it off its CPU until high owns B.
	 */
	for (c = 0; c < ncpus; c++)
		pcs[c].ran_start = pif_players_ran(&pcs[c]);
	kickoff_time = ktime_get();
	for (c = 0; c < ncpus; c++) {
		pc = &pcs[c];
		complete(&pc->kick);
		ball0[c] = READ_ONCE(pc->ball);
		if (offense)
			complete(&pc->go_offense);
	}
	for (c = 0; c < ncpus; c++) {
		pc = &pcs[c];
		if (!pif_wait_player(&pc->done_high, "high owning B", c) ||
		    !pif_wait_player(&pc->done_mid, "mid's release", c) ||
		    !pif_wait_player(&pc->done_holder, "the holder's release", c) ||
		    (offense && !pif_wait_player(&pc->done_offense, "the offense's end", c)))
			return false;
		wait = ktime_to_ns(ktime_sub(pc->high_owns, kickoff_time));
		chain = pc->ran_end - pc->ran_start;
		if (chain_mode && wait - chain > PIF_DISTURBED_NS) {
			disturbed++;
			disturbed_max = max(disturbed_max, wait - chain);
		} else if (offense) {
			unsigned long moved = pc->ball_at_end - ball0[c];

			ball_moves += moved;
			games_moved += !!moved;
			if (moved > ball_max)
				ball_max = moved;
			if (moved && ball_max == moved && !chain_mode)
				pr_alert("CPU %d round %ld: the ball moved %lu times while the defense held\n",
					 c, rounds, moved);
			wait_max = max(wait_max, wait);
			chain_max = max(chain_max, chain);
			others_max = max(others_max, wait - chain);
		} else {
			/*
			 * Others' time that fell in a critical section is in
			 * its wall time, not in the chain's CPU time, which
			 * holds both sections: the lesser of the two.
			 */
			t_cs_max = max(t_cs_max, min(pc->cs_holder + pc->cs_mid, chain));
			wait_cal_max = max(wait_cal_max, wait);
			chain_cal_max = max(chain_cal_max, chain);
			if (!chain_cal_min || chain < chain_cal_min)
				chain_cal_min = chain;
			others_cal_max = max(others_cal_max, wait - chain);
		}
	}
	rounds++;
	if (offense)
		rounds_offense++;
	return true;
}

static int pif_referee(void *arg)
{
	if (chain_mode)
		pif_ping_phase();
	while (!kthread_should_stop() && !errors) {
		/* mode=chain: calibration and game rounds alternate. */
		bool offense = !chain_mode || rounds % 2;

		if (!pif_round(offense)) {
			/* Let a holder waiting for the kick-off finish. */
			for (int c = 0; c < ncpus; c++)
				complete(&pcs[c].kick);
			break;
		}
		schedule_timeout_uninterruptible(1);
	}
	while (!kthread_should_stop())
		schedule_timeout_interruptible(HZ / 10);
	return 0;
}

static const char *const kind_names[] = { "pv_mutex", "rt_mutex", "mutex" };

static void pif_report(void)
{
	bool pi = kind != PIF_MUTEX, ok = !errors;
	/*
	 * mode=chain: high's wait in a game, others' time excluded, against
	 * the calibration rounds' longest, plus their spread (how much a round
	 * without offense varies: the ticks that fall in it).
	 */
	s64 handoff = 2 * chain_cal_max - chain_cal_min - t_cs_max;
	s64 bound = t_cs_max + handoff, excess = chain_max - t_cs_max;
	s64 excess_pct = t_sched_max ? div_s64(excess * 100, 2 * t_sched_max) : 0;

	pr_alert("%s lock=%s cpus=%d hold_us=%d game_ms=%d: %ld rounds, %ld with offense\n",
		 mode, kind_names[kind], ncpus, hold_us, game_ms, rounds, rounds_offense);
	pr_alert("holder's priority once the chain was built: worst %d, wanted %d or better; %ld of %ld games (rounds x CPUs) short of it\n",
		 holder_prio_worst, MAX_RT_PRIO - 1 - PIF_PRIO_HIGH, unboosted, rounds * ncpus);
	if (unboosted)
		ok = false;
	if (!chain_mode) {
		pr_alert("ball moves while the defense held: total %ld in %ld of %ld games, worst game %ld; high's wait max %lld us\n",
			 ball_moves, games_moved, rounds_offense * ncpus, ball_max,
			 div_s64(wait_max, NSEC_PER_USEC));
		if (ball_moves)
			ok = false;
	} else {
		pr_alert("T_sched max %lld us (%d wake-ups per CPU, mean %lld ns), T_cs max %lld us, calibration wait max %lld us\n",
			 div_s64(t_sched_max, NSEC_PER_USEC), ping_count,
			 div_s64(t_sched_sum, (s64)ping_count * ncpus),
			 div_s64(t_cs_max, NSEC_PER_USEC), div_s64(wait_cal_max, NSEC_PER_USEC));
		pr_alert("others' time in high's wait (not the holder's, mid's or the offense's CPU time): max %lld us in calibration rounds, %lld us in games (wall wait max %lld us); excluded from the times below\n",
			 div_s64(others_cal_max, NSEC_PER_USEC),
			 div_s64(others_max, NSEC_PER_USEC), div_s64(wait_max, NSEC_PER_USEC));
		pr_alert("rounds not judged, others' time over %lld us: %ld (others' time max %lld us), at most %d allowed\n",
			 div_s64(PIF_DISTURBED_NS, NSEC_PER_USEC), disturbed,
			 div_s64(disturbed_max, NSEC_PER_USEC), ncpus);
		if (disturbed > ncpus)
			ok = false;
		pr_alert("chain time of calibration rounds %lld..%lld us: T_handoff %lld us (longest minus T_cs, plus the spread)\n",
			 div_s64(chain_cal_min, NSEC_PER_USEC),
			 div_s64(chain_cal_max, NSEC_PER_USEC),
			 div_s64(handoff, NSEC_PER_USEC));
		pr_alert("high's wait with offense max %lld us, bound T_cs + T_handoff %lld us, (wait - T_cs) / (2 T_sched) %s%lld.%02lld, ratio %lld.%02lld (limit 1.%02d)\n",
			 div_s64(chain_max, NSEC_PER_USEC), div_s64(bound, NSEC_PER_USEC),
			 excess < 0 ? "-" : "", div_s64(abs(excess_pct), 100),
			 abs(excess_pct) % 100,
			 bound ? div_s64(chain_max, bound) : 0,
			 bound ? div_s64(chain_max * 100, bound) % 100 : 0, slack_pct);
		if (!rounds_offense || chain_max * 100 > bound * (100 + slack_pct))
			ok = false;
	}
	if (!ok && !pi)
		pr_alert("mutex has no priority inheritance: this is the inversion the test shows\n");
	pr_alert("End of test: %s\n", ok ? "SUCCESS" : "FAILURE");
}

static void pif_stop(void)
{
	int c;

	if (referee)
		kthread_stop(referee);
	referee = NULL;
	for (c = 0; c < ncpus; c++) {
		struct pif_cpu *pc = &pcs[c];
		/*
		 * High first: a round the referee left on an error still
		 * ends with high reading the other players' runtime.
		 */
		struct task_struct **ts[] = { &pc->high, &pc->holder, &pc->mid, &pc->offense };
		int i;

		for (i = 0; i < ARRAY_SIZE(ts); i++) {
			if (*ts[i])
				kthread_stop(*ts[i]);
			*ts[i] = NULL;
		}
	}
}

static struct task_struct *pif_player(int (*fn)(void *), struct pif_cpu *pc,
				      const char *name, int prio)
{
	struct sched_attr attr = {
		.sched_policy = SCHED_FIFO,
		.sched_priority = prio,
	};
	struct task_struct *t;

	t = kthread_create(fn, pc, "pif_%s/%d", name, pc->cpu);
	if (IS_ERR(t))
		return t;
	kthread_bind(t, pc->cpu);
	WARN_ON_ONCE(sched_setattr_nocheck(t, &attr));
	wake_up_process(t);
	return t;
}

static int __init pif_init(void)
{
	struct sched_attr attr = {
		.sched_policy = SCHED_FIFO,
		.sched_priority = PIF_PRIO_REF,
	};
	int c, i, cpu, ret = 0;

	if (!strcmp(lock, "pv_mutex") && IS_ENABLED(CONFIG_PV_MUTEX)) {
		kind = PIF_PV_MUTEX;
	} else if (!strcmp(lock, "rt_mutex")) {
		kind = PIF_RT_MUTEX;
	} else if (!strcmp(lock, "mutex")) {
		kind = PIF_MUTEX;
	} else {
		pr_err("lock=%s: not pv_mutex (with CONFIG_PV_MUTEX), rt_mutex or mutex\n", lock);
		return -EINVAL;
	}
	if (strcmp(mode, "football") && strcmp(mode, "chain")) {
		pr_err("mode=%s: not football or chain\n", mode);
		return -EINVAL;
	}
	if (hold_us < 1 || hold_us > 1000000 || game_ms < 1 || ping_count < 1 ||
	    slack_pct < 0) {
		pr_err("hold_us (1..1000000), game_ms, ping_count (>= 1) or slack_pct (>= 0) out of range\n");
		return -EINVAL;
	}
	chain_mode = !strcmp(mode, "chain");

	for (i = 0; i < ARRAY_SIZE(rt_locks); i++) {
		const char *name = i % 2 ? "pif_B" : "pif_A";

#ifdef CONFIG_PV_MUTEX
		__pv_mutex_init(&pv_locks[i], name, &pif_keys[PIF_PV_MUTEX][i % 2]);
#endif
		__rt_mutex_init(&rt_locks[i], name, &pif_keys[PIF_RT_MUTEX][i % 2]);
		__mutex_init(&mx_locks[i], name, &pif_keys[PIF_MUTEX][i % 2]);
	}

	ncpus = min(num_online_cpus(), PIF_MAX_CPUS);
	pcs = kcalloc(ncpus, sizeof(*pcs), GFP_KERNEL);
	if (!pcs)
		return -ENOMEM;
	c = 0;
	for_each_online_cpu(cpu) {
		struct pif_cpu *pc = &pcs[c];

		if (c == ncpus)
			break;
		pc->cpu = cpu;
		init_completion(&pc->go_holder);
		init_completion(&pc->go_mid);
		init_completion(&pc->go_high);
		init_completion(&pc->go_offense);
		init_completion(&pc->has_a);
		init_completion(&pc->has_b);
		init_completion(&pc->done_holder);
		init_completion(&pc->done_mid);
		init_completion(&pc->done_high);
		init_completion(&pc->done_offense);
		init_completion(&pc->ping);
		init_completion(&pc->kick);
		c++;
	}
	ncpus = c;
	for (c = 0; c < ncpus; c++) {
		struct pif_cpu *pc = &pcs[c];

		pc->holder = pif_player(pif_holder, pc, "holder", PIF_PRIO_HOLDER);
		pc->mid = pif_player(pif_mid, pc, "mid", PIF_PRIO_MID);
		pc->high = pif_player(pif_high, pc, "high", PIF_PRIO_HIGH);
		pc->offense = pif_player(pif_offense, pc, "offense", PIF_PRIO_OFFENSE);
		if (IS_ERR(pc->holder) || IS_ERR(pc->mid) || IS_ERR(pc->high) ||
		    IS_ERR(pc->offense)) {
			ret = -ENOMEM;
			break;
		}
	}
	if (!ret) {
		referee = kthread_run(pif_referee, NULL, "pif_referee");
		if (IS_ERR(referee)) {
			ret = PTR_ERR(referee);
			referee = NULL;
		} else {
			WARN_ON_ONCE(sched_setattr_nocheck(referee, &attr));
		}
	}
	if (ret) {
		for (c = 0; c < ncpus; c++) {
			struct pif_cpu *pc = &pcs[c];

			pc->holder = IS_ERR(pc->holder) ? NULL : pc->holder;
			pc->mid = IS_ERR(pc->mid) ? NULL : pc->mid;
			pc->high = IS_ERR(pc->high) ? NULL : pc->high;
			pc->offense = IS_ERR(pc->offense) ? NULL : pc->offense;
		}
		pif_stop();
		kfree(pcs);
		return ret;
	}
	pr_alert("Start of test: mode=%s lock=%s cpus=%d hold_us=%d game_ms=%d ping_count=%d slack_pct=%d\n",
		 mode, kind_names[kind], ncpus, hold_us, game_ms, ping_count, slack_pct);
	return 0;
}

static void __exit pif_exit(void)
{
	pif_stop();
	pif_report();
	kfree(pcs);
}

module_init(pif_init);
module_exit(pif_exit);
MODULE_DESCRIPTION("Priority-inversion football and chain-bound tests for sleeping locks");
MODULE_LICENSE("GPL");
