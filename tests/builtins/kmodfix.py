# SPDX-License-Identifier: GPL-2.0-or-later
"""A module directory for the kmod builtin tests, built from fake modules.

    python3 tests/builtins/kmodfix.py DIR    -> prints the module dir, config dir

Each fake module is an ELF object (gcc -c) whose only content is a
.modinfo section with alias= lines, which is all depmod reads to build
modules.alias; `depmod -b DIR/root VERSION` then writes the binary indexes
libkmod uses. The modules cannot be inserted (they are not kernel modules,
and this VM cannot load modules at all), which is what the insertion-failure
test needs. Also: one built-in module (modules.builtin + its aliases in
modules.builtin.modinfo) and a modprobe.d directory that blacklists fake_b.

    fake_a   alias pci:v00001234d00005678sv*sd*bc*sc*i*   (exact device)
    fake_b   alias pci:v00001234d*sv*sd*bc*sc*i*          (vendor; blacklisted)
    fake_c   alias usb:v0BADp*d*dc*dsc*dp*ic*isc*ip*in*
    fake_builtin (built in) alias pci:v0000ABCDd*sv*sd*bc*sc*i*
"""

import os
import shutil
import subprocess
import sys

VERSION = "9.9.9-tudev-test"
MODULES = {
    "fake_a": ["pci:v00001234d00005678sv*sd*bc*sc*i*"],
    "fake_b": ["pci:v00001234d*sv*sd*bc*sc*i*"],
    "fake_c": ["usb:v0BADp*d*dc*dsc*dp*ic*isc*ip*in*"],
}
BUILTIN = {"fake_builtin": ["pci:v0000ABCDd*sv*sd*bc*sc*i*"]}


def tools_available():
    return bool(shutil.which("gcc") and (shutil.which("depmod") or
                                         os.path.exists("/usr/sbin/depmod") or
                                         os.path.exists("/sbin/depmod")))


def depmod():
    for p in (shutil.which("depmod"), "/usr/sbin/depmod", "/sbin/depmod"):
        if p and os.path.exists(p):
            return p
    raise FileNotFoundError("depmod")


def build(base):
    root = os.path.join(base, "root")
    moddir = os.path.join(root, "lib", "modules", VERSION)
    drv = os.path.join(moddir, "kernel", "drivers", "fake")
    os.makedirs(drv, exist_ok=True)
    for name, aliases in MODULES.items():
        info = "".join("alias=%s\\0" % a for a in aliases) + "license=GPL\\0"
        src = os.path.join(base, name + ".c")
        with open(src, "w") as f:
            f.write('static const char modinfo[] __attribute__((section(".modinfo"), used, '
                    'aligned(1))) = "%s";\n' % info)
        subprocess.run(["gcc", "-c", "-o", os.path.join(drv, name + ".ko"), src], check=True)
    with open(os.path.join(moddir, "modules.order"), "w") as f:
        f.write("".join("kernel/drivers/fake/%s.ko\n" % n for n in MODULES))
    with open(os.path.join(moddir, "modules.builtin"), "w") as f:
        f.write("".join("kernel/drivers/fake/%s.ko\n" % n for n in BUILTIN))
    with open(os.path.join(moddir, "modules.builtin.modinfo"), "wb") as f:
        for n, aliases in BUILTIN.items():
            for a in aliases:
                f.write(("%s.alias=%s\0" % (n, a)).encode())
    subprocess.run([depmod(), "-b", root, VERSION], check=True, capture_output=True)
    conf = os.path.join(base, "modprobe.d")
    os.makedirs(conf, exist_ok=True)
    with open(os.path.join(conf, "blacklist-fake.conf"), "w") as f:
        f.write("blacklist fake_b\n")
    return moddir, conf


if __name__ == "__main__":
    print("\n".join(build(sys.argv[1])))
