# SPDX-License-Identifier: GPL-2.0
"""The static pass (pvrt.lockscan) binds a member class to its own struct's
lock, and the reason it prints is the state really held at the site
(issue 20, the static table's caveats).  Each case is a recorded excerpt of
the 6.12 sources, cut down to what decides it."""

import re
import textwrap

from pvrt import lockscan
from test_lockscan_review import tree_of  # the same excerpt-tree helper

TASK_H = {"include/linux/sched/task.h": """\
    static inline void task_lock(struct task_struct *p)
    {
    \tspin_lock(&p->alloc_lock);
    }

    static inline void task_unlock(struct task_struct *p)
    {
    \tspin_unlock(&p->alloc_lock);
    }
    """}


def sites(res):
    return {(r["function"], r["line"]): r for r in res["sites"]}


def funcs(res):
    return sorted({r["function"] for r in res["sites"]})


# item 1: a member class binds its own struct's lock

def test_another_structs_alloc_lock_is_not_task_lock(tmp_path):
    """hfi1's send_context, hpilo's ilo_hwinfo and mlx5's cmd have an
    alloc_lock too: their sites are listed as excluded, not as task_lock's."""
    tree = tree_of(tmp_path, {**TASK_H, "drivers/infiniband/hw/hfi1/pio.c": """\
        void sc_disable(struct send_context *sc)
        {
        \tspin_lock_irq(&sc->alloc_lock);
        \tsc->flags &= ~SCF_ENABLED;
        \tspin_unlock_irq(&sc->alloc_lock);
        }
        """, "drivers/misc/hpilo.c": """\
        static irqreturn_t ilo_isr(int irq, void *data)
        {
        \tstruct ilo_hwinfo *hw = data;

        \tspin_lock(&hw->alloc_lock);
        \tspin_unlock(&hw->alloc_lock);
        \treturn IRQ_HANDLED;
        }
        """, "drivers/net/ethernet/mellanox/mlx5/core/cmd.c": """\
        static void cmd_work_handler(struct work_struct *work)
        {
        \tstruct mlx5_cmd_work_ent *ent = container_of(work, struct mlx5_cmd_work_ent, work);
        \tunsigned long flags;

        \tspin_lock_irqsave(&container_of(ent->cmd, struct mlx5_cmd, vars)->alloc_lock,
        \t\t\t  flags);
        }
        """, "kernel/fork.c": """\
        SYSCALL_DEFINE0(get_exe)
        {
        \tstruct task_struct *p = current;

        \tspin_lock(&p->alloc_lock);
        \tspin_unlock(&p->alloc_lock);
        \ttask_lock(p);
        \ttask_unlock(p);
        \treturn 0;
        }
        """})
    res = lockscan.analyse_class(tree, "&p->alloc_lock")
    # the task_struct sites only: task_lock() itself and the syscall's
    assert funcs(res) == ["SYSCALL_DEFINE0", "task_lock"], res["sites"]
    assert res["verdict"] == "process"
    assert res["struct"] == "task_struct"
    ex = {(r["function"], r["struct"]) for r in res["excluded"]}
    assert ex == {("sc_disable", "send_context"), ("ilo_isr", "ilo_hwinfo"),
                  ("cmd_work_handler", "mlx5_cmd")}
    table = lockscan.site_table(res)
    assert "drivers/infiniband/hw/hfi1/pio.c:3 sc_disable(): " \
           "spin_lock_irq(&sc->alloc_lock)" in table
    assert "other struct send_context, not this class" in table


def test_a_task_struct_site_and_an_unresolvable_base_stay_sites(tmp_path):
    """The recorded snippets of the brief: struct task_struct *p is kept, a
    base the pass cannot type (a member chain, a macro's parameter) is kept
    (the safe side), and an atomic one of them still decides the class."""
    tree = tree_of(tmp_path, {"kernel/a.c": """\
        static DEFINE_SPINLOCK(outer);

        void kept(void)
        {
        \tstruct task_struct *p;

        \tp = find_task();
        \tspin_lock(&p->alloc_lock);
        \tspin_unlock(&p->alloc_lock);
        }

        void chained(struct signal_struct *sig)
        {
        \tspin_lock(&outer);
        \tspin_lock(&sig->curr_target->alloc_lock);
        \tspin_unlock(&sig->curr_target->alloc_lock);
        \tspin_unlock(&outer);
        }

        #define lock_it(x) spin_lock_irq(&(x)->alloc_lock)
        """})
    res = lockscan.analyse_class(tree, "&p->alloc_lock")
    assert funcs(res) == ["chained", "kept", "lock_it"]
    assert res["excluded"] == []
    assert res["verdict"] == "atomic"
    by = {r["function"]: r for r in res["sites"]}
    assert by["chained"]["reason"].startswith("nested in a spinlock_t (spin_lock() line 14)")
    assert by["lock_it"]["reason"] == "the acquisition disables interrupts"


def test_an_uncatalogued_member_takes_its_struct_from_spin_lock_init(tmp_path):
    """&tty->files_lock is named by spin_lock_init(&tty->files_lock) in a
    function where tty is a struct tty_struct: another struct's files_lock
    is not the class's."""
    tree = tree_of(tmp_path, {"drivers/tty/tty_io.c": """\
        struct tty_struct *alloc_tty_struct(struct tty_driver *driver, int idx)
        {
        \tstruct tty_struct *tty = kzalloc(sizeof(*tty), GFP_KERNEL);

        \tspin_lock_init(&tty->files_lock);
        \treturn tty;
        }

        SYSCALL_DEFINE1(tty_add, struct tty_struct *, tty)
        {
        \tspin_lock(&tty->files_lock);
        \tspin_unlock(&tty->files_lock);
        \treturn 0;
        }
        """, "drivers/other.c": """\
        void other(struct other_dev *tty)
        {
        \tspin_lock_irq(&tty->files_lock);
        \tspin_unlock_irq(&tty->files_lock);
        }
        """})
    res = lockscan.analyse_class(tree, "&tty->files_lock")
    assert res["struct"] == "tty_struct"
    assert funcs(res) == ["SYSCALL_DEFINE1"]
    assert res["verdict"] == "process"
    assert [(r["function"], r["struct"]) for r in res["excluded"]] == [("other", "other_dev")]


