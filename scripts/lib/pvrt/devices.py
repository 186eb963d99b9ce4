# SPDX-License-Identifier: GPL-2.0
"""scripts/devices-check: IKT on a kernel with real device drivers.

Builds variants/devices (x86_64_defconfig plus the project's fragment) and
boots it under QEMU (2 CPUs, plain TCG) with a virtio-blk disk, an AHCI disk,
a USB stick on xHCI, a virtio-net and an e1000e NIC, each NIC on a QEMU user
network of its own with restrict=on (no traffic leaves the VM), and the PC's
i8042.  The guest (guest/devices-check) reads each disk, sends pings from
each NIC and prints /proc/interrupts before and after and /proc/irq/ikt.

Passes when every disk was read and every NIC transmitted, the interrupt
count of each of those devices rose, every handler in /proc/irq/ikt is
threaded or hard for a reason Documentation/core-api/irq/ikt.rst justifies,
and the console is free of warnings.  Prints a table per device and the
report; the log goes to build/results/devices-<time>/.
"""

import argparse
import json
import os
import re
import sys
import tempfile

from pvrt import boot, build, console, experiment, lock, logs, tools
from pvrt.errors import entry

DISK_MB = 4


def qemu_devices(tmp):
    """QEMU arguments for the devices, with their disk images under TMP."""
    args = []
    for name in ("vblk", "sata", "usb"):
        path = os.path.join(tmp, f"{name}.img")
        with open(path, "wb") as f:
            f.write(os.urandom(DISK_MB << 20))
        args += ["-drive", f"if=none,id={name},file={path},format=raw"]
    args += ["-device", "virtio-blk-pci,drive=vblk",
             "-device", "ahci,id=ahci", "-device", "ide-hd,drive=sata,bus=ahci.0",
             "-device", "qemu-xhci,id=xhci", "-device", "usb-storage,bus=xhci.0,drive=usb",
             "-netdev", "user,id=n0,restrict=on", "-device", "virtio-net-pci,netdev=n0",
             "-netdev", "user,id=n1,restrict=on", "-device", "e1000e,netdev=n1"]
    return args


def interrupts(section_lines):
    """{label: (total count, action text)} of a /proc/interrupts dump."""
    out, ncpu = {}, None
    for line in section_lines:
        f = line.split()
        if not f:
            continue
        if ncpu is None:
            ncpu = sum(1 for x in f if re.fullmatch(r"CPU\d+", x))
            continue
        if not f[0].endswith(":"):
            continue
        counts = [int(x) for x in f[1:1 + ncpu] if x.isdigit()]
        rest = f[1 + len(counts):]
        # "<chip> <hwirq>-<type> <action>[, <action>...]" for numbered lines.
        actions = " ".join(rest[2:]) if f[0][:-1].isdigit() else " ".join(rest)
        out[f[0][:-1]] = (sum(counts), actions)
    return out


def device_map(section_lines):
    """[(kind, name, driver, device)] from the dev-map section."""
    out = []
    for line in section_lines:
        f = line.split()
        if len(f) == 4 and f[0] in ("block", "net"):
            out.append(tuple(f))
    return out


def action_names(text):
    return [a.strip() for a in text.split(",") if a.strip()]


def device_irqs(kind, name, driver, device, irqs):
    """The /proc/interrupts labels that belong to one device."""
    def match(action):
        if driver.startswith("virtio"):
            return action.startswith(device + "-")
        if kind == "net":
            return action == name or action.startswith(name + "-")
        if driver == "ahci":
            return device in action or action == "ahci"
        return action == driver           # xhci_hcd, ...
    return sorted((label for label, (_, acts) in irqs.items()
                   if any(match(a) for a in action_names(acts))), key=str)


