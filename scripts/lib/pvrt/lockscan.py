# SPDX-License-Identifier: GPL-2.0
"""The lock advisor's static pass: every acquisition site of a lock class and
the context it is taken in, read from the C sources.

Why not Coccinelle: a spatch rule matches within one function at a time;
classifying a site needs the callers' state at every call, transitively,
across the tree.  This pass instead reads only the files that name the lock, its
wrappers and the functions on the way up, found with one `git grep -w` per
caller level, and reads each function with a small C-aware scanner
(comments, strings and preprocessor lines removed, statements and blocks
followed, the sides of an #if read as alternatives).  Its rules, and where it is
deliberately pessimistic:

- A site is a call of a spin_lock*/write_seqlock*/atomic_dec_and_lock()
  ... API (or pv_spin_lock*) whose lock argument is the class's expression,
  a local pointer assigned from it, or a call of a function that returns it
  (pte_lockptr() for the page-table lock).  A function that returns with
  the lock held (task_lock(), __pte_offset_map_lock(), lock_mount_hash())
  is a wrapper: its callers are walked like any other.  The lock passed to a
  function the pass does not know is an "unknown" site.
- The state at a site is what is held on some path to it: spinlock_t,
  raw_spinlock_t, rwlock_t, seqlock writers, local_lock_t, bit spinlocks,
  preempt/BH/IRQ disabling, rcu_read_lock{,_bh,_sched}() and guard()s of
  them, from the API names and a list of common wrappers (task_lock(),
  lock_task_sighand(), pte_offset_map_lock(), ...).  Branches are merged by
  taking the maximum, a release in a branch that returns does not count,
  a goto carries its state to its label, and a call of a function that
  never returns (NORETURN, a definition marked __noreturn, a static
  function whose every path ends in one) ends its path: what panic() or
  make_task_dead() disable on the way down reaches no later statement.
  A callee that drops its caller's lock, or returns with one held, on
  some returns only is read by the value it returns there: `if (f(...))`,
  `if (!f(...))`, `if (a && f(...))` and `while (f(...))` (likely()/
  unlikely() looked through) drop in the branch (the loop body, what
  follows the loop) the returns imply what f drops on every return of
  that truth value, and what it takes on every successful return but
  holds on none of that value (`return true`/a non-zero number/an error
  code, `return false`/0/NULL; any other value counts on both sides):
  io-wq's `while (io_acct_run_queue(acct))` holds acct->lock in its body
  only.  A do-while runs its body at least once (`do ... while (0)`
  exactly once); `for (;;)`, `while (1)` and `do ... while (1)` are left
  by their breaks only; a loop's condition, body and increment are read
  from its entry, then from the entry merged with what an iteration leaves
  (its end, its continues; a continue in a switch is the loop's) until
  that state settles (the sites are the last reading's; a count growing at
  each reading is widened to MANY; not settled after LOOP_READINGS
  readings: unknown).  An if decided by IS_ENABLED()-style tests of the
  options the configuration has a value for (analyse_class()'s CONFIG;
  none given: the class is read with each of BOTH_CONFIGS and the worse
  verdict stands) reads the branch that is built only, unless that
  branch holds a label or a case (6.12's ptrace_stop() disables and
  enables preemption under the same `!IS_ENABLED(CONFIG_PREEMPT_RT)`).
  The sides of an #if group that are whole statements are read like an
  if/else (each from the state before it, an empty side without #else);
  one that starts a statement and ends inside it, holding no other
  directive or guard() and with none after it in that statement, is read
  as each side followed by the rest of that statement; such a group that
  does not qualify, and one whose directives all lie inside one statement
  (an expression, a for header), is read with both sides, no release in
  it counts and no return there ends the path; any other (an #if between
  `if (...)` and its body, `} else {` under #ifdef, an #endif after the
  end of its block) makes the function unparsable.  A `(`...`)`
  group's ?:, && and || are read as such at any depth (a macro body
  `((c) ? spin_unlock(l), 1 : 0)`; a comma between ? and : is the middle
  arm's).  In sizeof/typeof operands no release counts (a VLA's is run),
  nor in the first operand of _Generic or __builtin_choose_expr(), whose
  associations (arms) are read as ?:'s arms.  A label's name outside a
  goto (a macro's label argument, an asm goto list) is a jump to it; a
  computed `goto *p` jumps to every label.  A macro of a file read
  (function-like or object-like) is expanded where it is used, for its
  gotos only, when its body has a goto, a label's name or names such a
  macro at any depth (a function-like one before `(` or last:
  `#define CHK CHECK`), or when its arguments (function-like) or the
  parenthesised list after its use (a body ending in a macro's name or
  a function-like macro's call: `ID(WITH_LOCK)(...)`, `#define WLX
  ID(WITH_LOCK)` then `WLX(...)`) hold a goto, a label's name or such a
  macro's name (`WITH_LOCK(if (x) goto out)`, `DO(CHECK, x)`): its body
  with the arguments in place (an empty operand of ## pastes nothing),
  and the parenthesised list after the use when it ends so,
  read from the state before them, carries each goto's state to its
  label.  A body that does not balance, and every expansion once a scan
  has expanded EXPAND_TOKENS tokens, gives every label the state at its
  use, unknown besides.  A label no other token names gets the merge of every call's
  state.  get_signal()'s `if (likely(do_signal_stop(signr))) goto
  relock;` carries no siglock to `relock:`.  Sparse's __releases() is not trusted: do_signal_stop() is
  annotated so and keeps siglock on its `return false` paths.
- A non-recursive lock (spinlock_t, raw_spinlock_t, seqlock or rwlock_t
  writer) whose expression is one lock all through the function (a
  global, or `&x->m` with x `current`, or a parameter or a local set only
  by its initializer, never assigned or address-taken) is also counted by
  itself: no path takes it while holding it, so where a merge says some
  path holds it (get_signal()'s jobctl branch `if (B) {...unlock...} else
  if (C) do_freezer_trap(); goto relock;`, whose implicit else B and C
  exclude), taking it again starts from what the paths hold besides it,
  and its release leaves the reason of what is still held, not its own.
  The then branch of `if (need_seqretry(&L, seq))` holds no L (it is true
  on a lockless pass only): getrusage()'s `goto retry` carries no
  stats_lock.
- A call binds to the definitions it can reach: one in the caller's own
  file, else no static function of another .c file, and by architecture:
  code under arch/A (UML's arch/x86/um, the arch/x86 files UML builds,
  arm64's arch/arm/xen included) calls arch/A's definitions and generic
  ones, generic code any architecture's.  The caller walk follows the
  same rule upwards: riscv's handle_page_fault() is never entered from
  arch/um.  Definitions of several architectures merge to every
  acquisition and the releases all of them share; where a definition of
  another architecture that is more than an empty stub drops nothing, the
  release counts only for what a call took whose acquiring definitions are
  of the releasing architectures (powerpc's arch_enter_lazy_mmu_mode() /
  arch_leave_lazy_mmu_mode() balance in generic code; a lock the caller
  took itself is still held after a call only UML's definition drops it
  in).
- A member class whose struct is known (CATALOG's note, or for another
  `&x->member` the struct its spin_lock_init(&x->member) names) takes only
  the sites whose base is that struct or cannot be typed (the safe side):
  `current`, casts, container_of()/list_entry() and the function's own
  parameter and local declarations are read.  A site whose base is
  declared as another struct (hfi1's `struct send_context *sc`,
  `&sc->alloc_lock`) is listed apart, "other struct T, not this class".
- A site whose own state is clean is classified by walking the callers of
  its function (every `f(` in the tree; a static function's callers only in
  its file): process context only at a syscall, an initcall, a work item or
  kthread, or a file/inode/address-space/seq_file/pernet operation; an
  interrupt or softirq context at a timer, RCU callback, tasklet or hard
  interrupt handler; anything else (a function pointer with another
  member, no caller found, the depth or budget exceeded) is unknown.
- Unknown is never recommended, and any atomic context makes the class
  unsafe, whatever the dynamic evidence says.  A function, macro or file
  whose brackets do not balance cannot be read: the lock named in it is an
  unknown site, and a call from it an unknown caller.

Limits (what the tokenizer loses against spatch's parser, and where the
pass is unsafe):
- macros are not expanded but for their gotos, and #if conditions are not
  evaluated; types are not known, so a call through a function pointer is
  followed only by the operation it is stored as;
- a class is bound by name (CATALOG, a global, a distinctive member), so a
  lock reached through another expression is missed (unsafe); a member's
  base is typed only from the forms above (the second declarator of
  `struct c *z, *w;`, a member chain `a->b->lock` or a typedef are not
  typed, and stay sites);
- a function scanned in an earlier load than a wrapper it calls keeps the
  scan made without it (unsafe);
- a conditional acquisition of the lock API is understood only in the
  exact forms `if (trylock(...))` / `if (!trylock(...))` (a function of the
  tree by its effect on each return value); any other condition counts
  the lock held on both branches (safe); a wrapper that returns the lock
  held only on some paths counts as held on those; a conditional release
  only in the forms above (a value stored and tested later, a switch or
  a loop condition: held on both sides, safe);
- two definitions of one architecture or both generic (the sides of an
  #if) of which one drops nothing share no release (safe);
- a call from a short-circuited operand (`a && f()`) or a ?: arm may not
  run: a release f makes on every return is not counted, even in the
  branch that implies the call (safe);
- a local passed bare to a function whose definition is not read is not
  one lock all through the function (a macro may assign it: safe), but
  one passed to a function of another file read is a copy even where an
  unread header defines a macro of that name (unsafe); a __weak on a
  prototype in an unread header is not seen (unsafe); a
  loop not settled after LOOP_READINGS readings leaves its sites and what
  follows unknown (safe);
- a wrapper of another lock, preemption, BH or IRQ state defined in a file
  the pass does not read, and not in STATE_CALLS, is invisible (unsafe);
- a goto in the body of a macro of a file not read (an included header),
  or of a macro whose name the preprocessor pastes with ##, or that only
  a second list after a call supplies (`ID(ID)(CHECK)(x)`), to a label a
  goto of the function reaches too, carries nothing there (unsafe);
- a work item counts as process context unless a statement of the tree
  names it together with a BH workqueue; one queued on a BH workqueue
  through a pointer stored elsewhere is missed (unsafe).
"""

import collections
import json
import os
import re
import subprocess
import time

from pvrt.errors import PvrtError

VERSION = 3
MAX_DEPTH = 8          # caller levels above a site's function
MAX_SECONDS = 150      # per class, from its start: stops the caller walk only
MAX_FUNCS = 1000       # functions whose callers are looked up, per class
MAX_ROUNDS = 12         # of wrapper detection over the functions of one load
LOOP_READINGS = 5      # of one loop body, until its entry state settles
MANY = 1000            # a count a loop keeps growing
EXPAND_TOKENS = 20000  # tokens of macro bodies one scan may expand (_macro_jumps())

ATOMIC_KINDS = {
    "spin": "nested in a spinlock_t", "raw": "nested in a raw_spinlock_t",
    "rwlock": "nested in an rwlock_t", "seqw": "nested in a seqlock writer",
    "local_lock": "nested in a local_lock_t", "bitspin": "nested in a bit spinlock",
    "preempt": "preemption disabled", "irq": "interrupts disabled",
    "bh": "bottom halves disabled", "rcu_bh": "in an rcu_read_lock_bh() reader",
    "rcu_sched": "in an rcu_read_lock_sched() reader",
}
# What a context's category means for a conversion, worst first.
ORDER = ("atomic", "unknown", "rcu", "process")

_SUFFIX_KINDS = {"": [], "_irq": ["irq"], "_irqsave": ["irq"], "_bh": ["bh"],
                 "_irqrestore": ["irq"]}
_LOCK_API = [
    (re.compile(r"^(raw_)?spin_(lock|trylock)(_nested|_nest_lock)?(_irq|_irqsave|_bh)?(_nested)?$"),
     lambda m: ["raw" if m.group(1) else "spin"] + _SUFFIX_KINDS[m.group(4) or ""], 0),
    (re.compile(r"^_raw_spin_(lock|trylock)(_irq|_irqsave|_bh)?$"),
     lambda m: ["spin"] + _SUFFIX_KINDS[m.group(2) or ""], 0),
    (re.compile(r"^pv_spin_(lock|trylock)(_nested)?$"), lambda m: ["spin"], 0),
    (re.compile(r"^(read|write)_(lock|trylock)(_irq|_irqsave|_bh)?$"),
     lambda m: ["rwlock"] + _SUFFIX_KINDS[m.group(3) or ""], 0),
    (re.compile(r"^write_seqlock(_irq|_irqsave|_bh)?$"),
     lambda m: ["seqw"] + _SUFFIX_KINDS[m.group(1) or ""], 0),
    (re.compile(r"^read_seqlock_excl(_irq|_irqsave|_bh)?$"),
     lambda m: ["spin"] + _SUFFIX_KINDS[m.group(1) or ""], 0),
    # takes the seqlock's spinlock when the lockless pass failed: counted
    # as held (a site of the seqlock's lock) on the path that takes it
    (re.compile(r"^read_seqbegin_or_lock(_irqsave)?$"),
     lambda m: ["spin"] + (["irq"] if m.group(1) else []), 0),
    (re.compile(r"^xas?_lock(_irq|_irqsave|_bh)?$"),
     lambda m: ["spin"] + _SUFFIX_KINDS[m.group(1) or ""], 0),
    (re.compile(r"^local_lock(_irq|_irqsave)?$"),
     lambda m: ["local_lock"] + _SUFFIX_KINDS[m.group(1) or ""], 0),
    (re.compile(r"^(_?atomic|refcount)_dec_and_lock(_irqsave)?$"),
     lambda m: ["spin"] + _SUFFIX_KINDS[m.group(2) or ""], 1),
]
_UNLOCK_API = [
    (re.compile(r"^(raw_)?spin_unlock(_irq|_irqrestore|_bh)?$"),
     lambda m: ["raw" if m.group(1) else "spin"] + _SUFFIX_KINDS[m.group(2) or ""]),
    (re.compile(r"^_raw_spin_unlock(_irq|_irqrestore|_bh)?$"),
     lambda m: ["spin"] + _SUFFIX_KINDS[m.group(1) or ""]),
    (re.compile(r"^pv_spin_unlock$"), lambda m: ["spin"]),
    (re.compile(r"^(read|write)_unlock(_irq|_irqrestore|_bh)?$"),
     lambda m: ["rwlock"] + _SUFFIX_KINDS[m.group(2) or ""]),
    (re.compile(r"^write_sequnlock(_irq|_irqrestore|_bh)?$"),
     lambda m: ["seqw"] + _SUFFIX_KINDS[m.group(1) or ""]),
    (re.compile(r"^read_sequnlock_excl(_irq|_irqrestore|_bh)?$"),
     lambda m: ["spin"] + _SUFFIX_KINDS[m.group(1) or ""]),
    (re.compile(r"^done_seqretry(_irqrestore)?$"),
     lambda m: ["spin"] + (["irq"] if m.group(1) else [])),
    (re.compile(r"^xas?_unlock(_irq|_irqrestore|_bh)?$"),
     lambda m: ["spin"] + _SUFFIX_KINDS[m.group(1) or ""]),
    (re.compile(r"^local_unlock(_irq|_irqrestore)?$"),
     lambda m: ["local_lock"] + _SUFFIX_KINDS[m.group(1) or ""]),
]
# State changes that are no lock API of their own: (acquired, released).
STATE_CALLS = {
    "preempt_disable": (["preempt"], []), "preempt_enable": ([], ["preempt"]),
    "preempt_disable_notrace": (["preempt"], []),
    "preempt_enable_notrace": ([], ["preempt"]),
    "preempt_enable_no_resched": ([], ["preempt"]),
    "get_cpu": (["preempt"], []), "put_cpu": ([], ["preempt"]),
    "get_cpu_var": (["preempt"], []), "put_cpu_var": ([], ["preempt"]),
    "get_cpu_ptr": (["preempt"], []), "put_cpu_ptr": ([], ["preempt"]),
    "local_irq_disable": (["irq"], []), "local_irq_enable": ([], ["irq"]),
    "local_irq_save": (["irq"], []), "local_irq_restore": ([], ["irq"]),
    "raw_local_irq_save": (["irq"], []), "raw_local_irq_restore": ([], ["irq"]),
    "raw_local_irq_disable": (["irq"], []), "raw_local_irq_enable": ([], ["irq"]),
    "kmap_atomic": (["preempt"], []), "kunmap_atomic": ([], ["preempt"]),
    "preempt_count_add": (["preempt"], []),
    "preempt_count_sub": ([], ["preempt"]),
    "preempt_count_inc": (["preempt"], []), "preempt_count_dec": ([], ["preempt"]),
    "sched_preempt_enable_no_resched": ([], ["preempt"]),
    "__local_bh_disable_ip": (["bh"], []), "__local_bh_enable_ip": ([], ["bh"]),
    "_local_bh_enable": ([], ["bh"]),
    "write_seqcount_begin_nested": (["preempt"], []),
    "arch_spin_lock": (["raw"], []), "arch_spin_unlock": ([], ["raw"]),
    "arch_spin_trylock": (["raw"], []),
    "folio_lruvec_lock": (["spin"], []), "unlock_page_lruvec": ([], ["spin"]),
    "local_bh_disable": (["bh"], []), "local_bh_enable": ([], ["bh"]),
    "local_lock_nested_bh": (["bh"], []), "local_unlock_nested_bh": ([], ["bh"]),
    "rcu_read_lock": (["rcu"], []), "rcu_read_unlock": ([], ["rcu"]),
    "rcu_read_lock_bh": (["rcu_bh"], []), "rcu_read_unlock_bh": ([], ["rcu_bh"]),
    "rcu_read_lock_sched": (["rcu_sched"], []),
    "rcu_read_unlock_sched": ([], ["rcu_sched"]),
    "rcu_read_lock_sched_notrace": (["rcu_sched"], []),
    "rcu_read_unlock_sched_notrace": ([], ["rcu_sched"]),
    "write_seqcount_begin": (["preempt"], []), "write_seqcount_end": ([], ["preempt"]),
    "raw_write_seqcount_begin": (["preempt"], []),
    "raw_write_seqcount_end": ([], ["preempt"]),
    "bit_spin_lock": (["bitspin"], []), "bit_spin_unlock": ([], ["bitspin"]),
    "bit_spin_trylock": (["bitspin"], []), "__bit_spin_unlock": ([], ["bitspin"]),
    "hlist_bl_lock": (["bitspin"], []), "hlist_bl_unlock": ([], ["bitspin"]),
    # common wrappers of other locks (a wrapper defined in a file the pass
    # reads is found by itself)
    "task_lock": (["spin"], []), "task_unlock": ([], ["spin"]),
    "lock_task_sighand": (["spin", "irq"], []),
    "unlock_task_sighand": ([], ["spin", "irq"]),
    "pte_offset_map_lock": (["rcu", "spin"], []),
    "pte_unmap_unlock": ([], ["rcu", "spin"]),
    "pte_offset_map": (["rcu"], []), "pte_unmap": ([], ["rcu"]),
    "pmd_lock": (["spin"], []), "pud_lock": (["spin"], []),
    "huge_pte_lock": (["spin"], []),
    "lock_mount_hash": (["seqw"], []), "unlock_mount_hash": ([], ["seqw"]),
    "bh_lock_sock": (["spin"], []), "bh_lock_sock_nested": (["spin"], []),
    "bh_unlock_sock": ([], ["spin"]),
    "task_rq_lock": (["raw", "irq"], []), "task_rq_unlock": ([], ["raw", "irq"]),
    "lock_timer_base": (["raw", "irq"], []),
    "folio_lruvec_lock_irq": (["spin", "irq"], []),
    "folio_lruvec_lock_irqsave": (["spin", "irq"], []),
    "unlock_page_lruvec_irq": ([], ["spin", "irq"]),
    "unlock_page_lruvec_irqrestore": ([], ["spin", "irq"]),
}
GUARDS = {"spinlock": ["spin"], "spinlock_irq": ["spin", "irq"],
          "spinlock_irqsave": ["spin", "irq"], "spinlock_bh": ["spin", "bh"],
          "raw_spinlock": ["raw"], "raw_spinlock_irq": ["raw", "irq"],
          "raw_spinlock_irqsave": ["raw", "irq"], "read_lock": ["rwlock"],
          "write_lock": ["rwlock"], "write_lock_irq": ["rwlock", "irq"],
          "write_lock_irqsave": ["rwlock", "irq"], "preempt": ["preempt"],
          "preempt_notrace": ["preempt"], "irq": ["irq"], "irqsave": ["irq"],
          "rcu": ["rcu"], "task_lock": ["spin"], "local_lock": ["local_lock"],
          "local_lock_irqsave": ["local_lock", "irq"], "migrate": [],
          "read_lock_irq": ["rwlock", "irq"], "read_lock_irqsave": ["rwlock", "irq"],
          "read_lock_bh": ["rwlock", "bh"], "write_lock_bh": ["rwlock", "bh"],
          "rcu_bh": ["rcu_bh"], "rcu_sched": ["rcu_sched"], "local_bh": ["bh"],
          "bh": ["bh"], "local_lock_nested_bh": ["bh"], "raw_spinlock_irq_try": ["raw", "irq"],
          "task_rq_lock": ["raw", "irq"], "rq_lock": ["raw"], "rq_lock_irq": ["raw", "irq"],
          "rq_lock_irqsave": ["raw", "irq"], "double_rq_lock": ["raw"],
          "write_seqlock": ["seqw"], "write_seqlock_irqsave": ["seqw", "irq"],
          "read_seqlock_excl": ["spin"], "write_seqcount": ["preempt"],
          "lock_timer_base": ["raw", "irq"], "spinlock_irqsave_nested": ["spin", "irq"]}