def test_base_struct_forms():
    f = lockscan.functions("x.c", textwrap.dedent("""\
        int f(struct a *x, const struct b *const y)
        {
        \tstruct c *z, *w;
        \tstruct d v[2];
        \tif (1) {
        \t\tstruct e *twice;
        \t}
        \tstruct f *twice;
        }
        """))[0]
    # w, the second declarator of its line, is not typed: a site (the
    # safe side); twice is declared as two structs: not typed either
    assert [lockscan.base_struct(b, f) for b in ("x", "y", "z", "w", "v", "twice", "q")] == \
        ["a", "b", "c", None, "d", None, None]
    assert lockscan.base_struct("current", f) == "task_struct"
    assert lockscan.base_struct("((struct g *)p)", f) == "g"
    assert lockscan.base_struct("container_of(p, struct h, node)", f) == "h"
    assert lockscan.base_struct("list_first_entry(&l, struct i, list)", f) == "i"
    assert lockscan.base_struct("x->parent", f) is None


# item 2: the reason printed is the state really held

# The generic fault path: takes and drops a lock of its own.
GENERIC_FAULT = """\
    static DEFINE_SPINLOCK(fault_lock);

    vm_fault_t handle_mm_fault(struct vm_area_struct *vma, unsigned long address,
    \t\t\t   unsigned int flags, struct pt_regs *regs)
    {
    \tspin_lock(&fault_lock);
    \tspin_unlock(&fault_lock);
    \treturn 0;
    }
    """

FAULT = {"arch/arm/mm/fault.c": """\
    static void die_kernel_fault(const char *msg, struct mm_struct *mm,
    \t\t\t     unsigned long addr, unsigned int fsr,
    \t\t\t     struct pt_regs *regs)
    {
    \tbust_spinlocks(1);
    \tdie("Oops", regs, fsr);
    \tbust_spinlocks(0);
    \tmake_task_dead(SIGKILL);
    }

    static int do_page_fault(unsigned long addr, unsigned int fsr, struct pt_regs *regs)
    {
    \tif (fsr & FSR_LNX_PF) {
    \t\tif (is_permission_fault(fsr) && !user_mode(regs))
    \t\t\tdie_kernel_fault("execution of memory", mm, addr, fsr, regs);
    \t}
    \tfault = handle_mm_fault(vma, addr, flags, regs);
    \treturn 0;
    }

    SYSCALL_DEFINE0(fault)
    {
    \treturn do_page_fault(0, 0, NULL);
    }
    """, "kernel/panic.c": """\
    void panic(const char *fmt, ...)
    {
    \tlocal_irq_disable();
    \tpreempt_disable_notrace();
    \tfor (;;)
    \t\tmdelay(PANIC_TIMER_STEP);
    }
    """, "include/asm-generic/bug.h": """\
    #define BUG() do { \\
    \tprintk("BUG: failure at %s:%d/%s()!\\n", __FILE__, __LINE__, __func__); \\
    \tbarrier_before_unreachable(); \\
    \tpanic("BUG!"); \\
    } while (0)
    """, "kernel/sched/core.c": """\
    void __noreturn do_task_dead(void)
    {
    \tset_special_state(TASK_DEAD);
    \t__schedule(SM_NONE);
    \tBUG();
    \tfor (;;)
    \t\tcpu_relax();
    }
    """, "kernel/exit.c": """\
    void __noreturn do_exit(long code)
    {
    \texit_mm();
    \tdo_task_dead();
    }

    void __noreturn make_task_dead(int signr)
    {
    \tstruct task_struct *tsk = current;

    \tif (unlikely(tsk->flags & PF_EXITING)) {
    \t\ttsk->exit_state = EXIT_DEAD;
    \t\tpreempt_disable();
    \t\tdo_task_dead();
    \t}
    \tdo_exit(signr);
    }
    """, "mm/memory.c": GENERIC_FAULT}
# read before the fault path, one file a caller level, as the walk over
# the whole tree read them
EARLY = ["kernel/panic.c", "include/asm-generic/bug.h", "kernel/sched/core.c",
         "kernel/exit.c"]


def run_class(tree, klass, early=()):
    an = lockscan.Analysis(tree, lockscan.target_for(klass))
    for p in early:
        an._load([p])
    return an.run()


def test_a_noreturn_branch_leaves_no_state_behind(tmp_path):
    """arm's do_page_fault() calls die_kernel_fault(), which ends in
    make_task_dead(); that and BUG() -> panic() disable preemption on paths
    that never return.  The page-fault path is process context, not
    "preemption disabled (die_kernel_fault() line 15)"."""
    table = run_class(tree_of(tmp_path, FAULT), "fault_lock", EARLY)
    (site,) = table
    assert site["function"] == "handle_mm_fault"
    assert site["context"] == "process", site["reason"]
    assert set(site["contexts"]) == {"process"}
    assert site["chain"][1].startswith("do_page_fault (arch/arm/mm/fault.c:17)")


def test_state_before_a_noreturn_call_on_a_returning_path_still_counts(tmp_path):
    """panic()'s state in a branch does not reach the lock, but only the
    path that ends is dropped: preemption disabled on the other branch
    still decides the site."""
    files = dict(FAULT)
    files["mm/memory.c"] = """\
    static DEFINE_SPINLOCK(fault_lock);

    vm_fault_t handle_mm_fault(struct vm_area_struct *vma, unsigned long address,
    \t\t\t   unsigned int flags, struct pt_regs *regs)
    {
    \tif (!vma)
    \t\tpanic("no vma");
    \telse
    \t\tpreempt_disable();
    \tspin_lock(&fault_lock);
    \tspin_unlock(&fault_lock);
    \tpreempt_enable();
    \treturn 0;
    }
    """
    (site,) = run_class(tree_of(tmp_path, files), "fault_lock", EARLY)
    assert site["context"] == "atomic"
    assert site["reason"] == "preemption disabled (preempt_disable() line 9)"


def test_a_long_chain_of_wrappers_settles(tmp_path):
    """sched_init_smp() -> set_cpus_allowed_ptr() -> __set_cpus_allowed_ptr()
    -> __set_cpus_allowed_ptr_locked() -> affine_move_task(): the rq lock
    taken in one and dropped in the innermost.  Cut short, the wrapper
    detection left sched_init_smp() "holding" a raw_spinlock_t, which every
    lock under kernel_init_freeable() was then said to be nested in."""
    tree = tree_of(tmp_path, {"kernel/sched/core.c": """\
        static DEFINE_RAW_SPINLOCK(rq_lock);
        static DEFINE_SPINLOCK(chain_lock);

        static int affine_move_task(void)
        {
        \traw_spin_unlock_irq(&rq_lock);
        \treturn 0;
        }

        static int __set_cpus_allowed_ptr_locked(void)
        {
        \treturn affine_move_task();
        }

        static int __set_cpus_allowed_ptr(void)
        {
        \traw_spin_lock_irq(&rq_lock);
        \treturn __set_cpus_allowed_ptr_locked();
        }

        int set_cpus_allowed_ptr(void)
        {
        \treturn __set_cpus_allowed_ptr();
        }

        void sched_init_smp(void)
        {
        \tset_cpus_allowed_ptr();
        }

        SYSCALL_DEFINE0(init)
        {
        \tsched_init_smp();
        \tspin_lock(&chain_lock);
        \tspin_unlock(&chain_lock);
        \treturn 0;
        }
        """})
    res = lockscan.analyse_class(tree, "chain_lock")
    (site,) = res["sites"]
    assert site["context"] == "process", site["reason"]


