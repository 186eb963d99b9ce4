# SPDX-License-Identifier: GPL-2.0
"""JUnit XML for CI dashboards: make check's cases, the torture scenarios.

One <testsuite> per file, one <testcase> per case (classname: the stage or
the kernel); a failed case carries a <failure> with its detail.  The format
is the one pytest's --junitxml writes, which GitLab, Jenkins and GitHub's
test reporters read.
"""

import os
import xml.etree.ElementTree as ET


def write(path, suite, cases):
    """Write PATH: the testsuite SUITE of CASES, [(classname, name, ok, detail)]."""
    cases = list(cases)
    failures = sum(1 for _c, _n, ok, _d in cases if not ok)
    root = ET.Element("testsuites")
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)),
                       failures=str(failures), errors="0", skipped="0")
    for classname, name, ok, detail in cases:
        tc = ET.SubElement(ts, "testcase", classname=classname, name=name)
        if not ok:
            fail = ET.SubElement(tc, "failure", message=(detail or "failed").split("\n")[0])
            fail.text = detail or ""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    return path


def read(path):
    """[(classname, name, ok)] of a file write() wrote (for the tests)."""
    root = ET.parse(path).getroot()
    return [(tc.get("classname"), tc.get("name"), tc.find("failure") is None)
            for tc in root.iter("testcase")]