# Guards that may sleep: they hold nothing the pass tracks.  A guard on
# neither list holds something unknown, and its sections are "unknown".
SLEEPING_GUARDS = {"mutex", "mutex_intr", "mutex_try", "rwsem_read", "rwsem_read_try",
                   "rwsem_read_intr", "rwsem_write", "rwsem_write_try", "rwsem_write_kill",
                   "srcu", "srcu_read_lock", "cpus_read_lock", "device", "rtnl",
                   "mmap_read_lock", "mmap_write_lock", "percpu_read", "percpu_write",
                   "disable_irq", "jump_label_lock", "cpu_hotplug_disable", "migrate",
                   "pv_mutex", "rt_mutex", "ww_mutex", "msi_descs_lock", "pci_dev",
                   "tty_port", "free_irq"}


def guard_kinds(name):
    """What guard(NAME) / scoped_guard(NAME) holds: its kinds, or
    ["unknown_guard"] for a guard the pass does not know to be sleepable."""
    base = re.sub(r"_(try|nested|intr|kill)$", "", name)
    for n in (name, base):
        if n in GUARDS:
            return list(GUARDS[n])
    if name in SLEEPING_GUARDS or base in SLEEPING_GUARDS:
        return []
    return ["unknown_guard"]
# Functions and macros that never return (declared __noreturn in 6.12, or BUG()):
# a call of one as a statement ends its path, so what it leaves "held" (the
# preempt_disable() of panic(), do_task_dead()) reaches no later statement
# and no caller.  A function of the files read that is defined __noreturn,
# or whose every path ends in a call of one (arm's die_kernel_fault() ends in
# make_task_dead()), is added (Analysis.noreturn).  die() is not listed: on
# x86 and arm64 it returns when a notifier stops the oops.
NORETURN = {"panic", "BUG", "do_exit", "make_task_dead", "do_task_dead", "do_group_exit",
            "kthread_exit", "kthread_complete_and_exit", "__module_put_and_kthread_exit",
            "rewind_stack_and_make_dead", "panic_smp_self_stop", "nmi_panic_self_stop",
            "cpu_startup_entry", "arch_cpu_idle_dead", "start_kernel", "rest_init",
            "usercopy_abort", "__fortify_panic", "unreachable", "__builtin_unreachable",
            "__builtin_trap"}
# Calls that name the lock without taking it.
_NOT_ACQUIRE = re.compile(
    r"^(spin_lock_init|pv_spin_lock_init|seqlock_init|rwlock_init|__?spin_lock_init|"
    r"lockdep_\w+|\w*assert\w*|spin_is_locked|spin_is_contended|spin_unlock_wait|"
    r"raw_spin_is_locked|rcu_dereference\w*|rcu_access_pointer|might_lock\w*|"
    r"__cond_lock|read_seqbegin\w*|read_seqretry\w*|need_seqretry|done_seqretry|"
    r"read_seqbegin_or_lock\w*|seqcount_\w*init|__acquires|__releases|__must_hold|"
    r"WARN\w*|BUG\w*|lock_is_held\w*|sizeof|typeof|offsetof|container_of|"
    r"list_\w+|hlist_\w+|INIT_\w+|memset|pr_\w+|printk|kfree\w*)$")
_KEYWORDS = {"if", "while", "for", "switch", "return", "sizeof", "do", "else", "case",
             "goto", "typeof", "__typeof__", "defined", "__attribute__", "asm",
             "__asm__", "volatile", "_Static_assert", "static_assert"}
# what reads its parenthesised operand without running it
_UNEVALUATED = {"sizeof", "typeof", "__typeof__", "__typeof", "typeof_unqual",
                "__typeof_unqual__", "_Alignof", "alignof", "__alignof__",
                "_Static_assert", "static_assert", "__builtin_types_compatible_p",
                "__builtin_offsetof", "offsetof"}
# a selection: one association (one arm) of what follows its first operand
# runs, and its first operand does not
_SELECTION = {"_Generic", "__builtin_choose_expr"}
# Where a function is called in process context, by the contract of the
# registration call (argument index) or of the operation it is stored as.
PROCESS_REG = {"INIT_WORK": 1, "INIT_DELAYED_WORK": 1, "DECLARE_WORK": 1,
               "DECLARE_DELAYED_WORK": 1, "INIT_RCU_WORK": 1, "kthread_run": 0,
               "kthread_create": 0, "kthread_create_on_node": 0, "kthread_run_on_cpu": 0,
               "kthread_create_on_cpu": 0, "module_init": 0, "module_exit": 0,
               "core_initcall": 0, "postcore_initcall": 0, "arch_initcall": 0,
               "subsys_initcall": 0, "fs_initcall": 0, "device_initcall": 0,
               "late_initcall": 0, "late_initcall_sync": 0, "rootfs_initcall": 0,
               "early_initcall": 0, "pure_initcall": 0, "__initcall": 0,
               "kthread_init_work": 1}
# Work items run in process context unless queued on a BH workqueue
# (system_bh_wq, system_bh_highpri_wq, alloc_workqueue(..., WQ_BH, ...)),
# where they run in softirq context.
WORK_REG = {"INIT_WORK", "INIT_DELAYED_WORK", "DECLARE_WORK", "DECLARE_DELAYED_WORK",
            "INIT_RCU_WORK", "INIT_WORK_ONSTACK", "INIT_DELAYED_WORK_ONSTACK"}
BH_WQ_WORDS = ["system_bh_wq", "system_bh_highpri_wq", "WQ_BH"]
ATOMIC_REG = {"stop_machine": 0, "stop_machine_cpuslocked": 0,
              "stop_machine_from_inactive_cpu": 0, "timer_setup": 1, "call_rcu": 1, "call_rcu_hurry": 1, "tasklet_init": 1,
              "tasklet_setup": 1, "DECLARE_TASKLET": 1, "DEFINE_TIMER": 1,
              "request_irq": 1, "request_threaded_irq": 1, "devm_request_irq": 2,
              "hrtimer_setup": 1, "kfree_rcu": -1, "smp_call_function": 0,
              "smp_call_function_single": 1, "on_each_cpu": 0, "irq_work_init": 1}
# Operations whose callers run in process context and may sleep, by the
# struct they are stored in (the VFS, MM and driver-model contracts).
_FOPS = {"open", "release", "read", "write", "read_iter", "write_iter", "llseek",
         "unlocked_ioctl", "compat_ioctl", "mmap", "fsync", "fallocate", "flush",
         "splice_read", "splice_write", "iterate_shared", "poll", "fasync",
         "show_fdinfo", "copy_file_range", "remap_file_range", "get_unmapped_area"}
PROCESS_OPS_BY_TYPE = {
    "file_operations": _FOPS,
    "proc_ops": {"proc_open", "proc_read", "proc_write", "proc_release", "proc_lseek",
                 "proc_ioctl", "proc_read_iter", "proc_mmap", "proc_poll",
                 "proc_get_unmapped_area", "proc_compat_ioctl"},
    "inode_operations": {"setattr", "getattr", "create", "lookup", "unlink", "mkdir",
                         "rmdir", "rename", "symlink", "link", "tmpfile", "mknod",
                         "listxattr", "fileattr_get", "fileattr_set", "get_acl",
                         "set_acl", "get_inode_acl"},
    "super_operations": {"evict_inode", "put_super", "statfs", "show_options",
                         "alloc_inode", "write_inode", "sync_fs", "freeze_fs",
                         "unfreeze_fs", "shutdown", "show_path"},
    "address_space_operations": {"write_begin", "write_end", "writepage", "writepages",
                                 "read_folio", "readahead", "migrate_folio",
                                 "error_remove_folio", "swap_activate"},
    "seq_operations": {"start"},
    "vm_operations_struct": {"fault", "page_mkwrite", "open", "close", "mremap"},
    "pernet_operations": {"init", "exit", "exit_batch", "pre_exit"},
    "file_system_type": {"init_fs_context", "kill_sb", "mount"},
    "fs_context_operations": {"get_tree", "reconfigure", "parse_param", "free"},
    "platform_driver": {"probe", "remove"}, "pci_driver": {"probe", "remove"},
}
# Operations called in atomic context by their contract.
ATOMIC_OPS_BY_TYPE = {
    "super_operations": {"drop_inode": "the super_operations .drop_inode operation,"
                                       " called with inode->i_lock held (iput_final())"},
}
# seq_file operations that run with whatever the same initializer's .start took
SEQ_AFTER_START = {"show", "next", "stop"}


class SourceError(PvrtError):
    """The sources cannot be read: a one-line message for the user."""


# --- the tree ---------------------------------------------------------------------

class Tree:
    """A kernel tree: a directory, or a git repository and revision."""

    def __init__(self, path, rev=None):
        # absolute: grep runs with the tree as its working directory
        self.path, self.rev = os.path.abspath(path), rev
        self._text = {}
        if rev is None and not os.path.isdir(path):
            raise SourceError(f"{path} is no kernel tree")
        if rev is not None:
            if not os.path.exists(path):
                raise SourceError(f"{path} is no git repository")
            out = subprocess.run(["git", "--git-dir", path, "rev-parse", "--verify", "-q",
                                  rev + "^{commit}"], capture_output=True, text=True,
                                 check=False)
            if out.returncode:
                raise SourceError(f"{path}: no revision {rev}")

    def ident(self):
        if self.rev:
            out = subprocess.run(["git", "--git-dir", self.path, "rev-parse", self.rev],
                                 capture_output=True, text=True, check=False)
            if out.returncode:
                raise SourceError(f"{self.path}: no revision {self.rev}")
            return out.stdout.strip()
        if os.path.exists(os.path.join(self.path, ".git")):
            head = subprocess.run(["git", "-C", self.path, "rev-parse", "HEAD"],
                                  capture_output=True, text=True, check=False).stdout.strip()
            dirty = subprocess.run(["git", "-C", self.path, "status", "--porcelain",
                                    "--untracked-files=no"], capture_output=True,
                                   text=True, check=False).stdout
            return None if dirty.strip() else head
        return None

    def grep(self, words):
        """The .c and .h files that contain one of WORDS as a word."""
        words = sorted(set(words))
        if not words:
            return []
        found = set()
        for i in range(0, len(words), 400):
            args = []
            for w in words[i:i + 400]:
                args += ["-e", w]
            if self.rev:
                cmd = ["git", "--git-dir", self.path, "grep", "-l", "-w", "-F"] + args + \
                      [self.rev, "--", "*.c", "*.h"]
            elif os.path.exists(os.path.join(self.path, ".git")):
                cmd = ["git", "-C", self.path, "grep", "-l", "-w", "-F"] + args + \
                      ["--", "*.c", "*.h"]
            else:
                cmd = ["grep", "-r", "-l", "-w", "-F", "--include=*.c", "--include=*.h"] + \
                      args + ["."]
            out = subprocess.run(cmd, capture_output=True, text=True, check=False,
                                 cwd=None if self.rev else self.path)
            if out.returncode not in (0, 1):
                raise SourceError(f"{' '.join(cmd[:4])}: {out.stderr.strip()}")
            for line in out.stdout.splitlines():
                if self.rev and line.startswith(self.rev + ":"):
                    line = line[len(self.rev) + 1:]
                found.add(os.path.normpath(line))
        return sorted(found)

    def read(self, rel):
        if rel not in self._text:
            if self.rev:
                out = subprocess.run(["git", "--git-dir", self.path, "show",
                                      f"{self.rev}:{rel}"], capture_output=True, check=False)
                data = out.stdout
            else:
                with open(os.path.join(self.path, rel), "rb") as f:
                    data = f.read()
            self._text[rel] = data.decode("utf-8", "replace")
        return self._text[rel]

    def prefetch(self, rels):
        """Read many files of a git revision in one `git cat-file --batch`."""
        rels = [r for r in rels if r not in self._text]
        if not self.rev or not rels:
            return
        inp = "".join(f"{self.rev}:{r}\n" for r in rels).encode()
        out = subprocess.run(["git", "--git-dir", self.path, "cat-file", "--batch"],
                             input=inp, capture_output=True, check=True).stdout
        pos = 0
        for r in rels:
            nl = out.index(b"\n", pos)
            head = out[pos:nl].split()
            if len(head) < 3 or head[1] == b"missing":
                pos = nl + 1
                self._text[r] = ""
                continue
            size = int(head[2])
            self._text[r] = out[nl + 1:nl + 1 + size].decode("utf-8", "replace")
            pos = nl + 1 + size + 1


# --- C scanning -------------------------------------------------------------------

_STRIP = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|->|\+\+|--|&&|\|\||[=!<>]=|<<|>>|\S")


def _blank(m):
    s = m.group(0)
    if s[0] in "\"'":
        return s[0] + " " * 0 + s[0]
    return re.sub(r"[^\n]", " ", s)


_DIRECTIVE = re.compile(r"\s*#\s*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b")


def tokenize(text, directives=None, objlike=None):
    """[(token, line)] of C source, comments and strings removed; #define
    bodies are returned separately as {name: (params, tokens, line)}.
    DIRECTIVES, a list, receives (index of the next token, "if" / "elif" /
    "else" / "endif") for each conditional directive, in order; OBJLIKE, a
    dict, the object-like macros with a body: {name: [(tokens, line)]}."""
    # join continuation lines first (a comment in a #define must not take
    # its backslash with it); the joined lines stay as empty lines so that
    # line numbers do not move
    raw, lines = text.split("\n"), []
    i = 0
    while i < len(raw):
        line, n = raw[i], 0
        while line.endswith("\\") and i + 1 + n < len(raw):
            n += 1
            line = line[:-1] + " " + raw[i + n]
        lines.append(line)
        lines += [""] * n
        i += 1 + n
    text = _STRIP.sub(_blank, "\n".join(lines))
    toks, macros = [], {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line, no = lines[i], i + 1
        if line.lstrip().startswith("#"):
            full = line
            while full.endswith("\\") and i + 1 < len(lines):
                i += 1
                full = full[:-1] + " " + lines[i]
            m = re.match(r"\s*#\s*define\s+(\w+)\(([^)]*)\)(.*)$", full)
            if m:
                body = [(t, no) for t in _TOKEN.findall(m.group(3))]
                macros.setdefault(m.group(1), []).append(
                    ([p.strip() for p in m.group(2).split(",")], body, no))
            elif objlike is not None:
                m = re.match(r"\s*#\s*define\s+(\w+)(?![\w(])(.*)$", full)
                body = [(t, no) for t in _TOKEN.findall(m.group(2))] if m else []
                if body:
                    objlike.setdefault(m.group(1), []).append((body, no))
            m = _DIRECTIVE.match(full)
            if m and directives is not None:
                kind = m.group(1)
                directives.append((len(toks), "if" if kind.startswith("if") else
                                   "elif" if kind.startswith("elif") else kind))
            i += 1
            continue
        toks.extend((t, no) for t in _TOKEN.findall(line))
        i += 1
    return toks, macros


class Unparsable(Exception):
    """Brackets that do not balance: the function cannot be read."""


class _OverBudget(Unparsable):
    """A scan expanded more macro tokens than EXPAND_TOKENS."""


_PAIR = {"(": ")", "{": "}", "[": "]"}


def _match(toks, i):
    """Index of the bracket closing the one at toks[i]; Unparsable when
    there is none."""
    if i >= len(toks) or toks[i][0] not in _PAIR:
        raise Unparsable(f"no bracket where one was expected (line "
                         f"{toks[min(i, len(toks) - 1)][1] if toks else '?'})")
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j][0]
        if t in "({[":
            depth += 1
        elif t in ")}]":
            depth -= 1
            if depth == 0:
                return j
    raise Unparsable(f"the bracket on line {toks[i][1]} is never closed")


def balance_error(toks):
    """None when the brackets of TOKS balance, else what is wrong."""
    stack = []
    for t, line in toks:
        if t in _PAIR:
            stack.append((t, line))
        elif t in ")}]":
            if not stack or _PAIR[stack[-1][0]] != t:
                return f"unbalanced '{t}' on line {line}"
            stack.pop()
    if stack:
        return f"'{stack[-1][0]}' on line {stack[-1][1]} is never closed"
    return None


_WEAK = ("__weak", "weak", "__weak__")


class Func:
    def __init__(self, name, path, static, toks, line, macro=False, params=(), init=None,
                 unparsable=None, head=(), pp=(), objlike=False):
        self.name, self.path, self.static, self.toks = name, path, static, toks
        # the conditional directives in the body: (index of the token after
        # it in TOKS, "if" / "elif" / "else" / "endif"), in order
        self.pp = list(pp)
        self.head = list(head)   # the tokens of the definition before its body
        self.line, self.macro, self.params = line, macro, list(params)
        self.objlike = objlike  # an object-like macro (`#define BAIL goto out`)
        self.init = init       # the struct type of a top-level initializer
        self.unparsable = unparsable   # why it cannot be read, or None
        # __weak, __attribute__((weak)) / ((__weak__)), on the definition
        # or on a prototype of its file (functions())
        self.weak = any(t in _WEAK for t, _l in self.head)

    def key(self):
        return f"{self.path}:{self.name}:{self.line}"