# issue 20, round 3, item 1: a lock a callee releases on some returns only

SIGNAL = {**TASK_H, "kernel/fork.c": """\
    struct file *get_task_exe_file(struct task_struct *task)
    {
    \tstruct file *exe_file = NULL;

    \ttask_lock(task);
    \texe_file = get_mm_exe_file(task->mm);
    \ttask_unlock(task);
    \treturn exe_file;
    }
    """, "kernel/signal.c": """\
    static void print_fatal_signal(int signr)
    {
    \tstruct file *exe_file;

    \texe_file = get_task_exe_file(current);
    \tpr_info("potentially unexpected fatal signal %d.\\n", signr);
    }

    static bool do_signal_stop(int signr)
    \t__releases(&current->sighand->siglock)
    {
    \tstruct signal_struct *sig = current->signal;

    \tif (!(current->jobctl & JOBCTL_STOP_PENDING)) {
    \t\tif (unlikely(sig->flags & SIGNAL_GROUP_EXIT))
    \t\t\treturn false;
    \t\tsig->group_stop_count = 0;
    \t}

    \tif (likely(!current->ptrace)) {
    \t\tset_special_state(TASK_STOPPED);
    \t\tspin_unlock_irq(&current->sighand->siglock);
    \t\tschedule();
    \t\treturn true;
    \t} else {
    \t\ttask_set_jobctl_pending(current, JOBCTL_TRAP_STOP);
    \t\treturn false;
    \t}
    }

    bool get_signal(struct ksignal *ksig)
    {
    \tstruct sighand_struct *sighand = current->sighand;
    \tstruct signal_struct *signal = current->signal;
    \tint signr;

    relock:
    \tspin_lock_irq(&sighand->siglock);

    \tfor (;;) {
    \t\tif (signal->flags & SIGNAL_GROUP_EXIT) {
    \t\t\tsignr = SIGKILL;
    \t\t\tgoto fatal;
    \t\t}

    \t\tif (unlikely(current->jobctl & JOBCTL_STOP_PENDING) &&
    \t\t    do_signal_stop(0))
    \t\t\tgoto relock;

    \t\tsignr = dequeue_signal(&current->blocked, &ksig->info, &type);
    \t\tif (!signr)
    \t\t\tbreak;

    \t\tif (sig_kernel_stop(signr)) {
    \t\t\tif (likely(do_signal_stop(signr))) {
    \t\t\t\t/* It released the siglock.  */
    \t\t\t\tgoto relock;
    \t\t\t}
    \t\t\tcontinue;
    \t\t}

    \tfatal:
    \t\tspin_unlock_irq(&sighand->siglock);
    \t\tcurrent->flags |= PF_SIGNALED;

    \t\tif (sig_kernel_coredump(signr)) {
    \t\t\tif (print_fatal_signals)
    \t\t\t\tprint_fatal_signal(signr);
    \t\t\tdo_coredump(&ksig->info);
    \t\t}
    \t\tdo_group_exit(signr);
    \t}
    \tspin_unlock_irq(&sighand->siglock);
    \treturn signr > 0;
    }

    SYSCALL_DEFINE0(pause_for_signal)
    {
    \tstruct ksignal ksig;

    \tget_signal(&ksig);
    \treturn 0;
    }
    """}


def test_a_lock_the_callee_releases_when_it_returns_true_is_not_held_after(tmp_path):
    """6.12's get_signal(): `if (likely(do_signal_stop(signr))) goto relock;`
    where do_signal_stop() drops siglock on its `return true` path only.
    Counted held on that goto, siglock was held twice after `relock:` and
    still once after the spin_unlock_irq() at `fatal:`, so task_lock() in
    print_fatal_signal() was "nested in a spinlock_t (spin_lock_irq())"."""
    res = lockscan.analyse_class(tree_of(tmp_path, SIGNAL), "&p->alloc_lock")
    (site,) = res["sites"]
    assert site["function"] == "task_lock"
    # task_unlock() ends what task_lock() began: get_task_exe_file() and
    # print_fatal_signal() return holding nothing
    assert res["wrappers"] == []
    assert site["context"] == "process", site["reason"]
    assert site["reason"] == "a system call"
    assert [c.split(" (")[0] for c in site["chain"]] == [
        "task_lock", "get_task_exe_file", "print_fatal_signal", "get_signal",
        "SYSCALL_DEFINE0"]


def test_the_lock_is_still_held_where_the_callee_returned_false(tmp_path):
    """do_signal_stop()'s `return false` paths keep siglock (its
    __releases() annotation notwithstanding): a call made there is nested
    in it."""
    files = dict(SIGNAL)
    files["kernel/signal.c"] = files["kernel/signal.c"].replace(
        "    \t\t\t}\n    \t\t\tcontinue;\n",
        "    \t\t\t}\n    \t\t\tprint_fatal_signal(signr);\n    \t\t\tcontinue;\n")
    res = lockscan.analyse_class(tree_of(tmp_path, files), "&p->alloc_lock")
    (site,) = res["sites"]
    assert site["context"] == "atomic"
    assert site["reason"].startswith("nested in a spinlock_t (spin_lock_irq() line 38)"), \
        site["reason"]
    assert site["chain"][-1].startswith("get_signal (kernel/signal.c:59)")


DROP = {"kernel/a.c": """\
    static DEFINE_SPINLOCK(outer_lock);
    static DEFINE_SPINLOCK(inner_lock);

    static bool drop_if(int x)
    {
    \tif (x)
    \t\treturn false;
    \tspin_unlock(&outer_lock);
    \treturn true;
    }

    static int drop_err(int x)
    {
    \tint ret = check(x);

    \tif (ret) {
    \t\tspin_unlock(&outer_lock);
    \t\treturn ret;
    \t}
    \treturn 0;
    }

    static void use(void)
    {
    \tspin_lock(&inner_lock);
    \tspin_unlock(&inner_lock);
    }

    SYSCALL_DEFINE1(CASE, int, x)
    {
    \tspin_lock(&outer_lock);
    \tBODY
    \treturn 0;
    }
    """}


