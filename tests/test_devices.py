# SPDX-License-Identifier: GPL-2.0
"""scripts/devices-check: parsing the guest's sections and judging them."""

from pvrt import devices

INTERRUPTS = """\
           CPU0       CPU1
  0:         40          0   IO-APIC    2-edge      timer
  1:          9          0   IO-APIC    1-edge      i8042
 24:          0          3   PCI-MSIX-0000:00:04.0   0-edge      virtio1-config
 25:         10         20   PCI-MSIX-0000:00:04.0   1-edge      virtio1-req.0
 26:          5          0   PCI-MSI-0000:00:05.0   0-edge      ahci[0000:00:05.0]
 27:          1          1   PCI-MSIX-0000:00:07.0   0-edge      eth1-rx-0
 28:          2          0   PCI-MSIX-0000:00:07.0   1-edge      eth1-tx-0
 29:          0          0   PCI-MSIX-0000:00:07.0   2-edge      eth1
 11:          7          0   IO-APIC   11-fasteoi   xhci_hcd, uhci_hcd:usb1
NMI:          0          0   Non-maskable interrupts
LOC:        100        100   Local timer interrupts
""".splitlines()


def test_interrupts_sums_cpus_and_keeps_actions():
    irqs = devices.interrupts(INTERRUPTS)
    assert irqs["25"] == (30, "virtio1-req.0")
    assert irqs["11"] == (7, "xhci_hcd, uhci_hcd:usb1")
    assert irqs["LOC"][0] == 200


def test_device_irqs_per_driver():
    irqs = devices.interrupts(INTERRUPTS)
    assert devices.device_irqs("block", "vda", "virtio_blk", "virtio1", irqs) == ["24", "25"]
    assert devices.device_irqs("block", "sda", "ahci", "0000:00:05.0", irqs) == ["26"]
    assert devices.device_irqs("net", "eth1", "e1000e", "0000:00:07.0", irqs) == \
        ["27", "28", "29"]
    assert devices.device_irqs("block", "sdb", "xhci_hcd", "0000:00:06.0", irqs) == ["11"]
    assert devices.device_irqs("net", "eth0", "virtio_net", "virtio0", irqs) == []


def test_device_map_reads_four_fields():
    assert devices.device_map(["block vda virtio_blk virtio1", "junk",
                               "net eth1 e1000e 0000:00:07.0"]) == \
        [("block", "vda", "virtio_blk", "virtio1"), ("net", "eth1", "e1000e", "0000:00:07.0")]


class FakeResult:
    def __init__(self, secs, problems=()):
        self._secs, self._problems, self.rc = secs, list(problems), 0

    def sections(self):
        return self._secs

    def problems(self, allow=()):
        return self._problems


REPORT = ["#  irq action               mode         pid prio reason",
          "     1 i8042                threaded     90   50 -",
          "    25 virtio1-req.0        threaded     91   50 -"]


def test_evaluate_passes_a_device_that_interrupted_and_fails_one_that_did_not():
    after = [ln.replace("        10         20", "        11         25")
             for ln in INTERRUPTS]
    secs = {"dev-map": (0, ["block vda virtio_blk virtio1", "block sda ahci 0000:00:05.0"]),
            "irq-before": (0, INTERRUPTS), "irq-after": (0, after),
            "io": (0, ["read vda 4096", "read sda 4096"]), "ikt-report": (0, REPORT)}
    cases, rows, _ = devices.evaluate(FakeResult(secs))
    got = {name: ok for name, ok, _ in cases}
    assert got["virtio-blk vda: read, interrupts rose"]
    assert not got["AHCI sda: read, interrupts rose"]      # count 5 -> 5
    assert not got["e1000e present"]
    assert got["i8042 in /proc/irq/ikt"]
    assert rows[0]["before"] == 33 and rows[0]["after"] == 39


def test_evaluate_fails_an_unjustified_hard_handler_and_a_splat():
    secs = {"dev-map": (0, []), "irq-before": (0, INTERRUPTS), "irq-after": (0, INTERRUPTS),
            "io": (0, []),
            "ikt-report": (0, REPORT + ["     9 acpi                 hard      -    - ikt_off"])}
    cases, _, _ = devices.evaluate(FakeResult(secs, ["console line 3: WARNING: x at y"]))
    got = {name: ok for name, ok, _ in cases}
    assert not got["/proc/irq/ikt: every handler threaded, or hard for a justified reason"]
    assert not got["boot clean: no warning, the check finished"]


def test_evaluate_fails_an_unreadable_report_and_says_why():
    # An unescaped blank in an action name: the row must not vanish.
    secs = {"dev-map": (0, []), "irq-before": (0, INTERRUPTS), "irq-after": (0, INTERRUPTS),
            "io": (0, []),
            "ikt-report": (0, REPORT + ["    26 PCIe PME             hard      -    - ikt_off"])}
    cases, _, _ = devices.evaluate(FakeResult(secs))
    got = {name: (ok, detail) for name, ok, detail in cases}
    ok, detail = got["/proc/irq/ikt: every handler threaded, or hard for a justified reason"]
    assert not ok and "cannot read" in detail and "PCIe PME" in detail


def test_evaluate_prints_the_priority_not_a_policy_and_other_as_other():
    # The kernel's number may be SCHED_FIFO or SCHED_RR: print it as a
    # priority; a thread in neither class shows "other".
    secs = {"dev-map": (0, ["block vda virtio_blk virtio1", "block sda ahci 0000:00:05.0"]),
            "irq-before": (0, INTERRUPTS), "irq-after": (0, INTERRUPTS), "io": (0, []),
            "ikt-report": (0, [REPORT[0], REPORT[2],
                               "    26 ahci[0000:00:05.0]   threaded     92 other -"])}
    _, rows, _ = devices.evaluate(FakeResult(secs))
    ikt = {r["name"]: r["ikt"] for r in rows}
    assert ikt == {"vda": ["threaded prio 50"], "sda": ["threaded other"]}