def evaluate(res):
    """(cases [(name, ok, detail)], device rows, report rows)."""
    secs = res.sections()
    cases, rows = [], []
    dmap = device_map(secs.get("dev-map", (1, []))[1])
    before = interrupts(secs.get("irq-before", (1, []))[1])
    after = interrupts(secs.get("irq-after", (1, []))[1])
    io = secs.get("io", (1, []))
    done = {}
    for line in io[1]:
        f = line.split()
        if len(f) == 3 and f[0] in ("read", "sent") and f[2].isdigit():
            done[f[1]] = int(f[2])
    report, unreadable = [], None
    rep = secs.get("ikt-report")
    try:
        report = console.ikt_report(rep[1]) if rep else []
    except ValueError as e:
        unreadable = str(e)
    by_irq = {}
    for r in report:
        by_irq.setdefault(str(r["irq"]), []).append(r)
    kinds = {"virtio_blk": "virtio-blk", "ahci": "AHCI", "xhci_hcd": "xHCI usb-storage",
             "virtio_net": "virtio-net", "e1000e": "e1000e"}
    seen = set()
    for kind, name, driver, device in dmap:
        labels = device_irqs(kind, name, driver, device, after)
        b = sum(before.get(x, (0, ""))[0] for x in labels)
        a = sum(after.get(x, (0, ""))[0] for x in labels)
        modes = sorted({f"{r['mode']}" + (f" {r['reason']}" if r["reason"] else "")
                        + (f" prio {r['prio']}" if isinstance(r["prio"], int)
                           else f" {r['prio']}" if r["prio"] else "")
                        for x in labels for r in by_irq.get(x, [])})
        rows.append({"device": kinds.get(driver, driver), "name": name, "driver": driver,
                     "pci": device, "irqs": labels, "before": b, "after": a,
                     "io": done.get(name), "ikt": modes})
        seen.add(driver)
        what = "read" if kind == "block" else "transmitted"
        cases.append((f"{kinds.get(driver, driver)} {name}: {what}, interrupts rose",
                      bool(done.get(name)) and a > b and bool(labels),
                      f"io {done.get(name)}, irqs {labels}, count {b} -> {a}"))
    for driver, label in kinds.items():
        if driver not in seen:
            cases.append((f"{label} present", False, f"no {driver} device in the guest"))
    i8042 = [r for r in report if r["action"] == "i8042"]
    cases.append(("i8042 in /proc/irq/ikt", bool(i8042), "no i8042 action"))
    bad = console.ikt_unjustified(report)
    cases.append(("/proc/irq/ikt: every handler threaded, or hard for a justified reason",
                  bool(report) and not bad,
                  unreadable
                  or "; ".join(f"irq {r['irq']} {r['action']}: hard, {r['reason']}" for r in bad)
                  or "no report"))
    # A failed read or send is a case of its own above.
    probs = [p for p in res.problems() if not p.startswith("the command exited with 1")]
    cases.append(("boot clean: no warning, the check finished", not probs, "; ".join(probs)))
    return cases, rows, report


def run(top, bdir, build_it=True, log=print):
    """Build (unless BUILD_IT is false) and boot the devices kernel, print the
    result; return the number of failed cases."""
    if build_it:
        _tree, outs = experiment.apply_and_build(top, bdir, ["devices"], log=log)
        out = outs["devices"]
    else:
        out = os.path.join(bdir, "out", "devices")
    results = experiment.new_results_dir(bdir, "devices-")
    log_path = os.path.join(results, "devices.log")
    with tempfile.TemporaryDirectory(prefix="pvrt-disks-") as tmp:
        res = boot.boot(build.kernel_image(out), "devices-check", log_path,
                        qemu_extra=qemu_devices(tmp), timeout=900)
    cases, rows, report = evaluate(res)
    print("Devices under IKT (x86_64_defconfig + pv_rt.config, QEMU -M pc, 2 CPUs)\n")
    print(f"{'device':18} {'name':6} {'irqs':14} {'count':>15} {'io':>7}  ikt")
    for r in rows:
        print(f"{r['device']:18} {r['name']:6} {','.join(r['irqs']) or '-':14}"
              f" {r['before']:>7}->{r['after']:<7} {r['io'] if r['io'] is not None else '-':>7}"
              f"  {'; '.join(r['ikt']) or '-'}")
    print("\n/proc/irq/ikt:")
    for r in report:
        print(f"  {r['irq']:>4} {r['action']:24} {r['mode']:8}"
              f" {r['prio'] if r['prio'] is not None else '-':>4} {r['reason'] or ''}")
    print()
    failed = 0
    for name, ok, detail in cases:
        print(f"{'PASS' if ok else 'FAIL'}  {name}" + ("" if ok else f": {detail}"))
        failed += not ok
    with open(os.path.join(results, "devices.json"), "w", encoding="utf-8") as f:
        json.dump({"devices": rows, "report": report,
                   "cases": [{"name": n, "ok": o, "detail": d} for n, o, d in cases]},
                  f, indent=1)
    print(f"\nlog: {log_path}")
    return failed


def main(argv=None):
    ap = argparse.ArgumentParser(prog="scripts/devices-check", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-build", action="store_true",
                    help="boot build/out/devices as it is")
    args = ap.parse_args(argv)
    tools.require()
    top, bdir = os.environ["PVRT_TOP"], os.environ["PVRT_BUILD"]
    failed = run(top, bdir, not args.no_build, log=logs.logger("devices-check"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    entry(lock.with_build_lock(main))