def functions(path, text, objlike=None):
    """The function definitions (and function-like macros) of one file;
    OBJLIKE, a list, receives its object-like macros (Func.objlike)."""
    directives, objs = [], {} if objlike is not None else None
    toks, macros = tokenize(text, directives, objs)
    out = []
    bad = balance_error(toks)
    if bad:
        # the file cannot be cut into functions: one unparsable unit
        # (both sides of an #if are read, which can unbalance a file)
        out.append(Func(f"<{os.path.basename(path)}>", path, False, toks,
                        toks[0][1] if toks else 1, unparsable=f"{path}: {bad}"))
        toks = []
    scope = []           # file-scope tokens: module_init(f), DECLARE_TASKLET(t, f), ...
    i, start = 0, 0
    while i < len(toks):
        t = toks[i][0]
        if t in (";", "}"):
            if t == ";":
                scope.extend(toks[start:i + 1])
            start = i + 1
        elif t in ("(", "["):
            i = _match(toks, i)
        elif t == "{":
            end = _match(toks, i)
            head = toks[start:i]
            name = _func_name(head)
            static = any(x[0] == "static" for x in head)
            if name:
                out.append(Func(name, path, static, toks[i:end + 1], toks[i][1],
                                head=head, pp=[(k - i, d) for k, d in directives
                                               if i < k <= end]))
            elif head and head[-1][0] == "=" or (len(head) > 1 and head[-2][0] == "]"
                                                  and head[-1][0] == "="):
                # `struct file_operations fops = { .open = f, ... };`
                words = [t for t, _l in head if re.match(r"^\w+$", t)]
                stype = words[words.index("struct") + 1] \
                    if "struct" in words[:-1] else (words[-2] if len(words) > 1 else "")
                var = words[-1] if words else "?"
                out.append(Func(f"<{var}>", path, static, toks[i:end + 1], toks[i][1],
                                init=stype))
            i, start = end, end + 1
        i += 1
    # `void f(void) __weak;`: the definition of the file is weak too
    weak, stmt = set(), []
    for t in scope:
        stmt.append(t)
        if t[0] != ";":
            continue
        if any(x in _WEAK for x, _l in stmt):
            weak.update(x for k, (x, _l) in enumerate(stmt[:-1])
                        if stmt[k + 1][0] == "(" and x not in _KEYWORDS and
                        re.match(r"^[A-Za-z_]\w*$", x) and not x.startswith("__"))
        stmt = []
    for f in out:
        if f.name in weak:
            f.weak = True
    if scope:
        out.append(Func("<file scope>", path, True, scope, scope[0][1], init=""))
    for name, defs in macros.items():
        for params, body, line in defs:
            bad = balance_error(body)
            out.append(Func(name, path, True, body, line, macro=True, params=params,
                            unparsable=f"macro {name}() ({path}:{line}): {bad}"
                            if bad else None))
    for name, defs in (objs or {}).items():
        for body, line in defs:
            bad = balance_error(body)
            objlike.append(Func(name, path, True, body, line, macro=True, objlike=True,
                                unparsable=f"macro {name} ({path}:{line}): {bad}"
                                if bad else None))
    return out


def _func_name(head):
    """The function name of a definition whose tokens before '{' are HEAD."""
    if not head or any(t == "=" for t, _l in head) or head[-1][0] != ")":
        return None
    j = len(head) - 1
    while j >= 0:
        # skip attribute groups: __acquires(x), __releases(x), __must_hold(x) ...
        depth, k = 0, j
        while k >= 0:
            if head[k][0] == ")":
                depth += 1
            elif head[k][0] == "(":
                depth -= 1
                if depth == 0:
                    break
            k -= 1
        if k <= 0:
            return None
        name = head[k - 1][0]
        if re.match(r"^__\w+$", name) and name not in ("__init",) and k - 2 >= 0 \
                and head[k - 2][0] == ")":
            j = k - 2
            continue
        if not re.match(r"^[A-Za-z_]\w*$", name) or name in _KEYWORDS:
            return None
        return name
    return None


class State:
    """What is held on some path ("held", merged by maximum: the context of
    a site) and on every path ("must", merged by minimum: the net effect of
    a wrapper), with the call that took it.  Counts may go below zero: a
    function that drops its caller's lock and takes it again has no net
    effect.

    A lock whose expression names one lock all through the function
    (Scan._stable()) is tracked by itself too: held["id:" + E] counts it,
    and excl[E] is what the paths hold with E's own acquisition left out.
    Taking E again where some path "holds" it (`relock:` reached by a goto
    the pass thought held siglock) starts from excl[E]: a spinlock is not
    recursive, so those paths do not reach the acquisition, and the others
    hold no more than excl[E].  Releasing E gives each kind back the reason
    it has without E."""

    __slots__ = ("held", "must", "why", "excl", "took")

    def __init__(self, held=None, why=None, must=None):
        self.held = dict(held or {})
        self.must = dict(must if must is not None else (held or {}))
        self.why = dict(why or {})
        self.excl = {}
        # the calls that may have taken each held kind, on any path
        self.took = {}

    def copy(self):
        st = State(self.held, self.why, self.must)
        st.excl = {e: x.copy() for e, x in self.excl.items()}
        st.took = {k: set(v) for k, v in self.took.items()}
        return st

    def plain(self):
        """A copy without the per-lock bookkeeping."""
        st = State(self.held, self.why, self.must)
        st.took = {k: set(v) for k, v in self.took.items()}
        return st

    def acquire(self, kinds, why, _skip=None):
        for k in kinds:
            self.held[k] = self.held.get(k, 0) + 1
            self.must[k] = self.must.get(k, 0) + 1
            self.why[k] = why
            m = re.match(r"^(\w+)\(", why or "")
            self.took.setdefault(k, set()).add(m.group(1) if m else "")
        for e, x in self.excl.items():
            if e != _skip:
                x.acquire(kinds, why)

    def release(self, kinds, _known=None):
        for k in kinds:
            for d in (self.held, self.must):
                d[k] = d.get(k, 0) - 1
                if not d[k]:
                    del d[k]
            if self.held.get(k, 0) <= 0:
                self.why.pop(k, None)
                self.took.pop(k, None)
        if _known is None:
            # which lock it drops is not known (a wrapper, an unlock through
            # a pointer): it may be one of the tracked ones, whose excl is
            # then what it was
            return
        for e, x in self.excl.items():
            if e != _known:
                x.release(kinds)

    def lock(self, ident, kinds, why):
        """Take the non-recursive lock IDENT, of KINDS."""
        key = "id:" + ident
        if self.held.get(key, 0) > 0 and ident in self.excl:
            # the paths that hold it cannot take it again: the others hold
            # no more than what every path holds besides it
            base = self.excl[ident]
            self.held, self.why = dict(base.held), dict(base.why)
        before = self.plain()
        before.held.pop(key, None)
        self.acquire(kinds, why, _skip=ident)
        self.held[key] = 1
        self.excl[ident] = before

    def unheld(self, ident):
        """Where IDENT is known not to be held: what the paths hold
        besides it."""
        if self.held.get("id:" + ident, 0) > 0 and ident in self.excl:
            base = self.excl.pop(ident)
            self.held, self.why = dict(base.held), dict(base.why)
            self.held.pop("id:" + ident, None)

    def unlock(self, ident, kinds):
        """Release the lock IDENT, of KINDS."""
        key = "id:" + ident
        if self.held.get(key, 0) <= 0 or ident not in self.excl:
            self.release(kinds)
            return
        self.release(kinds, _known=ident)
        without = self.excl.pop(ident)
        for k in kinds:
            if self.held.get(k, 0) > 0 and without.held.get(k, 0) > 0:
                # the reason of what is still held is not this lock
                self.why[k] = without.why.get(k, self.why.get(k))
        del self.held[key]

    def merge(self, other):
        for e in set(self.excl) | set(other.excl):
            # a state that does not hold E is its own state without E
            a = self.excl[e].copy() if e in self.excl else self.plain()
            b = other.excl[e].plain() if e in other.excl else other.plain()
            a.held.pop("id:" + e, None)
            b.held.pop("id:" + e, None)
            self.excl[e] = a.merge(b)
        for k, v in other.took.items():
            self.took.setdefault(k, set()).update(v)
        for k in set(self.held) | set(other.held):
            n = max(self.held.get(k, 0), other.held.get(k, 0))
            if n > self.held.get(k, 0) and k in other.why:
                self.why[k] = other.why[k]
            if n:
                self.held[k] = n
            else:
                self.held.pop(k, None)
        for k in set(self.must) | set(other.must):
            n = min(self.must.get(k, 0), other.must.get(k, 0))
            if n:
                self.must[k] = n
            else:
                self.must.pop(k, None)
        return self

    def atomic(self):
        return [(k, self.why.get(k)) for k in ATOMIC_KINDS if self.held.get(k, 0) > 0]

    def category(self):
        """('atomic', reason) / ('unknown', reason) / ('rcu', reason) /
        ('clean', None)."""
        at = self.atomic()
        if at:
            k, why = at[0]
            return "atomic", f"{ATOMIC_KINDS[k]} ({why})"
        if self.held.get("unsettled", 0) > 0:
            return "unknown", self.why.get("unsettled")
        if self.held.get("unknown_guard", 0) > 0:
            return "unknown", (f"inside {self.why.get('unknown_guard')}, a guard the pass"
                               " does not know (it may hold a spinning lock)")
        if self.held.get("rcu", 0) > 0:
            return "rcu", f"in an rcu_read_lock() reader ({self.why.get('rcu')})"
        return "clean", None


def api_effect(name):
    """(acquired kinds, released kinds, lock-argument index) of a call NAME."""
    for rx, kinds, arg in _LOCK_API:
        m = rx.match(name)
        if m:
            return kinds(m), [], arg
    for rx, kinds in _UNLOCK_API:
        m = rx.match(name)
        if m:
            return [], kinds(m), None
    if name in STATE_CALLS:
        a, r = STATE_CALLS[name]
        return a, r, None
    return None


def split_args(toks, i):
    """The argument token lists of the call whose '(' is toks[i]; end index."""
    end = _match(toks, i)
    args, cur, depth = [], [], 0
    for t in toks[i + 1:end]:
        if t[0] in "({[":
            depth += 1
        elif t[0] in ")}]":
            depth -= 1
        if t[0] == "," and depth == 0:
            args.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur or args:
        args.append(cur)
    return args, end


def text_of(toks):
    out = ""
    for t, _l in toks:
        if out and (re.match(r"\w", t) and re.match(r".*\w$", out)):
            out += " "
        out += t
    return out


def _unwrap(cond):
    """COND without enclosing parentheses and likely()/unlikely()."""
    while True:
        m = re.match(r"^(likely|unlikely)?\((.*)\)$", cond)
        if not m or not _balanced(m.group(2)):
            return cond
        cond = m.group(2)


def _balanced(text):
    depth = 0
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            return False
    return depth == 0


def _trylock_form(cond):
    """For `if (COND)`: False when COND is exactly `trylock(...)` (held in
    the then branch), True when it is `!trylock(...)` (held in the else
    branch), None otherwise."""
    cond = _unwrap(cond.strip())
    neg = cond.startswith("!")
    if neg:
        cond = _unwrap(cond[1:].strip())
    m = re.match(r"^(\w+)\((.*)\)$", cond)
    if not m or not _balanced(m.group(2)) or \
            not re.search(r"trylock|dec_and_lock|lock_task_sighand", m.group(1)):
        return None
    return neg


def _as_effect(w):
    """A wrappers entry (acquired, released, takes the target) as an effect
    (..., released on non-zero returns, released on zero returns)."""
    return None if w is None else (w[0], w[1], w[2], list(w[1]), list(w[1]), list(w[0]),
                                   list(w[0]), {}, {}, {})


def _maybe_held(eff):
    """The kinds an effect EFF holds on some of its returns but does not
    count as acquired."""
    return sorted((set(eff[5]) | set(eff[6])) - set(eff[0]))


def _ret_sides(val):
    """Which truth values `return VAL` can give its caller's if: {False}
    for 0, false and NULL, {True} for true, a non-zero number, an error code
    or ERR_PTR(), both for anything else."""
    val = val.strip()
    if re.match(r"^\(?(0[uUlL]*|false|NULL)\)?$", val):
        return (False,)
    if re.match(r"^\(?(true|[1-9]\d*[uUlL]*|-\s*[1-9]\d*|-\s*E[A-Z0-9]+)\)?$", val) or \
            re.match(r"^(ERR_PTR|ERR_CAST)\(.*\)$", val):
        return (True,)
    return (True, False)


def _widen(new, old):
    """A loop's next entry state NEW against the last one OLD: a count
    that grew again (a body that takes more than it drops) is many, so that
    the readings settle."""
    pairs = [(new, old)] + [(x, old.excl[e]) for e, x in new.excl.items() if e in old.excl]
    for a, b in pairs:
        for k, n in list(a.held.items()):
            if n > max(b.held.get(k, 0), 0) and not k.startswith("id:"):
                a.held[k] = max(MANY, b.held.get(k, 0))


def _same(a, b):
    """Whether two loop entry states hold the same."""
    return a.held == b.held and a.took == b.took and set(a.excl) == set(b.excl) and \
        all(x.held == b.excl[e].held for e, x in a.excl.items())


# The configuration an `if (IS_ENABLED(CONFIG_X))` (IS_BUILTIN(),
# IS_REACHABLE(), IS_MODULE()) is decided by: "y", "m" or False (unset).
# The project's kernel (build/check/out/project/.config) has no PREEMPT_RT.
PROJECT_CONFIG = {"CONFIG_PREEMPT_RT": False}


def _config_value(toks, config):
    """True / False when the condition TOKS is decided by CONFIG alone (a
    combination of IS_ENABLED(CONFIG_X)-style tests, 0 and 1 with !, &&, ||
    and parentheses), else None."""
    toks = [t for t, _l in toks]
    if not any(t.startswith("IS_") for t in toks):
        return None
    pos = [0]

    def term():
        if pos[0] >= len(toks):
            raise ValueError
        t = toks[pos[0]]
        if t == "!":
            pos[0] += 1
            v = term()
            return None if v is None else not v
        if t == "(":
            pos[0] += 1
            v = disj()
            if pos[0] >= len(toks) or toks[pos[0]] != ")":
                raise ValueError
            pos[0] += 1
            return v
        if t in ("0", "1"):
            pos[0] += 1
            return t == "1"
        if t in ("IS_ENABLED", "IS_BUILTIN", "IS_REACHABLE", "IS_MODULE") and \
                toks[pos[0] + 1:pos[0] + 4] and len(toks) > pos[0] + 3 and \
                toks[pos[0] + 1] == "(" and toks[pos[0] + 3] == ")":
            sym = toks[pos[0] + 2]
            pos[0] += 4
            if sym not in config:
                return None
            v = config[sym]
            if t == "IS_ENABLED":
                return v in ("y", "m")
            if t == "IS_MODULE":
                return v == "m"
            if t == "IS_REACHABLE" and v == "m":
                return None
            return v == "y"
        raise ValueError

    def conj():
        vals = [term()]
        while pos[0] < len(toks) and toks[pos[0]] == "&&":
            pos[0] += 1
            vals.append(term())
        return False if False in vals else (True if all(vals) else None)

    def disj():
        vals = [conj()]
        while pos[0] < len(toks) and toks[pos[0]] == "||":
            pos[0] += 1
            vals.append(conj())
        return True if True in vals else (False if all(v is False for v in vals) else None)

    try:
        v = disj()
    except (ValueError, IndexError):
        return None
    return v if pos[0] == len(toks) else None


def _has_label(toks, i, j, end):
    """Whether the `if` statement whose body starts at toks[i] (its body
    ending at toks[j], an `else` branch included) holds a label or a case:
    a jump may enter it."""
    if j < end and toks[j][0] == "else":
        j = _skip(toks, j + 1, end)
    for k in range(i, min(j, end)):
        t = toks[k][0]
        if t in ("case", "default"):
            return True
        if k + 1 < end and toks[k + 1][0] == ":" and t not in _KEYWORDS and \
                re.match(r"^[A-Za-z_]\w*$", t) and \
                (k == 0 or toks[k - 1][0] in (";", "{", "}", ":", ")", "else")):
            return True
    return False


def _has_default(toks, i):
    """Whether the switch body at toks[i] has a default label of its own
    (not one of a switch nested in it)."""
    if toks[i][0] != "{":
        return False
    end = _match(toks, i)
    k = i + 1
    while k < end:
        t = toks[k][0]
        if t == "switch" and k + 1 < end and toks[k + 1][0] == "(":
            k = _skip(toks, k, end)
            continue
        if t == "(":
            # `_Generic(y, int: 1, default: 0)`: no jump enters a statement
            # expression, so the switch's own default is never in here
            k = _match(toks, k) + 1
            continue
        if t == "default" and k + 1 < end and toks[k + 1][0] == ":":
            return True
        k += 1
    return False


# what may follow a call in an expression: not a loop macro's body
_CONTINUES = {";", ",", "=", ".", "->", "[", "?", ":", "==", "!=", "<=", ">=", "&&", "||",
              ")", "]", "}", "{", "+", "/", "%", "<", ">", "|", "^", "<<", ">>"}


def _loop_macro_body(toks, i, end):
    """The index of the body of a loop macro without braces at toks[i]
    (`for_each_possible_cpu(i) grab();`: a call followed by anything that
    does not continue an expression: a name, `(void)`, `*q = `, `++n`),
    else None.  Reading a call as a loop is the safe side."""
    t = toks[i][0]
    if not re.match(r"^[A-Za-z_]\w*$", t) or t in _KEYWORDS or i + 1 >= end or \
            toks[i + 1][0] != "(":
        return None
    m = _match(toks, i + 1) + 1
    if m >= end or toks[m][0] in _CONTINUES or \
            (m + 1 < end and toks[m + 1][0] == "=" and toks[m][0] in ("-", "*", "&")):
        return None
    return m


def _skip(toks, i, end):
    """The index after the statement at toks[i], not read (a branch the
    configuration removes)."""
    t = toks[i][0]
    m = _loop_macro_body(toks, i, end)
    if m is not None:
        return _skip(toks, m, end)
    if t == "{":
        return _match(toks, i) + 1
    if t == ";":
        return i + 1
    if t == "if" and i + 1 < end and toks[i + 1][0] == "(":
        j = _skip(toks, _match(toks, i + 1) + 1, end)
        return _skip(toks, j + 1, end) if j < end and toks[j][0] == "else" else j
    if t in ("while", "for", "switch") and i + 1 < end and toks[i + 1][0] == "(":
        return _skip(toks, _match(toks, i + 1) + 1, end)
    if t == "do":
        j = _skip(toks, i + 1, end)
        if j + 1 < end and toks[j][0] == "while" and toks[j + 1][0] == "(":
            j = _match(toks, j + 1) + 1
        while j < end and toks[j][0] == ";":
            j += 1
        return j
    if t in ("case", "default") or (re.match(r"^[A-Za-z_]\w*$", t) and i + 1 < end and
                                    toks[i + 1][0] == ":" and t not in _KEYWORDS):
        j = i
        while j < end and toks[j][0] != ":":
            j += 1
        return j + 1
    j = i
    while j < end and toks[j][0] != ";":
        if toks[j][0] == "{" and j > i and toks[j - 1][0] == ")" and t != "return":
            return _match(toks, j) + 1
        if toks[j][0] in "({[":
            j = _match(toks, j)
        j += 1
    return j + 1


def _forever(toks, header=False):
    """Whether a loop condition TOKS never ends the loop: `1`, `true`, or
    (HEADER: a for header) an empty middle clause."""
    if header:
        parts = _split_top(toks, ";")
        return len(parts) == 3 and (not parts[1] or _forever(parts[1]))
    return [t for t, _l in toks] in (["1"], ["true"])


def _split_top(toks, op):
    """TOKS split at OP outside brackets."""
    parts, cur, depth = [], [], 0
    for t in toks:
        if t[0] in "([{":
            depth += 1
        elif t[0] in ")]}":
            depth -= 1
        if t[0] == op and depth == 0:
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
    return parts + [cur]


def _call_form(toks):
    """(name, negated) when TOKS is exactly a call `f(...)` or `!f(...)`,
    in parentheses or likely()/unlikely() or not; else None."""
    neg = False
    toks = list(toks)
    while toks:
        if toks[0][0] == "!":
            neg, toks = not neg, toks[1:]
            continue
        if toks[0][0] in ("likely", "unlikely") and len(toks) > 1 and toks[1][0] == "(":
            toks = toks[1:]
        if toks[0][0] == "(":
            try:
                if _match(toks, 0) == len(toks) - 1:
                    toks = toks[1:-1]
                    continue
            except Unparsable:
                return None
            return None
        break
    if len(toks) < 3 or not re.match(r"^[A-Za-z_]\w*$", toks[0][0]) or \
            toks[0][0] in _KEYWORDS or toks[1][0] != "(":
        return None
    try:
        if _match(toks, 1) != len(toks) - 1:
            return None
    except Unparsable:
        return None
    return toks[0][0], neg