def _drop(tmp_path, case, body):
    files = {"kernel/a.c": DROP["kernel/a.c"].replace("CASE", case).replace(
        "BODY", body.replace("\n", "\n    \t"))}
    (site,) = lockscan.analyse_class(tree_of(tmp_path / case, files), "inner_lock")["sites"]
    return site["context"]


def test_conditional_release_forms(tmp_path):
    """Which branch of an if the callee's release reaches: the then branch
    of `f()`, the else branch of `!f()`, the then branch of `a && f()`;
    a return whose value is not known counts on both sides, and any other
    condition keeps the lock held (the safe side)."""
    process = {
        "then": "if (drop_if(x))\n\tuse();",
        "not_else": "if (!drop_if(x))\n\treturn 0;\nuse();",
        "and_then": "if (x > 1 && likely(drop_if(x)))\n\tuse();",
        "err_then": "if (drop_err(x))\n\tuse();",
    }
    atomic = {
        "else": "if (drop_if(x))\n\treturn 0;\nuse();",
        "not_then": "if (!drop_if(x))\n\tuse();",
        "and_else": "if (x > 1 && drop_if(x))\n\treturn 0;\nuse();",
        "or_then": "if (x > 1 || drop_if(x))\n\tuse();",
        "err_else": "if (drop_err(x))\n\treturn 0;\nuse();",
        "value": "y = drop_if(x);\nuse();",
    }
    got = {c: _drop(tmp_path, c, b) for c, b in {**process, **atomic}.items()}
    assert got == {**{c: "process" for c in process}, **{c: "atomic" for c in atomic}}


# issue 20, round 3, item 2: a call binds to its own architecture's definition

ARCH = {"mm/memory.c": GENERIC_FAULT, "arch/riscv/mm/fault.c": """\
    void handle_page_fault(struct pt_regs *regs)
    {
    \thandle_mm_fault(vma, addr, flags, regs);
    }

    SYSCALL_DEFINE0(riscv_fault)
    {
    \thandle_page_fault(NULL);
    \treturn 0;
    }
    """, "arch/um/kernel/trap.c": """\
    int handle_page_fault(unsigned long address, unsigned long ip,
    \t\t      int is_write, int is_user, int *code_out)
    {
    \thandle_mm_fault(vma, address, flags, NULL);
    \treturn 0;
    }
    """, "arch/um/kernel/skas/uaccess.c": """\
    static pte_t *maybe_map(unsigned long virt, int is_write)
    {
    \tint dummy_code;

    \tif (handle_page_fault(virt, 0, is_write, 1, &dummy_code))
    \t\treturn NULL;
    \treturn virt_to_pte(current->mm, virt);
    }

    SYSCALL_DEFINE0(um_futex)
    {
    \tpreempt_disable();
    \tmaybe_map(0, 1);
    \tpreempt_enable();
    \treturn 0;
    }
    """}


def test_a_caller_in_arch_um_calls_arch_um_s_definition(tmp_path):
    """UML's maybe_map() calls UML's handle_page_fault(), never riscv's:
    the atomic chain goes through arch/um/kernel/trap.c, and riscv's
    definition is entered from riscv's caller only."""
    (site,) = lockscan.analyse_class(tree_of(tmp_path, ARCH), "fault_lock")["sites"]
    assert site["context"] == "atomic"
    assert site["reason"] == "preemption disabled (preempt_disable() line 12)"
    assert site["chain"] == ["handle_mm_fault (mm/memory.c:6)",
                             "handle_page_fault (arch/um/kernel/trap.c:4)",
                             "maybe_map (arch/um/kernel/skas/uaccess.c:5)",
                             "SYSCALL_DEFINE0 (arch/um/kernel/skas/uaccess.c:13)"]
    assert site["contexts"]["process"]["chain"] == [
        "handle_mm_fault (mm/memory.c:6)", "handle_page_fault (arch/riscv/mm/fault.c:3)",
        "SYSCALL_DEFINE0 (arch/riscv/mm/fault.c:8)"]
    for ctx in site["contexts"].values():
        archs = [re.match(r".*\((arch/\w+/)?", c).group(1) for c in ctx["chain"]]
        assert len({a for a in archs if a}) <= 1, ctx["chain"]


def test_generic_code_reaches_every_architecture_s_definition(tmp_path):
    """A call from generic code may be any architecture's definition: each
    one's site is decided by the generic caller, and named with its own
    path."""
    files = {"arch/riscv/mm/tlb.c": """\
        static DEFINE_SPINLOCK(flush_lock);

        void arch_flush(void)
        {
        \tspin_lock(&flush_lock);
        \tspin_unlock(&flush_lock);
        }
        """, "arch/um/kernel/tlb.c": """\
        void arch_flush(void)
        {
        \tspin_lock(&flush_lock);
        \tspin_unlock(&flush_lock);
        }
        """, "mm/flush.c": """\
        SYSCALL_DEFINE0(flush)
        {
        \tpreempt_disable();
        \tarch_flush();
        \tpreempt_enable();
        \treturn 0;
        }
        """}
    res = lockscan.analyse_class(tree_of(tmp_path, files), "flush_lock")
    got = [(r["path"], r["context"], r["chain"][1]) for r in res["sites"]]
    assert got == [("arch/riscv/mm/tlb.c", "atomic", "SYSCALL_DEFINE0 (mm/flush.c:4)"),
                   ("arch/um/kernel/tlb.c", "atomic", "SYSCALL_DEFINE0 (mm/flush.c:4)")]


def test_a_callee_s_effect_is_its_own_architecture_s(tmp_path):
    """UML's drop_outer() releases the lock its caller took, riscv's does
    not: after the call the lock is free in arch/um only.  Generic code may
    call either, so it is held there (the safe side)."""
    files = {"include/linux/outer.h": """\
        extern spinlock_t outer_lock;
        """, "arch/um/kernel/drop.c": """\
        void drop_outer(void)
        {
        \tspin_unlock(&outer_lock);
        }

        SYSCALL_DEFINE0(um_case)
        {
        \tspin_lock(&outer_lock);
        \tdrop_outer();
        \tspin_lock(&inner_lock);
        \tspin_unlock(&inner_lock);
        \treturn 0;
        }
        """, "arch/riscv/kernel/drop.c": """\
        void drop_outer(void)
        {
        \tcheck_outer();
        }

        SYSCALL_DEFINE0(riscv_case)
        {
        \tspin_lock(&outer_lock);
        \tdrop_outer();
        \tspin_lock(&inner_lock);
        \tspin_unlock(&inner_lock);
        \tspin_unlock(&outer_lock);
        \treturn 0;
        }
        """, "kernel/drop.c": """\
        SYSCALL_DEFINE0(generic_case)
        {
        \tspin_lock(&outer_lock);
        \tdrop_outer();
        \tspin_lock(&inner_lock);
        \tspin_unlock(&inner_lock);
        \treturn 0;
        }
        """}
    res = lockscan.analyse_class(tree_of(tmp_path, files), "inner_lock")
    got = {r["path"]: r["context"] for r in res["sites"]}
    assert got == {"arch/riscv/kernel/drop.c": "atomic", "arch/um/kernel/drop.c": "process",
                   "kernel/drop.c": "atomic"}


