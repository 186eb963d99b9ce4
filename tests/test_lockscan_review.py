# SPDX-License-Identifier: GPL-2.0
"""The static pass (pvrt.lockscan) on the review findings of issue 20: each
case is a small tree of its own whose sources decide the verdict."""

import os
import signal
import textwrap

import pytest

from pvrt import advisor, lockscan
from pvrt.errors import PvrtError

DATA = os.path.join(os.path.dirname(__file__), "data", "lock-advisor-project.log")
TREE = os.path.join(os.path.dirname(__file__), "data", "advisor-tree")


def tree_of(tmp_path, files):
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return lockscan.Tree(str(tmp_path))


def sites(res):
    return {r["function"]: r for r in res["sites"]}


# item 1: the advisor's own boot, without --input

def test_main_without_input_reads_the_built_tree(monkeypatch, tmp_path):
    from pvrt import experiment, tools
    top = os.path.join(os.path.dirname(__file__), "..")
    monkeypatch.setenv("PVRT_TOP", top)
    monkeypatch.setenv("PVRT_BUILD", str(tmp_path))
    monkeypatch.setenv("PVRT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(tools, "require", lambda: None)
    monkeypatch.setattr(experiment, "apply_and_build", lambda *a, **k: (TREE, {}))
    with open(DATA, encoding="utf-8") as f:
        text = f.read()

    class Res:
        def __init__(self):
            self.text = text

        def problems(self):
            return []
    seen = {}

    def fake_boot(_top, tree, name, secs, load, results_dir):
        seen["tree"] = tree
        return Res(), os.path.join(results_dir, f"{name}.log")
    monkeypatch.setattr(advisor, "boot_advisor", fake_boot)
    assert advisor.main(["--secs", "1"]) in (0, 1)
    assert seen["tree"] == TREE
    out = [p for p in (tmp_path / "results").glob("advisor-*/advisor.json")]
    assert out


# item 2: unbalanced macros and functions

def test_a_macro_that_opens_a_loop_is_unparsable_not_a_crash(tmp_path):
    tree = tree_of(tmp_path, {"net/a.c": """\
        static DEFINE_SPINLOCK(nh_lock);
        #define for_nh(fi, nh) for (nh = fi->nh; nh < fi->end; nh++) {
        #define endfor_nh() }
        #define lock_nh(fi) if (fi) { spin_lock(&nh_lock);
        SYSCALL_DEFINE0(nh)
        {
        \tspin_lock(&nh_lock);
        \tspin_unlock(&nh_lock);
        \treturn 0;
        }
        """})
    res = lockscan.analyse_class(tree, "nh_lock")
    assert res["verdict"] == "unknown"
    bad = sites(res)["lock_nh"]
    assert bad["context"] == "unknown" and "cannot be parsed" in bad["reason"]
    assert sites(res)["SYSCALL_DEFINE0"]["context"] == "process"


def test_a_class_the_pass_fails_on_is_unknown_with_the_reason(monkeypatch, tmp_path):
    def boom(*_a, **_k):
        raise IndexError("list index out of range")
    monkeypatch.setenv("PVRT_CACHE", str(tmp_path))
    monkeypatch.setattr(lockscan, "analyse_class", boom)
    res = advisor.static_results(lockscan.Tree(TREE), ["mount_lock"])
    assert res["mount_lock"]["verdict"] == "unknown"
    assert "IndexError" in res["mount_lock"]["reason"]


def test_a_file_whose_braces_do_not_balance_is_unknown(tmp_path):
    tree = tree_of(tmp_path, {"k/a.c": """\
        static DEFINE_SPINLOCK(ub_lock);
        SYSCALL_DEFINE0(ub)
        {
        #ifdef X
        \tif (a) {
        #else
        \tif (b) {
        #endif
        \t\tspin_lock(&ub_lock);
        \t\tspin_unlock(&ub_lock);
        \t}
        \treturn 0;
        }
        """})
    res = lockscan.analyse_class(tree, "ub_lock")
    assert res["verdict"] == "unknown"
    assert "never closed" in res["sites"][0]["reason"]


# item 3: contracts

def test_a_stop_machine_callback_runs_with_interrupts_off(tmp_path):
    tree = tree_of(tmp_path, {"k/a.c": """\
        static DEFINE_SPINLOCK(sm_lock);
        static int sm_fn(void *data)
        {
        \tspin_lock(&sm_lock);
        \tspin_unlock(&sm_lock);
        \treturn 0;
        }
        SYSCALL_DEFINE0(sm)
        {
        \treturn stop_machine(sm_fn, NULL, NULL);
        }
        """})
    res = lockscan.analyse_class(tree, "sm_lock")
    assert res["verdict"] == "atomic"
    assert "stop_machine()" in res["sites"][0]["reason"]


def test_seq_show_runs_with_what_start_took(tmp_path):
    tree = tree_of(tmp_path, {"k/a.c": """\
        static DEFINE_SPINLOCK(outer);
        static DEFINE_SPINLOCK(seq_lock);
        static DEFINE_SPINLOCK(plain_lock);
        static void *s_start(struct seq_file *m, loff_t *pos)
        {
        \tspin_lock(&outer);
        \treturn NULL;
        }
        static void s_stop(struct seq_file *m, void *v)
        {
        \tspin_unlock(&outer);
        }
        static int s_show(struct seq_file *m, void *v)
        {
        \tspin_lock(&seq_lock);
        \tspin_unlock(&seq_lock);
        \treturn 0;
        }
        static const struct seq_operations s_ops = {
        \t.start = s_start, .stop = s_stop, .show = s_show,
        };
        static void *p_start(struct seq_file *m, loff_t *pos)
        {
        \treturn NULL;
        }
        static int p_show(struct seq_file *m, void *v)
        {
        \tspin_lock(&plain_lock);
        \tspin_unlock(&plain_lock);
        \treturn 0;
        }
        static const struct seq_operations p_ops = {
        \t.start = p_start, .show = p_show,
        };
        """})
    res = lockscan.analyse_class(tree, "seq_lock")
    assert res["verdict"] == "atomic"
    assert "left held by .start s_start()" in res["sites"][0]["reason"]
    assert lockscan.analyse_class(tree, "plain_lock")["verdict"] == "process"


def test_drop_inode_is_called_under_i_lock(tmp_path):
    tree = tree_of(tmp_path, {"fs/a.c": """\
        static DEFINE_SPINLOCK(drop_lock);
        static int d_drop(struct inode *inode)
        {
        \tspin_lock(&drop_lock);
        \tspin_unlock(&drop_lock);
        \treturn 1;
        }
        static const struct super_operations d_sops = {
        \t.drop_inode = d_drop,
        };
        """})
    res = lockscan.analyse_class(tree, "drop_lock")
    assert res["verdict"] == "atomic"
    assert "i_lock" in res["sites"][0]["reason"]


def test_work_queued_on_a_bh_workqueue_is_not_process_context(tmp_path):
    tree = tree_of(tmp_path, {"k/a.c": """\
        static DEFINE_SPINLOCK(bhwq_lock);
        static DEFINE_SPINLOCK(wq_lock);
        static void bh_fn(struct work_struct *w)
        {
        \tspin_lock(&bhwq_lock);
        \tspin_unlock(&bhwq_lock);
        }
        static DECLARE_WORK(bh_work, bh_fn);
        SYSCALL_DEFINE0(bhq)
        {
        \tqueue_work(system_bh_wq, &bh_work);
        \treturn 0;
        }
        static void wq_fn(struct work_struct *w)
        {
        \tspin_lock(&wq_lock);
        \tspin_unlock(&wq_lock);
        }
        static DECLARE_WORK(plain_work, wq_fn);
        SYSCALL_DEFINE0(wq)
        {
        \tqueue_work(system_wq, &plain_work);
        \treturn 0;
        }
        """})
    res = lockscan.analyse_class(tree, "bhwq_lock")
    assert res["verdict"] == "unknown"
    assert "BH workqueue" in res["sites"][0]["reason"]
    assert lockscan.analyse_class(tree, "wq_lock")["verdict"] == "process"


# item 4: guards

def test_guards_the_pass_does_not_know_are_not_nothing(tmp_path):
    tree = tree_of(tmp_path, {"k/a.c": """\
        static DEFINE_SPINLOCK(g1_lock);
        static DEFINE_SPINLOCK(g2_lock);
        static DEFINE_SPINLOCK(g3_lock);
        static DEFINE_SPINLOCK(g4_lock);
        SYSCALL_DEFINE0(g1)
        {
        \tguard(raw_spinlock_nested)(&rawl);
        \tspin_lock(&g1_lock);
        \tspin_unlock(&g1_lock);
        \treturn 0;
        }
        SYSCALL_DEFINE0(g2)
        {
        \tguard(frobnicate)(&x);
        \tspin_lock(&g2_lock);
        \tspin_unlock(&g2_lock);
        \treturn 0;
        }
        SYSCALL_DEFINE0(g3)
        {
        \tguard(mutex)(&m);
        \tguard(spinlock)(&g3_lock);
        \treturn 0;
        }
        SYSCALL_DEFINE0(g4)
        {
        \tscoped_guard(read_lock_irqsave, &rwl) {
        \t\tspin_lock(&g4_lock);
        \t\tspin_unlock(&g4_lock);
        \t}
        \treturn 0;
        }
        """})
    assert lockscan.analyse_class(tree, "g1_lock")["verdict"] == "atomic"
    g2 = lockscan.analyse_class(tree, "g2_lock")
    assert g2["verdict"] == "unknown" and "guard(frobnicate)" in g2["sites"][0]["reason"]
    # the guard's own acquisition is not what its site is nested in
    assert lockscan.analyse_class(tree, "g3_lock")["verdict"] == "process"
    assert lockscan.analyse_class(tree, "g4_lock")["verdict"] == "atomic"


# item 5: atomic states

T2 = {"k/a.c": """\
    static DEFINE_SPINLOCK(t_lock);
    static DEFINE_SPINLOCK(o_lock);
    SYSCALL_DEFINE0(a)
    {
    \tif (unlikely(!spin_trylock(&o_lock)))
    \t\treturn -EBUSY;
    \tspin_lock(&t_lock);
    \tspin_unlock(&t_lock);
    \tspin_unlock(&o_lock);
    \treturn 0;
    }
    SYSCALL_DEFINE0(b)
    {
    \traw_local_irq_disable();
    \tspin_lock(&t_lock);
    \tspin_unlock(&t_lock);
    \traw_local_irq_enable();
    \treturn 0;
    }
    SYSCALL_DEFINE0(c)
    {
    \tvoid *p = kmap_atomic(page);
    \tspin_lock(&t_lock);
    \tspin_unlock(&t_lock);
    \tkunmap_atomic(p);
    \treturn 0;
    }
    SYSCALL_DEFINE0(d)
    {
    \tint seq = 0;
    again:
    \tread_seqbegin_or_lock(&rename_lock, &seq);
    \tspin_lock(&t_lock);
    \tspin_unlock(&t_lock);
    \tif (need_seqretry(&rename_lock, seq)) { seq = 1; goto again; }
    \tdone_seqretry(&rename_lock, seq);
    \treturn 0;
    }
    SYSCALL_DEFINE0(e)
    {
    \tpreempt_count_add(1);
    \tspin_lock(&t_lock);
    \tspin_unlock(&t_lock);
    \tpreempt_count_sub(1);
    \t__local_bh_disable_ip(_THIS_IP_, 1);
    \tspin_lock(&t_lock);
    \tspin_unlock(&t_lock);
    \t__local_bh_enable_ip(_THIS_IP_, 1);
    \tarch_spin_lock(&al);
    \tspin_lock(&t_lock);
    \tspin_unlock(&t_lock);
    \tarch_spin_unlock(&al);
    \tlruvec = folio_lruvec_lock(folio);
    \tspin_lock(&t_lock);
    \tspin_unlock(&t_lock);
    \tunlock_page_lruvec(lruvec);
    \twrite_seqcount_begin_nested(&sc, 1);
    \tspin_lock(&t_lock);
    \tspin_unlock(&t_lock);
    \twrite_seqcount_end(&sc);
    \treturn 0;
    }
    """}


def test_atomic_states_the_pass_did_not_see(tmp_path):
    res = lockscan.analyse_class(tree_of(tmp_path, T2), "t_lock")
    by = {}
    for r in res["sites"]:
        by.setdefault(r["function"], []).append(r["reason"])
    assert res["verdict"] == "atomic"
    assert by["SYSCALL_DEFINE0"][0].startswith("nested in a spinlock_t (spin_trylock()")
    reasons = [r["reason"] for r in res["sites"]]
    assert reasons[1].startswith("interrupts disabled (raw_local_irq_disable()")
    assert reasons[2].startswith("preemption disabled (kmap_atomic()")
    assert reasons[3].startswith("nested in a spinlock_t (read_seqbegin_or_lock()")
    assert reasons[4].startswith("preemption disabled (preempt_count_add()")
    assert reasons[5].startswith("bottom halves disabled (__local_bh_disable_ip()")
    assert reasons[6].startswith("nested in a raw_spinlock_t (arch_spin_lock()")
    assert reasons[7].startswith("nested in a spinlock_t (folio_lruvec_lock()")
    assert reasons[8].startswith("preemption disabled (write_seqcount_begin_nested()")
    assert len(reasons) == 9


def test_read_seqbegin_or_lock_is_a_site_of_the_seqlock(tmp_path):
    res = lockscan.analyse_class(tree_of(tmp_path, T2), "rename_lock")
    assert [r["call"] for r in res["sites"]] == ["read_seqbegin_or_lock(&rename_lock)"]


def test_a_trylock_condition_in_another_form_holds_on_both_branches(tmp_path):
    tree = tree_of(tmp_path, {"k/a.c": """\
        static DEFINE_SPINLOCK(t_lock);
        static DEFINE_SPINLOCK(o_lock);
        SYSCALL_DEFINE1(x, int, n)
        {
        \tif (n || !spin_trylock(&o_lock))
        \t\treturn -EBUSY;
        \tspin_lock(&t_lock);
        \tspin_unlock(&t_lock);
        \treturn n;
        }
        """})
    assert lockscan.analyse_class(tree, "t_lock")["verdict"] == "atomic"


# item 6: recursion

def test_a_cycle_of_callers_is_not_cached_half_walked(tmp_path):
    tree = tree_of(tmp_path, {"k/c.c": """\
        static DEFINE_SPINLOCK(cyc_lock);
        static DEFINE_SPINLOCK(other);
        void cyc_b(int n);
        void cyc_a(int n)
        {
        \tspin_lock(&cyc_lock);
        \tspin_unlock(&cyc_lock);
        \tif (n)
        \t\tcyc_b(n - 1);
        }
        void cyc_b(int n)
        {
        \tspin_lock(&cyc_lock);
        \tspin_unlock(&cyc_lock);
        \tif (n)
        \t\tcyc_a(n - 1);
        }
        SYSCALL_DEFINE0(cyc)
        {
        \tcyc_b(3);
        \treturn 0;
        }
        void irq_path(void)
        {
        \tspin_lock(&other);
        \tcyc_a(2);
        \tspin_unlock(&other);
        }
        SYSCALL_DEFINE0(irqp)
        {
        \tirq_path();
        \treturn 0;
        }
        """})
    res = lockscan.analyse_class(tree, "cyc_lock")
    assert {r["function"]: r["context"] for r in res["sites"]} == {"cyc_a": "atomic",
                                                                   "cyc_b": "atomic"}


# item 7: tokenizer

def test_a_comment_in_a_define_keeps_its_continuation(tmp_path):
    tree = tree_of(tmp_path, {"k/a.c": """\
        static DEFINE_SPINLOCK(m_lock);
        #define take_m() do { /* the lock, \\
        \t\ttaken */ spin_lock(&m_lock); \\
        \t} while (0)
        """})
    res = lockscan.analyse_class(tree, "m_lock")
    assert [r["call"] for r in res["sites"]] == ["spin_lock(&m_lock)"]


# item 10

def test_an_unrecognised_static_verdict_is_unknown():
    v, _note, _d = advisor.static_verdict({"verdict": "clean", "sites": []})
    assert v == "unknown"
    assert advisor.static_verdict({"verdict": "process", "sites": []})[0] == "ok"


# item 12

def test_a_bad_tree_or_revision_is_a_clear_error(tmp_path):
    assert issubclass(lockscan.SourceError, PvrtError)
    with pytest.raises(PvrtError, match="no git repository"):
        lockscan.Tree("/nonexistent", "HEAD")
    repo = tmp_path / "r@x.git"
    os.system(f"git init -q --bare '{repo}'")
    with pytest.raises(PvrtError, match="no revision nosuch"):
        lockscan.Tree(str(repo), "nosuch")


# item 11: the cache

def test_the_cache_survives_corruption_and_keys_on_the_pass(tmp_path):
    import subprocess
    src = tmp_path / "src"
    tree = tree_of(src, {"k/a.c": """\
        static DEFINE_SPINLOCK(c_lock);
        SYSCALL_DEFINE0(c)
        {
        \tspin_lock(&c_lock);
        \tspin_unlock(&c_lock);
        \treturn 0;
        }
        """})
    subprocess.run(["git", "-C", str(src), "init", "-q"], check=True)
    subprocess.run(["git", "-C", str(src), "add", "."], check=True)
    subprocess.run(["git", "-C", str(src), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qm", "t"], check=True)
    cache = tmp_path / "cache"
    one = lockscan.PROJECT_CONFIG     # one configuration, one entry
    assert lockscan.analyse_class(tree, "c_lock", cache_dir=str(cache), config=one)["verdict"] == \
        "process"
    files = list(cache.iterdir())
    assert len(files) == 1 and not list(cache.glob("*.tmp"))
    files[0].write_text("{ truncated")
    assert lockscan.analyse_class(tree, "c_lock", cache_dir=str(cache), config=one)["verdict"] == \
        "process"
    # other limits, another entry
    lockscan.analyse_class(tree, "c_lock", cache_dir=str(cache), config=one, max_depth=2)
    assert len(list(cache.iterdir())) == 2
    # a walk cut off by the wall clock is not cached
    res = lockscan.analyse_class(tree, "c_lock", cache_dir=str(cache), config=one, max_seconds=-1)
    assert "ran out" in res["reason"]
    assert len(list(cache.iterdir())) == 2


# item 16: an all-caps macro can be a wrapper

def test_an_all_caps_macro_is_a_wrapper(tmp_path):
    tree = tree_of(tmp_path, {"k/a.c": """\
        static DEFINE_SPINLOCK(t_lock);
        #define LOCK_O() raw_spin_lock(&o_raw)
        #define UNLOCK_O() raw_spin_unlock(&o_raw)
        SYSCALL_DEFINE0(a)
        {
        \tLOCK_O();
        \tspin_lock(&t_lock);
        \tspin_unlock(&t_lock);
        \tUNLOCK_O();
        \treturn 0;
        }
        """})
    res = lockscan.analyse_class(tree, "t_lock")
    assert res["verdict"] == "atomic"
    assert res["sites"][0]["reason"].startswith("nested in a raw_spinlock_t (LOCK_O()")


# item 17: a .c file included by another is like a header

def test_a_static_function_of_an_included_c_file(tmp_path):
    tree = tree_of(tmp_path, {
        "kernel/sched/idle.c": """\
            static DEFINE_SPINLOCK(i_lock2);
            static void idle_fn(void)
            {
            \tspin_lock(&i_lock2);
            \tspin_unlock(&i_lock2);
            }
            """,
        "kernel/sched/build_policy.c": """\
            #include "idle.c"
            SYSCALL_DEFINE0(x)
            {
            \traw_spin_lock(&r);
            \tidle_fn();
            \traw_spin_unlock(&r);
            \treturn 0;
            }
            """})
    res = lockscan.analyse_class(tree, "i_lock2")
    assert res["verdict"] == "atomic"
    assert res["sites"][0]["chain"][1].startswith("SYSCALL_DEFINE0 (kernel/sched/build_policy")


# round 6 (issue 20): a wrong "process" is the one answer the pass must not give

R6_USE = """\
    static DEFINE_SPINLOCK(inner_lock);
    DEFINE_SPINLOCK(g_lock);
    static void use(void)
    {
    \tspin_lock(&inner_lock);
    \tspin_unlock(&inner_lock);
    }
    """


def r6(tmp_path, body, klass="inner_lock", **kw):
    """The verdict of KLASS in a tree of kernel/a.c = R6_USE + BODY (or FILES)."""
    files = body if isinstance(body, dict) else {"kernel/a.c": R6_USE + body}
    return lockscan.analyse_class(tree_of(tmp_path, files), klass, **kw)["verdict"]


# item 3: a goto into a branch the configuration removes

def test_a_label_in_a_branch_the_configuration_removes_is_read(tmp_path):
    assert r6(tmp_path, """\
    SYSCALL_DEFINE1(a1, int, x)
    {
    \tspin_lock(&g_lock);
    \tif (x)
    \t\tgoto out;
    \tspin_unlock(&g_lock);
    \tif (IS_ENABLED(CONFIG_PREEMPT_RT)) {
    out:
    \t\tx++;
    \t}
    \tuse();
    \treturn 0;
    }
    """, config=lockscan.PROJECT_CONFIG) == "atomic"
    # the label of a backward goto in a removed else: its site is read
    assert r6(tmp_path / "b", """\
    SYSCALL_DEFINE1(c1, int, x)
    {
    \tif (!IS_ENABLED(CONFIG_PREEMPT_RT)) {
    \t\tx++;
    \t} else {
    again:
    \t\tuse();
    \t\treturn 0;
    \t}
    \tspin_lock(&g_lock);
    \tgoto again;
    }
    """, config=lockscan.PROJECT_CONFIG) == "atomic"


# item 4: the kernel's PREEMPT_RT, not the project's, decides IS_ENABLED()

R6_RT = """\
    SYSCALL_DEFINE0(rt)
    {
    \tif (IS_ENABLED(CONFIG_PREEMPT_RT))
    \t\tspin_lock(&g_lock);
    \tuse();
    \tif (IS_ENABLED(CONFIG_PREEMPT_RT))
    \t\tspin_unlock(&g_lock);
    \treturn 0;
    }
    """


def test_is_enabled_is_read_with_the_kernels_preempt_rt(tmp_path):
    assert r6(tmp_path / "a", R6_RT, config={"CONFIG_PREEMPT_RT": False}) == "process"
    assert r6(tmp_path / "b", R6_RT, config={"CONFIG_PREEMPT_RT": "y"}) == "atomic"
    # a kernel not named: both values, process only when both say so
    res = lockscan.analyse_class(tree_of(tmp_path / "c", {"kernel/a.c": R6_USE + R6_RT}),
                                 "inner_lock")
    assert res["verdict"] == "atomic"
    assert "CONFIG_PREEMPT_RT=y: atomic" in res["config"]
    assert "CONFIG_PREEMPT_RT=y: atomic" in lockscan.site_table(res).splitlines()[0]


def test_the_advisor_reads_the_variants_built_preempt_rt(tmp_path, monkeypatch):
    out = tmp_path / "out" / "project-rt-lockstat"
    out.mkdir(parents=True)
    (out / ".config").write_text("CONFIG_PREEMPT_RT=y\n")
    assert advisor.variant_config(str(tmp_path), "project-rt") == {"CONFIG_PREEMPT_RT": "y"}
    (tmp_path / "out" / "project").mkdir()
    (tmp_path / "out" / "project" / ".config").write_text("# CONFIG_PREEMPT_RT is not set\n")
    assert advisor.variant_config(str(tmp_path), "project") == {"CONFIG_PREEMPT_RT": False}
    assert advisor.variant_config(str(tmp_path), "rt") is None
    tree = tree_of(tmp_path / "t", {"kernel/a.c": R6_USE + R6_RT})
    monkeypatch.setattr(advisor.base, "cache_dir", lambda: str(tmp_path / "cache"))
    got = advisor.static_results(tree, ["inner_lock"],
                                 config=advisor.variant_config(str(tmp_path), "project-rt"))
    assert got["inner_lock"]["verdict"] == "atomic"


# item 1: each case starts from the switch's entry state

@pytest.mark.parametrize("body", [
    "\tcase 1:\n\t\tspin_unlock(&g_lock);\n\t\tbreak;\n\tcase 2:\n\t\tuse();\n\t\tbreak;\n",
    "\tcase 1:\n\t\tspin_unlock(&g_lock);\n\t\tfallthrough;\n\tcase 2:\n\t\tuse();\n"
    "\t\tbreak;\n",
    "\tcase 1:\n\t\tspin_unlock(&g_lock);\n\t\treturn 0;\n\tdefault:\n\t\tuse();\n\t\tbreak;\n",
    "\tcase 1:\n\t\tspin_unlock(&g_lock);\n\t\tbreak;\n\t}\n\tuse();\n\t{\n",
    "\tcase 1:\n\t\tspin_unlock(&g_lock);\n\t\tbreak;\n\tcase 2:\n\t\tswitch (x) {\n"
    "\t\tdefault:\n\t\t\tspin_unlock(&g_lock);\n\t\t}\n\t\tbreak;\n\t}\n\tuse();\n\t{\n",
])
def test_a_case_starts_from_the_switchs_entry_state(tmp_path, body):
    assert r6(tmp_path, "SYSCALL_DEFINE1(a2, int, x)\n{\n\tspin_lock(&g_lock);\n"
              "\tswitch (x) {\n" + body + "\t}\n\treturn 0;\n}\n") == "atomic"


def test_a_switch_whose_cases_all_release_is_process_after(tmp_path):
    assert r6(tmp_path, "SYSCALL_DEFINE1(a2, int, x)\n{\n\tspin_lock(&g_lock);\n"
              "\tswitch (x) {\n\tcase 1:\n\t\tspin_unlock(&g_lock);\n\t\tbreak;\n"
              "\tdefault:\n\t\tspin_unlock(&g_lock);\n\t}\n\tuse();\n\treturn 0;\n}\n") \
        == "process"


# item 2: a macro that takes a lock, tested by an if

@pytest.mark.parametrize("mac", ["#define my_lock(l) spin_trylock(l)\n",
                                 "#define my_lock(l) ({ spin_lock(l); 1; })\n"])
def test_a_macro_that_takes_a_lock_holds_it_in_the_if_testing_it(tmp_path, mac):
    assert r6(tmp_path, mac + """\
    SYSCALL_DEFINE0(f1)
    {
    \tif (my_lock(&g_lock)) {
    \t\tuse();
    \t\tspin_unlock(&g_lock);
    \t}
    \treturn 0;
    }
    """) == "atomic"


# item 5: a conditional alias after another declarator

R6_FOO = """\
    struct foo {
    \tspinlock_t mylock;
    };
    DEFINE_SPINLOCK(g_lock);
    SYSCALL_DEFINE1(plain, struct foo *, a)
    {
    \tspin_lock(&a->mylock);
    \tspin_unlock(&a->mylock);
    \treturn 0;
    }
    """


@pytest.mark.parametrize("decl", ["spinlock_t *l = c ? &a->mylock : &b->mylock;",
                                  "spinlock_t *m = NULL, *l = c ? &a->mylock : &b->mylock;"])
def test_every_declarator_before_a_conditional_alias_is_read(tmp_path, decl):
    assert r6(tmp_path, {"kernel/a.c": R6_FOO + """\
    SYSCALL_DEFINE3(r7, struct foo *, a, struct foo *, b, int, c)
    {
    \t""" + decl + """

    \tspin_lock(&g_lock);
    \tspin_lock(l);
    \tspin_unlock(l);
    \tspin_unlock(&g_lock);
    \treturn 0;
    }
    """}, "&a->mylock") == "atomic"


# item 6: a macro argument the pass cannot prove unchanged

def r6_step(mac, call="step(p);"):
    return R6_USE + mac + """\
    struct foo { spinlock_t lock; struct foo *next; };
    SYSCALL_DEFINE1(a3, struct foo *, f)
    {
    \tstruct foo *p = f->next;

    \tspin_lock(&p->lock);
    \t""" + call + """
    \tspin_lock(&p->lock);
    \tspin_unlock(&p->lock);
    \tuse();
    \treturn 0;
    }
    """


@pytest.mark.parametrize("mac", ["#define step(q) (q) = 0\n",
                                 "#define step(q) ((q) = (q)->next)\n",
                                 "#define step(q) other((q))\n"])
def test_a_macro_body_that_assigns_its_parenthesized_parameter(tmp_path, mac):
    """(b): `(q) = ...` at the start of the body."""
    assert r6(tmp_path, r6_step(mac)) == "atomic"


def test_a_macro_argument_and_only_unreachable_functions_of_its_name(tmp_path):
    """(a): a static function of another file, or one architecture's
    function called from generic code, says nothing of the macro the
    call may be."""
    fn = "/* inner_lock */\n%sstatic void step(struct foo *f)\n{\n\tother(f);\n}\n"
    assert r6(tmp_path / "a", {"kernel/a.c": r6_step(""), "kernel/b.c": fn % ""}) == "atomic"
    assert r6(tmp_path / "b", {"kernel/a.c": r6_step(""),
                               "arch/x86/kernel/b.c": (fn % "").replace("static ", "")}) \
        == "atomic"
    # the function of the caller's own file is the one called: a copy
    assert r6(tmp_path / "c", {"kernel/a.c": (fn % "") + r6_step("")}) == "process"


# item 7: a loop macro whose body is one statement without braces

@pytest.mark.parametrize("body", ["\t\tgrab();\n", "\t{\n\t\tgrab();\n\t}\n",
                                  "\t\tif (n)\n\t\t\tgrab();\n\t\telse\n\t\t\tn++;\n"])
def test_a_loop_macro_without_braces_goes_round(tmp_path, body):
    assert r6(tmp_path, """\
    static void grab(void)
    {
    \tuse();
    \tspin_lock(&g_lock);
    }
    SYSCALL_DEFINE1(d1, int, n)
    {
    \tint i;

    \tfor_each_possible_cpu(i)
    """ + body + """\
    \treturn 0;
    }
    """) == "atomic"


def test_a_macro_body_that_hands_its_parameter_to_asm(tmp_path):
    """An asm output `"=r"(q)`: the parenthesized parameter is an
    argument of no function, and may be written."""
    assert r6(tmp_path, r6_step('#define step(q) asm volatile("" : "=r"(q))\n')) == "atomic"


# item 8: cases for the rules the review's mutants removed unseen

@pytest.mark.parametrize("mac", ["#define step(q) q += 1\n", "#define step(q) q <<= 1\n",
                                 "#define step(q) other(&q)\n", "#define step(q) ++q\n",
                                 "#define step(q) q--\n",
                                 "#define step(q) inner(q, 0)\n#define inner(a, b) a = b\n"])
def test_a_macro_body_that_changes_its_parameter(tmp_path, mac):
    """A compound assignment, its address, ++/--, or handed bare to a
    macro that assigns it."""
    assert r6(tmp_path, r6_step(mac)) == "atomic"


def test_a_decided_if_skips_its_else_and_is_reachable_m_is_undecided(tmp_path):
    # PREEMPT_RT unset: the else is not built
    assert r6(tmp_path / "a", """\
    SYSCALL_DEFINE1(e, int, x)
    {
    \tif (!IS_ENABLED(CONFIG_PREEMPT_RT))
    \t\tx++;
    \telse
    \t\tspin_lock(&g_lock);
    \tuse();
    \treturn 0;
    }
    """, config=lockscan.PROJECT_CONFIG) == "process"
    # IS_REACHABLE() of a module: depends on who asks, both branches
    body = """\
    SYSCALL_DEFINE1(e, int, x)
    {
    \tif (IS_REACHABLE(CONFIG_FOO))
    \t\tspin_lock(&g_lock);
    \tuse();
    \treturn 0;
    }
    """
    assert r6(tmp_path / "b", body, config={"CONFIG_FOO": "m"}) == "atomic"
    assert r6(tmp_path / "c", body, config={"CONFIG_FOO": False}) == "process"


@pytest.mark.parametrize("then", ["\t\tx++;\n", "\t\tdo\n\t\t\tx++;\n\t\twhile (x);\n"])
def test_a_decided_false_if_reads_its_else_as_a_statement(tmp_path, then):
    """PREEMPT_RT unset: the else is the built branch, its `for (;;)`
    left by the break alone; a removed do-while is skipped whole."""
    assert r6(tmp_path, """\
    SYSCALL_DEFINE1(e, int, x)
    {
    \tspin_lock(&g_lock);
    \tif (IS_ENABLED(CONFIG_PREEMPT_RT))
    """ + then + """\
    \telse
    \t\tfor (;;) {
    \t\t\tspin_unlock(&g_lock);
    \t\t\tbreak;
    \t\t}
    \tuse();
    \treturn 0;
    }
    """, config=lockscan.PROJECT_CONFIG) == "process"


def test_a_label_right_after_the_removed_ifs_condition(tmp_path):
    assert r6(tmp_path, """\
    SYSCALL_DEFINE1(a1, int, x)
    {
    \tspin_lock(&g_lock);
    \tif (x)
    \t\tgoto out;
    \tspin_unlock(&g_lock);
    \tif (IS_ENABLED(CONFIG_PREEMPT_RT))
    out:\tx++;
    \tuse();
    \treturn 0;
    }
    """, config=lockscan.PROJECT_CONFIG) == "atomic"


# item 10: __attribute__((weak)) is __weak

@pytest.mark.parametrize("weak", ["__weak", "__attribute__((weak))"])
def test_a_weak_definition_of_the_callers_file_is_overridden(tmp_path, weak):
    assert r6(tmp_path, {"kernel/a.c": R6_USE + "    void " + weak + """ grab(void)
    {
    }
    SYSCALL_DEFINE0(w)
    {
    \tgrab();
    \tuse();
    \treturn 0;
    }
    """, "kernel/b.c": """\
    /* inner_lock: a file the pass reads */
    void grab(void)
    {
    \tpreempt_disable();
    }
    """}) == "atomic"


def test_the_advisors_note_names_the_configuration(tmp_path):
    tree = tree_of(tmp_path, {"kernel/a.c": R6_USE + """\
    SYSCALL_DEFINE0(p)
    {
    \tuse();
    \treturn 0;
    }
    """})
    res = lockscan.analyse_class(tree, "inner_lock")
    assert advisor.static_verdict(res)[1] == (
        "static: all 1 sites in process context (CONFIG_PREEMPT_RT unset and"
        " CONFIG_PREEMPT_RT=y)")


# advisor-fix7 (the review of fix6), item 1: a compound assignment in the body

@pytest.mark.parametrize("stmt", ["p += 1;", "p -= 1;", "p *= 1;", "p /= 1;", "p %= 2;",
                                  "p &= 0;", "p |= 0;", "p ^= 0;", "p <<= 0;", "p >>= 0;"])
def test_a_compound_assignment_in_the_body_changes_the_locked_pointer(tmp_path, stmt):
    assert r6(tmp_path, r6_step("", stmt)) == "atomic"


# item 2: the sides of an #if are alternatives, not one after the other

def r6_sc(body, pre=""):
    """SYSCALL_DEFINE1(b2, int, x) { BODY return 0; } after R6_USE and PRE."""
    return R6_USE + pre + "SYSCALL_DEFINE1(b2, int, x)\n{\n" + body + "\n\treturn 0;\n}\n"


@pytest.mark.parametrize("body", [
    # a release on one build, use() on both
    "\tspin_lock(&g_lock);\n#ifdef CONFIG_FOO\n\tspin_unlock(&g_lock);\n#endif\n\tuse();\n"
    "#ifndef CONFIG_FOO\n\tspin_unlock(&g_lock);\n#endif\n",
    "\tspin_lock(&g_lock);\n#ifdef CONFIG_FOO\n\tspin_unlock(&g_lock);\n\tuse();\n#else\n"
    "\tuse();\n\tspin_unlock(&g_lock);\n#endif\n",
    "\tspin_lock(&g_lock);\n#if defined(A)\n\tspin_unlock(&g_lock);\n#elif defined(B)\n"
    "\tx++;\n#else\n\tspin_unlock(&g_lock);\n#endif\n\tuse();\n\tspin_unlock(&g_lock);\n",
    # nested, and a side that returns
    "\tspin_lock(&g_lock);\n#ifdef A\n#ifdef B\n\tspin_unlock(&g_lock);\n#endif\n#endif\n"
    "\tuse();\n\tspin_unlock(&g_lock);\n",
    "\tspin_lock(&g_lock);\n#ifdef A\n\tspin_unlock(&g_lock);\n\treturn 0;\n#else\n"
    "\tx++;\n#endif\n\tuse();\n\tspin_unlock(&g_lock);\n",
    # not whole statements: a release there does not count
    "\tspin_lock(&g_lock);\n#ifdef A\n\tif (x)\n#endif\n\t\tspin_unlock(&g_lock);\n\tuse();\n",
    "\tspin_lock(&g_lock);\n\tx = f(x,\n#ifdef A\n\t\tspin_unlock(&g_lock),\n#endif\n\t\t0);\n"
    "\tuse();\n",
])
def test_the_sides_of_an_if_directive_are_alternatives(tmp_path, body):
    assert r6(tmp_path, r6_sc(body)) == "atomic"


def test_a_release_on_every_side_of_an_if_directive_counts(tmp_path):
    """The precision kept: both sides release."""
    assert r6(tmp_path, r6_sc("\tspin_lock(&g_lock);\n#ifdef A\n\tspin_unlock(&g_lock);\n"
                              "#else\n\tx++;\n\tspin_unlock(&g_lock);\n#endif\n\tuse();\n")) \
        == "process"


# item 3: a `default:` in parentheses (_Generic) is not the switch's

def test_a_generic_default_is_not_the_switchs(tmp_path):
    assert r6(tmp_path, r6_sc("""\
    \tint y = 0;

    \tspin_lock(&g_lock);
    \tswitch (x) {
    \tcase 1:
    \t\tspin_unlock(&g_lock);
    \t\ty = _Generic(y, int: 1, default: 0);
    \t\tbreak;
    \t}
    \tuse();
    \tif (x != 1)
    \t\tspin_unlock(&g_lock);
    """)) == "atomic"


# item 7: a statement expression or compound literal in an earlier argument

@pytest.mark.parametrize("call", ["step(({ 0; }), p);", "step((struct s){ 0 }, p);",
                                  "step(({ int a; a = 1; a; }), p);"])
def test_a_block_in_an_earlier_macro_argument(tmp_path, call):
    assert r6(tmp_path, r6_step("#define step(a, q) (q) = (q)->next\n", call)) == "atomic"


# item 4: ?:, && and || inside parentheses (and so in a macro's body)

DROP_FN = "static bool drop(spinlock_t *l)\n{\n\tspin_unlock(l);\n\treturn true;\n}\n"


@pytest.mark.parametrize("body,pre", [
    ("\tspin_lock(&g_lock);\n\t(void)(x ? (spin_unlock(&g_lock), 0) : 0);\n\tuse();\n"
     "\tif (!x)\n\t\tspin_unlock(&g_lock);\n", ""),
    ("\tint r;\n\n\tspin_lock(&g_lock);\n\tr = (x || drop(&g_lock));\n\tuse();\n"
     "\tif (x)\n\t\tspin_unlock(&g_lock);\n", DROP_FN),
    ("\tspin_lock(&g_lock);\n\tf(0, x && drop(&g_lock));\n\tuse();\n"
     "\tif (!x)\n\t\tspin_unlock(&g_lock);\n", DROP_FN),
    ("\tspin_lock(&g_lock);\n\tdrop_if(x, &g_lock);\n\tuse();\n\tif (!x)\n"
     "\t\tspin_unlock(&g_lock);\n", "#define drop_if(c, l) ((c) ? (spin_unlock(l), 1) : 0)\n"),
    ("\tspin_lock(&g_lock);\n\tdrop_if(x, &g_lock);\n\tuse();\n\tif (!x)\n"
     "\t\tspin_unlock(&g_lock);\n", "#define drop_if(c, l) ((c) && (spin_unlock(l), 1))\n"),
    ("\tspin_lock(&g_lock);\n\tif (drop_if(x, &g_lock))\n\t\treturn 0;\n\tuse();\n"
     "\tspin_unlock(&g_lock);\n", "#define drop_if(c, l) ((c) ? (spin_unlock(l), 1) : 0)\n"),
])
def test_a_release_in_a_parenthesised_arm_may_not_run(tmp_path, body, pre):
    assert r6(tmp_path, r6_sc(body, pre)) == "atomic"


def test_a_parenthesised_comma_expression_runs_in_order(tmp_path):
    """The precision kept: `(a, b)` runs both."""
    assert r6(tmp_path, r6_sc("\tspin_lock(&g_lock);\n\t(void)(x++, spin_unlock(&g_lock));\n"
                              "\tuse();\n")) == "process"


# item 5: a brace-less loop macro whose body does not start with a name

@pytest.mark.parametrize("body", ["\t\t(void)grab();\n", "\t\t*q = grab();\n",
                                  "\t\t++n, grab();\n"])
def test_a_loop_macro_body_that_starts_with_an_operator(tmp_path, body):
    assert r6(tmp_path, """\
    static int grab(void)
    {
    \tuse();
    \tspin_lock(&g_lock);
    \treturn 0;
    }
    SYSCALL_DEFINE1(d1, int, n)
    {
    \tint i, *q = &n;

    \tfor_each_possible_cpu(i)
    """ + body + """\
    \treturn 0;
    }
    """) == "atomic"


# item 6: a label reached from a macro's argument or an asm goto

@pytest.mark.parametrize("jump", ["\tunsafe_get_user(x, &x, efault);\n",
                                  "\tasm goto(\"\" : : : : efault);\n"])
def test_a_label_named_outside_a_goto_gets_that_points_state(tmp_path, jump):
    assert r6(tmp_path, """\
    SYSCALL_DEFINE1(g1, int, x)
    {
    \tspin_lock(&g_lock);
    """ + jump + """\
    \tspin_unlock(&g_lock);
    \treturn 0;
    efault:
    \tuse();
    \tspin_unlock(&g_lock);
    \treturn -EFAULT;
    }
    """) == "atomic"


# item 8: cases for the rules the review's mutants removed unseen

def test_a_macro_argument_after_a_nested_comma_is_its_own(tmp_path):
    """p is step()'s second argument, q, which the body does not assign:
    the lock is one all through (precision; the index of the argument)."""
    assert r6(tmp_path / "a", r6_step("#define step(a, q) a = q->next\n",
                                      "step(g(0, 0), p);")) == "process"
    assert r6(tmp_path / "b", r6_step("#define step(a, q) (q) = (q)->next\n",
                                      "step(g(a, b), p);")) == "atomic"


def test_each_configuration_has_its_own_cache_entry(tmp_path):
    import subprocess
    tree = tree_of(tmp_path / "t", {"kernel/a.c": R6_USE + R6_RT})
    git = ["git", "-C", str(tmp_path / "t"), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "t"], check=True)
    cache = tmp_path / "cache"
    for _ in range(2):
        assert lockscan.analyse_class(tree, "inner_lock", cache_dir=str(cache))["verdict"] \
            == "atomic"
    assert len(os.listdir(cache)) == 2


@pytest.mark.parametrize("mac", ["#define my_lock(l) spin_trylock(l)\n",
                                 "#define my_lock(l) ({ spin_lock(l); 1; })\n"])
def test_a_lock_taking_macro_may_hold_it_on_its_zero_side(tmp_path, mac):
    assert r6(tmp_path, mac + """\
    SYSCALL_DEFINE0(f1)
    {
    \tif (!my_lock(&g_lock))
    \t\tuse();
    \treturn 0;
    }
    """) == "atomic"


def test_a_case_in_a_branch_the_configuration_removes_is_read(tmp_path):
    assert r6(tmp_path, """\
    SYSCALL_DEFINE1(c1, int, x)
    {
    \tspin_lock(&g_lock);
    \tswitch (x) {
    \tcase 0:
    \t\tbreak;
    \t\tif (IS_ENABLED(CONFIG_PREEMPT_RT)) {
    \tcase 1:
    \t\t\tuse();
    \t\t}
    \t\tbreak;
    \t}
    \tspin_unlock(&g_lock);
    \tuse();
    \treturn 0;
    }
    """, config=lockscan.PROJECT_CONFIG) == "atomic"


def test_a_removed_branch_holding_a_loop_macro_with_an_if_else(tmp_path):
    assert r6(tmp_path, """\
    SYSCALL_DEFINE1(c2, int, x)
    {
    \tint i;

    \tspin_lock(&g_lock);
    \tif (IS_ENABLED(CONFIG_PREEMPT_RT))
    \t\tfor_each_cpu(i)
    \t\t\tif (x)
    \t\t\t\tx++;
    \t\t\telse
    \t\t\t\tspin_unlock(&g_lock);
    \telse
    \t\tx--;
    \tuse();
    \tspin_unlock(&g_lock);
    \treturn 0;
    }
    """, config=lockscan.PROJECT_CONFIG) == "atomic"


def test_a_label_in_an_if_directive_side_is_a_statement(tmp_path):
    """Precision: a side that is a label and a block is whole statements."""
    assert r6(tmp_path, r6_sc("\tspin_lock(&g_lock);\n#ifdef A\nout:\n\t{\n"
                              "\t\tspin_unlock(&g_lock);\n\t}\n#else\n"
                              "\tspin_unlock(&g_lock);\n#endif\n\tuse();\n")) == "process"


def test_a_side_of_an_if_directive_that_returns_is_not_merged_after(tmp_path):
    """Precision: only the side that goes on reaches use()."""
    assert r6(tmp_path, r6_sc("\tspin_lock(&g_lock);\n#ifdef A\n\treturn 0;\n#else\n"
                              "\tspin_unlock(&g_lock);\n#endif\n\tuse();\n")) == "process"


def test_each_call_argument_is_read_by_itself(tmp_path):
    """Precision: a ?: in one argument does not make the next one's
    release conditional."""
    assert r6(tmp_path, r6_sc("\tspin_lock(&g_lock);\n"
                              "\tg(x ? 1 : 2, (spin_unlock(&g_lock), 0));\n\tuse();\n")) \
        == "process"


# item 10: the other spellings of a weak definition

@pytest.mark.parametrize("weak,proto", [("__attribute__((__weak__))", ""),
                                        ("", "void grab(void) __weak;\n"),
                                        ("", "extern void __weak grab(void);\n")])
def test_every_spelling_of_weak_is_overridden(tmp_path, weak, proto):
    assert r6(tmp_path, {"kernel/a.c": R6_USE + proto + "void " + weak + """ grab(void)
    {
    }
    SYSCALL_DEFINE0(w)
    {
    \tgrab();
    \tuse();
    \treturn 0;
    }
    """, "kernel/b.c": """\
    /* inner_lock: a file the pass reads */
    void grab(void)
    {
    \tpreempt_disable();
    }
    """}) == "atomic"


# item 13: --static --tree DIR: the variant's build says nothing of DIR's kernel

def test_static_with_a_tree_reads_both_preempt_rt_values(tmp_path, monkeypatch, capsys):
    import json
    bdir = tmp_path / "build"
    (bdir / "out" / "project").mkdir(parents=True)
    (bdir / "out" / "project" / ".config").write_text("# CONFIG_PREEMPT_RT is not set\n")
    tree_of(tmp_path / "t", {"kernel/a.c": R6_USE + R6_RT})
    monkeypatch.setenv("PVRT_TOP", os.path.join(os.path.dirname(__file__), ".."))
    monkeypatch.setenv("PVRT_BUILD", str(bdir))
    monkeypatch.setattr(advisor.base, "cache_dir", lambda: str(tmp_path / "cache"))
    assert advisor.main(["--static", "inner_lock", "--tree", str(tmp_path / "t")]) == 0
    out = [json.loads(p.read_text()) for p in (bdir / "results").glob("static-*/static.json")]
    assert len(out) == 1 and out[0][0]["verdict"] == "atomic"


def test_a_default_under_an_if_directive_may_not_be_built(tmp_path):
    assert r6(tmp_path, r6_sc("\tspin_lock(&g_lock);\n\tswitch (x) {\n\tcase 1:\n"
                              "\t\tspin_unlock(&g_lock);\n\t\tbreak;\n#ifdef A\n\tdefault:\n"
                              "\t\tspin_unlock(&g_lock);\n\t\tbreak;\n#endif\n\t}\n"
                              "\tuse();\n")) == "atomic"


def test_a_release_on_false_returns_of_one_architecture_only(tmp_path):
    """m23: x86's f() drops g_lock on its false return, arm's keeps it:
    generic code's `if (!f())` branch may hold it."""
    assert r6(tmp_path, {"kernel/a.c": R6_USE + """\
    bool f(int x);
    SYSCALL_DEFINE1(m23, int, x)
    {
    \tspin_lock(&g_lock);
    \tif (!f(x)) {
    \t\tuse();
    \t\treturn 0;
    \t}
    \tspin_unlock(&g_lock);
    \treturn 0;
    }
    """, "arch/x86/kernel/f.c": """\
    /* inner_lock: a file the pass reads */
    bool f(int x)
    {
    \tif (x)
    \t\treturn true;
    \tspin_unlock(&g_lock);
    \treturn false;
    }
    """, "arch/arm/kernel/f.c": """\
    /* inner_lock: a file the pass reads */
    bool f(int x)
    {
    \tif (x)
    \t\treturn true;
    \tx++;
    \treturn false;
    }
    """}) == "atomic"


def test_a_case_after_a_return_starts_from_the_switchs_entry(tmp_path):
    """Precision (the review's n14): what the returning case took is not
    held in the next one."""
    assert r6(tmp_path, r6_sc("\tswitch (x) {\n\tcase 1:\n\t\tpreempt_disable();\n"
                              "\t\treturn 0;\n\tcase 2:\n\t\tuse();\n\t\tbreak;\n\t}\n")) \
        == "process"


@pytest.mark.parametrize("body,verdict", [
    # net/core/dev.c's net_rps_action_and_irq_enable(): both builds release
    ("\tspin_lock(&g_lock);\n#ifdef A\n\tif (x) {\n\t\tspin_unlock(&g_lock);\n\t\tx++;\n"
     "\t} else\n#endif\n\t\tspin_unlock(&g_lock);\n\tuse();\n", "process"),
    ("\tspin_lock(&g_lock);\n#ifdef A\n\tif (x) {\n\t\tx++;\n"
     "\t} else\n#endif\n\t\tspin_unlock(&g_lock);\n\tuse();\n", "atomic"),
    ("\tspin_lock(&g_lock);\n#ifdef A\n\tif (x)\n#else\n\tif (!x)\n#endif\n"
     "\t\tspin_unlock(&g_lock);\n\tuse();\n", "atomic"),
    ("\tspin_lock(&g_lock);\n#ifdef A\n\tif (x)\n#else\n\tif (!x)\n#endif\n"
     "\t\treturn 0;\n\tspin_unlock(&g_lock);\n\tuse();\n", "process"),
    # no #else: the statement without the side
    ("\tspin_lock(&g_lock);\n#ifdef A\n\tspin_unlock(&g_lock);\n\tif (x)\n#endif\n"
     "\t\tx++;\n\tuse();\n", "atomic"),
    # a directive in the statement after the group: not spliced
    ("\tspin_lock(&g_lock);\n#ifdef A\n\tif (x)\n\t\treturn 0;\n\telse\n#endif\n"
     "\t\tg(0,\n#ifdef B\n\t\t(spin_unlock(&g_lock), 0)\n#else\n\t\t0\n#endif\n"
     "\t\t);\n\tuse();\n", "atomic"),
    ("\tspin_lock(&g_lock);\n#ifdef A\n\tif (x)\n#endif\n\t\tg(0,\n#ifdef B\n"
     "\t\t(spin_unlock(&g_lock), 0)\n#else\n\t\t0\n#endif\n\t\t);\n\tuse();\n", "atomic"),
])
def test_a_group_that_cuts_an_if_is_read_with_the_rest_of_it(tmp_path, body, verdict):
    assert r6(tmp_path, r6_sc(body)) == verdict


# round 8 (issue 20), the review of advisor-fix7

@pytest.mark.parametrize("body", [
    # blocker 2: a spliced group holding a nested #if on its first side
    "\tspin_lock(&g_lock);\n#ifdef CONFIG_A\n#ifdef CONFIG_B\n\tspin_unlock(&g_lock);\n"
    "#endif\n\tif (x)\n\t\tx++;\n\telse\n#else\n\tspin_unlock(&g_lock);\n#endif\n"
    "\tx--;\n\tuse();\n",
    # ... and on its #else side
    "\tspin_lock(&g_lock);\n#ifdef CONFIG_A\n\tif (x)\n\t\tspin_unlock(&g_lock);\n"
    "\telse\n#else\n#ifdef CONFIG_B\n\tspin_unlock(&g_lock);\n#endif\n\tif (x)\n"
    "\t\tx++;\n\telse\n#endif\n\t\tspin_unlock(&g_lock);\n\tuse();\n",
])
def test_a_spliced_group_holding_another_is_read_the_safe_way(tmp_path, body):
    assert r6(tmp_path, r6_sc(body)) == "atomic"


@pytest.mark.parametrize("body", [
    # blocker 1: the #else side is the if's body on one build only
    "\tspin_lock(&g_lock);\n\tif (x)\n#ifdef A\n\t\tspin_unlock(&g_lock);\n#else\n\t\tx++;\n#endif\n"
    "\tuse();\n",
    "\tspin_lock(&g_lock);\n\tif (x)\n#ifdef CONFIG_FOO\n\t\tx++;\n#else\n"
    "\t\tspin_unlock(&g_lock);\n#endif\n\tuse();\n\tspin_unlock(&g_lock);\n",
    "\tspin_lock(&g_lock);\n\tif (x)\n#ifdef CONFIG_FOO\n\t{\n\t\tx++;\n\t}\n#else\n"
    "\t{\n\t\tspin_unlock(&g_lock);\n\t}\n#endif\n\tuse();\n",
    "\tint i;\n\tspin_lock(&g_lock);\n\tfor (i = 0; i < x; i++)\n#ifdef CONFIG_FOO\n"
    "\t\tx--;\n#else\n\t\tspin_unlock(&g_lock);\n#endif\n\tuse();\n",
    # a return on the #else side does not end the then branch on every build
    "\tspin_lock(&g_lock);\n\tif (x > 1) {\n\t\tif (x > 2)\n#ifdef CONFIG_FOO\n"
    "\t\t\tx++;\n#else\n\t\t\treturn 0;\n#endif\n\t} else {\n"
    "\t\tspin_unlock(&g_lock);\n\t}\n\tuse();\n",
    "\tspin_lock(&g_lock);\n\tif (x)\n#if defined(CONFIG_FOO)\n\t\tx++;\n"
    "#elif defined(CONFIG_BAR)\n\t\tspin_unlock(&g_lock);\n#endif\n\tuse();\n",
    # kernel/sched/core.c sched_fork(): `} else {` under #ifdef
    "\tspin_lock(&g_lock);\n\tif (x) {\n\t\tspin_unlock(&g_lock);\n\t\tx++;\n"
    "#ifdef CONFIG_A\n\t} else {\n\t\tspin_unlock(&g_lock);\n#endif\n\t}\n\tuse();\n",
    "\tint i;\n\tspin_lock(&g_lock);\n\tfor_each_possible_cpu(i)\n#ifdef CONFIG_A\n"
    "\t\tx++;\n#else\n\t\tspin_unlock(&g_lock);\n#endif\n\tuse();\n",
])
def test_an_if_group_the_pass_cannot_place_makes_the_function_unknown(tmp_path, body):
    assert r6(tmp_path, r6_sc(body)) == "unknown"


@pytest.mark.parametrize("test", ["IS_ENABLED(CONFIG_PREEMPT_RT)) {\n",
                                  "!IS_ENABLED(CONFIG_PREEMPT_RT)) {\n\t\tx++;\n\t} else {\n"])
def test_a_group_in_a_branch_the_configuration_removes_is_not_read(tmp_path, test):
    """Precision: a group the pass never reads is in code not built."""
    assert r6(tmp_path, r6_sc(
        "\tspin_lock(&g_lock);\n\tif (" + test + "\t\tif (x)\n"
        "#ifdef CONFIG_A\n\t\t\tx++;\n#else\n\t\t\tx--;\n#endif\n\t}\n"
        "\tspin_unlock(&g_lock);\n\tuse();\n"), config=lockscan.PROJECT_CONFIG) == "process"


@pytest.mark.parametrize("body,pre", [
    # item 3: a comma in ?:'s middle arm belongs to the arm
    ("\tspin_lock(&g_lock);\n\t(void)(x ? x++, spin_unlock(&g_lock) : 0);\n\tuse();\n"
     "\tif (!x)\n\t\tspin_unlock(&g_lock);\n", ""),
    ("\tspin_lock(&g_lock);\n\tdrop_if(x, &g_lock);\n\tuse();\n",
     "#define drop_if(c, l) ((c) ? spin_unlock(l), 1 : 0)\n"),
    ("\tspin_lock(&g_lock);\n\tfoo(x ? x++, spin_unlock(&g_lock) : 0);\n\tuse();\n",
     "static void foo(int a) { }\n"),
])
def test_a_comma_in_the_middle_arm_of_a_conditional_is_the_arms(tmp_path, body, pre):
    assert r6(tmp_path, r6_sc(body, pre)) == "atomic"


# item 5: the rules of advisor-fix7 no test guarded (the review's mutants)

def test_a_guard_in_a_spliced_group_lasts_to_the_end_of_the_block(tmp_path):
    """x04: a group holding a guard() is not read as a block copy, whose
    end would release the guard."""
    assert r6(tmp_path, r6_sc("#ifdef CONFIG_A\n\tguard(spinlock)(&g_lock);\n\tif (x)\n"
                              "\t\tx++;\n\telse\n#endif\n\tx--;\n\tuse();\n")) == "atomic"


def test_a_label_after_a_case_label_is_a_label_name(tmp_path):
    """x28: a label right after `case 1:` reached by a macro's label
    argument carries the state there."""
    assert r6(tmp_path, r6_sc("\tspin_lock(&g_lock);\n\tunsafe_get_user(x, &x, efault);\n"
                              "\tspin_unlock(&g_lock);\n\treturn 0;\n\tswitch (x) {\n"
                              "\tcase 1:\nefault:\n\t\tuse();\n\t}\n"
                              "\tspin_unlock(&g_lock);\n")) == "atomic"


R8_DROP = """\
static bool drop_on_true(spinlock_t *l, int v)
{
\tif (v) {
\t\tspin_unlock(l);
\t\treturn true;
\t}
\treturn false;
}
static void foo(int a, ...) { }
"""


@pytest.mark.parametrize("body,pre", [
    # z11: a group read the quiet way (a directive after its #endif in the
    # statement it cuts): the release on its #ifdef side does not count
    ("\tspin_lock(&g_lock);\n#ifdef CONFIG_A\n\tspin_unlock(&g_lock);\n\tif (x)\n#else\n"
     "\tif (!x)\n#endif\n\t\tfoo(0\n#ifdef CONFIG_B\n\t\t    , 1\n#endif\n\t\t    );\n"
     "\tuse();\n", R8_DROP),
    # x09: nor what the cut if's condition drops in its then branch
    ("\tspin_lock(&g_lock);\n#ifdef CONFIG_A\n\tif (drop_on_true(&g_lock, x))\n#else\n"
     "\tif (x)\n#endif\n\t{\n\t\tuse();\n\t\tfoo(0\n#ifdef CONFIG_B\n\t\t    , 1\n#endif\n"
     "\t\t    );\n\t}\n\tif (x)\n\t\tspin_unlock(&g_lock);\n", R8_DROP),
    # x11: nor what a cut loop's condition drops in its body
    ("\tspin_lock(&g_lock);\n#ifdef CONFIG_A\n\twhile (drop_on_true(&g_lock, x))\n#else\n"
     "\twhile (x--)\n#endif\n\t{\n\t\tuse();\n\t\tfoo(0\n#ifdef CONFIG_B\n\t\t    , 1\n"
     "#endif\n\t\t    );\n\t}\n", R8_DROP),
    # x10: nor need_seqretry()'s lockless then branch
    ("\twrite_seqlock(&g_seq);\n#ifdef CONFIG_A\n\tif (need_seqretry(&g_seq, x))\n#else\n"
     "\tif (x)\n#endif\n\t{\n\t\tuse();\n\t\tfoo(0\n#ifdef CONFIG_B\n\t\t    , 1\n#endif\n"
     "\t\t    );\n\t}\n\twrite_sequnlock(&g_seq);\n", R8_DROP + "static DEFINE_SEQLOCK(g_seq);\n"),
])
def test_a_group_read_quiet_counts_no_release(tmp_path, body, pre):
    assert r6(tmp_path, r6_sc(body, pre)) == "atomic"


@pytest.mark.parametrize("body,pre", [
    # item 4: a goto in a macro body of the file, to a label after a return
    ("\tspin_lock(&g_lock);\n\tCHECK(x);\n\tspin_unlock(&g_lock);\n\treturn 0;\nout:\n"
     "\tuse();\n\tspin_unlock(&g_lock);\n",
     "#define CHECK(c) do { if (c) goto out; } while (0)\n"),
    # ... to a label a goto of the function reaches too
    ("\tspin_lock(&g_lock);\n\tCHECK(x);\n\tspin_unlock(&g_lock);\n\tif (x > 2)\n"
     "\t\tgoto out;\n\treturn 0;\nout:\n\tuse();\n",
     "#define CHECK(c) do { if (c) goto out; } while (0)\n"),
    # ... from a macro that takes a lock before its goto
    ("\tLOCK_OR_OUT(&g_lock, x);\n\tspin_unlock(&g_lock);\n\treturn 0;\nout:\n"
     "\tuse();\n\tspin_unlock(&g_lock);\n",
     "#define LOCK_OR_OUT(l, c) do { spin_lock(l); if (c) goto out; } while (0)\n"),
    # ... and a label no goto of the function names, of a macro the pass
    # does not read, after a path that goes on
    ("\tspin_lock(&g_lock);\n\tHDR_CHECK(x);\n\tspin_unlock(&g_lock);\nout:\n\tuse();\n", ""),
])
def test_a_goto_in_a_macro_body_carries_its_state_to_the_label(tmp_path, body, pre):
    assert r6(tmp_path, r6_sc(body, pre)) == "atomic"


def test_a_quiet_release_keeps_the_reason_of_what_is_held(tmp_path):
    """z12: a release read quiet restores the reason (and the calls that
    took it, and the per-lock states) with the count."""
    tree = tree_of(tmp_path, {"kernel/a.c": R6_USE + r6_sc(
        "\tspin_lock(&g_lock);\n\tfoo(\n#ifdef CONFIG_A\n\t\t(spin_unlock(&g_lock), 0)\n"
        "#else\n\t\t0\n#endif\n\t);\n\tuse();\n\tspin_unlock(&g_lock);\n",
        "static void foo(int a) { }\n")[len(R6_USE):]})
    res = lockscan.analyse_class(tree, "inner_lock")
    assert res["verdict"] == "atomic"
    assert "spin_lock() line" in sites(res)["use"]["reason"]


@pytest.mark.parametrize("op", ["sizeof", "typeof", "__typeof__",
                                "__builtin_types_compatible_p"])
def test_an_unevaluated_operand_runs_nothing(tmp_path, op):
    """Nit 6: what sizeof(), typeof() read is not run."""
    assert r6(tmp_path, r6_sc(f"\tspin_lock(&g_lock);\n\tx = {op}(({{ spin_unlock(&g_lock); 0; }}));\n"
                              "\tuse();\n\tspin_unlock(&g_lock);\n")) == "atomic"


def test_a_group_that_leaves_its_block_makes_the_function_unknown(tmp_path):
    """Found in this round: a group whose #if starts a statement and whose
    #else side is `} else {` was read quiet up to the block's end, and the
    else branch then as code every build has."""
    assert r6(tmp_path, r6_sc("\tspin_lock(&g_lock);\n\tif (x) {\n\t\tspin_unlock(&g_lock);\n"
                              "#ifdef CONFIG_A\n\t\tx++;\n\t} else {\n"
                              "\t\tspin_unlock(&g_lock);\n#endif\n\t}\n\tuse();\n")) == "unknown"


def test_a_statement_read_quiet_does_not_end_its_path(tmp_path):
    """Found in this round: `if (x) return 1;\\n#ifdef A\\n else return 0;
    \\n#endif` ends the path on one build only."""
    assert r6(tmp_path, r6_sc("\tspin_lock(&g_lock);\n\tif (x > 1) {\n\t\tif (x > 2)\n"
                              "\t\t\treturn 1;\n#ifdef CONFIG_A\n\t\telse\n\t\t\treturn 0;\n"
                              "#endif\n\t} else {\n\t\tspin_unlock(&g_lock);\n\t}\n"
                              "\tuse();\n")) == "atomic"


def test_a_label_a_backward_goto_names_is_not_a_macros(tmp_path):
    """Precision: `retry:` is reached by the goto after it, not by a
    hidden jump from every call."""
    assert r6(tmp_path, r6_sc("\tpreempt_disable();\n\tg(x);\n\tpreempt_enable();\nretry:\n"
                              "\tuse();\n\tif (x--)\n\t\tgoto retry;\n",
                              "static void g(int a) { }\n")) == "process"


def test_a_relative_git_tree_path_is_found(tmp_path, monkeypatch):
    """`scripts/lock-advisor --tree build/check/linux` from the top: the pass
    ran `git -C PATH grep` with cwd=PATH, so a relative PATH was taken twice
    and the class came out unknown ("cannot change to 'build/check/linux'")."""
    import subprocess
    from pvrt import lockscan
    tree = tmp_path / "sub" / "linux"
    tree.mkdir(parents=True)
    (tree / "a.c").write_text("void f(void) { spin_lock(&g_lock); }\n")
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    subprocess.run(["git", "-C", str(tree), "add", "a.c"], check=True)
    monkeypatch.chdir(tmp_path)
    assert lockscan.Tree("sub/linux").grep(["g_lock"]) == ["a.c"]


def test_a_spliced_groups_removed_branch_exempts_no_other_group(tmp_path):
    """Review of advisor-fix8, blocker 2: a branch the configuration removes
    inside a spliced group's copy was recorded with the copy's own token
    indices, and _check_pp() took them as the function's: an unrelated
    #if between `if (x)` and its body was exempted and read one side after
    the other (the release under #else counted on every build: process)."""
    long = " ".join(f"x -= {n};" for n in range(2, 60))
    body = ("\tspin_lock(&g_lock);\n" + "\tx++; x++; x++; x++; x++; x++; x++; x++; x++; x++;\n" * 2
            + "\tif (x)\n#ifdef CONFIG_FOO\n\t\tx++;\n#else\n\t\tspin_unlock(&g_lock);\n#endif\n"
            "\tuse();\n\tspin_unlock(&g_lock);\n"
            "#ifdef CONFIG_RPS\n\tif (x > 5) {\n\t\tx++;\n\t} else\n#endif\n\t{\n"
            "\t\tif (IS_ENABLED(CONFIG_PREEMPT_RT)) x--; else { if (!IS_ENABLED(CONFIG_PREEMPT_RT))"
            " x--; else { " + long + " } }\n\t}\n")
    assert r6(tmp_path, r6_sc(body)) in ("unknown", "atomic")


_R8_WRAP = ("static void my_lock(int x)\n{\n\tspin_lock(&g_lock);\n\tif (x)\n"
            "#ifdef CONFIG_FOO\n\t\tx++;\n#else\n\t\tx--;\n#endif\n\tx++;\n}\n")


@pytest.mark.parametrize("wrap,call,undo", [
    (_R8_WRAP, "my_lock", "spin_unlock(&g_lock)"),
    (_R8_WRAP.replace("my_lock", "my_irq").replace("spin_lock(&g_lock)", "local_irq_disable()"),
     "my_irq", "local_irq_enable()"),
    # a wrapper of the unparsable one
    (_R8_WRAP + "static void outer(int x)\n{\n\tmy_lock(x);\n}\n", "outer",
     "spin_unlock(&g_lock)"),
])
def test_an_unparsable_wrapper_leaves_its_callers_unknown(tmp_path, wrap, call, undo):
    """Review of advisor-fix8, blocker 1: a function the pass cannot parse
    (here an #if group it cannot place) had no effect on its callers, so a
    wrapper that takes a lock or disables interrupts vanished and the
    caller's site after it said process."""
    assert r6(tmp_path, r6_sc(f"\t{call}(x);\n\tuse();\n\t{undo};\n", wrap)) in ("unknown", "atomic")


@pytest.mark.parametrize("stmt", [
    "\tx = sizeof(char [({ spin_lock(&g_lock); x + 1; })]);\n",
    "\ttypeof(char [({ spin_lock(&g_lock); x + 1; })]) buf;\n",
])
def test_a_variable_length_array_operand_runs(tmp_path, stmt):
    """Review of advisor-fix8, item 4: the operand of a variable-length
    array type is evaluated (C11 6.5.3.4); skipping sizeof/typeof operands
    whole lost the acquisition in it (process)."""
    assert r6(tmp_path, r6_sc(stmt + "\tuse();\n\tspin_unlock(&g_lock);\n")) == "atomic"


@pytest.mark.parametrize("stmt", [
    "\tx ? x > 1 ? (void)0 : local_irq_disable() : local_irq_enable();\n",
    "\tfoo(x ? x > 1 ? 0 : (local_irq_disable(), 1) : (local_irq_enable(), 0));\n",
])
def test_a_conditional_nested_in_a_middle_arm_is_paired(tmp_path, stmt):
    """Review of advisor-fix8, item 6: `x ? y ? A : B : C` paired the first
    `?` with the first `:`, so B and C ran in sequence on one path and
    C's local_irq_enable() undid B's disable (process)."""
    assert r6(tmp_path, r6_sc(stmt + "\tuse();\n\tlocal_irq_enable();\n",
                              "static void foo(int a) { }\n")) == "atomic"


def test_a_failed_splice_leaves_no_loop_frame(tmp_path):
    """Review of advisor-fix8, item 5: a spliced group's copy that failed
    half-way left its loop frame on the stack, so the real loop's later
    `break` carried its state into the stale frame and the loop's exit
    missed the lock (process).  The #ifdef side is not valid C alone: it
    only makes the copy fail."""
    assert r6(tmp_path, r6_sc(
        "\twhile (x) {\n#ifdef CONFIG_RPS\n\twhile (x) if (x) do\n#else\n\tx--;\n#endif\n"
        "\tx--;\n\tif (x == 3) {\n\t\tspin_lock(&g_lock);\n\t\tbreak;\n\t}\n\t}\n"
        "\tuse();\n\tspin_unlock(&g_lock);\n")) == "atomic"


def test_a_label_a_macro_call_reaches_still_gets_the_hidden_jumps(tmp_path):
    """Review of advisor-fix8, item 8: once a macro call the pass reads
    (CHECK1()) named the label, the merge for jumps it cannot see was
    skipped, so an object-like macro's goto (BAIL, with the lock held)
    was lost at the label (process)."""
    assert r6(tmp_path, r6_sc(
        "\tCHECK1(x == 1);\n\tspin_lock(&g_lock);\n\tif (x == 2)\n\t\tBAIL;\n"
        "\tspin_unlock(&g_lock);\n\treturn 0;\nout:\n\tuse();\n\treturn 0;\n",
        "#define BAIL goto out\n#define CHECK1(c) do { if (c) goto out; } while (0)\n")) == "atomic"


@pytest.mark.parametrize("body,pre", [
    # a label after a return that only the hidden jump (BAIL, lock held)
    # reaches: the dead path's state is not what it starts from
    ("\tspin_lock(&g_lock);\n\tif (x == 2)\n\t\tBAIL;\n\tspin_unlock(&g_lock);\n"
     "\treturn 0;\nout:\n\tuse();\n\tspin_unlock(&g_lock);\n",
     "#define BAIL goto out\n"),
    # a backward hidden jump: `again:` gets the states of the calls after
    # it too (the first reading's), where the lock is held
    ("again:\n\tuse();\n\tspin_lock(&g_lock);\n\tx++;\n\tif (x < 5)\n\t\tBAIL_AGAIN;\n"
     "\tspin_unlock(&g_lock);\n",
     "#define BAIL_AGAIN goto again\n"),
    # a macro whose goto is before its release: the label gets the state
    # before the call, not only the one after it (a plain goto names the
    # label too, so the hidden jumps' merge does not cover it)
    ("\tif (x == 1)\n\t\tgoto out;\n\tspin_lock(&g_lock);\n\tCHECK_REL(x);\n"
     "\treturn 0;\nout:\n\tuse();\n",
     "#define CHECK_REL(c) do { if (c) goto out; spin_unlock(&g_lock); } while (0)\n"),
], ids=["a08_after_return", "a09_backward", "a12_before_release"])
def test_a_hidden_or_macro_goto_reaches_its_label_with_the_lock(tmp_path, body, pre):
    """Review of advisor-fix8, item 7 (mutants a08, a09, a12): a label an
    object-like macro's goto reaches after a return starts from the hidden
    jumps' states; a backward one merges the later calls' states; a macro
    call's goto before the macro's release carries the state before it."""
    assert r6(tmp_path, r6_sc(body, pre)) == "atomic"


@pytest.mark.parametrize("body,pre", [
    # R2: a macro of the file takes the lock, jumps, releases: the label
    # gets the state at the macro's own goto, the lock held
    ("\tLOCKED_CHECK(x);\n\treturn 0;\nout:\n\tuse();\n\tspin_unlock(&g_lock);\n",
     "#define LOCKED_CHECK(c) do { spin_lock(&g_lock); if (c) goto out; "
     "spin_unlock(&g_lock); } while (0)\n"),
    # R2d: the same with the label passed as the macro's argument
    ("\tLOCKED_CHECK2(x, out);\n\treturn 0;\nout:\n\tuse();\n\tspin_unlock(&g_lock);\n",
     "#define LOCKED_CHECK2(c, l) do { spin_lock(&g_lock); if (c) goto l; "
     "spin_unlock(&g_lock); } while (0)\n"),
    # the label argument passed on to a macro that jumps to it
    ("\tif (x == 1)\n\t\tgoto out;\n\tLOCKED_CHECK3(x, out);\n\treturn 0;\nout:\n\tuse();\n",
     "#define OUT_IF(c, l) do { if (c) goto l; } while (0)\n"
     "#define LOCKED_CHECK3(c, l) do { spin_lock(&g_lock); OUT_IF(c, l); "
     "spin_unlock(&g_lock); } while (0)\n"),
    # a label built by token pasting
    ("\tif (x == 1)\n\t\tgoto err_out;\n\tLOCKED_CHECK4(x, out);\n\treturn 0;\nerr_out:\n"
     "\tuse();\n",
     "#define LOCKED_CHECK4(c, l) do { spin_lock(&g_lock); if (c) goto err_##l; "
     "spin_unlock(&g_lock); } while (0)\n"),
    # an argument is read where the body has it, once: the state at the
    # goto has one of the two preempt_disable()s undone, not both
    ("\tif (x == 1)\n\t\tgoto out;\n\tpreempt_disable();\n\tpreempt_disable();\n"
     "\tCHECK(x, (preempt_enable(), x > 2));\n\tpreempt_enable();\n\treturn 0;\nout:\n"
     "\tuse();\n",
     "#define CHECK(v, c) do { if (c) goto out; } while (0)\n"),
    # the same call twice, the second with the lock held: a body read once
    # from a state is not read again from it, but from another one it is
    ("\tif (x == 1)\n\t\tgoto out;\n\tCHECK(x, x);\n\tspin_lock(&g_lock);\n\tCHECK(x, x);\n"
     "\tspin_unlock(&g_lock);\n\treturn 0;\nout:\n\tuse();\n",
     "#define CHECK(v, c) do { if (c) goto out; } while (0)\n"),
], ids=["R2", "R2d", "label_arg_passed_on", "label_pasted", "argument_read_once",
        "same_call_twice"])
def test_a_macros_goto_carries_what_the_macro_holds_there(tmp_path, body, pre):
    """Review of advisor-fix8, item 3: a macro call's goto gave its label
    only the states before and after the call, so a lock the macro takes
    before its goto and drops after it was lost there (process)."""
    assert r6(tmp_path, r6_sc(body, pre)) == "atomic"


_R2B = ("\tif (x == 1)\n\t\tgoto out;\n\tspin_lock(&g_lock);\n\tif (x == 2)\n\t\t{JUMP};\n"
        "\tspin_unlock(&g_lock);\n\treturn 0;\nout:\n\tuse();\n\treturn 0;\n")


@pytest.mark.parametrize("jump,pre", [
    # R2b: an object-like macro's goto
    ("BAIL", "#define BAIL goto out\n"),
    # R2c: a goto in a macro another macro calls
    ("CHECK(x == 2)", "#define BAIL2() goto out\n#define CHECK(c) do { if (c) BAIL2(); } while (0)\n"),
    # an object-like macro that uses a function-like one
    ("BAIL3", "#define BAIL2() goto out\n#define BAIL3 BAIL2()\n"),
    # a function-like macro that uses an object-like one
    ("CHECK(x == 2)", "#define BAIL goto out\n#define CHECK(c) do { if (c) BAIL; } while (0)\n"),
], ids=["R2b", "R2c", "object_uses_function_like", "function_like_uses_object"])
def test_a_goto_of_an_object_like_or_nested_macro_reaches_its_label(tmp_path, jump, pre):
    """Review of advisor-fix8, item 3: an object-like macro's goto (`#define
    BAIL goto out`) and the goto of a macro a macro uses were not seen; the
    label, named by a plain goto too, got only that goto's state (process)."""
    assert r6(tmp_path, r6_sc(_R2B.replace("{JUMP}", jump), pre)) == "atomic"


def test_an_object_like_macro_that_takes_the_lock_before_its_goto(tmp_path):
    assert r6(tmp_path, r6_sc(
        "\tif (x == 1)\n\t\tgoto out;\n\tif (x == 2)\n\t\tLOCK_BAIL;\n\treturn 0;\nout:\n"
        "\tuse();\n\treturn 0;\n",
        "#define LOCK_BAIL do { spin_lock(&g_lock); goto out; } while (0)\n")) == "atomic"


def test_a_macro_with_a_goto_the_pass_cannot_read_leaves_the_labels_unknown(tmp_path):
    """A macro body that does not balance is not expanded: every label of
    the caller gets the state at the call, unknown besides (not dropped)."""
    assert r6(tmp_path, r6_sc(
        "\tif (x == 1)\n\t\tgoto out;\n\tspin_lock(&g_lock);\n\tBAD_CHECK(x)\n\t\tx++;\n"
        "\tEND_CHECK\n\tspin_unlock(&g_lock);\n\treturn 0;\nout:\n\tuse();\n\treturn 0;\n",
        "#define BAD_CHECK(c) if (c) { goto out;\n#define END_CHECK }\n")) in ("unknown", "atomic")


@pytest.mark.parametrize("stmt,verdict", [
    # R4e: one association of a generic selection runs
    ("\t_Generic(x, long: spin_unlock(&g_lock), default: (void)0);\n", "atomic"),
    # R4f: one arm of __builtin_choose_expr() runs
    ("\t__builtin_choose_expr(sizeof(x) == 8, spin_unlock(&g_lock), (void)0);\n", "atomic"),
    ("\tfoo(__builtin_choose_expr(sizeof(x) == 8, (void)0, spin_unlock(&g_lock)));\n",
     "atomic"),
    # the controlling expression is not run
    ("\tx = _Generic(({ spin_unlock(&g_lock); x; }), default: 1);\n", "atomic"),
    # a release every association makes counts
    ("\t_Generic(x, long: spin_unlock(&g_lock), default: spin_unlock(&g_lock));\n",
     "process"),
], ids=["R4e", "R4f", "choose_expr_second_arm", "generic_control", "generic_every_arm"])
def test_one_association_of_a_selection_runs(tmp_path, stmt, verdict):
    """Review of advisor-fix8, nit 9: `_Generic` associations and
    `__builtin_choose_expr()` arms were read one after the other, so a
    release in one counted on every build (process)."""
    assert r6(tmp_path, r6_sc("\tspin_lock(&g_lock);\n" + stmt + "\tuse();\n",
                              "static void foo(int a) { }\n")) == verdict


# the advisor-fix9 review: macro gotos the pass did not expand

_WITH_LOCK = ("#define WITH_LOCK(stmt) do { spin_lock(&g_lock); stmt; spin_unlock(&g_lock); }"
              " while (0)\n")
_CHECK = "#define CHECK(c) do { if (c) goto out; } while (0)\n"
_PLAIN_OUT = "\tif (x == 1)\n\t\tgoto out;\n"
_TAIL_OUT = "\treturn 0;\nout:\n\tuse();\n"


@pytest.mark.parametrize("body,pre", [
    # S6: a goto in the arguments of a macro whose body has none, run
    # under the lock the macro takes
    ("\tWITH_LOCK(if (x == 2) goto out);\n", _WITH_LOCK),
    # S6b: a goto macro's call in them
    ("\tWITH_LOCK(CHECK(x == 2));\n", _WITH_LOCK + _CHECK),
    # S6c: an object-like goto macro in them
    ("\tWITH_LOCK(if (x == 2) BAIL);\n", _WITH_LOCK + "#define BAIL goto out\n"),
    # a label's name in them (a macro's label argument)
    ("\tWITH_LOCK(OUT_IF(x == 2, out));\n",
     _WITH_LOCK + "#define OUT_IF(c, l) do { if (c) goto l; } while (0)\n"),
    ("\tWITH_LOCK(get_it(x, out));\n",
     _WITH_LOCK + "static int get_it(int a, int b) { return a + b; }\n"),
    # S7: a goto macro's name passed to a macro that calls it
    ("\tspin_lock(&g_lock);\n\tDO(CHECK, x == 2);\n\tspin_unlock(&g_lock);\n",
     "#define DO(m, c) m(c)\n" + _CHECK),
    # ... through a second macro
    ("\tspin_lock(&g_lock);\n\tDO2(CHECK, x == 2);\n\tspin_unlock(&g_lock);\n",
     "#define DO(m, c) m(c)\n#define DO2(m, c) DO(m, c)\n" + _CHECK),
    # ... to one that takes the lock
    ("\tLDO(CHECK, x == 2);\n",
     "#define LDO(m, c) do { spin_lock(&g_lock); m(c); spin_unlock(&g_lock); } while (0)\n"
     + _CHECK),
    # S8: an object-like alias of a function-like goto macro
    ("\tspin_lock(&g_lock);\n\tCHK(x == 2);\n\tspin_unlock(&g_lock);\n",
     "#define CHK CHECK\n" + _CHECK),
    # ... of an alias
    ("\tspin_lock(&g_lock);\n\tCHK2(x == 2);\n\tspin_unlock(&g_lock);\n",
     "#define CHK2 CHK\n#define CHK CHECK\n" + _CHECK),
    # ... an alias of a macro whose arguments hold the goto
    ("\tWL(if (x == 2) goto out);\n", "#define WL WITH_LOCK\n" + _WITH_LOCK),
    # a function-like macro that expands to a goto macro's name, its
    # arguments after the call
    ("\tspin_lock(&g_lock);\n\tID(CHECK)(x == 2);\n\tspin_unlock(&g_lock);\n",
     "#define ID(m) m\n" + _CHECK),
    ("\tspin_lock(&g_lock);\n\tx += ID(CHECKV)(x == 2);\n\tspin_unlock(&g_lock);\n",
     "#define ID(m) m\n#define CHECKV(c) ({ if (c) goto out; 0; })\n"),
    # the arguments counted: `, ## __VA_ARGS__` drops its comma when empty
    ("\tspin_lock(&g_lock);\n\tif (x == 2)\n\t\tBAIL_IF();\n\tspin_unlock(&g_lock);\n",
     "#define LAST2(a, b, ...) b\n#define BAIL_IF(...) LAST2(0, ## __VA_ARGS__, goto out)\n"),
], ids=["S6", "S6b", "S6c", "label_argument", "label_argument_of_a_function", "S7",
        "S7_twice", "S7_under_the_macros_lock", "S8", "S8_alias_of_alias",
        "S8_alias_with_goto_arguments", "name_after_the_call",
        "name_after_the_call_in_an_expression", "b13_empty_va_args_drop_the_comma"])
def test_a_goto_macro_reached_through_another_macro_is_expanded(tmp_path, body, pre):
    """Review of advisor-fix9, items 1a-1c: a goto in the arguments of a
    macro whose body has none, a goto macro's name passed to a macro, and an
    object-like alias of a function-like goto macro were not expanded; the
    label, named by a plain goto too, got only that goto's state (process).
    Mutant b13 of the review (`, ## __VA_ARGS__` keeps its comma) loses
    BAIL_IF()'s goto."""
    assert r6(tmp_path, r6_sc(_PLAIN_OUT + body + _TAIL_OUT, pre)) == "atomic"


def test_a_pasted_comma_keeps_the_variable_arguments_apart(tmp_path):
    """`, ## __VA_ARGS__` with arguments is the comma and the arguments, not
    one token: BAIL_IF(1) is LAST2(0, 1, goto out), which does not jump."""
    assert r6(tmp_path, r6_sc(
        _PLAIN_OUT + "\tspin_lock(&g_lock);\n\tif (x == 2)\n\t\tBAIL_IF(1);\n"
        "\tspin_unlock(&g_lock);\n" + _TAIL_OUT,
        "#define LAST2(a, b, ...) b\n#define BAIL_IF(...) LAST2(0, ## __VA_ARGS__, goto out)\n")) \
        == "process"


def _s18(depth, locked):
    pre = "#define M0(c) do { if (c) goto out; } while (0)\n" + "".join(
        f"#define M{i}(c) do {{ M{i - 1}((c) + 1); M{i - 1}((c) + 2); }} while (0)\n"
        for i in range(1, depth + 1))
    lock, unlock = ("\tspin_lock(&g_lock);\n", "\tspin_unlock(&g_lock);\n") if locked else ("", "")
    return r6_sc(_PLAIN_OUT + lock + f"\tM{depth}(x);\n" + unlock + _TAIL_OUT, pre)


class _Late(BaseException):
    """SIGALRM in _within() (no `except Exception` of the pass stops it)."""


def _within(secs, fn):
    """FN(), or a failure after SECS seconds."""
    def late(_sig, _frame):
        raise _Late()
    old = signal.signal(signal.SIGALRM, late)
    signal.alarm(secs)
    try:
        return fn()
    except _Late:
        pass
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    pytest.fail(f"not done in {secs} s", pytrace=False)


@pytest.mark.parametrize("locked,verdicts", [(True, ("atomic", "unknown")), (False, ("unknown",))],
                         ids=["locked", "unlocked"])
def test_macro_expansion_stops_at_its_budget(tmp_path, locked, verdicts):
    """Review of advisor-fix9, item 2 (S18): sixteen levels of macros, each
    calling the one below twice with other arguments, are 2^16 bodies; the
    pass read them all (105 s).  It stops at EXPAND_TOKENS: every label gets
    the unknown state, so the unlocked case is unknown, not process."""
    assert _within(30, lambda: r6(tmp_path, _s18(16, True if locked else False))) in verdicts


def test_a_macro_expansion_past_the_budget_keeps_the_state_at_its_use(tmp_path):
    """The labels get the state where the expansion that ran out is used:
    in LOCKED_M()'s body, after its spin_lock() (atomic), not only the
    unknown state at LOCKED_M(x)."""
    pre = "#define M0(c) do { if (c) goto out; } while (0)\n" + "".join(
        f"#define M{i}(c) do {{ M{i - 1}((c) + 1); M{i - 1}((c) + 2); }} while (0)\n"
        for i in range(1, 17))
    pre += ("#define LOCKED_M(c) do { spin_lock(&g_lock); M16(c); spin_unlock(&g_lock); }"
            " while (0)\n")
    assert _within(30, lambda: r6(tmp_path, r6_sc(
        "\tLOCKED_M(x);\n" + _TAIL_OUT, pre))) == "atomic"


def test_a_macro_expansion_within_the_budget_is_read(tmp_path):
    """Four levels (16 bodies) stay within EXPAND_TOKENS: the label gets
    what the gotos carry, nothing unknown."""
    assert r6(tmp_path, _s18(4, False)) == "process"
    assert r6(tmp_path, _s18(4, True)) == "atomic"


def test_a_variadic_label_pasted_in_a_macro_body(tmp_path):
    """Review of advisor-fix9, item 4 (S12d; mutants b05 and b16): `goto
    err_ ## __VA_ARGS__` names err_out only when the variadic arguments are
    substituted."""
    assert r6(tmp_path, r6_sc(
        "\tif (x == 1)\n\t\tgoto err_out;\n\tspin_lock(&g_lock);\n\tPV(x == 2, out);\n"
        "\tspin_unlock(&g_lock);\n\treturn 0;\nerr_out:\n\tuse();\n",
        "#define PV(c, ...) do { if (c) goto err_ ## __VA_ARGS__; } while (0)\n")) == "atomic"


def test_a_macro_body_calling_a_wrapper_defined_after_its_user(tmp_path):
    """Review of advisor-fix9, item 4 (S17d; mutant b10): CHECK() calls
    my_lock() before its goto, and my_lock() is defined after the function
    that uses CHECK(): once my_lock() is known to take g_lock, the function
    is scanned again, because a body it expanded names it."""
    assert r6(tmp_path, {"kernel/a.c": R6_USE + """\
        #define CHECK(c) do { my_lock(); if (c) goto out; my_unlock(); } while (0)
        SYSCALL_DEFINE1(b2, int, x)
        {
        \tif (x == 1)
        \t\tgoto out;
        \tCHECK(x == 2);
        \treturn 0;
        out:
        \tuse();
        \treturn 0;
        }
        void my_lock(void)
        {
        \tspin_lock(&g_lock);
        }
        void my_unlock(void)
        {
        \tspin_unlock(&g_lock);
        }
        """}) == "atomic"


def test_a_stringified_argument_is_not_run(tmp_path):
    """Review of advisor-fix9, item 4 (mutant b12): `#e` is a string; read
    as the argument, CHECK_S()'s release would end the lock before its
    goto."""
    assert r6(tmp_path, r6_sc(
        _PLAIN_OUT + "\tspin_lock(&g_lock);\n\tCHECK_S(x == 2, spin_unlock(&g_lock));\n"
        "\tspin_unlock(&g_lock);\n" + _TAIL_OUT,
        "#define CHECK_S(c, e) do { if (c) { note(#e); goto out; } } while (0)\n"
        "static void note(const char *s) { }\n")) == "atomic"


def test_a_generic_associations_type_name_is_not_run(tmp_path):
    """Review of advisor-fix9, item 4 (mutant b03): the type name before an
    association's `:` is skipped; read, the spin_lock() in its typeof()
    would count as taken."""
    assert r6(tmp_path, r6_sc(
        "\tx = _Generic(x, typeof(spin_lock(&g_lock)) *: 1, default: 0);\n\tuse();\n")) \
        == "process"


def test_a_macro_expansion_records_no_site_of_its_own(tmp_path):
    """Review of advisor-fix9, item 4 (mutant b15): the expansion is read for
    its gotos only; a site its body holds is LOCKED_USE()'s, not the
    caller's (the backward goto makes the second reading expand it from
    another state)."""
    res = lockscan.analyse_class(tree_of(tmp_path, {"kernel/a.c": r6_sc(
        "again:\n\tLOCKED_USE(x);\n\tpreempt_disable();\n\tif (x == 3)\n\t\tgoto again;\n"
        "\tpreempt_enable();\n\treturn 0;\nout:\n\treturn 1;\n",
        "#define LOCKED_USE(c) do { spin_lock(&g_lock); if (c) goto out; "
        "spin_unlock(&g_lock); } while (0)\n")}), "g_lock")
    assert [(r["function"], r["call"]) for r in res["sites"]] == \
        [("LOCKED_USE", "spin_lock(&g_lock)")]


def test_an_alias_used_twice_from_one_state_reads_each_list(tmp_path):
    """CHK(x == 4, b) is another expansion than CHK(x == 2, a) from the same
    state: the list after the alias is part of what the pass remembers as
    read, so `b:` gets the lock LCHECK() takes."""
    assert r6(tmp_path, r6_sc(
        "\tif (x == 1)\n\t\tgoto a;\n\tif (x == 3)\n\t\tgoto b;\n\tCHK(x == 2, a);\n"
        "\tCHK(x == 4, b);\n\treturn 0;\na:\n\treturn 1;\nb:\n\tuse();\n",
        "#define CHK LCHECK\n#define LCHECK(c, l) do { spin_lock(&g_lock); if (c) goto l; "
        "spin_unlock(&g_lock); } while (0)\n")) == "atomic"


# Review of advisor-fix10: each case plainly gotos `out` unlocked first, then
# reaches it with g_lock held in a way the pass used to miss (process: a
# spinlock the advisor would let sleep)

_M_IN_A = ("#define M(c) do { if ((c) == 3) goto out; spin_lock(&g_lock); A(c); "
           "spin_unlock(&g_lock); } while (0)\n"
           "#define A(c) do { M(c); if ((c) == 5) goto out2; } while (0)\n")


def test_a_macro_read_inside_another_is_not_taken_as_read_at_the_top(tmp_path):
    """Finding 1 (T2): M(x) read in A(x)'s body has A blocked; the top-level
    M(x) from the same state reads A(x) under the lock, so it is another
    expansion (the macros being expanded are part of what is remembered)."""
    assert r6(tmp_path, r6_sc(
        "\tif (x == 9)\n\t\tgoto out2;\n\tA(x);\n\tM(x);\n\treturn 0;\nout:\n\treturn 1;\n"
        "out2:\n\tuse();\n", _M_IN_A)) == "atomic"


@pytest.mark.parametrize("body,pre", [
    # T3: the body of ID() ends in a macro's name
    ("\tID(WITH_LOCK)(if (x == 2) goto out);\n", _WITH_LOCK + "#define ID(m) m\n"),
    # T3b: in an object-like alias's name
    ("\tPICK(1)(if (x == 2) goto out);\n",
     _WITH_LOCK + "#define WL WITH_LOCK\n#define PICK(a) WL\n"),
    # T3d: an object-like body that ends in a function-like macro's call
    ("\tWLX(if (x == 2) goto out);\n",
     _WITH_LOCK + "#define ID(m) m\n#define WLX ID(WITH_LOCK)\n"),
], ids=["T3", "T3b", "T3d"])
def test_the_list_after_a_macro_call_is_read_for_a_goto(tmp_path, body, pre):
    """Finding 2: the parenthesised list after a call whose expansion ends in
    WITH_LOCK is WITH_LOCK's argument list, its goto run under the lock."""
    assert r6(tmp_path, r6_sc(_PLAIN_OUT + body + _TAIL_OUT, pre)) == "atomic"


def test_a_paste_with_an_empty_left_operand_keeps_the_token_before(tmp_path):
    """Finding 3 (T4c): `goto pfx ## err_ ## l` with pfx empty is `goto
    err_out` (C's placemarker), not `gotoerr_out`."""
    assert r6(tmp_path, r6_sc(
        "\tif (x == 1)\n\t\tgoto err_out;\n\tspin_lock(&g_lock);\n\tif (x == 2)\n"
        "\t\tG(, out);\n\tspin_unlock(&g_lock);\n\treturn 0;\nerr_out:\n\tuse();\n",
        "#define G(pfx, l) goto pfx ## err_ ## l\n")) == "atomic"


@pytest.mark.parametrize("call,pre", [
    ("J(ELAB)", "#define J(l) goto l\n"),
    ("unsafe_get_user(x, (int *)0, ELAB)", ""),
], ids=["T8", "T8b"])
def test_a_label_named_through_an_object_like_macro_is_a_jump(tmp_path, call, pre):
    """Finding 4: ELAB's body is the label's name; passed to a macro that
    jumps to its argument, it is a goto to `out` under the lock."""
    assert r6(tmp_path, r6_sc(
        _PLAIN_OUT + f"\tspin_lock(&g_lock);\n\tif (x == 2)\n\t\t{call};\n"
        "\tspin_unlock(&g_lock);\n" + _TAIL_OUT, "#define ELAB out\n" + pre)) == "atomic"


@pytest.mark.parametrize("mid,pre", [
    ("\tspin_lock(&g_lock);\n\tif (x == 2)\n\t\tgoto *p;\n\tspin_unlock(&g_lock);\n", ""),
    ("\tWITH_LOCK(if (x == 2) goto *p);\n", _WITH_LOCK),
], ids=["T15b", "T15"])
def test_a_computed_goto_reaches_every_label(tmp_path, mid, pre):
    """Finding 5: `goto *p` may reach any label (here p = &&out): each gets
    the state at the goto."""
    assert r6(tmp_path, r6_sc("\tvoid *p = &&out;\n\n" + _PLAIN_OUT + mid + _TAIL_OUT, pre)) \
        == "atomic"


def test_the_expansion_budget_reads_a_tree_of_127_bodies(tmp_path):
    """Should-fix 7 (mutant m19): six levels of M(c) (127 bodies, 6071
    tokens read; the most a function of the files measured expands is
    2336) stay within EXPAND_TOKENS and are read: the unlocked gotos give
    process, not the unknown of a budget run out."""
    assert lockscan.EXPAND_TOKENS == 20000
    assert r6(tmp_path, _s18(6, False)) == "process"


def test_an_unreadable_macro_gives_the_labels_the_state_at_its_use(tmp_path):
    """Should-fix 7 (mutant m16): BAD()'s body does not balance; `out:` gets
    the state at BAD(x == 2), g_lock held, unknown besides, so use() is
    atomic (with the unknown state alone it would be unknown)."""
    assert r6(tmp_path, r6_sc(
        _PLAIN_OUT + "\tspin_lock(&g_lock);\n\tBAD(x == 2);\n\tspin_unlock(&g_lock);\n" + _TAIL_OUT,
        "#define BAD(c) do { if (c) goto out; ) } while (0)\n")) == "atomic"
