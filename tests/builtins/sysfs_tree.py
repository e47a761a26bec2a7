# SPDX-License-Identifier: GPL-2.0-or-later
"""A fake sysfs tree for the storage/network builtin tests (path_id, usb_id,
net_id), laid out like the kernel's.

    t = SysfsTree("/tmp/x")               # creates /tmp/x/sys
    pci = t.device("/devices/pci0000:00/0000:00:14.0", subsystem="pci",
                   driver="xhci_hcd", attrs={"vendor": "0x8086"})
    t.device(pci + "/usb1", subsystem="usb", devtype="usb_device", devnum=("c", 189, 0),
             devname="bus/usb/001/001")

What it writes, as the kernel does:
  * the device directory under sys/devices with a "uevent" file (MAJOR/MINOR/
    DEVNAME/DEVTYPE/DRIVER/INTERFACE/IFINDEX first, then extra KEY=VALUE lines);
  * a relative "subsystem" link to sys/bus/<s> (buses) or sys/class/<s>, and
    the device's entry there (sys/bus/<s>/devices/<name> or sys/class/<s>/<name>);
  * a relative "driver" link to sys/bus/<bus>/drivers/<driver>;
  * "dev" and the sys/dev/{block,char}/M:m link for devices with a number;
  * attribute files (str or bytes), and symlink attributes via links={}.

Both systemd's udevadm (SYSTEMD_DEVICE_VERIFY_SYSFS=0, tree bind-mounted on
/sys) and tudev read the same tree. Every device directory gets a "uevent"
file; plain directories in between (".../net", ".../block") do not.
"""

import os

# Subsystems that are buses (sys/bus/<s>); everything else is a class.
BUSES = {
    "pci", "usb", "scsi", "platform", "virtio", "acpi", "xen", "serio", "ccw", "ccwgroup",
    "scm", "iucv", "ap", "spi", "bcma", "vio", "cciss", "netdevsim", "vmbus", "pnp",
    "i2c", "hid", "mmc", "sdio", "amba", "ieee1394", "css", "usb-serial",
}


class SysfsTree:
    def __init__(self, root):
        self.root = root
        self.sys = os.path.join(root, "sys")
        for d in ("devices", "bus", "class", "dev/block", "dev/char", "firmware", "module",
                  "kernel"):
            os.makedirs(os.path.join(self.sys, d), exist_ok=True)

    def path(self, devpath):
        return os.path.join(self.sys, devpath.lstrip("/"))

    def _symlink(self, target_abs, link_abs):
        os.makedirs(os.path.dirname(link_abs), exist_ok=True)
        rel = os.path.relpath(target_abs, os.path.dirname(link_abs))
        if os.path.lexists(link_abs):
            os.unlink(link_abs)
        os.symlink(rel, link_abs)

    def write(self, devpath, name, value):
        p = os.path.join(self.path(devpath), name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb" if isinstance(value, bytes) else "w") as f:
            f.write(value)
        return p

    def link(self, devpath, name, target_devpath):
        """A symlink attribute `name` of the device pointing at another sysfs path."""
        self._symlink(self.path(target_devpath), os.path.join(self.path(devpath), name))

    def subsystem_dir(self, subsystem, bus=None):
        bus = (subsystem in BUSES) if bus is None else bus
        base = os.path.join(self.sys, "bus" if bus else "class", subsystem)
        os.makedirs(os.path.join(base, "devices") if bus else base, exist_ok=True)
        return base

    def device(self, devpath, subsystem=None, devtype=None, driver=None, devnum=None,
               devname=None, attrs=None, links=None, uevent=None, bus=None,
               driver_bus=None, ifindex=None, interface=None):
        """Create a device; returns its devpath. devnum = ("b"|"c", major, minor)."""
        d = self.path(devpath)
        os.makedirs(d, exist_ok=True)
        name = os.path.basename(devpath)
        lines = []
        if devnum:
            lines += ["MAJOR=%d" % devnum[1], "MINOR=%d" % devnum[2]]
            if devname:
                lines.append("DEVNAME=%s" % devname)
        if devtype:
            lines.append("DEVTYPE=%s" % devtype)
        if driver:
            lines.append("DRIVER=%s" % driver)
        if interface:
            lines.append("INTERFACE=%s" % interface)
        if ifindex is not None:
            lines.append("IFINDEX=%d" % ifindex)
        for k, v in (uevent or {}).items():
            lines.append("%s=%s" % (k, v))
        with open(os.path.join(d, "uevent"), "w") as f:
            f.write("".join(line + "\n" for line in lines))
        if subsystem:
            is_bus = (subsystem in BUSES) if bus is None else bus
            base = self.subsystem_dir(subsystem, is_bus)
            self._symlink(base, os.path.join(d, "subsystem"))
            entry = os.path.join(base, "devices", name) if is_bus else os.path.join(base, name)
            self._symlink(d, entry)
            if subsystem == "block" and devtype == "disk":
                self._symlink(d, os.path.join(self.sys, "block", name))
        if driver:
            ddir = os.path.join(self.sys, "bus", driver_bus or subsystem, "drivers", driver)
            os.makedirs(ddir, exist_ok=True)
            self._symlink(ddir, os.path.join(d, "driver"))
            self._symlink(d, os.path.join(ddir, name))
        if devnum:
            kind = "block" if devnum[0] == "b" else "char"
            with open(os.path.join(d, "dev"), "w") as f:
                f.write("%d:%d\n" % (devnum[1], devnum[2]))
            self._symlink(d, os.path.join(self.sys, "dev", kind, "%d:%d" % devnum[1:]))
        if ifindex is not None:
            with open(os.path.join(d, "ifindex"), "w") as f:
                f.write("%d\n" % ifindex)
        for k, v in (attrs or {}).items():
            if isinstance(v, str) and not v.endswith("\n"):
                v += "\n"
            self.write(devpath, k, v)
        for k, v in (links or {}).items():
            self.link(devpath, k, v)
        return devpath


def pci_config(multifunction=False, header_type=0, vendor=0x8086, device=0x1234):
    """First 64 bytes of a PCI config space (only the header type byte matters)."""
    b = bytearray(64)
    b[0:2] = vendor.to_bytes(2, "little")
    b[2:4] = device.to_bytes(2, "little")
    b[0x0e] = (header_type & 0x7f) | (0x80 if multifunction else 0)
    return bytes(b)


def pci_modalias(vendor, device, cls, subclass, progif=0):
    return "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X" % (vendor, device, vendor, device,
                                                              cls, subclass, progif)


def usb_descriptors(vendor, product, interfaces, bcd_usb=0x0200, bcd_device=0x0100):
    """Device descriptor + one configuration with the given interfaces
    [(class, subclass, protocol, n_endpoints), ...] as the kernel's
    "descriptors" file has them."""
    dev = bytes([18, 1]) + bcd_usb.to_bytes(2, "little") + bytes([0, 0, 0, 64]) + \
        vendor.to_bytes(2, "little") + product.to_bytes(2, "little") + \
        bcd_device.to_bytes(2, "little") + bytes([1, 2, 3, 1])
    body = b""
    for i, (cls, sub, proto, neps) in enumerate(interfaces):
        body += bytes([9, 4, i, 0, neps, cls, sub, proto, 0])
        for e in range(neps):
            body += bytes([7, 5, 0x81 + e, 2, 0, 2, 0])
    total = 9 + len(body)
    cfg = bytes([9, 2]) + total.to_bytes(2, "little") + bytes([len(interfaces), 1, 0, 0x80, 50])
    return dev + cfg + body