def test_a_goto_back_to_the_lock_does_not_count_it_twice(tmp_path):
    """6.12's get_signal() jobctl trap: `if (A) { if (B) { ...;
    spin_unlock_irq(&sighand->siglock); } else if (C) do_freezer_trap();
    goto relock; }`.  A and B/C are correlated, the pass does not know it:
    on its path where neither runs, the goto carries siglock to `relock:`,
    where spin_lock_irq(&sighand->siglock) took it "again", and the
    spin_unlock_irq() at `fatal:` left one count of it held over
    print_fatal_signal().  No path takes a spinlock it holds: the path
    that held it does not reach the acquisition."""
    files = dict(SIGNAL)
    sig = files["kernel/signal.c"]
    files["kernel/signal.c"] = sig.replace("""\
    bool get_signal(struct ksignal *ksig)""", """\
    static void do_freezer_trap(void)
    \t__releases(&current->sighand->siglock)
    {
    \tif ((current->jobctl & (JOBCTL_PENDING_MASK | JOBCTL_TRAP_FREEZE)) !=
    \t     JOBCTL_TRAP_FREEZE) {
    \t\tspin_unlock_irq(&current->sighand->siglock);
    \t\treturn;
    \t}
    \t__set_current_state(TASK_INTERRUPTIBLE|TASK_FREEZABLE);
    \tspin_unlock_irq(&current->sighand->siglock);
    \tschedule();
    }

    bool get_signal(struct ksignal *ksig)""").replace("""\
    \t\tsignr = dequeue_signal(""", """\
    \t\tif (unlikely(current->jobctl &
    \t\t\t     (JOBCTL_TRAP_MASK | JOBCTL_TRAP_FREEZE))) {
    \t\t\tif (current->jobctl & JOBCTL_TRAP_MASK) {
    \t\t\t\tdo_jobctl_trap();
    \t\t\t\tspin_unlock_irq(&sighand->siglock);
    \t\t\t} else if (current->jobctl & JOBCTL_TRAP_FREEZE)
    \t\t\t\tdo_freezer_trap();

    \t\t\tgoto relock;
    \t\t}

    \t\tsignr = dequeue_signal(""")
    assert files["kernel/signal.c"] != sig
    res = lockscan.analyse_class(tree_of(tmp_path, files), "&p->alloc_lock")
    (site,) = res["sites"]
    assert site["context"] == "process", site["reason"]
    assert [c.split(" (")[0] for c in site["chain"]] == [
        "task_lock", "get_task_exe_file", "print_fatal_signal", "get_signal",
        "SYSCALL_DEFINE0"]


def test_a_lock_taken_again_through_another_pointer_counts_twice(tmp_path):
    """Hand over hand up a tree: `again: spin_lock(&p->nlock); ...
    p = p->parent; goto again;` takes the parent's lock with the child's
    held.  p changes, so &p->nlock is not one lock: after the parent's
    unlock the child's is still held."""
    tree = tree_of(tmp_path, {"kernel/tree.c": """\
        static DEFINE_SPINLOCK(use_lock);

        static void use(void)
        {
        \tspin_lock(&use_lock);
        \tspin_unlock(&use_lock);
        }

        SYSCALL_DEFINE1(up, struct node *, p)
        {
        again:
        \tspin_lock(&p->nlock);
        \tif (p->parent) {
        \t\tp = p->parent;
        \t\tgoto again;
        \t}
        \tspin_unlock(&p->nlock);
        \tuse();
        \treturn 0;
        }
        """})
    (site,) = lockscan.analyse_class(tree, "use_lock")["sites"]
    assert site["context"] == "atomic"
    assert site["reason"] == "nested in a spinlock_t (spin_lock() line 12)"


def test_the_reason_left_after_an_unlock_is_a_lock_still_held(tmp_path):
    """One path to `again:` holds f_lock, another e_lock.  e_lock is taken
    once there (not twice) and released: what is left held is f_lock, and
    the reason printed is f_lock's acquisition, not e_lock's."""
    tree = tree_of(tmp_path, {"kernel/two.c": """\
        static DEFINE_SPINLOCK(f_lock);
        static DEFINE_SPINLOCK(e_lock);
        static DEFINE_SPINLOCK(use_lock);

        SYSCALL_DEFINE1(two, int, x)
        {
        \tif (x) {
        \t\tspin_lock(&f_lock);
        \t\tgoto again;
        \t}
        \tspin_lock_irq(&e_lock);
        \tif (check(x))
        \t\tgoto again;
        \tspin_unlock_irq(&e_lock);
        \treturn 0;
        again:
        \tspin_lock_irq(&e_lock);
        \tspin_unlock_irq(&e_lock);
        \tspin_lock(&use_lock);
        \tspin_unlock(&use_lock);
        \treturn 0;
        }
        """})
    (site,) = lockscan.analyse_class(tree, "use_lock")["sites"]
    assert site["context"] == "atomic"
    assert site["reason"] == "nested in a spinlock_t (spin_lock() line 8)"


def test_a_lock_a_callee_drops_and_the_caller_takes_again_is_held(tmp_path):
    """do_freezer_trap() drops siglock without naming get_signal()'s
    &sighand->siglock: which lock it was is not known, so it may be that
    one.  Taken again after the call, siglock is held once (not zero
    times): the site after it is nested in it."""
    tree = tree_of(tmp_path, {"kernel/signal.c": """\
        static DEFINE_SPINLOCK(use_lock);

        static void drop_siglock(void)
        {
        \tspin_unlock_irq(&current->sighand->siglock);
        }

        SYSCALL_DEFINE0(again)
        {
        \tstruct sighand_struct *sighand = current->sighand;

        \tspin_lock_irq(&sighand->siglock);
        \tdrop_siglock();
        \tspin_lock_irq(&sighand->siglock);
        \tspin_lock(&use_lock);
        \tspin_unlock(&use_lock);
        \tspin_unlock_irq(&sighand->siglock);
        \treturn 0;
        }
        """})
    (site,) = lockscan.analyse_class(tree, "use_lock")["sites"]
    assert site["context"] == "atomic"
    assert site["reason"] == "nested in a spinlock_t (spin_lock_irq() line 14)"


