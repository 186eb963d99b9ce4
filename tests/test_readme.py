# SPDX-License-Identifier: GPL-2.0
"""README.md states what the project is today: checked against the series and the tools."""

import glob
import os
import re

from pvrt import check, tracelat

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def readme():
    with open(os.path.join(TOP, "README.md"), encoding="utf-8") as f:
        return f.read()


def patches():
    """[(number, subject, text)] of kernel-patches/, in order."""
    out = []
    for path in sorted(glob.glob(os.path.join(TOP, "kernel-patches", "[0-9][0-9][0-9][0-9]-*.patch"))):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        m = re.search(r"^Subject: \[RFC PATCH (\d+)/\d+\] (.*?)\n(?! )", text, re.M | re.S)
        out.append((int(m.group(1)), re.sub(r"\n ", " ", m.group(2)), text))
    return out


def readme_patch_list(text):
    """[(number, subject)] of the README's numbered list of the series."""
    section = text[text.index("The series in `kernel-patches/`"):text.index("## The two commands")]
    return [(int(n), subj) for n, subj in re.findall(r"^(\d+)\. `([^`]+)`", section, re.M)]


def test_the_patch_list_is_the_series():
    listed = readme_patch_list(readme())
    assert listed == [(n, subj) for n, subj, _t in patches()]
    m = re.search(r"The series in `kernel-patches/` \((\d+) patches", readme())
    assert int(m.group(1)) == len(patches())


def test_a_wrong_patch_list_is_caught():
    n, subj, _t = patches()[-1]
    assert f"{n}. `{subj}`" in readme()
    text = readme().replace(f"{n}. `{subj}`", "")
    assert readme_patch_list(text) != [(n, s) for n, s, _t in patches()]


def series_patch_refs(text):
    """[(N, backticked names near 'series patch N')] for every such reference."""
    lines = text.splitlines()
    refs = []
    for i, line in enumerate(lines):
        for n in re.findall(r"series patch (\d+)", line):
            near = " ".join(lines[max(0, i - 2):i + 2])
            refs.append((int(n), [t.replace("struct ", "") for t in re.findall(r"`([^`]+)`", near)]))
    return refs


def test_series_patch_numbers_name_the_patch_that_adds_the_thing():
    """'series patch N' next to `name`: patch N's diff carries that name."""
    by_number = {n: t for n, _s, t in patches()}
    refs = series_patch_refs(readme())
    assert refs
    for n, names in refs:
        assert n in by_number, f"series patch {n}: no such patch"
        assert any(name in by_number[n] for name in names), (n, names)
    ranges = [(int(a), int(b)) for a, b in re.findall(r"patches (\d+)-(\d+)", readme())]
    assert all(1 <= a < b <= len(by_number) for a, b in ranges)


def test_a_wrong_patch_number_is_caught():
    by_number = {n: t for n, _s, t in patches()}
    text = "with the `ikt_bench` module\n(series patch 10)\n"
    (n, names), = series_patch_refs(text)
    assert not any(name in by_number[n] for name in names)


def test_the_stage_table_is_make_checks_stages_in_order():
    text = readme()
    table = text[text.index("| stage | what it runs |"):]
    table = table[:table.index("\n\n")]
    rows = re.findall(r"^\| ([\w-]+) \|", table, re.M)[1:]     # [0] is the header
    assert rows == [k for k, _t, _f in check.Check.STAGES]


def test_trace_latency_loads_are_those_the_tool_takes():
    m = re.search(r"`guest/latency-trace`: cyclictest under the load \((.*?)\)", readme(), re.S)
    listed = re.findall(r"`(?:--load )?([\w-]+)`", m.group(1))
    assert [x for x in listed if x != "--secs"] == list(tracelat.LOADS)


def cover_letter_validation(text):
    return text[text.index("Validation:"):].split("\n\n")[0].replace("\n", " ")


def test_the_cover_letter_names_the_load_of_the_headline():
    from pvrt import validate
    assert validate.DEFAULT_LOAD == "stress-set"
    with open(os.path.join(TOP, "queue", "cover-letter"), encoding="utf-8") as f:
        para = cover_letter_validation(f.read())
    assert "under the stress set" in para and "hackbench" not in para
    assert "hackbench" in cover_letter_validation(
        "Validation: ... from the same tree under hackbench load\n\nrest")