class Target:
    """How a class appears in the source: a regular expression over the
    text of a lock argument, and the words whose files are read."""

    def __init__(self, name, expr, words, note="", struct=None, member=None):
        self.name, self.expr, self.words, self.note = name, re.compile(expr), list(words), note
        self.ptr_funcs = set()     # functions that return the lock's address
        # a member class: the struct that holds it, when known, and the
        # member; a site whose base is declared as another struct is none
        # of the class's (see base_struct())
        self.struct, self.member = struct, member

    def matches(self, argtext, aliases):
        if self.expr.search(argtext):
            return True
        bare = argtext.lstrip("&*(").rstrip(")")
        if bare in aliases:
            return True
        m = re.match(r"^&?\(?(\w+)\(", argtext)
        return bool(m and m.group(1) in self.ptr_funcs)

    def other_struct(self, argtext, func):
        """The struct ARGTEXT's base is declared as in FUNC when that is not
        the class's struct ("send_context" for hfi1's &sc->alloc_lock
        against task_struct::alloc_lock); None when it is the class's, or
        cannot be told (the safe side: a site of the class)."""
        if not self.struct or not self.member:
            return None
        m = re.match(rf"^&?\(?(.+?)(->|\.){re.escape(self.member)}\)?$", argtext.strip())
        if not m:
            return None
        t = base_struct(m.group(1), func)
        return t if t and t != self.struct else None


# the base of a member access whose struct is known by definition
KNOWN_BASES = {"current": "task_struct"}
_DECL_SKIP = {"*", "const", "volatile", "__rcu", "__iomem", "__user", "__percpu",
              "__attribute__", "__maybe_unused", "__free", "restrict", "__restrict"}


def base_struct(base, func):
    """The struct type of the expression BASE (the text before ->member) in
    FUNC, or None when the pass cannot tell: `current`, a cast to struct T,
    container_of()/list_entry()-style calls naming struct T, and a plain
    identifier declared as struct T (or a pointer to one) by FUNC's
    parameters or locals, consistently (two declarations of one name as
    different structs: None)."""
    b = base.strip()
    while b.startswith("(") and b.endswith(")") and _balanced(b[1:-1]):
        b = b[1:-1].strip()
    if b in KNOWN_BASES:
        return KNOWN_BASES[b]
    m = re.match(r"^\(\s*(const\s+)?struct\s+(\w+)\s*\*+\s*\)", b)
    if m:
        return m.group(2)
    m = re.match(r"^(container_of\w*|\w*list_\w*entry\w*|\w*hlist_\w*entry\w*)\((.*)\)$", b)
    if m and _balanced(m.group(2)):
        t = re.findall(r",\s*(const\s+)?struct\s+(\w+)\s*,", m.group(2))
        return t[-1][1] if len(t) == 1 else None
    if not re.match(r"^[A-Za-z_]\w*$", b) or func is None or func.macro:
        return None
    toks = [t for t, _l in func.head] + [t for t, _l in func.toks]
    found = set()
    for i, t in enumerate(toks):
        if t != b or i < 2:
            continue
        if i + 1 < len(toks) and toks[i + 1] not in (",", ";", ")", "=", "["):
            continue
        j = i - 1
        while j >= 1 and toks[j] in _DECL_SKIP:
            j -= 1
        if j >= 1 and toks[j - 1] == "struct" and re.match(r"^\w+$", toks[j]):
            found.add(toks[j])
    return found.pop() if len(found) == 1 else None


# calls whose bare argument may be assigned: a macro's (upper case, an
# iterator, swap(), get_user()), not a function's copy of the value
_MAY_ASSIGN = re.compile(r"^([A-Z_][A-Z0-9_]*|\w*for_each\w*|do_each\w*|swap|\w*get_user\w*)$")


def _call_site(toks, i):
    """(the name called with toks[i] among its arguments, or None; the
    index of the argument toks[i] is in)."""
    depth, idx = 0, 0
    for j in range(i - 1, -1, -1):
        if toks[j] in (")", "]", "}"):
            # braces too: `step(({ 0; }), p)`, `step((struct s){ 0 }, p)`
            depth += 1
        elif toks[j] in ("(", "[", "{"):
            if depth == 0:
                return (toks[j - 1] if toks[j] == "(" and j else None), idx
            depth -= 1
        elif toks[j] == "," and depth == 0:
            idx += 1
        elif toks[j] == ";" and depth == 0:
            return None, idx
    return None, idx


def _segments(toks, i, end):
    """The (start, end) of each part of TOKS[I:END] between its commas
    outside brackets.  A comma between a `?` and its `:` is the middle
    operand's (`c ? a, b : 0` is `c ? (a, b) : 0`)."""
    out, depth, a, q = [], 0, i, 0
    for j in range(i, end):
        t = toks[j][0]
        if t in ("(", "[", "{"):
            depth += 1
        elif t in (")", "]", "}"):
            depth -= 1
        elif t == "?" and depth == 0:
            q += 1
        elif t == ":" and depth == 0 and q:
            q -= 1
        elif t == "," and depth == 0 and not q:
            out.append((a, j))
            a = j + 1
    out.append((a, end))
    return out


def _expand(d, args, line):
    """The tokens of the macro D's body at LINE, its parameters replaced by
    the token lists ARGS (None: an object-like macro), `#param` by a string
    and `a ## b` pasted (`, ## __VA_ARGS__` drops the comma when empty and
    keeps it apart otherwise)."""
    sub = {}
    if args is not None:
        params = [p for p in d.params if p]
        for n, p in enumerate(params):
            if p.endswith("..."):
                rest = []
                for a in args[n:]:
                    rest += ([(",", line)] if rest else []) + a
                sub[p[:-3].strip() or "__VA_ARGS__"] = [t for t, _l in rest]
                break
            sub[p] = [t for t, _l in args[n]] if n < len(args) else []
    body = [t for t, _l in d.toks]
    out, k = [], 0
    while k < len(body):
        t = body[k]
        if t == "#" and body[k + 1:k + 2] == ["#"]:
            k += 2
            nxt = sub.get(body[k], [body[k]]) if k < len(body) else []
            if not nxt and out and out[-1] == ",":
                out.pop()
            elif nxt and out and out[-1] != "," and not (
                    k - 3 >= 0 and body[k - 3] in sub and not sub[body[k - 3]]):
                out[-1] += nxt[0]
                out += nxt[1:]
            else:
                out += nxt
            k += 1
            continue
        if t == "#" and k + 1 < len(body) and body[k + 1] in sub:
            out += ['"', '"']
            k += 2
            continue
        out += sub.get(t, [t])
        k += 1
    return [(t, line) for t in out]