def test_an_architecture_s_pair_of_calls_balances_in_generic_code(tmp_path):
    """powerpc's arch_enter_lazy_mmu_mode() disables preemption and its
    arch_leave_lazy_mmu_mode() enables it; x86's pair calls paravirt hooks
    and holds nothing.  In generic code after the pair nothing is held on
    any architecture: preemption is not "disabled" after the leave.
    A regression guard: it passes on 632f79f too, and guards what 4b2b307
    (calls bind to their architecture's definitions) broke."""
    tree = tree_of(tmp_path, {"arch/powerpc/include/asm/tlbflush.h": """\
        static inline void arch_enter_lazy_mmu_mode(void)
        {
        \tpreempt_disable();
        \tbatch_start();
        }

        static inline void arch_leave_lazy_mmu_mode(void)
        {
        \tbatch_flush();
        \tpreempt_enable();
        }
        """, "arch/x86/include/asm/paravirt.h": """\
        static inline void arch_enter_lazy_mmu_mode(void)
        {
        \tPVOP_VCALL0(mmu.lazy_mode.enter);
        }

        static inline void arch_leave_lazy_mmu_mode(void)
        {
        \tPVOP_VCALL0(mmu.lazy_mode.leave);
        }
        """, "mm/memory.c": """\
        static DEFINE_SPINLOCK(use_lock);

        SYSCALL_DEFINE0(zap)
        {
        \tarch_enter_lazy_mmu_mode();
        \tzap_ptes();
        \tarch_leave_lazy_mmu_mode();
        \tspin_lock(&use_lock);
        \tspin_unlock(&use_lock);
        \treturn 0;
        }
        """})
    # both headers read, as a walk over the tree reads them for other names
    (site,) = run_class(tree, "use_lock", ["arch/powerpc/include/asm/tlbflush.h",
                                           "arch/x86/include/asm/paravirt.h"])
    assert site["context"] == "process", site["reason"]


def test_a_lock_taken_on_true_returns_is_not_held_when_the_loop_ends(tmp_path):
    """6.12's io_wq_worker(): `while (io_acct_run_queue(acct))
    io_worker_handle_work(acct, worker);`.  io_acct_run_queue() returns
    true with acct->lock held and false with it dropped; the body's
    do { ... raw_spin_unlock(&acct->lock); if (!work) break; ...
    raw_spin_lock(&acct->lock); } while (1) drops it on every way out.
    After the loop the worker holds nothing: get_signal() there is not
    "nested in a raw_spinlock_t (io_acct_run_queue())"."""
    tree = tree_of(tmp_path, {"io_uring/io-wq.c": """\
        static DEFINE_SPINLOCK(use_lock);

        static inline bool io_acct_run_queue(struct io_wq_acct *acct)
        \t__acquires(&acct->lock)
        {
        \traw_spin_lock(&acct->lock);
        \tif (__io_acct_run_queue(acct))
        \t\treturn true;

        \traw_spin_unlock(&acct->lock);
        \treturn false;
        }

        static void io_worker_handle_work(struct io_wq_acct *acct,
        \t\t\t\t  struct io_worker *worker)
        \t__releases(&acct->lock)
        {
        \tdo {
        \t\tstruct io_wq_work *work;

        \t\twork = io_get_next_work(acct, worker);
        \t\traw_spin_unlock(&acct->lock);

        \t\tif (!work)
        \t\t\tbreak;
        \t\tio_run_work(work);
        \t\tif (!__io_acct_run_queue(acct))
        \t\t\tbreak;
        \t\traw_spin_lock(&acct->lock);
        \t} while (1);
        }

        static int io_wq_worker(void *data)
        {
        \tstruct io_worker *worker = data;
        \tstruct io_wq_acct *acct = io_wq_get_acct(worker);

        \twhile (!test_bit(IO_WQ_BIT_EXIT, &wq->state)) {
        \t\twhile (io_acct_run_queue(acct))
        \t\t\tio_worker_handle_work(acct, worker);

        \t\tspin_lock(&use_lock);
        \t\tspin_unlock(&use_lock);
        \t}
        \treturn 0;
        }

        int create_io_worker(struct io_wq *wq)
        {
        \ttsk = kthread_run(io_wq_worker, worker, "iou-wrk");
        \treturn 0;
        }
        """})
    (site,) = lockscan.analyse_class(tree, "use_lock")["sites"]
    assert site["context"] == "process", site["reason"]


def test_a_lock_taken_on_true_returns_is_held_in_the_loop_body(tmp_path):
    """The other side: inside `while (io_acct_run_queue(acct))` the lock is
    held, and a do-while whose body keeps it keeps it after the loop."""
    tree = tree_of(tmp_path, {"io_uring/io-wq.c": """\
        static DEFINE_SPINLOCK(use_lock);

        static inline bool io_acct_run_queue(struct io_wq_acct *acct)
        {
        \traw_spin_lock(&acct->lock);
        \tif (__io_acct_run_queue(acct))
        \t\treturn true;
        \traw_spin_unlock(&acct->lock);
        \treturn false;
        }

        SYSCALL_DEFINE1(in_body, struct io_wq_acct *, acct)
        {
        \twhile (io_acct_run_queue(acct)) {
        \t\tspin_lock(&use_lock);
        \t\tspin_unlock(&use_lock);
        \t\traw_spin_unlock(&acct->lock);
        \t}
        \treturn 0;
        }

        SYSCALL_DEFINE1(after_do, struct io_wq_acct *, acct)
        {
        \tdo {
        \t\traw_spin_lock(&acct->lock);
        \t} while (0);
        \tspin_lock(&use_lock);
        \tspin_unlock(&use_lock);
        \traw_spin_unlock(&acct->lock);
        \treturn 0;
        }

        SYSCALL_DEFINE1(forever, struct io_wq_acct *, acct)
        {
        \tfor (;;) {
        \t\tif (check())
        \t\t\tbreak;
        \t\traw_spin_lock(&acct->lock);
        \t}
        \tspin_lock(&use_lock);
        \tspin_unlock(&use_lock);
        \treturn 0;
        }
        """})
    got = [(r["line"], r["context"], r["reason"])
           for r in lockscan.analyse_class(tree, "use_lock")["sites"]]
    # the second pass of for (;;) breaks out with the lock the first took
    assert got == [
        (15, "atomic", "nested in a raw_spinlock_t (io_acct_run_queue() line 14)"),
        (27, "atomic", "nested in a raw_spinlock_t (raw_spin_lock() line 25)"),
        (40, "atomic", "nested in a raw_spinlock_t (raw_spin_lock() line 38)")]


