# SPDX-License-Identifier: GPL-2.0-or-later
"""The fake sysfs tree of the rules case table (tests/integration/test_rules_table.py).

    python3 tests/rules-cases/fakesys_tree.py DIR     build DIR/sys, print the devices

Built with tests/builtins/sysfs_tree.py and storage_net_fixtures.py (the
kernel's layout: uevent files, subsystem/driver links, dev + sys/dev links):

  sda    SATA disk on AHCI (scsi_device 0:0:0:0, driver sd) with sda1, sda2 (8:0..8:2)
  sdb    a second SATA disk (1:0:0:0) with sdb1 (8:16, 8:17): link conflicts
  ttyS0  serial port on pnp 00:04 (driver serial), 4:64; tty5 virtual, 4:5
  usb    xhci 0000:00:14.0 -> usb1 -> 1-1 (046d:c077 Logitech mouse, serial)
         -> 1-1:1.0 (usbhid) -> hid 0003:046D:C077.0001 -> input3 -> event3 (13:67), mouse0
  net    enp0s3 on 0000:00:03.0 (e1000, ifindex 2, 52:54:00:12:34:56)
  sound  0000:00:1b.0 (snd_hda_intel) -> card0 -> controlC0 (116:0), pcmC0D0p (116:16)
  misc   /devices/virtual/misc/tudevtest (10:200)

DEV maps short names to devpaths.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "builtins"))

from sysfs_tree import SysfsTree  # noqa: E402
from storage_net_fixtures import (PCI, _pci_root, net_dev, partition, pci_dev,  # noqa: E402
                                  scsi_chain, usb_device)

AHCI = PCI + "/0000:00:1f.2"
SDA = AHCI + "/ata1/host0/target0:0:0/0:0:0:0/block/sda"
SDB = AHCI + "/ata2/host1/target1:0:0/1:0:0:0/block/sdb"
XHCI = PCI + "/0000:00:14.0"
USBDEV = XHCI + "/usb1/1-1"
USBIF = USBDEV + "/1-1:1.0"
HID = USBIF + "/0003:046D:C077.0001"
INPUT = HID + "/input/input3"
HDA = PCI + "/0000:00:1b.0"

DEV = {
    "sda": SDA, "sda1": SDA + "/sda1", "sda2": SDA + "/sda2",
    "sdb": SDB, "sdb1": SDB + "/sdb1",
    "scsi": AHCI + "/ata1/host0/target0:0:0/0:0:0:0",
    "ttyS0": "/devices/pnp0/00:04/tty/ttyS0", "tty5": "/devices/virtual/tty/tty5",
    "usbdev": USBDEV, "usbif": USBIF, "input": INPUT,
    "event3": INPUT + "/event3", "mouse0": INPUT + "/mouse0",
    "net": PCI + "/0000:00:03.0/net/enp0s3",
    "card0": HDA + "/sound/card0", "controlC0": HDA + "/sound/card0/controlC0",
    "pcm": HDA + "/sound/card0/pcmC0D0p",
    "misc": "/devices/virtual/misc/tudevtest",
}


def build(root):
    t = SysfsTree(root)
    _pci_root(t)
    ahci = pci_dev(t, "0000:00:1f.2", "ahci", cls=(1, 6), device=0xa352)
    for port, (h, disk, major_minor, model) in enumerate(
            [(0, "sda", (8, 0), "TUDEV DISK A    "), (1, "sdb", (8, 16), "TUDEV DISK B    ")]):
        ata = t.device(ahci + "/ata%d" % (port + 1), subsystem=None,
                       attrs={"port_no": str(port + 1)})
        t.device(ata + "/ata_port/ata%d" % (port + 1), subsystem="ata_port",
                 attrs={"port_no": str(port + 1)})
        _, dk = scsi_chain(t, ata, (h, 0, 0), 0, vendor="ATA     ", model=model,
                           disk=disk, devnum=major_minor,
                           attrs={"queue_depth": "32", "state": "running"})
        t.link(dk, "device", os.path.dirname(os.path.dirname(dk)))
        t.write(dk, "removable", "0\n")
        t.write(dk, "ro", "0\n")
        t.write(dk, "queue/rotational", "1\n")
        t.write(dk, "queue/scheduler", "[mq-deadline] none\n")
    partition(t, SDA, "sda1", 1, (8, 1))
    partition(t, SDA, "sda2", 2, (8, 2))
    partition(t, SDB, "sdb1", 1, (8, 17))

    t.device("/devices/pnp0")
    pnp = t.device("/devices/pnp0/00:04", subsystem="pnp", driver="serial",
                   attrs={"id": "PNP0501"})
    t.device(pnp + "/tty/ttyS0", subsystem="tty", devnum=("c", 4, 64), devname="ttyS0",
             attrs={"type": "4", "port": "0x3F8", "irq": "4"})
    t.device("/devices/virtual/tty/tty5", subsystem="tty", devnum=("c", 4, 5), devname="tty5")

    xhci = pci_dev(t, "0000:00:14.0", "xhci_hcd", cls=(0x0c, 0x03), device=0xa36d)
    root_hub, _ = usb_device(t, xhci, "usb1", 0x1d6b, 0x0002, [(9, 0, 0, 1, "hub")],
                             manufacturer="Linux xhci-hcd", product="xHCI Host Controller",
                             devnum=(189, 0))
    dev, intfs = usb_device(t, root_hub, "1-1", 0x046d, 0xc077, [(3, 1, 2, 1, "usbhid")],
                            manufacturer="Logitech", product="USB Optical Mouse",
                            serial="ABC123", devnum=(189, 1))
    assert dev == USBDEV and intfs[0] == USBIF
    t.device(HID, subsystem="hid", driver="hid-generic",
             uevent={"HID_ID": "0003:0000046D:0000C077", "HID_NAME": "Logitech USB Mouse"})
    t.device(INPUT, subsystem="input",
             uevent={"PRODUCT": "3/46d/c077/111", "NAME": '"Logitech USB Mouse"'},
             attrs={"name": "Logitech USB Mouse", "id/vendor": "046d", "id/product": "c077",
                    "capabilities/ev": "17", "capabilities/rel": "903"})
    t.device(INPUT + "/event3", subsystem="input", devnum=("c", 13, 67),
             devname="input/event3")
    t.device(INPUT + "/mouse0", subsystem="input", devnum=("c", 13, 32),
             devname="input/mouse0")

    nic = pci_dev(t, "0000:00:03.0", "e1000", cls=(2, 0), device=0x100e)
    net_dev(t, nic, "enp0s3", 2, "52:54:00:12:34:56", attrs={"mtu": "1500"})

    hda = pci_dev(t, "0000:00:1b.0", "snd_hda_intel", cls=(4, 3), device=0xa348)
    card = t.device(hda + "/sound/card0", subsystem="sound",
                    attrs={"id": "PCH", "number": "0"})
    t.device(card + "/controlC0", subsystem="sound", devnum=("c", 116, 0),
             devname="snd/controlC0")
    t.device(card + "/pcmC0D0p", subsystem="sound", devnum=("c", 116, 16),
             devname="snd/pcmC0D0p", attrs={"pcm_class": "generic"})

    t.device("/devices/virtual/misc/tudevtest", subsystem="misc", devnum=("c", 10, 200),
             devname="tudevtest", attrs={"dev_attr": "hello world"})
    return t


if __name__ == "__main__":
    build(sys.argv[1])
    for k, v in sorted(DEV.items()):
        print(k, v)
