# SPDX-License-Identifier: GPL-2.0-or-later
"""Match keys on the device itself."""

CASES = [
    dict(name="kernel_eq", dev="sda", rules='KERNEL=="sda", ENV{T}="1"', props={"T": "1"}),
]