def test_schedule_is_balanced(tmp_path):
    """6.12's __schedule_loop(): do { preempt_disable(); __schedule();
    sched_preempt_enable_no_resched(); } while (need_resched());  The
    macro's `do { ...; preempt_count_dec(); } while (0)` drops what
    preempt_disable() took, and __schedule() takes the rq lock with rq_lock()
    (a function and a guard's name) before it drops it: schedule() leaves
    nothing held and drops nothing, so a raw spinlock taken after it still
    counts.
    A regression guard: it passes on 632f79f too, and guards what bac16b4
    (a do-while's second-pass growth) broke until c34b443."""
    tree = tree_of(tmp_path, {"kernel/sched/sched.h": """\
        static inline void rq_lock(struct rq *rq, struct rq_flags *rf)
        \t__acquires(rq->lock)
        {
        \traw_spin_lock(&rq->__lock);
        \trq_pin_lock(rq, rf);
        }

        #define my_enable_no_resched() \\\\
        do { \\\\
        \tbarrier(); \\\\
        \tpreempt_count_sub(1); \\\\
        } while (0)
        """, "kernel/sched/core.c": """\
        static DEFINE_SPINLOCK(use_lock);
        static DEFINE_RAW_SPINLOCK(r_lock);

        static void __schedule(struct rq *rq)
        {
        \tstruct rq_flags rf;

        \trq_lock(rq, &rf);
        \tpick_next_task(rq);
        \traw_spin_unlock_irq(&rq->__lock);
        }

        static void __schedule_loop(struct rq *rq)
        {
        \tdo {
        \t\tpreempt_disable();
        \t\t__schedule(rq);
        \t\tmy_enable_no_resched();
        \t} while (need_resched());
        }

        SYSCALL_DEFINE0(sleep)
        {
        \t__schedule_loop(this_rq());
        \tspin_lock(&use_lock);
        \tspin_unlock(&use_lock);
        \traw_spin_lock(&r_lock);
        \tspin_lock(&use_lock);
        \tspin_unlock(&use_lock);
        \traw_spin_unlock(&r_lock);
        \treturn 0;
        }
        """})
    got = [(r["line"], r["context"], r["reason"])
           for r in run_class(tree, "use_lock", ["kernel/sched/sched.h"])]
    assert got == [(25, "process", "a system call"),
                   (28, "atomic", "nested in a raw_spinlock_t (raw_spin_lock() line 27)")]


def test_need_seqretry_means_the_seqlock_was_not_taken(tmp_path):
    """6.12's getrusage(): `retry: ... flags =
    read_seqbegin_or_lock_irqsave(&sig->stats_lock, &seq); ... if
    (need_seqretry(&sig->stats_lock, seq)) { seq = 1; goto retry; }`.
    need_seqretry() is true on the lockless pass only, so the goto carries
    no stats_lock to `retry:`, and RUSAGE_THREAD's `goto out_thread` from
    there holds nothing at get_task_mm()."""
    tree = tree_of(tmp_path, {"kernel/sys.c": """\
        static DEFINE_SPINLOCK(use_lock);

        SYSCALL_DEFINE2(getrusage, struct task_struct *, p, int, who)
        {
        \tstruct signal_struct *sig = p->signal;
        \tunsigned int seq = 0;

        retry:
        \tif (who == RUSAGE_THREAD)
        \t\tgoto out_thread;

        \tflags = read_seqbegin_or_lock_irqsave(&sig->stats_lock, &seq);
        \tsum(sig);
        \tif (need_seqretry(&sig->stats_lock, seq)) {
        \t\tseq = 1;
        \t\tgoto retry;
        \t}
        \tdone_seqretry_irqrestore(&sig->stats_lock, seq, flags);

        out_thread:
        \tspin_lock(&use_lock);
        \tspin_unlock(&use_lock);
        \treturn 0;
        }
        """})
    (site,) = lockscan.analyse_class(tree, "use_lock")["sites"]
    assert site["context"] == "process", site["reason"]


# advisor-fix4: the pass never answers "process" under a spinlock

FIX4_USE = """\
    static DEFINE_SPINLOCK(inner_lock);
    static void use(void)
    {
    \tspin_lock(&inner_lock);
    \tspin_unlock(&inner_lock);
    }
    """


def fix4_verdict(tmp_path, files):
    res = lockscan.analyse_class(tree_of(tmp_path, files), "inner_lock")
    return {r["function"]: r["context"] for r in res["sites"]}


def test_an_iterator_macro_changes_the_locked_pointer(tmp_path):
    """list_for_each_entry_continue(p, ...) assigns p: &p->lock inside is
    another object's lock, and the first one is still held at use()."""
    assert fix4_verdict(tmp_path, {"kernel/a.c": FIX4_USE + """\
    SYSCALL_DEFINE1(g, struct foo *, first)
    {
    \tstruct foo *p = first;

    \tspin_lock(&p->lock);
    \tlist_for_each_entry_continue(p, &first->list, node) {
    \t\tspin_lock(&p->lock);
    \t\tspin_unlock(&p->lock);
    \t\tuse();
    \t}
    \tspin_unlock(&first->lock);
    \treturn 0;
    }
    """}) == {"use": "atomic"}


def test_write_once_changes_the_locked_pointer(tmp_path):
    assert fix4_verdict(tmp_path, {"kernel/a.c": FIX4_USE + """\
    SYSCALL_DEFINE2(a, struct foo *, x, struct foo *, y)
    {
    \tstruct foo *p = x;

    \tspin_lock(&p->lock);
    \tWRITE_ONCE(p, y);
    \tspin_lock(&p->lock);
    \tspin_unlock(&p->lock);
    \tuse();
    \tspin_unlock(&x->lock);
    \treturn 0;
    }
    """}) == {"use": "atomic"}


def test_a_release_in_the_second_operand_of_and_may_not_run(tmp_path):
    """`if (x > 1 && drop(x))`: drop() is not called when x <= 1, and
    g_lock is still held at use()."""
    assert fix4_verdict(tmp_path, {"kernel/a.c": FIX4_USE + """\
    DEFINE_SPINLOCK(g_lock);
    static bool drop(int x)
    {
    \tspin_unlock(&g_lock);
    \treturn x;
    }
    SYSCALL_DEFINE1(d, int, x)
    {
    \tspin_lock(&g_lock);
    \tif (x > 1 && drop(x))
    \t\treturn 0;
    \tuse();
    \treturn 0;
    }
    """}) == {"use": "atomic"}