class Scan:
    """One pass over one function: sites of the target, calls of tracked
    functions with the state there, and the function's net effect."""

    def __init__(self, func, target, wrappers, tracked, noreturn=None, effect=None,
                 acq_groups=None, config=None, defs=None, objdefs=None):
        self.f, self.target, self.wrappers, self.tracked = func, target, wrappers, tracked
        # the definitions read of a name (Analysis.by_name), and its
        # object-like macros read (Analysis.objlike)
        self.defs = defs or (lambda name: [])
        self.objdefs = objdefs or (lambda name: [])
        self.config = PROJECT_CONFIG if config is None else config
        # what a call NAME from this function does: (acquired, released,
        # takes the target, released when it returns non-zero, released
        # when it returns zero), bound to the definitions this function can
        # call (Analysis.effect_of()); by name alone without an Analysis
        self.effect = effect or (lambda name: _as_effect(self.wrappers.get(name)))
        self.acq_groups = acq_groups or (lambda name, kind: set())
        # kinds released on the non-zero / zero returns, held on some
        # non-zero / zero return
        self.cond_rel = ([], [], [], [])
        # names of functions that never return: global, or (path, name)
        # for a static one inferred from its body
        self.noreturn = noreturn if noreturn is not None else NORETURN
        self.never_returns = False    # every path of the body ends in one
        self.excluded = []            # sites of the member in another struct
        self.sites, self.calls, self.returns_lock = [], [], False
        self.aliases = set()
        self.labels = {}
        self.end_state = None
        self.returns = []             # the state at each successful return
        self.all_returns = []         # (value, state) of every return
        self.any_return = None        # merged over every return
        self.conds = []               # conditions of the enclosing ifs
        self._stable_memo = {}
        self.label_names = set()
        self.unnamed = set()
        # > 0: reading what an #if group spans whose sides are not whole
        # statements, where no release counts (_stmts())
        self.quiet = 0
        # #if groups (index of the `#if` in f.pp) _pp_group() read, the
        # statements read quiet and the spans not built ([a, b)): a group
        # in none of them cannot be placed (_check_pp())
        self.pp_taken, self.pp_quiet, self.pp_skipped = set(), [], []
        # the states of the first reading's calls (_hidden_jump())
        self.first_calls = []
        # the macros of the files read whose body, or a macro it uses,
        # has a goto: {(name, object-like): [Func]} (_jump_defs()); the
        # names being expanded; the names the bodies expanded hold
        self._jumps, self._obj_jumps = {}, {}
        self._expanding, self._expanded_from = [], set()
        self.expanded = set()
        # the macros of the files read by (name, object-like); what is
        # left of EXPAND_TOKENS
        self._mdefs, self._budget = {}, EXPAND_TOKENS
        # the enclosing loops and switches: what their breaks and
        # continues carry
        self.loops = []

    def run(self):
        self.unparsable = self.f.unparsable
        if self.unparsable is None:
            try:
                return self._run()
            except (Unparsable, IndexError) as e:
                self.unparsable = f"{self.f.name} ({self.f.path}:{self.f.line}): {e}"
        # unreadable: no net effect is known, and a mention of the lock is
        # an unknown site
        self.calls, self.returns, self.returns_lock = [], [], False
        self.end_state = State()
        self.sites = []
        names = set(self.target.words) | self.target.ptr_funcs | \
            {n for n, w in self.wrappers.items() if w[2]}
        hit = next(((t, line) for t, line in self.f.toks if t in names), None)
        if hit:
            self.sites.append({"line": hit[1], "call": f"{hit[0]} (unparsed)",
                               "state": State(), "own": [], "via": None, "passed": None,
                               "unparsable": self.unparsable})
        return self

    def _run(self):
        toks = self.f.toks
        st = State()
        self.quiet = 0
        # the function's labels: a name of one outside a goto (a macro's
        # label argument, an asm goto's list, &&label) is a jump to it
        self.label_names = {
            t for k, (t, _l) in enumerate(toks)
            if 0 < k < len(toks) - 1 and toks[k + 1][0] == ":" and
            toks[k - 1][0] in (";", "{", "}", ":") and t not in _KEYWORDS and
            t != "default" and re.match(r"^[A-Za-z_]\w*$", t)}
        # labels no token of the function names but their own (a macro's
        # goto reaches them)
        named = collections.Counter(t for t, _l in toks if t in self.label_names)
        self.unnamed = {t for t in self.label_names if named[t] == 1}
        if self.f.init is not None:
            # initializers and file scope take no lock; _refs() reads them
            self.end_state = st
            return self
        if self.f.macro:
            self._expr(toks, 0, len(toks), st)
            self.end_state = st
            # no return values: what it takes may be held whichever way an
            # `if (my_trylock(l))` goes
            held = sorted(k for k, n in st.held.items() if n > 0 and k != "self"
                          and not k.startswith("id:"))
            self.cond_rel = ([], [], held, list(held))
            return self
        # twice: the second pass knows what every goto, backward ones
        # included, carries to its label
        self.first_calls = []
        self._block(toks, 0, st)
        self.first_calls = [cst for _n, _l, cst in self.calls]
        self.sites, self.calls, self.returns, self.any_return = [], [], [], None
        self.aliases, self.returns_lock, self.excluded = set(), False, []
        self.all_returns = []
        self.pp_taken, self.pp_quiet, self.pp_skipped = set(), [], []
        _i, st, term = self._block(toks, 0, State())
        self._check_pp()
        self.never_returns = bool(term and self.any_return is None)
        self.cond_rel = self._cond_releases(None if term else st)
        rets = list(self.returns)
        if not term:
            rets.append(st)
        anyr = self.any_return.copy() if self.any_return else None
        if not term:
            anyr = anyr.merge(st) if anyr else st.copy()
        self.end_state = self._net(rets, anyr)
        return self

    def _check_pp(self):
        """Raise Unparsable when an #if group of the function was neither
        read by _pp_group() nor lies, every directive of it, inside one
        statement read quiet or in a branch the configuration removes:
        an #if between `if (...)` and its body, or `} else {` under
        #ifdef, whose sides would be read one after the other."""
        pp, stack = self.f.pp, []
        for h, (pos, kind) in enumerate(pp):
            if kind == "if":
                stack.append((h, pos))
            elif kind == "endif" and stack:
                g, first = stack.pop()
                if g in self.pp_taken:
                    continue
                if any(a < first and pos <= b for a, b in self.pp_quiet) or \
                        any(a <= first and pos <= b for a, b in self.pp_skipped):
                    continue
                line = self.f.toks[min(first, len(self.f.toks) - 1)][1]
                raise Unparsable(f"an #if group the pass cannot place (line {line})")

    def _cond_releases(self, end):
        """(kinds released on every return that may be non-zero, kinds
        released on every return that may be zero, kinds held on some
        return that may be non-zero, kinds held on some return that may be
        zero): what a caller's `if (f())` has dropped and may hold in its
        then and else branch.  A return whose value the pass cannot tell
        (`return ret;`, the end of the body) counts on both sides."""
        sides = {True: None, False: None}
        for val, s in self.all_returns + ([("", end)] if end is not None else []):
            for side in _ret_sides(val):
                sides[side] = s.copy() if sides[side] is None else sides[side].merge(s)
        ss = (sides[True], sides[False])
        return tuple(sorted(k for k, n in s.held.items() if n < 0 and k != "self"
                            and not k.startswith("id:"))
                     if s is not None else [] for s in ss) + \
            tuple(sorted(k for k, n in s.held.items() if n > 0 and k != "self"
                         and not k.startswith("id:"))
                  if s is not None else [] for s in ss)

    @staticmethod
    def _net(rets, anyr):
        """The net effect: kinds held on every successful return, kinds
        released on every return."""
        net = State()
        if rets:
            acc = rets[0].copy()
            for r in rets[1:]:
                acc.merge(r)
            net.held = {k: n for k, n in acc.must.items() if n > 0}
            net.why = {k: acc.why.get(k) for k in net.held}
        if anyr:
            net.held.update({k: n for k, n in anyr.held.items() if n < 0})
        net.must = dict(net.held)
        return net

    # statements
    def _block(self, toks, i, st):
        end = _match(toks, i)
        guards = []
        st, term = self._stmts(toks, i + 1, end, st, guards, False)
        for kinds in guards:
            st.release(kinds)
        return end + 1, st, term

    def _stmts(self, toks, j, end, st, guards, term, dmin=0):
        """The statements TOKS[J:END] of a block (GUARDS: its guard()s,
        released at its end) read from ST: (state after, whether the last
        one ends its path).  An #if group whose sides are whole statements
        is read like an if/else whose condition is not known (_pp_group());
        a statement that holds a conditional directive elsewhere (in an
        expression, between an if and its body) is read with both sides,
        but no release in it counts (self.quiet)."""
        pp = self.f.pp if toks is self.f.toks else []
        while j < end:
            if pp:
                while dmin < len(pp) and pp[dmin][0] < j:
                    dmin += 1
                g = dmin
                while g < len(pp) and pp[g][0] == j and pp[g][1] != "if":
                    g += 1
                if g < len(pp) and pp[g][0] == j:
                    j, st, term, dmin = self._pp_group(toks, j, end, st, guards, term, g)
                    continue
            if toks[j][0] in ("guard",) and j + 1 < end and toks[j + 1][0] == "(":
                args, k = split_args(toks, j + 1)
                gname = text_of(args[0]) if args else ""
                kinds = guard_kinds(gname)
                if k + 1 < end and toks[k + 1][0] == "(":
                    _a, k2 = split_args(toks, k + 1)
                    # the site sees the state before the guard takes it
                    if self._check_target_args(_a, "guard", toks[j][1], st, gname):
                        kinds = ["self" if x in ("spin", "raw") else x for x in kinds]
                    k = k2
                st.acquire(kinds, f"guard({gname}) line {toks[j][1]}")
                guards.append(kinds)
                j = k + 1
                while j < end and toks[j][0] == ";":
                    j += 1
                continue
            lab = toks[j][0]
            if term and j + 1 < end and toks[j + 1][0] == ":" and lab in self.labels \
                    and re.match(r"^[A-Za-z_]\w*$", lab) and lab not in _KEYWORDS:
                # after a return, goto, break or continue only the gotos reach here
                st = self.labels[lab].copy()
                taken = True
            else:
                taken = False
            if j + 1 < end and toks[j + 1][0] == ":" and lab in self.unnamed:
                # no goto or name of the function reaches it: a macro's
                # goto does (CHECK(x) of `#define CHECK(c) if (c) goto out`),
                # from a call it cannot tell; an object-like macro's
                # (`#define BAIL goto out`) too, even when a macro call the
                # pass reads jumps there as well
                hid = self._hidden_jump()
                if hid is not None:
                    st = hid if term and not taken else st.copy().merge(hid)
            if term and lab in ("case", "default"):
                # after a break or return only the switch reaches a case
                sw = self._switch_entry()
                if sw is not None:
                    st = sw.copy()
            inner = bool(pp) and self._pp_inside(toks, j, end, pp, dmin)
            self.quiet += inner
            j0 = j
            try:
                j, st, term = self._stmt(toks, j, end, st)
            finally:
                self.quiet -= inner
            if inner:
                self.pp_quiet.append((j0, j))
                # a return or goto on one side ends the path on that
                # build only: `if (x) return 1;\n#ifdef A\n else return 0;`
                term = False
        return st, term

    def _snapshot(self):
        """What reading a part of the body records, to undo it."""
        return (len(self.sites), len(self.calls), len(self.returns),
                len(self.all_returns), len(self.excluded),
                self.any_return.copy() if self.any_return else None,
                {k: v.copy() for k, v in self.labels.items()}, set(self.aliases),
                self.returns_lock,
                [{k: (v.copy() if isinstance(v, State) else v) for k, v in fr.items()}
                 for fr in self.loops])

    def _restore(self, saved):
        (n_sites, n_calls, n_rets, n_all, n_excl, self.any_return, self.labels,
         self.aliases, self.returns_lock, frames) = saved
        del self.sites[n_sites:], self.calls[n_calls:], self.returns[n_rets:]
        del self.all_returns[n_all:], self.excluded[n_excl:]
        for fr, old in zip(self.loops, frames):
            fr.update(old)

    def _hidden_jump(self):
        """The merge of the states at every call of the function (the
        first reading's and this one's so far), or None."""
        res = None
        for cst in self.first_calls + [c for _n, _l, c in self.calls]:
            res = cst.copy() if res is None else res.merge(cst)
        return res

    def _pp_within(self, toks, i):
        """Whether a conditional directive is inside the block at toks[i]
        (not known for a copy of a part of the body: then yes)."""
        if toks is not self.f.toks:
            return True
        end = _match(toks, i)
        return any(i < p <= end for p, _d in self.f.pp)

    @staticmethod
    def _pp_inside(toks, j, end, pp, dmin):
        """Whether a conditional directive of PP is inside the statement at
        toks[j] other than in a block of it at parenthesis depth 0 (a body
        its own _stmts() reads)."""
        try:
            k = _skip(toks, j, end)
        except (Unparsable, IndexError):
            k = end
        inside = [p for p, _d in pp[dmin:] if j < p < k]
        if not inside:
            return False
        covered, depth, x = [], 0, j
        while x < k:
            t = toks[x][0]
            if t in ("(", "["):
                depth += 1
            elif t in (")", "]"):
                depth -= 1
            elif t == "{" and depth == 0:
                m = _match(toks, x)
                covered.append((x, m))
                x = m
            x += 1
        return any(not any(a < p <= b for a, b in covered) for p in inside)

    def _pp_group(self, toks, j, end, st, guards, term, g):
        """The #if group whose `#if` (self.f.pp[G]) is before toks[j]:
        (index after it, state, ends its path, index in pp after it).
        Sides that are whole statements are alternatives: each read from
        the entry state (no #else: an empty side), merged after.  Else the
        statements it spans are read with both sides and no release in
        them counts (the safe side)."""
        pp = self.f.pp
        self.pp_taken.add(g)
        sides, depth, e = [(j, g + 1)], 0, None
        for h in range(g + 1, len(pp)):
            pos, kind = pp[h]
            if kind == "if":
                depth += 1
            elif kind == "endif":
                if depth == 0:
                    e = h
                    break
                depth -= 1
            elif depth == 0:
                sides.append((pos, h + 1))
        if e is None or pp[e][0] > end:
            # its #endif is after the block (`} else {` on a side): the
            # block's reader would read the rest as code every build has
            raise Unparsable(f"an #if group the pass cannot place (line {toks[j][1]})")
        stop = pp[e][0]
        bounds = [a for a, _d in sides[1:]] + [stop]
        aligned = e is not None and stop <= end
        for (a, _d), b in zip(sides, bounds):
            k = a
            try:
                while aligned and k < b:
                    k = _skip(toks, k, end)
            except (Unparsable, IndexError):
                aligned = False
            aligned = aligned and k == b
        if aligned:
            outs = []
            for (a, d), b in zip(sides, bounds):
                outs.append(self._stmts(toks, a, b, st.copy(), guards, term, d))
            if not any(pp[h - 1][1] == "else" for _a, h in sides[1:]):
                outs.append((st.copy(), term))
            live = [s for s, tm in outs if not tm] or [s for s, _tm in outs]
            res = live[0]
            for s in live[1:]:
                res = res.merge(s)
            return stop, res, not any(not tm for _s, tm in outs), e + 1
        k = j
        try:
            while k < stop:
                k = _skip(toks, k, end)
        except (Unparsable, IndexError):
            k = end
        k = min(k, end)
        if e is not None and stop <= k and e - g == len(sides) and \
                not any(j <= p < k and h > e for h, (p, _d) in enumerate(pp)) and \
                not any(t in ("guard", "scoped_guard") for t, _l in toks[j:k]):
            # each side and what follows the #endif up to the end of the
            # statement it cuts (`} else\n#endif\n\tlocal_irq_enable();`),
            # read as a block of its own; only a group with no other
            # directive between its #if and #endif (a copy has no pp: a
            # nested group's sides would be read one after the other)
            saved = self._snapshot()
            line = toks[j][1]
            alts = [toks[a:b] for (a, _d), b in zip(sides, bounds)]
            if not any(pp[h - 1][1] == "else" for _a, h in sides[1:]):
                alts.append([])
            try:
                outs = [self._block([("{", line)] + body + toks[stop:k] + [("}", line)], 0,
                                    st.copy())[1:] for body in alts]
            except (Unparsable, IndexError):
                # read the safe way below: nothing a half-read copy recorded
                # (what a macro's expansion there gave the labels included)
                self._restore(saved)
                self._expanded_from = set()
            else:
                live = [s for s, tm in outs if not tm] or [s for s, _tm in outs]
                res = live[0]
                for s in live[1:]:
                    res = res.merge(s)
                d = e + 1
                while d < len(pp) and pp[d][0] < k:
                    d += 1
                return k, res, not any(not tm for _s, tm in outs), d
        self.quiet += 1
        try:
            st, _term = self._stmts(toks, j, k, st, guards, term, g + 1)
        finally:
            self.quiet -= 1
        d = g + 1
        while d < len(pp) and pp[d][0] < k:
            d += 1
        return k, st, False, d

    def _stmt(self, toks, i, end, st):
        t = toks[i][0]
        if t == "{":
            return self._block(toks, i, st)
        if t == ";":
            return i + 1, st, False
        if t == "if" and i + 1 < end and toks[i + 1][0] == "(":
            c = _match(toks, i + 1)
            known = _config_value(toks[i + 2:c], self.config)
            if known is not None and _has_label(toks, c + 1, _skip(toks, c + 1, end), end):
                # a goto (or case) may enter the branch the configuration
                # removes: read both branches
                known = None
            if known is not None:
                # `if (!IS_ENABLED(CONFIG_PREEMPT_RT))`: one value on every
                # path; the other branch is not built
                self._expr(toks, i + 2, c, st)
                if known:
                    j, st, term = self._stmt(toks, c + 1, end, st)
                    if j < end and toks[j][0] == "else":
                        k = _skip(toks, j + 1, end)
                        if toks is self.f.toks:
                            self.pp_skipped.append((j + 1, k))
                        j = k
                    return j, st, term
                j = _skip(toks, c + 1, end)
                if toks is self.f.toks:
                    # a splice's copy has indices of its own
                    self.pp_skipped.append((c + 1, j))
                if j < end and toks[j][0] == "else":
                    return self._stmt(toks, j + 1, end, st)
                return j, st, False
            pre = st.copy()
            self._expr(toks, i + 2, c, st)
            cond = text_of(toks[i + 2:c])
            s_in, s_out = st, st
            form = _trylock_form(cond)
            call = _call_form(toks[i + 2:c])
            if form is not None and (call is None or not api_effect(call[0]) or
                                     self.effect(call[0]) is not None):
                # a function of the tree named like a trylock: what it
                # holds on which return is its effect's (_cond_effect())
                form = None
            if form is not None:
                # a conditional acquisition holds in one branch only; any
                # other form of condition: held on both branches
                s_in, s_out = (pre, st) if form else (st, pre)
            # a callee that drops a lock on its non-zero (or zero) returns
            # only: `if (likely(do_signal_stop(signr))) goto relock;`
            rel_then, rel_else = self._cond_effect(toks[i + 2:c], st)
            s_in, s_out = s_in.copy(), s_out.copy()
            if self.quiet:
                rel_then, rel_else = [], []
            s_in.release(rel_then)
            s_out.release(rel_else)
            lockless = not self.quiet and self._lockless(toks[i + 2:c])
            if lockless:
                # need_seqretry() is true on a lockless pass only: the
                # seqlock's lock is not held in its then branch
                s_in.unheld(lockless)
            self.conds.append(cond)
            try:
                j, s_then, t_then = self._stmt(toks, c + 1, end, s_in.copy())
            finally:
                # an exception (a splice copy that does not parse) must not
                # leave this frame for a later reading
                self.conds.pop()
            if j < end and toks[j][0] == "else":
                j, s_else, t_else = self._stmt(toks, j + 1, end, s_out.copy())
            else:
                s_else, t_else = s_out, False
            outs = [s for s, tm in ((s_then, t_then), (s_else, t_else)) if not tm]
            if not outs:
                return j, s_then.merge(s_else), True
            res = outs[0]
            for s in outs[1:]:
                res = res.merge(s)
            return j, res, False
        if t in ("while", "for", "switch") and i + 1 < end and toks[i + 1][0] == "(":
            c = _match(toks, i + 1)
            if t == "switch":
                self._expr(toks, i + 2, c, st)
                j, s_body = self._loop(toks, c + 1, end, st, switch=True)
                if s_body is None:
                    # a default and every case returns
                    return j, st, True
                return j, s_body, False
            cond, incr = toks[i + 2:c], None
            if t == "for":
                parts = _split_top(cond, ";")
                if len(parts) == 3:
                    init, cond, incr = parts
                    self._expr(init, 0, len(init), st)
            forever = not cond or _forever(cond)
            # the condition runs before every iteration, the increment
            # after each: both are read again with the body
            j, out = self._loop(toks, c + 1, end, st, forever=forever,
                                cond=None if forever else cond, incr=incr or None)
            return (j, st, True) if out is None else (j, out, False)
        if t == "scoped_guard" and i + 1 < end and toks[i + 1][0] == "(":
            args, c = split_args(toks, i + 1)
            kinds = guard_kinds(text_of(args[0]) if args else "")
            if self._check_target_args(args[1:], "scoped_guard", toks[i][1], st,
                                       text_of(args[0]) if args else ""):
                kinds = ["self" if x in ("spin", "raw") else x for x in kinds]
            inner = st.copy()
            inner.acquire(kinds, f"scoped_guard({text_of(args[0])}) line {toks[i][1]}")
            j, s_body, _t = self._stmt(toks, c + 1, end, inner)
            s_body.release(kinds)
            return j, st.merge(s_body), False
        if t == "do":
            # the body runs at least once: what follows the loop comes from
            # the condition's false side or a break
            if i + 1 >= end:
                raise Unparsable(f"do at the end of {self.f.name}()")
            k = _skip(toks, i + 1, end)
            ctoks = toks[k + 2:_match(toks, k + 1)] if k + 1 < end \
                and toks[k][0] == "while" and toks[k + 1][0] == "(" else None
            forever = ctoks is not None and _forever(ctoks)
            once = ctoks is not None and [t for t, _l in ctoks] in (["0"], ["false"])
            j, s_after = self._loop(toks, i + 1, end, st, forever=forever, once=once,
                                    cond=None if forever else ctoks, post=True)
            if j + 1 < end and toks[j][0] == "while" and toks[j + 1][0] == "(":
                j = _match(toks, j + 1) + 1
            while j < end and toks[j][0] == ";":
                j += 1
            if s_after is None:
                return j, st, True
            return j, s_after, False
        if t in ("case", "default"):
            sw = self._switch_entry()
            if sw is not None:
                st = st.merge(sw)
            j = i
            while j < end and toks[j][0] != ":":
                j += 1
            return j + 1, st, False
        if re.match(r"^[A-Za-z_]\w*$", t) and i + 1 < end and toks[i + 1][0] == ":" \
                and t not in _KEYWORDS:
            # a label: what the gotos to it held, too
            if t in self.labels:
                st = st.merge(self.labels[t])
            return i + 2, st, False
        m = _loop_macro_body(toks, i, end)
        if m is not None:
            # a loop macro whose body is one statement:
            # for_each_possible_cpu(i)\n\t\tgrab();
            self._expr(toks, i, m, st)
            k, out = self._loop(toks, m, end, st)
            return k, out, False
        # expression statement (return, goto, break: terminating)
        j = i
        while j < end and toks[j][0] != ";":
            if toks[j][0] == "{" and j > i and toks[j - 1][0] == ")" and t != "return":
                # a loop macro: for_each_process(p) { ... }
                self._expr(toks, i, j, st)
                k, out = self._loop(toks, j, end, st)
                return k, out, False
            if toks[j][0] in "({[":
                j = _match(toks, j)
            j += 1
        self._expr(toks, i, j, st)
        if self._is_noreturn(t) and i + 1 < j and toks[i + 1][0] == "(" and \
                _match(toks, i + 1) == j - 1:
            # panic(...); BUG(); do_exit(...); : the path ends here
            return j + 1, st, True
        if t in ("break", "continue") and self.loops:
            # a break leaves the innermost loop or switch, a continue goes
            # round the innermost loop
            fr = self.loops[-1] if t == "break" else \
                next((x for x in reversed(self.loops) if not x["switch"]), None)
            if fr is not None:
                fr[t] = fr[t].merge(st) if fr[t] is not None else st.copy()
        if t == "goto" and i + 1 < j:
            # a computed `goto *p` may reach any label of the function
            labs = sorted(self.label_names) if toks[i + 1][0] == "*" else [toks[i + 1][0]]
            for lab in labs:
                self.labels[lab] = self.labels.get(lab, State()).merge(st.copy())
        if t == "return":
            val = text_of(toks[i + 1:j])
            if val and self._binds(val):
                self.returns_lock = True
            self.any_return = self.any_return.merge(st) if self.any_return else st.copy()
            self.all_returns.append((val, st.copy()))
            if not self._failure(val):
                self.returns.append(st.copy())
        return j + 1, st, t in ("return", "goto", "break", "continue")

    def _cond_effect(self, ctoks, st):
        """(released in the then branch, released in the else branch) of
        `if (CTOKS)` beyond what the calls in it release on every return:
        for a condition that is a call `f(...)`, `!f(...)` (likely() and
        unlikely() looked through) or a conjunction `a && f(...)`, what f
        drops on the returns that branch implies.  The else branch of a
        conjunction of several terms may not have called f, and a
        condition with || implies nothing: no release there (the safe
        side)."""
        parts = _split_top(ctoks, "&&")
        if any(_split_top(p, "||")[1:] for p in parts):
            return [], []
        rel_then, rel_else = [], []
        for p in parts:
            call = _call_form(p)
            if call is None:
                continue
            name, neg = call
            eff = self.effect(name)
            if eff is None:
                continue
            always = set(eff[1])
            maybe = _maybe_held(eff)
            # released there, or taken on every return (a wrapper's
            # acquisition) but held on none of that side's: io-wq's
            # io_acct_run_queue() returns true with acct->lock held
            on_true = [k for k in eff[3] if k not in always] + \
                [k for k in eff[0] if k not in eff[5]]
            on_false = [k for k in eff[4] if k not in always] + \
                [k for k in eff[0] if k not in eff[6]]
            on_true += [k for k in maybe if k not in eff[5]]
            on_false += [k for k in maybe if k not in eff[6]]
            # a release some architecture's definition does not make
            # (_merge()): only what calls of the releasing ones took
            on_true += [k for k, a in sorted(eff[8].items())
                        if k not in eff[7] and self._took_by(st, k, a)]
            on_false += [k for k, a in sorted(eff[9].items())
                         if k not in eff[7] and self._took_by(st, k, a)]
            rel_then += on_false if neg else on_true
            if len(parts) == 1:
                rel_else += on_true if neg else on_false
        return rel_then, rel_else

    def _lockless(self, ctoks):
        """The lock of `if (need_seqretry(&L, seq))` when L is tracked by
        itself (State.lock()), else None."""
        call = _call_form(ctoks)
        if call != ("need_seqretry", False):
            return None
        k = 0
        while ctoks[k][0] != "need_seqretry":
            k += 1
        args, _e = split_args(ctoks, k + 1)
        arg = text_of(args[0]).replace(" ", "") if args else ""
        return arg if arg and self._stable(arg) else None

    def _test(self, cond, st):
        """The loop condition COND read from ST: (the state the body runs
        in, the state the loop ends in).  `while (f(...))`: the body runs
        on f's non-zero returns, the loop ends on its zero ones."""
        self._expr(cond, 0, len(cond), st)
        rel_in, rel_out = self._cond_effect(cond, st) if not self.quiet else ([], [])
        s_in, s_out = st.copy(), st.copy()
        s_in.release(rel_in)
        s_out.release(rel_out)
        return s_in, s_out

    def _loop(self, toks, i, end, st, forever=False, once=False, cond=None, incr=None,
              post=False, switch=False):
        """A loop or switch body at toks[i]: (end, state after it).  The
        body (with COND before it, or after it when POST, and INCR after
        it) is read from ST, then again from ST merged with what an
        iteration leaves (its end, its continues), until that entry state
        does not change: the sites and calls are the last reading's.  A
        count that still grows is widened to many; after LOOP_READINGS
        readings the sites are unknown.  The state after the loop merges
        the condition's false side and the breaks.  FOREVER: only a break
        leaves it (None when none does); ONCE: the body runs once (a
        `do ... while (0)`); SWITCH: a continue is the enclosing loop's."""
        x = st.copy()
        for reading in range(LOOP_READINGS):
            n_sites, n_calls = len(self.sites), len(self.calls)
            frame = {"break": None, "continue": None, "switch": switch}
            exits = []
            s = x.copy()
            if switch:
                # each case starts from here; without a default, the
                # switch may run no case at all
                frame["entry"] = s.copy()
                if not _has_default(toks, i) or self._pp_within(toks, i):
                    # (a default under an #if may not be built)
                    exits.append(s.copy())
            if cond is not None and not post:
                s, s_out = self._test(cond, s)
                exits.append(s_out)
            elif not (post or forever or switch):
                # a loop macro: its test may end it before any iteration
                exits.append(s.copy())
            self.loops.append(frame)
            try:
                j, back, _t = self._stmt(toks, i, end, s)
            finally:
                self.loops.pop()
            if frame["continue"] is not None:
                back = back.merge(frame["continue"])
            if frame["break"] is not None:
                exits.append(frame["break"])
            if switch or once:
                if cond is not None:
                    self._expr(cond, 0, len(cond), back)
                exits.append(back)
                break
            if post and cond is not None:
                back, s_out = self._test(cond, back)
                exits.append(s_out)
            elif post and not forever:
                exits.append(back.copy())
            elif incr is not None:
                self._expr(incr, 0, len(incr), back)
            nx = st.copy().merge(back)
            if reading:
                _widen(nx, x)
            if _same(nx, x):
                break
            if reading == LOOP_READINGS - 1:
                why = f"a loop the pass did not settle in {LOOP_READINGS} readings" \
                    f" (line {toks[i][1]})"
                for site in self.sites[n_sites:]:
                    site["state"].acquire(["unsettled"], why)
                for _n, _l, cst in self.calls[n_calls:]:
                    cst.acquire(["unsettled"], why)
                for e in exits:
                    e.acquire(["unsettled"], why)
                break
            del self.sites[n_sites:], self.calls[n_calls:]
            x = nx
        if not exits:
            return j, None
        out = exits[0]
        for e in exits[1:]:
            out = out.merge(e)
        return j, out

    def _switch_entry(self):
        """The state the innermost switch was entered with, or None."""
        fr = next((x for x in reversed(self.loops) if x["switch"]), None)
        return None if fr is None else fr["entry"]

    def _failure(self, val):
        """Whether `return VAL` is a failure return, for a wrapper's net
        effect: NULL, false, an error code, or what the enclosing if found
        NULL or an error."""
        if re.match(r"^(NULL|false|ERR_PTR\(.*\)|ERR_CAST\(.*\)|-E[A-Z]+|-\d+)$", val):
            return True
        if re.match(r"^\w+$", val):
            for c in self.conds:
                if re.search(rf"!\s*{val}\b|IS_ERR(_OR_NULL)?\({val}\)|\b{val}\s*==\s*NULL", c):
                    return True
        return False

    # expressions
    def _expr(self, toks, i, end, st):
        """Walk the expression TOKS[I:END], updating ST.  What is after
        the first operand of && or || and the arms of ?: may not run: its
        state is merged with the state without it (a release there does
        not count on the paths that skip it)."""
        ops, q, depth = [], None, 0
        for j in range(i, end):
            t = toks[j][0]
            if t in ("(", "[", "{"):
                depth += 1
            elif t in (")", "]", "}"):
                depth -= 1
            elif depth == 0 and t in ("&&", "||"):
                ops.append(j)
            elif depth == 0 and t == "?" and q is None:
                q = j
        if q is not None or ops:
            # `l = c ? &a->lock : &b->lock;`: the alias is the whole
            # right-hand side, which the split below cuts
            self._alias_whole(toks, i, end, min(([q] if q is not None else []) + ops[:1]))
        if q is not None:
            # the `:` of this `?`: `c ? d ? A : B : C` nests in the middle arm
            depth, c, nest = 0, None, 0
            for j in range(q + 1, end):
                t = toks[j][0]
                if t in ("(", "[", "{"):
                    depth += 1
                elif t in (")", "]", "}"):
                    depth -= 1
                elif depth == 0 and t == "?":
                    nest += 1
                elif depth == 0 and t == ":":
                    if nest:
                        nest -= 1
                        continue
                    c = j
                    break
            if c is not None:
                self._expr(toks, i, q, st)
                s_a, s_b = st.copy(), st.copy()
                self._expr(toks, q + 1, c, s_a)
                self._expr(toks, c + 1, end, s_b)
                self._assign(st, s_a.merge(s_b))
                return
        ops = [j for j in ops if q is None or j < q]
        if ops:
            self._expr(toks, i, ops[0], st)
            for a, b in zip(ops, ops[1:] + [end]):
                ran = st.copy()
                self._expr(toks, a + 1, b, ran)
                self._assign(st, st.copy().merge(ran))
            return
        self._expr1(toks, i, end, st)

    def _alias_whole(self, toks, i, end, stop):
        """Each alias `p = RHS` whose `=` is before STOP in TOKS[I:END], RHS
        read up to a comma outside brackets (`*m = NULL, *l = c ? ...`)."""
        depth = 0
        for j in range(i, stop):
            t = toks[j][0]
            if t in ("(", "[", "{"):
                depth += 1
            elif t in (")", "]", "}"):
                depth -= 1
            elif depth == 0 and t == "=" and j > i and re.match(r"^\w+$", toks[j - 1][0]):
                k, d = j + 1, 0
                while k < end and not (d == 0 and toks[k][0] in (",", ";")):
                    d += toks[k][0] in ("(", "[", "{")
                    d -= toks[k][0] in (")", "]", "}")
                    k += 1
                rhs = text_of(toks[j + 1:k])
                if rhs and self._binds(rhs):
                    self.aliases.add(toks[j - 1][0])

    @staticmethod
    def _assign(st, new):
        st.held, st.must, st.why, st.excl, st.took = \
            new.held, new.must, new.why, new.excl, new.took

    def _expr1(self, toks, i, end, st):
        j = i
        while j < end:
            t = toks[j][0]
            if t in self.label_names and not (j and toks[j - 1][0] == "goto") and \
                    not (j + 1 < len(toks) and toks[j + 1][0] == ":"):
                # `unsafe_get_user(x, p, Efault)`, `asm goto(... : efault)`
                self.labels[t] = self.labels.get(t, State()).merge(st.copy())
            if t == "{":
                # statement expression, a macro's `do { ... } while (0)` or
                # an initializer: it runs, and what follows sees its end
                # (merged with what came before only when it cannot end)
                k = _match(toks, j)
                _k, st2, _tm = self._block(toks, j, st.copy())
                if _tm:
                    st.merge(st2)
                else:
                    st.held, st.must, st.why, st.excl, st.took = \
                        st2.held, st2.must, st2.why, st2.excl, st2.took
                j = k + 1
                continue
            jumps = self._obj_jumps.get(t)
            if jumps is None:
                # (a plain lookup first: this runs for every token)
                jumps = self._jump_defs(t, True) if (t[0].isalpha() or t[0] == "_") and \
                    t not in _KEYWORDS else []
                if t not in self._expanding:
                    self._obj_jumps[t] = jumps
            if t not in self._expanding and j + 1 < end and toks[j + 1][0] == "(" and \
                    (jumps or self._macro_defs(t, True)):
                # `#define CHK CHECK`, then `CHK(x)`: the body with the
                # parenthesised list after the name (_macro_jumps()); an
                # alias of a macro whose arguments hold a goto
                # (`#define WL WITH_LOCK`, then `WL(if (x) goto out)`) too
                follow = toks[j + 1:_match(toks, j + 1) + 1]
                if not jumps and self._names_jump(follow):
                    jumps = [d for d in self._macro_defs(t, True)
                             if self._ends_in_macro(d.toks)]
                if jumps:
                    self._macro_jumps(t, jumps, None, toks[j][1], st, follow)
            elif jumps and t not in self._expanding:
                # `#define BAIL goto out`: what its goto carries
                self._macro_jumps(t, jumps, None, toks[j][1], st)
            if t in _UNEVALUATED and j + 1 < end and toks[j + 1][0] == "(":
                # sizeof(({ spin_unlock(l); 0; })) runs nothing, but the
                # operand of a variable-length array type is evaluated
                # (C11 6.5.3.4): read it with no release counted
                c = _match(toks, j + 1)
                self.quiet += 1
                try:
                    self._parts(toks, j + 2, c, st)
                finally:
                    self.quiet -= 1
                j = c + 1
                continue
            if t in _SELECTION and j + 1 < end and toks[j + 1][0] == "(":
                close = _match(toks, j + 1)
                self._select(toks, j + 2, close, st, t == "_Generic")
                j = close + 1
                continue
            if re.match(r"^[A-Za-z_]\w*$", t) and j + 1 < end and toks[j + 1][0] == "(" \
                    and t not in _KEYWORDS:
                args, close = split_args(toks, j + 1)
                jumps = self._jumps.get((t, False))
                if jumps is None or t in self._expanding:
                    jumps = self._jump_defs(t, False)
                if not jumps and t not in self._expanding and self._macro_defs(t, False) \
                        and self._names_jump(toks[j + 2:close]):
                    # a macro of a file read whose arguments hold a goto, a
                    # label's name or a goto macro's name: `WITH_LOCK(if (x)
                    # goto out)`, `DO(CHECK, x)` of `#define DO(m, c) m(c)`
                    jumps = self._macro_defs(t, False)
                fol = toks[close + 1:_match(toks, close + 1) + 1] \
                    if close + 1 < len(toks) and toks[close + 1][0] == "(" else None
                if not jumps and fol and t not in self._expanding and self._macro_defs(t, False) \
                        and self._names_jump(fol):
                    # `ID(WITH_LOCK)(if (x) goto out)`
                    jumps = self._macro_defs(t, False)
                if jumps:
                    # a macro of a file read whose body jumps to a label of
                    # the function: `#define CHECK(c) do { if (c) goto out;
                    # } while (0)`; its body reads the arguments where it
                    # has them, and a name it ends in the parenthesised list
                    # after the call (`ID(CHECK)(x)` of `#define ID(m) m`)
                    # (past END too: `ID(CHECK)(x);` is read as a loop macro
                    # and its body)
                    follow = toks[close + 1:_match(toks, close + 1) + 1] \
                        if close + 1 < len(toks) and toks[close + 1][0] == "(" else None
                    self._macro_jumps(t, jumps, args, toks[j][1], st, follow)
                # arguments first (nested calls), then the call
                self._parts(toks, j + 2, close, st)
                self._call(t, args, toks[j][1], st)
                j = close + 1
                continue
            if t in ("(", "["):
                # a parenthesised expression, a cast's operand, an index, a
                # call through a pointer: its ?:, && and || are read as
                # such (`(c ? (spin_unlock(l), 1) : 0)` in a macro)
                close = _match(toks, j)
                self._parts(toks, j + 1, close, st)
                j = close + 1
                continue
            if t == "=" and j > i and re.match(r"^\w+$", toks[j - 1][0]):
                # alias: p = <lock expression>;
                k = j + 1
                while k < end and toks[k][0] not in (";", ","):
                    if toks[k][0] in "({[":
                        k = _match(toks, k)
                    k += 1
                rhs = text_of(toks[j + 1:k])
                if rhs and self._binds(rhs):
                    self.aliases.add(toks[j - 1][0])
            j += 1

    def _parts(self, toks, i, end, st):
        """TOKS[I:END] split at its commas outside brackets (arguments, or
        a comma expression), each read by _expr() in turn."""
        for a, b in _segments(toks, i, end):
            self._expr(toks, a, b, st)

    def _select(self, toks, i, end, st, generic):
        """The operands TOKS[I:END] of `_Generic(c, T: a, default: b)`
        (GENERIC) or `__builtin_choose_expr(c, a, b)`: the first is not
        run (read with no release counted, as sizeof's), and one of the
        others runs: each is read from ST, merged (as ?:'s arms)."""
        segs = _segments(toks, i, end)
        self.quiet += 1
        try:
            self._expr(toks, segs[0][0], segs[0][1], st)
        finally:
            self.quiet -= 1
        outs = []
        for a, b in segs[1:]:
            if generic:
                # the type name before the association's `:`
                k, depth = a, 0
                while k < b and not (depth == 0 and toks[k][0] == ":"):
                    depth += toks[k][0] in ("(", "[", "{")
                    depth -= toks[k][0] in (")", "]", "}")
                    k += 1
                a = k + 1 if k < b else a
            s = st.copy()
            self._expr(toks, a, b, s)
            outs.append(s)
        if outs:
            res = outs[0]
            for s in outs[1:]:
                res = res.merge(s)
            self._assign(st, res)

    def _check_target_args(self, args, name, line, st, variant=""):
        for a in args:
            if a and self._binds(text_of(a), name, line):
                kinds = guard_kinds(variant)
                self._site(name, text_of(a), line, st, kinds)
                return True
        return False

    def _binds(self, argtext, call=None, line=None):
        """Whether ARGTEXT is the class's lock here: it matches the target
        and its base is not declared as another struct.  An acquisition
        (CALL, LINE) of the same member of another struct is noted in
        self.excluded."""
        if not self.target.matches(argtext, self.aliases):
            return False
        other = self.target.other_struct(argtext, self.f)
        if other is None:
            return True
        if call is not None and not any(e["line"] == line and e["arg"] == argtext
                                        for e in self.excluded):
            self.excluded.append({"line": line, "call": f"{call}({argtext})",
                                  "arg": argtext, "struct": other})
        return False

    def _is_noreturn(self, name):
        return name in self.noreturn or (self.f.path, name) in self.noreturn

    def _macro_defs(self, name, obj):
        """The definitions of the macro NAME (object-like when OBJ) of the
        files read; [] for none or while a macro is scanned as a function."""
        key = (name, obj)
        res = self._mdefs.get(key)
        if res is None:
            res = self._mdefs[key] = [] if self.f.macro else [
                d for d in (self.objdefs(name) if obj else self.defs(name))
                if d.macro and d.objlike == obj]
        return res

    def _ends_in_macro(self, toks):
        """Whether the last token of TOKS names a macro of the files read:
        a parenthesised list after the use of a body that ends so is that
        macro's (`#define CHK CHECK`, then `CHK(x)`); so is it after a body
        that ends in a function-like macro's call, whose expansion may end
        in a name (`#define WLX ID(WITH_LOCK)`, then `WLX(...)`)."""
        if toks and toks[-1][0] == ")":
            depth, k = 0, len(toks) - 1
            while k >= 0:
                depth += {")": 1, "(": -1}.get(toks[k][0], 0)
                if depth == 0:
                    break
                k -= 1
            return k > 0 and bool(self._macro_defs(toks[k - 1][0], False))
        return bool(toks) and bool(self._macro_defs(toks[-1][0], False) or
                                   self._macro_defs(toks[-1][0], True))

    def _names_jump(self, toks):
        """Whether TOKS (a macro call's arguments) hold a `goto`, a label's
        name or the name of a macro _jump_defs() finds: the macro's body,
        with them in place, may jump though it has no goto of its own."""
        for t, _l in toks:
            if t == "goto" or t in self.label_names:
                return True
            if (t[0].isalpha() or t[0] == "_") and t not in _KEYWORDS and \
                    (self._jump_defs(t, True) or self._jump_defs(t, False)):
                return True
        return False

    def _jump_defs(self, name, obj, seen=None):
        """The definitions of the macro NAME (object-like when OBJ) of the
        files read whose body has a goto, or names a macro whose body has
        one, at any depth (an object-like one anywhere, a function-like one
        before a `(` or as the body's last token: `#define CHK CHECK`); []
        for none (a function, a macro of a file not read, a name being
        expanded)."""
        key = (name, obj)
        if self.f.macro or (seen is None and name in self._expanding):
            return []
        if seen is None and key in self._jumps:
            return self._jumps[key]
        top, seen = seen is None, seen if seen is not None else set()
        if key in seen:
            return []
        seen.add(key)
        res = []
        for d in (self.objdefs(name) if obj else self.defs(name)):
            if not d.macro or d.objlike != obj:
                continue
            toks = d.toks
            for k, (t, _l) in enumerate(toks):
                if t == "goto" or t in self.label_names or (
                        t != name and t not in _KEYWORDS and re.match(r"^[A-Za-z_]\w*$", t) and
                        (self._jump_defs(t, True, seen) or
                         ((k + 1 == len(toks) or toks[k + 1][0] == "(") and
                          self._jump_defs(t, False, seen)))):
                    res.append(d)
                    break
        if top:
            self._jumps[key] = res
        return res

    def _macro_jumps(self, name, defs, args, line, st, follow=None):
        """What the gotos of the macro NAME's DEFS (_jump_defs()), called
        with ARGS (None: object-like) on LINE from ST, carry to their
        labels: each body, its parameters replaced by the arguments (and
        FOLLOW, the parenthesised list after the use, appended when the
        body ends in a macro's name), read as a statement from ST, the
        macros it uses expanded in turn (a name once), and all it recorded
        but the labels undone (what the call does to ST is its effect's,
        _call1()).  A body the pass cannot read, or one expanded after the
        scan's EXPAND_TOKENS ran out, gives every label of the function ST,
        unknown besides (a nested one: the state at its use in the outer
        body, what that body's gotos carried before kept)."""
        # a body read from the same state with the same arguments gives
        # its labels nothing new (a macro in a loop, nested macros)
        key = (name, self.quiet > 0, None if args is None else tuple(text_of(a) for a in args),
               None if follow is None else text_of(follow), tuple(sorted(set(self._expanding))),
               tuple(sorted(st.held.items())), tuple(sorted(st.must.items())),
               tuple(sorted((e, tuple(sorted(x.held.items()))) for e, x in st.excl.items())))
        if key in self._expanded_from:
            return
        self._expanded_from.add(key)
        # a macro expanded in another's body: the outer one undoes it all
        outer = not self._expanding
        self._expanding.append(name)
        try:
            for d in defs:
                self.expanded.update(t for t, _l in d.toks)
                saved = self._snapshot() if outer else None
                try:
                    if d.unparsable:
                        raise Unparsable(d.unparsable)
                    body = _expand(d, args, line)
                    if follow and self._ends_in_macro(body):
                        body += [(t, line) for t, _l in follow]
                    self._budget -= len(body)
                    if self._budget < 0:
                        raise _OverBudget(f"more than {EXPAND_TOKENS} tokens of macro"
                                          " bodies expanded")
                    self._block([("{", line)] + body + [(";", line), ("}", line)], 0,
                                st.copy())
                except (Unparsable, IndexError) as e:
                    # (one in another's body: the labels keep what the
                    # bodies read before it carried)
                    if outer:
                        self._restore(saved)
                        self._expanded_from = set()
                    bad = st.copy()
                    bad.acquire(["unsettled"], f"a goto in {name} (line {line}), a macro"
                                " the pass cannot read" if not isinstance(e, _OverBudget) else
                                f"a goto in {name} (line {line}), expanded past"
                                f" {EXPAND_TOKENS} tokens")
                    for lab in self.label_names:
                        self.labels[lab] = self.labels.get(lab, State()).merge(bad.copy())
                else:
                    if outer:
                        labels = self.labels
                        self._restore(saved)
                        self.labels = labels
        finally:
            self._expanding.pop()

    def _call(self, name, args, line, st):
        if not self.quiet:
            self._call1(name, args, line, st)
            return
        # inside an #if group read with both sides: what it takes counts,
        # what it drops does not
        before = st.copy()
        self._call1(name, args, line, st)
        for d in ("held", "must"):
            now, was = getattr(st, d), getattr(before, d)
            for k, n in was.items():
                if now.get(k, 0) < n:
                    now[k] = n
        for k, why in before.why.items():
            st.why.setdefault(k, why)
        for k, v in before.took.items():
            st.took.setdefault(k, set()).update(v)
        for e, x in before.excl.items():
            st.excl.setdefault(e, x)

    def _call1(self, name, args, line, st):
        self.calls.append((name, line, st.copy()))
        if self._is_noreturn(name):
            # what it holds when it stops (panic()'s preempt_disable())
            # reaches no statement after it
            return
        eff = api_effect(name)
        texts = [text_of(a) for a in args]
        lock_idx = None
        if eff and eff[2] is not None and len(texts) > eff[2]:
            lock_idx = eff[2]
        is_target = lock_idx is not None and self._binds(texts[lock_idx], name, line)
        if is_target:
            self._site(name, texts[lock_idx], line, st, eff[0])
            st.acquire(["self"], f"{name}({texts[lock_idx]}) line {line}")
            return
        if eff and not eff[0] and eff[1] and texts and \
                self._binds(texts[0]):
            st.release(["self"])
            return
        w = self.effect(name)
        if w is not None:
            for k, archs in sorted(w[7].items()):
                if self._took_by(st, k, archs):
                    st.release([k])
        if w is not None and (w[0] or w[1] or w[2]):
            acq, rel, takes = w[:3]
            if takes:
                self._site(name, f"{name}()", line, st, [], via=name)
                st.acquire(["self"], f"{name}() line {line}")
            st.release(rel)
            st.acquire(acq, f"{name}() line {line}")
        if w is not None:
            # held on some return only (a failure's `return false;` with
            # the lock held: fast_dput()): held after the call, unless an
            # if on its value says which returns (_cond_effect())
            st.acquire(_maybe_held(w), f"{name}() line {line}")
        elif eff:
            ident = self._ident(name, eff, texts)
            if ident and eff[0]:
                st.lock(ident, eff[0], f"{name}() line {line}")
            elif ident:
                st.unlock(ident, eff[1])
            else:
                st.release(eff[1])
                st.acquire(eff[0], f"{name}() line {line}")
        elif not _NOT_ACQUIRE.match(name) and name not in self.target.ptr_funcs and \
                any(self._binds(x, name, line) for x in texts):
            self.sites.append({"line": line, "call": f"{name}({', '.join(texts)})",
                               "state": st.copy(), "own": [], "via": None,
                               "passed": name})

    def _took_by(self, st, kind, archs):
        """Whether a release of KIND that only the definitions of ARCHS
        make counts in ST: every call that may have taken it on some path
        takes it on those architectures only.  A generic acquiring
        definition (arch_of() None) takes it on every architecture, the
        one that keeps it too."""
        groups = [self.acq_groups(n, kind) if n else set() for n in st.took.get(kind, ())]
        return bool(groups) and all(g and None not in g and g <= archs for g in groups)

    def _ident(self, name, eff, texts):
        """The lock a call of the lock API NAME (effect EFF, arguments
        TEXTS) takes or releases when it is non-recursive (a spinlock_t,
        raw_spinlock_t, seqlock writer or rwlock_t writer) and its
        expression names one lock all through the function; else None."""
        acq, rel, idx = eff
        kinds = acq or rel
        if not kinds or (acq and rel) or not (
                kinds[0] in ("spin", "raw", "seqw")
                or (kinds[0] == "rwlock" and name.startswith("write_"))):
            return None
        if name in STATE_CALLS:
            return None
        i = idx if acq else 0
        if i is None or len(texts) <= i:
            return None
        arg = texts[i].replace(" ", "")
        return arg if self._stable(arg) else None

    def _stable(self, arg):
        """Whether the lock expression ARG is one lock all through this
        function: a global (`&g`, `&g.m`), or `&x->m` (`.m` members after)
        where x is `current`, or a parameter or local that is never
        assigned, incremented or has its address taken, but for its
        declaration's initializer in the function's outer block before any
        label (so run once)."""
        if arg in self._stable_memo:
            return self._stable_memo[arg]
        self._stable_memo[arg] = ok = self._stable_uncached(arg)
        return ok

    def _stable_uncached(self, arg):
        m = re.match(r"^&?\(?([A-Za-z_]\w*)(->\w+)?((?:\.\w+)*)\)?$", arg)
        if not m or self.f.macro:
            return False
        x, arrow = m.group(1), m.group(2)
        if x == "current":
            return bool(arrow)
        head = [t for t, _l in self.f.head]
        body = [t for t, _l in self.f.toks]
        declared = x in head
        depth, labels, decl, addr = 0, False, 0, False
        for i, t in enumerate(body):
            if t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
            if re.match(r"^[A-Za-z_]\w*$", t) and t not in _KEYWORDS and t != "default" and \
                    i + 1 < len(body) and body[i + 1] == ":" and i and \
                    body[i - 1] in (";", "{", "}"):
                labels = True
            if t != x or (i and body[i - 1] in (".", "->")):
                continue
            prev = body[i - 1] if i else ""
            nxt = body[i + 1] if i + 1 < len(body) else ""
            if prev in ("++", "--") or nxt in ("++", "--"):
                return False
            if prev == "&" and nxt not in ("->", ".", "["):
                # its address: a global lock's own (`&g`), or a local
                # another function may change through
                addr = True
                continue
            if prev == "*" or re.match(r"^[A-Za-z_]\w*$", prev) and prev not in _KEYWORDS:
                # a declaration: `struct sighand_struct *sighand = ...;`
                declared = True
                decl += 1
                if decl > 1 or depth != 1 or labels:
                    return False
                continue
            nxt2 = body[i + 2] if i + 2 < len(body) else ""
            if nxt == "=" or (nxt2 == "=" and re.match(r"^([-+*/%&|^]|<<|>>)$", nxt)):
                # `p = ...`, or a compound assignment: _TOKEN cuts `+=`
                # into `+` and `=`
                return False
            if prev in ("(", ",") and nxt in (",", ")") and \
                    self._may_assign(body, i):
                # a bare argument of a macro that may assign it:
                # list_for_each_entry(p, ...), WRITE_ONCE(p, v), swap(p, q)
                return False
        if not declared:
            # a global: a fixed lock unless reached through a pointer
            return not arrow
        return not addr

    def _may_assign(self, toks, i, depth=0):
        """Whether the bare argument toks[i] of a call may be assigned by
        it: the callee is upper case or an iterator by name (_MAY_ASSIGN),
        has no definition read (a macro the pass cannot see:
        skb_queue_walk()), or is a macro read whose body assigns that
        parameter, takes its address or passes it on bare to a callee that
        may (three levels; deeper: may).  A function's argument is a copy."""
        name, idx = _call_site(toks, i)
        if not name:
            # a macro body's `(p) ...` the loop below did not place
            return depth > 0
        if _MAY_ASSIGN.match(name):
            return True
        defs = self.defs(name)
        if not defs or (arch_of(self.f.path) is None and
                        all(arch_of(d.path) is not None for d in defs)):
            # no definition this call reaches was read, or only some
            # architectures' (another's may be a macro)
            return True
        for f in defs:
            if not f.macro:
                continue
            if depth >= 3 or idx >= len(f.params) or f.params[idx] in ("...", "") or \
                    any(p.endswith("...") for p in f.params[:idx + 1]):
                return True
            p = f.params[idx]
            body = [t for t, _l in f.toks]
            for k, t in enumerate(body):
                if t != p or (k and body[k - 1] in (".", "->")):
                    continue
                a, b = k - 1, k + 1
                while a >= 0 and b < len(body) and body[a] == "(" and body[b] == ")" and \
                        (a == 0 or not re.match(r"^\w+$", body[a - 1])):
                    # `(p) = ...`: the parentheses around it
                    a, b = a - 1, b + 1
                # without the parentheses (as written, `(` and `)` around
                # it match nothing below)
                prev = body[a] if a >= 0 else ""
                nxt = body[b] if b < len(body) else ""
                nxt2 = body[b + 1] if b + 1 < len(body) else ""
                if prev in ("++", "--", "&") or nxt in ("++", "--", "=") or \
                        (nxt2 == "=" and re.match(r"^([-+*/%&|^]|<<|>>)$", nxt)):
                    return True
                if body[k - 1:k] == ["("] or body[k - 1:k] == [","]:
                    if body[k + 1:k + 2] in ([","], [")"]) and \
                            self._may_assign(body, k, depth + 1):
                        return True
        return False

    def _site(self, name, arg, line, st, own, via=None):
        self.sites.append({"line": line, "call": f"{name}({arg})", "state": st.copy(),
                           "own": [k for k in own if k in ("irq", "bh", "seqw")],
                           "via": via, "passed": None})


