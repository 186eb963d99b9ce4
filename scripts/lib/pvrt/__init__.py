# SPDX-License-Identifier: GPL-2.0
"""Tooling for the PV-RT patch series: base import, series, kernel builds, QEMU, parsing."""