def test_an_empty_stub_of_another_architecture_keeps_the_lock(tmp_path):
    """Generic code calls arch_drop(): riscv's drops g_lock, x86's is
    empty, so on x86 g_lock is still held at use()."""
    assert fix4_verdict(tmp_path, {"kernel/a.c": FIX4_USE + """\
    DEFINE_SPINLOCK(g_lock);
    SYSCALL_DEFINE0(b)
    {
    \tspin_lock(&g_lock);
    \tarch_drop();
    \tuse();
    \treturn 0;
    }
    """, "arch/riscv/kernel/d.c": """\
    /* inner_lock */
    void arch_drop(void)
    {
    \tspin_unlock(&g_lock);
    }
    """, "arch/x86/kernel/d.c": """\
    /* inner_lock */
    void arch_drop(void)
    {
    }
    """}) == {"use": "atomic"}


def test_the_other_side_of_an_ifdef_keeps_the_lock(tmp_path):
    """Two generic definitions of maybe_drop() under #ifdef CONFIG_X / #else:
    only one drops g_lock."""
    assert fix4_verdict(tmp_path, {"kernel/a.c": FIX4_USE + """\
    DEFINE_SPINLOCK(g_lock);
    SYSCALL_DEFINE0(e)
    {
    \tspin_lock(&g_lock);
    \tmaybe_drop();
    \tuse();
    \treturn 0;
    }
    """, "kernel/b.c": """\
    /* inner_lock */
    #ifdef CONFIG_X
    void maybe_drop(void)
    {
    \tspin_unlock(&g_lock);
    }
    #else
    void maybe_drop(void)
    {
    \tother();
    }
    #endif
    """}) == {"use": "atomic"}


def test_a_false_return_with_the_lock_held_holds_it(tmp_path):
    """busy() returns false with g_lock held (6.12's fast_dput() returns
    false with d_lock held): `if (!busy(x))` runs use() under it."""
    assert fix4_verdict(tmp_path, {"kernel/a.c": FIX4_USE + """\
    DEFINE_SPINLOCK(g_lock);
    static bool busy(int x)
    {
    \tspin_lock(&g_lock);
    \tif (x) {
    \t\tspin_unlock(&g_lock);
    \t\treturn true;
    \t}
    \treturn false;
    }
    SYSCALL_DEFINE1(f, int, x)
    {
    \tif (!busy(x)) {
    \t\tuse();
    \t\tspin_unlock(&g_lock);
    \t}
    \treturn 0;
    }
    """}) == {"use": "atomic"}


def test_do_while_0_runs_its_body_once(tmp_path):
    """A lock taken in `do { } while (0)` and dropped after it is not held
    a second time at use()."""
    assert fix4_verdict(tmp_path, {"kernel/a.c": FIX4_USE + """\
    DEFINE_SPINLOCK(g_lock);
    SYSCALL_DEFINE1(h, int, x)
    {
    \tdo {
    \t\tspin_lock(&g_lock);
    \t} while (0);
    \tspin_unlock(&g_lock);
    \tuse();
    \treturn 0;
    }
    """}) == {"use": "process"}


def test_a_do_without_a_body_is_unparsable(tmp_path):
    res = lockscan.analyse_class(tree_of(tmp_path, {"kernel/a.c": FIX4_USE + """\
    SYSCALL_DEFINE1(h, int, x)
    {
    \tuse();
    \tdo
    }
    """}), "inner_lock")
    assert [(r["context"], "do at the end" in r["reason"]) for r in res["sites"]] == \
        [("unknown", True)]


def test_uml_builds_x86_crypto():
    """arch/x86/Makefile.um: core-y += arch/x86/crypto/"""
    assert lockscan.arch_of("arch/x86/crypto/aesni-intel_glue.c") == {"x86", "um"}


def test_a_disputed_release_needs_every_call_that_may_have_taken_it(tmp_path):
    """powerpc's arch_leave() drops what its arch_enter() took; on the
    other branch g_lock was taken by spin_lock(), which arch_leave() does
    not drop: use() may run under g_lock, in either branch order."""
    arch = {"arch/powerpc/kernel/d.c": """\
    /* inner_lock */
    DEFINE_SPINLOCK(pp_lock);
    void arch_enter(void)
    {
    \tspin_lock(&pp_lock);
    }
    void arch_leave(void)
    {
    \tspin_unlock(&pp_lock);
    }
    """, "arch/x86/kernel/d.c": """\
    /* inner_lock */
    void arch_enter(void)
    {
    \tother();
    }
    void arch_leave(void)
    {
    \tother();
    }
    """}
    branches = ["\tif (x)\n\t\tarch_enter();\n\telse\n\t\tspin_lock(&g_lock);\n",
                "\tif (x)\n\t\tspin_lock(&g_lock);\n\telse\n\t\tarch_enter();\n"]
    for n, b in enumerate(branches):
        d = tmp_path / str(n)
        d.mkdir()
        assert fix4_verdict(d, {**arch, "kernel/a.c": FIX4_USE + textwrap.indent(
            "DEFINE_SPINLOCK(g_lock);\nSYSCALL_DEFINE1(c, int, x)\n{\n" + b
            + "\tarch_leave();\n\tuse();\n\treturn 0;\n}\n", "    ")}) == {"use": "atomic"}


def test_a_loop_body_sees_what_the_previous_iteration_left_held(tmp_path):
    """use() runs under g_lock from the second iteration on: taken at the
    end of the body, or on the path that continues."""
    assert fix4_verdict(tmp_path, {"kernel/a.c": FIX4_USE + """\
    DEFINE_SPINLOCK(g_lock);
    SYSCALL_DEFINE1(l, int, x)
    {
    \twhile (more(x)) {
    \t\tuse();
    \t\tspin_lock(&g_lock);
    \t}
    \treturn 0;
    }
    """}) == {"use": "atomic"}
    d = tmp_path / "continue"
    d.mkdir()
    assert fix4_verdict(d, {"kernel/a.c": FIX4_USE + """\
    DEFINE_SPINLOCK(g_lock);
    SYSCALL_DEFINE1(l2, int, x)
    {
    \tfor (;;) {
    \t\tif (done(x))
    \t\t\tbreak;
    \t\tuse();
    \t\tif (x) {
    \t\t\tspin_lock(&g_lock);
    \t\t\tcontinue;
    \t\t}
    \t\tspin_unlock(&g_lock);
    \t}
    \treturn 0;
    }
    """}) == {"use": "atomic"}