# --- architectures ------------------------------------------------------------------

# Files of one architecture's directory that another one builds: UML builds
# arch/x86/um/ (its own) and, as its SUBARCH, parts of arch/x86/lib and
# arch/x86/kernel and includes arch/x86/include; arm64 builds arch/arm/xen/.
_ARCH_SHARED = [(r"^arch/x86/um/", {"um"}),
                (r"^arch/x86/(lib/|include/|crypto/|kernel/module\.c$|kernel/sys_ia32\.c$)",
                 {"x86", "um"}),
                (r"^arch/arm/(xen|include/asm/xen)/", {"arm", "arm64"})]


def arch_of(path):
    """The architectures whose build a file of PATH is part of (a
    frozenset), or None for generic code (every architecture's)."""
    for rx, archs in _ARCH_SHARED:
        if re.match(rx, path):
            return frozenset(archs)
    m = re.match(r"^arch/([^/]+)/", path)
    return frozenset([m.group(1)]) if m else None


def arch_compatible(a, b):
    """Whether code of architectures A may call a definition of B (each
    from arch_of()): generic code reaches every architecture and every
    architecture reaches generic code."""
    return a is None or b is None or bool(a & b)


def _is_stub(f):
    """Whether definition F is an empty stub (`{}`, `{ return 0; }`,
    `do {} while (0)`): it calls nothing."""
    toks = f.toks
    return not any(re.match(r"^[A-Za-z_]\w*$", t) and t not in _KEYWORDS
                   and i + 1 < len(toks) and toks[i + 1][0] == "("
                   for i, (t, _l) in enumerate(toks))


# --- the pass ---------------------------------------------------------------------

class Analysis:
    def __init__(self, tree, target, max_depth=MAX_DEPTH, max_funcs=MAX_FUNCS, log=None,
                 max_seconds=MAX_SECONDS, config=None):
        self.tree, self.t, self.log = tree, target, log
        self.config = PROJECT_CONFIG if config is None else config
        self.deadline = time.monotonic() + max_seconds
        self.max_seconds = max_seconds
        self.max_depth, self.max_funcs = max_depth, max_funcs
        self.funcs = {}            # path -> [Func]
        self.by_name = {}          # name -> [Func]
        self.objlike = {}          # name -> [Func]: object-like macros (Func.objlike)
        self.wrappers = {}         # name -> (acquired kinds, released kinds, takes target)
        self.effects = {}          # definition key -> its own effect (_own_effect())
        self._effect_memo = {}     # (name, caller path) -> effect_of()
        self.noreturn = set(NORETURN)   # names, and (path, name) of static ones
        self.files_read = 0
        self.grep_rounds = 0
        self.uses = {}             # token -> [Func] that contain it
        self._scans = {}
        self._memo = {}
        self._cycles = 0
        self.timed_out = False
        self.excluded = []         # the member's sites in other structs
        self._bh_files = None
        self._bh_names = set()
        self.parents = {}

    def _load(self, paths):
        new = [p for p in paths if p not in self.funcs]
        self.tree.prefetch(new)
        added = []
        for p in new:
            objs = []
            fs = functions(p, self.tree.read(p), objs)
            for o in objs:
                self.objlike.setdefault(o.name, []).append(o)
            self.funcs[p] = fs
            self.files_read += 1
            for f in fs:
                self.by_name.setdefault(f.name, []).append(f)
                for t in {t for t, _l in f.toks}:
                    self.uses.setdefault(t, []).append(f)
            added += fs
        self._detect(added)

    def _detect(self, fs):
        """Wrappers among FS: functions that return with the target (or
        another lock, RCU, preemption/BH/IRQ state) held or released, and
        functions that return the lock's address.  Repeated until nothing
        changes (a wrapper of a wrapper), at most MAX_ROUNDS rounds: one
        round per level of a chain of wrappers (sched_init_smp() ->
        set_cpus_allowed_ptr() -> __set_cpus_allowed_ptr() ->
        __set_cpus_allowed_ptr_locked() -> affine_move_task() is five)."""
        names = {f.name for f in fs}
        keys = {f.key() for f in fs}
        for _round in range(MAX_ROUNDS):
            changed = set()         # names whose effect on a caller changed
            for f in fs:
                sc = self.scan(f)
                nr = self._noreturn_key(f, sc)
                if nr is not None and nr not in self.noreturn:
                    self.noreturn.add(nr)
                    changed.add(f.name)
                if sc.returns_lock and f.name not in self.t.ptr_funcs and \
                        nr is None and f.name not in self.noreturn:
                    self.t.ptr_funcs.add(f.name)
                    changed.add(f.name)
                eff = self._own_effect(f, sc, nr)
                if self.effects.get(f.key()) != eff:
                    if eff is None:
                        self.effects.pop(f.key(), None)
                    else:
                        self.effects[f.key()] = eff
                    changed.add(f.name)
            self._effect_memo.clear()
            for n in names:
                # every definition of the name read so far, whichever load
                w = self._merge(self.by_name.get(n, []))
                w = tuple(w[:3]) if w is not None and (w[0] or w[1] or w[2]) else None
                if self.wrappers.get(n) != w:
                    if w is not None:
                        self.wrappers[n] = w
                    else:
                        del self.wrappers[n]
                    changed.add(n)
            if not changed:
                break
            # scanned again: only the functions that name one of them, or
            # expand a macro whose body does (_macro_jumps())
            for n in changed:
                for g in self.uses.get(n, []):
                    if g.key() in keys:
                        self._scans.pop(g.key(), None)
            for f in fs:
                sc = self._scans.get(f.key())
                if sc is not None and not changed.isdisjoint(sc.expanded):
                    self._scans.pop(f.key(), None)

    def _own_effect(self, f, sc, nr):
        """What a call of definition F does to its caller's state, from its
        scan SC: (acquired, released, takes the target, released on its
        non-zero returns, released on its zero returns), or None for
        nothing (or a call that never returns, NR)."""
        if nr is not None or f.name in self.noreturn:
            return None
        if sc.unparsable:
            # its net effect is unknown: when it may take something (a
            # lock API, or a function that has an acquiring effect), what
            # its callers do after the call is unknown, not clean
            if self._may_acquire(f):
                return (["unsettled"], [], False, [], [], [], [])
            return None
        held = {k for k, n in sc.end_state.held.items() if n > 0}
        dropped = {k for k, n in sc.end_state.held.items() if n < 0 and k != "self"}
        on_true, on_false = (set(x) | dropped for x in sc.cond_rel[:2])
        may_true, may_false = (sorted(x) for x in sc.cond_rel[2:])
        # a guard's name is a function of its own (rq_lock()) unless the
        # pass models it already (task_lock() in STATE_CALLS)
        if (api_effect(f.name) and "self" not in held) or \
                (f.name in GUARDS and (f.macro or f.name in STATE_CALLS)) \
                or f.init is not None or self._entry_kinds(f):
            return None
        if not (held or dropped or on_true != dropped or on_false != dropped
                or set(may_true) - held or set(may_false) - held):
            return None
        return (sorted(k for k in held if k != "self"), sorted(dropped), "self" in held,
                sorted(on_true), sorted(on_false), may_true, may_false)

    def _may_acquire(self, f):
        """Whether F's tokens name a lock API that acquires, or a function
        whose effect acquires."""
        acq = {k.rsplit(":", 2)[1] for k, e in self.effects.items() if e and e[0]}
        for t, _line in f.toks:
            e = api_effect(t)
            if (e and e[0]) or t in acq:
                return True
        return False

    def _merge(self, defs):
        """The effect of a call that may be any of DEFS: (acquired,
        released, takes the target, released on non-zero returns, released
        on zero returns, held on some non-zero / zero return, and the three
        releases disputed): every acquisition; the releases every
        definition with an effect shares.  When DEFS belong to different
        architectures (or to an architecture and generic code) and one that
        is more than an empty stub releases nothing, a shared release is
        disputed: {kind: the architectures whose definitions release it}.
        Scan._call() releases a disputed kind only where what holds it was
        taken by a call whose acquiring definitions are all of those
        architectures (powerpc's arch_enter_lazy_mmu_mode() and
        arch_leave_lazy_mmu_mode()); a lock riscv's definition keeps is
        held after the call in generic code.  The releases on non-zero or
        zero returns are disputed alike (Scan._cond_effect()).  Two
        definitions of one
        architecture (both sides of an #if) do not dispute each other's
        releases: a stub is paired with a stub.  None when no definition
        has an effect."""
        recs = [(d, self.effects.get(d.key())) for d in defs]
        with_eff = [(d, r) for d, r in recs if r]
        if not with_eff:
            return None
        inter = [sorted(set.intersection(*(set(r[i]) for _d, r in with_eff)))
                 for i in (1, 3, 4)]
        disputed = [{}, {}, {}]
        keeps = {arch_of(d.path) for d, r in recs if r is None}
        if keeps and len({arch_of(d.path) for d in defs}) > 1:
            # a definition that releases nothing, an empty stub too,
            # disputes the release for its architecture
            rels = frozenset(arch_of(d.path) for d, _r in with_eff) - keeps
            disputed = [{k: rels for k in x} for x in inter]
            inter = [[], [], []]
        elif keeps:
            # both sides of an #if of one architecture (or of generic
            # code): one keeps the lock, so no release is shared
            inter = [[], [], []]
        acq = sorted(set().union(*(r[0] for _d, r in with_eff)))
        may = [sorted(set().union(*(r[i] for _d, r in with_eff))) for i in (5, 6)]
        return (acq, inter[0], any(r[2] for _d, r in with_eff), inter[1], inter[2],
                may[0], may[1], disputed[0], disputed[1], disputed[2])

    def acq_groups(self, name, path, kind):
        """The architectures (arch_of() values) of the definitions of NAME,
        as called from PATH, that acquire KIND, on every return or some
        (a lock a definition keeps on its false return only)."""
        out = set()
        for d in self._candidates(name, path):
            e = self.effects.get(d.key())
            if e and (kind in e[0] or kind in e[5] or kind in e[6]):
                out.add(arch_of(d.path))
        return out

    def effect_of(self, name, path):
        """The effect of a call of NAME from a function of PATH: merged
        over the definitions it can reach.  A definition in PATH itself is
        the one called; a static function of another .c file is none
        (unless one #includes the other); a caller under arch/A reaches
        arch/A's definitions and generic ones, generic code every
        architecture's.  When none of the definitions read is reachable,
        all of them (the pass cannot tell)."""
        key = (name, path)
        if key in self._effect_memo:
            return self._effect_memo[key]
        w = self._merge(self._candidates(name, path))
        self._effect_memo[key] = w
        return w

    def _candidates(self, name, path, reachable=False, table=None):
        """The definitions of NAME (in TABLE, by default by_name) a call from
        PATH can reach (effect_of()); none reachable: every one read, or
        none when REACHABLE."""
        defs = (self.by_name if table is None else table).get(name, [])
        cands = [d for d in defs if d.path == path]
        if any(d.weak for d in cands):
            # a __weak definition is the one called unless another
            # file's overrides it
            cands = []
        if not cands:
            a = arch_of(path)
            cands = [d for d in defs
                     if (not d.static or d.path.endswith(".h") or self._one_unit(d.path, path))
                     and arch_compatible(a, arch_of(d.path))]
        return cands if reachable else cands or defs

    @staticmethod
    def _noreturn_key(f, sc):
        """What a call of F that never returns is known by: its name when
        it is defined __noreturn (every definition must be), (path, name)
        for a static function whose every path ends in a noreturn call,
        else None.  A global function that merely looks like one is not
        trusted: another architecture's definition may return."""
        if f.macro or f.init is not None or sc.unparsable:
            return None
        if any(t in ("__noreturn", "noreturn") for t, _l in f.head):
            return f.name
        if sc.never_returns and f.static:
            return (f.path, f.name)
        return None

    def scan(self, f):
        key = f.key()
        sc = self._scans.get(key)
        if sc is None:
            sc = self._scans[key] = Scan(
                f, self.t, self.wrappers, None, self.noreturn,
                lambda n, p=f.path: self.effect_of(n, p),
                lambda n, k, p=f.path: self.acq_groups(n, p, k), self.config,
                lambda n, p=f.path: self._candidates(n, p, reachable=True),
                lambda n, p=f.path: self._candidates(n, p, reachable=True,
                                                     table=self.objlike)).run()
        return sc

    def sites(self):
        """Every acquisition site of the target: [(Func, site)]."""
        words = list(self.t.words)
        self._load(self.tree.grep(words))
        self.grep_rounds += 1
        for _round in range(6):
            extra = [n for n in sorted(self.wrappers) + sorted(self.t.ptr_funcs)
                     if n not in words and self.wrappers.get(n, (0, 0, True))[2]]
            if not extra:
                break
            words += extra
            self._load(self.tree.grep(extra))
            self.grep_rounds += 1
        if self.t.member and not self.t.struct:
            self.t.struct = self._init_struct()
            if self.t.struct:
                self.t.note = (f"struct {self.t.struct}::{self.t.member} (from its"
                               " spin_lock_init())")
                self._scans.clear()
                self._detect([f for fs in self.funcs.values() for f in fs])
        out = []
        self.excluded = []
        for fs in self.funcs.values():
            for f in fs:
                sc = self.scan(f)
                for s in sc.sites:
                    if s["via"]:
                        continue       # the wrapper's own site is listed once, inside it
                    out.append((f, s))
                for e in sc.excluded:
                    self.excluded.append({"path": f.path, "line": e["line"],
                                          "function": f.name, "call": e["call"],
                                          "struct": e["struct"]})
        self.excluded.sort(key=lambda r: (r["path"], r["line"]))
        return out

    def _init_struct(self):
        """The struct of an uncatalogued member class, from where lockdep
        named it: the spin_lock_init() (or seqlock/rwlock init) whose
        argument is the class name, `&p->alloc_lock`, with its base's type
        resolved in that function.  None unless every such init that can be
        resolved names the same struct."""
        name = self.t.name.replace(" ", "")
        found = set()
        for fs in self.funcs.values():
            for f in fs:
                toks = f.toks
                for i, (t, _l) in enumerate(toks):
                    if not re.match(r"^(__)?(pv_|raw_)?(spin_lock|rwlock|seqlock)_init$", t) \
                            or i + 1 >= len(toks) or toks[i + 1][0] != "(":
                        continue
                    try:
                        args, _e = split_args(toks, i + 1)
                    except Unparsable:
                        continue
                    if not args or text_of(args[0]).replace(" ", "") != name:
                        continue
                    m = re.match(rf"^&?\(?(.+?)->{re.escape(self.t.member)}\)?$",
                                 text_of(args[0]))
                    t = base_struct(m.group(1), f) if m else None
                    if t:
                        found.add(t)
        return found.pop() if len(found) == 1 else None

    def run(self):
        raw = self.sites()
        # walk callers level by level, one grep per level
        ctx = {}                           # func key -> {category: (reason, chain)}
        need = {}
        results = []
        for f, s in raw:
            st = s["state"]
            if s.get("unparsable"):
                cat = ("unknown", f"cannot be parsed: {s['unparsable']}")
            elif s["passed"]:
                cat = ("unknown", f"the lock is passed to {s['passed']}(), which the pass"
                                  " does not follow")
            elif s["own"]:
                cat = ("atomic", {"irq": "the acquisition disables interrupts",
                                  "bh": "the acquisition disables bottom halves",
                                  "seqw": "a seqlock writer: readers spin on the sequence"
                                          " while it is held"}.get(s["own"][0],
                                                                   s["own"][0]))
            else:
                cat = st.category()
            results.append({"func": f, "site": s, "local": cat})
            if cat[0] in ("clean", "rcu"):
                need[f.key()] = f
        self._walk(list(need.values()))
        table = []
        for r in results:
            f, s, (c, why) = r["func"], r["site"], r["local"]
            if c in ("atomic", "unknown"):
                ctxs = {c: (why, [f"{f.name} ({f.path}:{s['line']})"])}
            else:
                ctxs = {}
                # the per-lock counts of its own function say nothing above it
                acc = State({k: n for k, n in s["state"].held.items()
                             if not k.startswith("id:")}, s["state"].why)
                for cat, (reason, chain) in self.resolve(f, acc).items():
                    if cat not in ctxs:
                        ctxs[cat] = (reason, [f"{f.name} ({f.path}:{s['line']})"] + chain)
            worst = next(k for k in ORDER if k in ctxs)
            table.append({"path": f.path, "line": s["line"], "function": f.name,
                          "call": s["call"], "context": worst,
                          "reason": ctxs[worst][0], "chain": ctxs[worst][1],
                          "contexts": {k: {"reason": v[0], "chain": v[1]}
                                       for k, v in ctxs.items()}})
        table.sort(key=lambda r: (r["path"], r["line"]))
        return table

    def _entry_kinds(self, f):
        """A function's own contract: [(category, reason)] or None."""
        if re.match(r"^(COMPAT_)?SYSCALL_DEFINE\d$|^SYSCALL_DEFINE$", f.name):
            return [("process", "a system call")]
        if re.match(r"^__(se|do)_sys_|^__x64_sys_", f.name):
            return [("process", "a system call")]
        return None

    def _walk(self, funcs):
        """{func key: {category: (reason, chain)}} of the contexts a function
        can be entered in, walking callers up to max_depth levels."""
        res = {}
        level = {f.key(): f for f in funcs}
        parents = {}                      # key -> [(caller func, line, state)] or reasons
        order = []
        seen = set()
        depth = 0
        looked = 0
        while level and depth <= self.max_depth:
            names = sorted({f.name for f in level.values()})
            looked += len(level)
            files = self.tree.grep(names)
            self.grep_rounds += 1
            self._load(files)
            nxt = {}
            for key, f in level.items():
                seen.add(key)
                order.append((depth, f))
                own = self._entry_kinds(f)
                if own:
                    parents[key] = [("contract", own)]
                    continue
                edges = self._callers(f)
                parents[key] = edges
                if time.monotonic() > self.deadline:
                    self.timed_out = True
                if depth == self.max_depth or looked > self.max_funcs or self.timed_out:
                    continue
                for e in edges:
                    if e[0] == "call":
                        g, _line, st = e[1], e[2], e[3]
                        releases = any(n < 0 for n in self.scan(f).end_state.held.values())
                        if (releases or st.category()[0] != "atomic") and \
                                g.key() not in seen:
                            nxt[g.key()] = g
            level = {k: v for k, v in nxt.items() if k not in seen}
            if self.log:
                self.log(f"{self.t.name}: level {depth}: {len(names)} functions,"
                         f" {self.files_read} files read, next {len(level)}")
            depth += 1
            if time.monotonic() > self.deadline:
                self.timed_out = True
            if looked > self.max_funcs or self.timed_out:
                break
        self.parents = parents

    def resolve(self, f, acc, stack=None):
        """{category: (reason, chain)}: the contexts F can be entered in when
        ACC (the signed sum of what is held from F's call down to the site)
        is held below."""
        stack = stack if stack is not None else set()
        key = f.key()
        mkey = (key, tuple(sorted((k, n) for k, n in acc.held.items() if n)))
        if mkey in self._memo:
            return self._memo[mkey]
        if key in stack:
            # a cycle: this partial answer is completed by the caller on
            # the stack, so nothing computed from it may be cached
            self._cycles += 1
            return {}
        cycles = self._cycles
        if key not in self.parents:
            return {"unknown": (f"callers of {f.name}() not walked (the walk's limit:"
                                f" {self.max_depth} levels, {self.max_funcs} functions or"
                                f" {self.max_seconds} s)", [])}
        stack.add(key)
        out = {}
        edges = self.parents[key]
        if not edges:
            out["unknown"] = (f"no caller of {f.name}() found in the tree", [])
        rcu = acc.held.get("rcu", 0) > 0
        for e in edges:
            if e[0] in ("contract", "ref"):
                items = e[1] if e[0] == "contract" else [(e[1], e[2])]
                where = [] if e[0] == "contract" else [e[3]]
                for cat, why in items:
                    if cat == "process" and rcu:
                        cat, why = "rcu", acc.category()[1] + f"; entered as {why}"
                    out.setdefault(cat, (why, where))
                continue
            g, line, st = e[1], e[2], e[3]
            where = f"{g.name} ({g.path}:{line})"
            tot = State()
            for d in (acc.held, st.held):
                for k, n in d.items():
                    if k.startswith("id:"):
                        continue
                    tot.held[k] = tot.held.get(k, 0) + n
            tot.why = {**acc.why, **{k: v for k, v in st.why.items()
                                     if st.held.get(k, 0) > 0}}
            c, why = tot.category()
            if c in ("atomic", "unknown"):
                out.setdefault(c, (why, [where]))
                continue
            sub = self.resolve(g, tot, stack)
            for cat, (reason, chain) in sub.items():
                out.setdefault(cat, (reason, [where] + chain))
        stack.discard(key)
        if not out:
            out["unknown"] = (f"only recursive callers of {f.name}()", [])
        if self._cycles == cycles:
            self._memo[mkey] = out
        return out

    def _callers(self, f):
        """[("call", caller, line, state) | ("ref", category, reason, where)]."""
        edges = []
        fa = arch_of(f.path)
        for g in self.uses.get(f.name, []):
            if g.key() == f.key():
                continue
            if not arch_compatible(fa, arch_of(g.path)):
                # arch/um code is never linked with riscv's definition
                continue
            if f.static and g.path != f.path and not f.path.endswith(".h") and \
                    not self._one_unit(f.path, g.path):
                continue
            if g.init is not None:
                edges += self._refs(f.name, g)
                continue
            sc = self.scan(g)
            if sc.unparsable:
                line = next((ln for t, ln in g.toks if t == f.name), g.line)
                edges.append(("ref", "unknown", f"a caller cannot be parsed:"
                                                f" {sc.unparsable}",
                              f"{g.name} ({g.path}:{line})"))
                continue
            for name, line, st in self.scan(g).calls:
                if name == f.name:
                    edges.append(("call", g, line, st))
            edges += self._refs(f.name, g)
        return edges

    def _one_unit(self, a, b):
        """Whether one of the .c files A and B #includes the other
        (kernel/sched/build_policy.c includes idle.c, rt.c, ...): a static
        function of one is visible in the other."""
        for x, y in ((a, b), (b, a)):
            if re.search(r'^\s*#\s*include\s+"([^"]*/)?' + re.escape(os.path.basename(y))
                         + '"', self.tree.read(x), re.M):
                return True
        return False

    def _refs(self, name, g):
        """Uses of NAME in G that are no call: registrations and pointers."""
        out = []
        toks = g.toks
        for i, (t, line) in enumerate(toks):
            if t != name or (i + 1 < len(toks) and toks[i + 1][0] == "("):
                continue
            where = f"{g.name} ({g.path}:{line})"
            # .member = name
            if i >= 3 and toks[i - 1][0] == "=" and toks[i - 3][0] == ".":
                member = toks[i - 2][0]
                if g.init and member in ATOMIC_OPS_BY_TYPE.get(g.init, {}):
                    out.append(("ref", "atomic", ATOMIC_OPS_BY_TYPE[g.init][member], where))
                elif g.init == "seq_operations" and member in SEQ_AFTER_START:
                    out.append(("ref",) + self._after_start(g, member) + (where,))
                elif g.init and member in PROCESS_OPS_BY_TYPE.get(g.init, ()):
                    out.append(("ref", "process", f"the {g.init} .{member} operation",
                                where))
                else:
                    out.append(("ref", "unknown", f"called through .{member} of"
                                                  f" {g.init or 'a structure'}", where))
                continue
            reg = _enclosing_call(toks, i)
            if reg in WORK_REG:
                out.append(("ref",) + self._work_context(reg, toks, i) + (where,))
            elif reg in PROCESS_REG:
                out.append(("ref", "process", f"run by {reg}()", where))
            elif reg in ATOMIC_REG:
                out.append(("ref", "atomic", f"an interrupt or softirq callback"
                                             f" ({reg}())", where))
            elif reg and reg.startswith("EXPORT_SYMBOL"):
                continue
            else:
                out.append(("ref", "unknown", "its address is taken", where))
        return out


    def _after_start(self, g, member):
        """(category, reason) of a seq_operations .show/.next/.stop: the
        state the same initializer's .start leaves held on some return."""
        toks = g.toks
        start = None
        for i in range(len(toks) - 3):
            if toks[i][0] == "." and toks[i + 1][0] == "start" and toks[i + 2][0] == "=":
                start = toks[i + 3][0]
        if start is None:
            return ("unknown", f"the seq_operations .{member} of {g.name} without a"
                               " .start: what it runs under is not known")
        cands = [f for f in self.by_name.get(start, []) if f.path == g.path] or \
            self.by_name.get(start, [])
        if len(cands) != 1 or self.scan(cands[0]).unparsable:
            return ("unknown", f"the seq_operations .{member}: its .start {start}() is"
                               " not read")
        sc = self.scan(cands[0])
        held = State()
        for r in sc.returns + ([sc.any_return] if sc.any_return else []):
            held.merge(State({k: n for k, n in r.held.items() if n > 0 and k != "self"},
                             r.why))
        c, why = held.category()
        if c == "clean":
            return ("process", f"the seq_operations .{member} operation (its .start"
                               f" {start}() leaves nothing held)")
        if c == "rcu":
            return ("rcu", f"the seq_operations .{member} operation, {why} left held by"
                           f" .start {start}()")
        return (c, f"the seq_operations .{member} operation: {why}, left held by .start"
                   f" {start}()")

    def _work_context(self, reg, toks, i):
        """(category, reason) of a work function registered by REG: process
        context unless the work item may be queued on a BH workqueue."""
        args, _e = split_args(toks, _open_paren(toks, i))
        ident = re.findall(r"\w+", text_of(args[0])) if args else []
        if not ident:
            return ("unknown", f"run by {reg}() on a work item the pass cannot name")
        work = ident[-1]
        if self._bh_files is None:
            files = self.tree.grep(BH_WQ_WORDS)
            names = set(BH_WQ_WORDS)
            for p in files:
                # wq = alloc_workqueue("...", WQ_BH | ..., ...); wq = system_bh_wq;
                for m in re.finditer(r"(\w+)\s*=\s*(alloc_workqueue\([^;]*\bWQ_BH\b|"
                                     r"system_bh(_highpri)?_wq\b)", self.tree.read(p)):
                    names.add(m.group(1))
            self._bh_names = names
            self._bh_files = self.tree.grep(sorted(names))
        # a statement that names both the work item and a BH workqueue
        # (queue_work(system_bh_wq, &w), a wrapper given both, ...)
        bh = re.compile(r"\b(" + "|".join(map(re.escape, sorted(self._bh_names))) + r")\b")
        wk = re.compile(rf"\b{re.escape(work)}\b")
        for p in self._bh_files:
            for stmt in self.tree.read(p).split(";"):
                if wk.search(stmt) and bh.search(stmt):
                    return ("unknown", f"run by {reg}(); the work item {work} may be queued"
                                       f" on a BH workqueue ({p}): softirq context")
        return ("process", f"run by {reg}() (no BH workqueue queues {work})")


def _open_paren(toks, i):
    """Index of the '(' of the call enclosing toks[i]."""
    depth = 0
    for j in range(i - 1, -1, -1):
        t = toks[j][0]
        if t == ")":
            depth += 1
        elif t == "(":
            if depth == 0:
                return j
            depth -= 1
    raise Unparsable("no enclosing call")


def _enclosing_call(toks, i):
    depth = 0
    for j in range(i - 1, -1, -1):
        t = toks[j][0]
        if t == ")":
            depth += 1
        elif t == "(":
            if depth == 0:
                return toks[j - 1][0] if j else None
            depth -= 1
        elif t in (";", "{", "}") and depth == 0:
            return None
    return None


# Data-structure expressions of the classes the advisor knows.  A class not
# listed is bound by its name: a global (`inode_hash_lock`) or a member name
# (`&tty->files_lock` -> ->files_lock); a member too common to bind ("lock",
# "list_lock", ...) leaves the class unknown.
CATALOG = {
    "&info->lock": (r"^&?\(?(info|SHMEM_I\(.*\))->lock\b", ["shmem_inode_info", "SHMEM_I"],
                    "struct shmem_inode_info::lock"),
    "cdev_lock": (r"^&?cdev_lock$", ["cdev_lock"], "fs/char_dev.c cdev_lock"),
    "cdev_lock.lock": (r"^&?cdev_lock$", ["cdev_lock"], "fs/char_dev.c cdev_lock"),
    "&ent->pde_unload_lock": (r"->pde_unload_lock\b", ["pde_unload_lock"],
                              "struct proc_dir_entry::pde_unload_lock"),
    "&p->alloc_lock": (r"->alloc_lock\b", ["alloc_lock"], "task_struct::alloc_lock"),
    "&newf->file_lock": (r"->file_lock\b", ["file_lock"], "files_struct::file_lock"),
    "mount_lock": (r"^&?mount_lock(\.lock)?$", ["mount_lock"], "fs/namespace.c mount_lock"),
    "ptlock_ptr(ptdesc)": (r"\bptl\b|ptlock_ptr\(|pte_lockptr\(|pmd_lockptr\(",
                           # pte_offset_map_nolock() hands the lock out
                           # through its last argument
                           ["ptlock_ptr", "pte_lockptr", "pmd_lockptr",
                            "pte_offset_map_nolock"],
                           "the split page-table lock"),
}
GENERIC_MEMBERS = {"lock", "list_lock", "k_lock", "wait_lock", "spinlock", "slock",
                   "irq_lock", "tx_lock", "rx_lock", "busy.lock", "lazy.lock", "f_lock",
                   "i_lock", "stat_lock", "mtx", "ctx_lock"}


def target_for(klass):
    """The Target of a lockdep class name, or None when it cannot be bound."""
    base = re.sub(r"(#\d+)?(/\d+)?$", "", klass)
    if base in CATALOG:
        expr, words, note = CATALOG[base]
        m = re.match(r"^(?:struct )?(\w+)::(\w+)$", note)
        return Target(base, expr, words, note, *(m.groups() if m else (None, None)))
    m = re.match(r"^&\w+->([\w.]+)$", base)
    if m and m.group(1) not in GENERIC_MEMBERS and "." not in m.group(1):
        mem = m.group(1)
        # the struct is found from the class's spin_lock_init() when the
        # pass runs (Analysis._init_struct())
        return Target(base, rf"(->|\.){mem}\b", [mem], f"member {mem}", member=mem)
    if re.match(r"^\w+$", base) and "lock" in base:
        return Target(base, rf"^&?{base}(\.lock)?$", [base], f"global {base}")
    return None


def verdict(table):
    """'unsafe' / 'unknown' / 'rcu' / 'process' for a class from its sites."""
    if not table:
        return "unknown"
    cats = {r["context"] for r in table}
    return next(k for k in ORDER if k in cats)


# The values of CONFIG_PREEMPT_RT a class is read with when the caller
# does not say which kernel it is for: "process" only when both say so.
BOTH_CONFIGS = ({"CONFIG_PREEMPT_RT": False}, {"CONFIG_PREEMPT_RT": "y"})


def config_text(config):
    """How CONFIG reads in a verdict: `CONFIG_PREEMPT_RT=y`, `... unset`."""
    return ", ".join(f"{k}={v}" if v else f"{k} unset" for k, v in sorted(config.items())) \
        or "no configuration"


def analyse_class(tree, klass, cache_dir=None, config=None, **kw):
    """{class, target, verdict, sites, files, seconds, config} for one
    class.  CONFIG ({CONFIG_X: "y" / "m" / False}) decides the
    `if (IS_ENABLED(CONFIG_X))` tests it names; None: the kernel is not
    known, the class is read with each of BOTH_CONFIGS and the result is
    the one with the worse verdict (the first when they agree)."""
    if config is not None:
        return _analyse_class(tree, klass, cache_dir, dict(kw, config=config))
    runs = [_analyse_class(tree, klass, cache_dir, dict(kw, config=c)) for c in BOTH_CONFIGS]
    worst = min(runs, key=lambda r: ORDER.index(r["verdict"]))
    out = dict(worst)
    if runs[0]["verdict"] != runs[1]["verdict"]:
        out["config"] = " / ".join(f"{r['config']}: {r['verdict']}" for r in runs)
    else:
        out["config"] = " and ".join(r["config"] for r in runs)
    out["seconds"] = round(sum(r.get("seconds", 0) for r in runs), 1)
    return out


def _analyse_class(tree, klass, cache_dir, kw):
    t0 = time.monotonic()
    tgt = target_for(klass)
    if tgt is None:
        return {"class": klass, "target": None, "verdict": "unknown", "sites": [],
                "reason": "no static binding: the class name does not say which lock"
                          " expression it is (add it to lockscan.CATALOG)",
                "files": 0, "seconds": 0.0, "config": config_text(kw["config"])}
    ident = tree.ident()
    cpath = None
    if cache_dir and ident:
        os.makedirs(cache_dir, exist_ok=True)
        safe = re.sub(r"[^\w.-]", "_", tgt.name)
        cpath = os.path.join(cache_dir, f"{ident[:16]}-{safe}-{_cache_key(kw)}.json")
        try:
            with open(cpath, encoding="utf-8") as f:
                cached = json.load(f)
            if isinstance(cached, dict) and "sites" in cached:
                return cached
        except (OSError, ValueError):
            pass           # absent or corrupt: computed again
    an = Analysis(tree, tgt, **kw)
    table = an.run()
    out = {"class": klass, "target": tgt.note, "verdict": verdict(table), "sites": table,
           "wrappers": sorted(n for n, w in an.wrappers.items() if w[2]),
           "struct": tgt.struct, "excluded": an.excluded,
           "files": an.files_read, "config": config_text(kw["config"]),
           "seconds": round(time.monotonic() - t0, 1)}
    if an.timed_out:
        out["reason"] = (f"the caller walk ran out of its {an.max_seconds} s: sites whose"
                         " callers were not walked are unknown")
    elif cpath:
        # a result cut off by the wall clock depends on the machine: not cached
        tmp = f"{cpath}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1)
        os.replace(tmp, cpath)
    return out


def _cache_key(kw):
    """What a cached result depends on besides the tree: this pass's code
    and its limits."""
    import hashlib
    with open(__file__, "rb") as f:
        h = hashlib.sha256(f.read())
    h.update(repr((VERSION, kw.get("max_depth", MAX_DEPTH), kw.get("max_funcs", MAX_FUNCS),
                   kw.get("max_seconds", MAX_SECONDS),
                   sorted((kw.get("config") or PROJECT_CONFIG).items()))).encode())
    return h.hexdigest()[:16]


def site_table(res, width=None):
    """Text table of one class's sites; WIDTH: wrapped for a changelog, the
    chain by function names only."""
    import textwrap

    def wrap(text, indent):
        if not width:
            return [indent + text]
        return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent,
                             break_on_hyphens=False, break_long_words=False)

    lines = wrap(f"{res['class']} ({res.get('target') or 'unbound'}): {res['verdict']},"
                 f" {len(res['sites'])} sites, {res.get('files', 0)} files read,"
                 f" {res.get('seconds', 0)} s"
                 + (f"; {res['config']}" if res.get("config") else ""), "")
    if res.get("reason"):
        lines += wrap(res["reason"], "  ")
    if res.get("wrappers"):
        lines += wrap("wrappers: " + ", ".join(f"{w}()" for w in res["wrappers"]), "  ")
    for r in res["sites"]:
        lines += wrap(f"{r['path']}:{r['line']} {r['function']}(): {r['call']}", "  ")
        lines += wrap(f"{r['context']}: {r['reason']}", "      ")
        if len(r["chain"]) > 1:
            chain = r["chain"][1:]
            if width:
                # names only, but where the chain ends (the deciding caller)
                chain = [c.split(" (")[0] + ("()" if not c.startswith("<") else "")
                         for c in chain[:-1]] + [chain[-1].replace(" (", "() (", 1)
                                                 if not chain[-1].startswith("<")
                                                 else chain[-1]]
            lines += wrap("via " + " <- ".join(chain), "      ")
    for r in res.get("excluded") or []:
        lines += wrap(f"{r['path']}:{r['line']} {r['function']}(): {r['call']}", "  ")
        lines += wrap(f"other struct {r['struct']}, not this class", "      ")
    return "\n".join(lines)
