/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (single-threaded tests) */
#pragma once
/* A fake sysfs tree for unit tests (test-device.c, rules/test-rules-format.c).
 *
 *   struct sysfs_fixture f;
 *   fixture_setup(&f);      mkdtemp dir with sys/, dev/, run/ and the tree below
 *   ... f.roots is ready for device_ctx_new() ...
 *   fixture_teardown(&f);   rm -rf
 *
 * The tree mirrors a real machine's layout: canonical device directories under
 * sys/devices with "uevent" files, relative "subsystem"/"driver"/"module"
 * symlinks, sys/bus/<s>/devices and sys/bus/<s>/drivers, sys/class/<s>,
 * sys/dev/{block,char}/M:m, sys/module, sys/firmware and a DB record in run/.
 *
 *   pci0000:00/0000:00:1d.0                pci, driver ehci-pci
 *     usb1                                 usb_device 189:0 bus/usb/001/001
 *       1-1                                usb_device 189:1, idVendor 0781 ...
 *         1-1:1.0                          usb_interface, driver usb-storage
 *           host0                          scsi_host (+ scsi_host/host0 class dev)
 *             target0:0:0                  scsi_target
 *               0:0:0:0                    scsi_device, driver sd, vendor/model
 *                 block/sda                disk 8:0, partitions sda1 8:1, sda2 8:2
 *   pci0000:00/0000:00:1f.6                pci, driver e1000e
 *     net/eth0                             ifindex 2
 *   virtual/net/lo                         ifindex 1
 *   virtual/tty/tty0                       4:0
 *   pnp0/00:05/tty/ttyS0                   4:64 (pnp driver serial)
 *   platform/i8042/serio0/input/input3     input (name "AT Translated Set 2 keyboard")
 *     event3                               13:67 input/event3
 *   virtual/block/cciss!c0d0               104:0 (sysname cciss/c0d0)
 *   virtual/dmi/id                         dmi: product_name, sys_vendor
 *   virtual/test/1234, devonly, weird      oddities (all-digit sysname, "dev"
 *                                          file only, malformed uevent file)
 */

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device/device.h"
#include "shared/macro.h"
#include "shared/tests.h"

struct sysfs_fixture {
        char root[64];
        char sys[128], dev[128], run[128];
        struct device_roots roots;
};

#define PCI_USB "/devices/pci0000:00/0000:00:1d.0"
#define USB1 PCI_USB "/usb1"
#define USB_DEV USB1 "/1-1"
#define USB_INTF USB_DEV "/1-1:1.0"
#define SCSI_HOST USB_INTF "/host0"
#define SCSI_TARGET SCSI_HOST "/target0:0:0"
#define SCSI_DEV SCSI_TARGET "/0:0:0:0"
#define SDA SCSI_DEV "/block/sda"
#define SDA1 SDA "/sda1"
#define SDA2 SDA "/sda2"
#define PCI_NET "/devices/pci0000:00/0000:00:1f.6"
#define ETH0 PCI_NET "/net/eth0"
#define LO "/devices/virtual/net/lo"
#define TTY0 "/devices/virtual/tty/tty0"
#define TTYS0 "/devices/pnp0/00:05/tty/ttyS0"
#define INPUT3 "/devices/platform/i8042/serio0/input/input3"
#define EVENT3 INPUT3 "/event3"
#define CCISS "/devices/virtual/block/cciss!c0d0"
#define DMI "/devices/virtual/dmi/id"

static _unused_ void fx_path(const struct sysfs_fixture *f, char *buf, const char *rel)
{
        int n = snprintf(buf, PATH_MAX, "%s/%s", f->sys, rel[0] == '/' ? rel + 1 : rel);

        ASSERT_TRUE(n > 0 && n < PATH_MAX);
}

static _unused_ void fx_mkdirs(const struct sysfs_fixture *f, const char *rel)
{
        char p[PATH_MAX];

        fx_path(f, p, rel);
        for (char *s = p + strlen(f->sys) + 1; (s = strchr(s, '/')); s++) {
                *s = '\0';
                (void)mkdir(p, 0755);
                *s = '/';
        }
        (void)mkdir(p, 0755);
}

/* Write a file (parents created) with `len` bytes and `mode`. */
static _unused_ void fx_write(const struct sysfs_fixture *f, const char *rel, const void *data,
                              size_t len, mode_t mode)
{
        char p[PATH_MAX], dir[PATH_MAX];
        char *slash;
        int fd;

        snprintf(dir, sizeof(dir), "%s", rel);
        slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = '\0';
                fx_mkdirs(f, dir);
        }
        fx_path(f, p, rel);
        fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(write(fd, data, len), (ssize_t)len);
        close(fd);
        ASSERT_EQ(chmod(p, mode), 0);
}

static _unused_ void fx_file(const struct sysfs_fixture *f, const char *rel, const char *content)
{
        fx_write(f, rel, content, strlen(content), 0644);
}

/* An attribute of a device: "<devpath>/<name>" with content. */
static _unused_ void fx_attr(const struct sysfs_fixture *f, const char *devpath, const char *name,
                             const char *content)
{
        char rel[PATH_MAX];

        snprintf(rel, sizeof(rel), "%s/%s", devpath, name);
        fx_file(f, rel, content);
}

/* Symlink at sys/<rel> pointing to sys/<target_rel>, written relative. */
static _unused_ void fx_link(const struct sysfs_fixture *f, const char *rel, const char *target_rel)
{
        char p[PATH_MAX], t[PATH_MAX] = "", dir[PATH_MAX];
        const char *s = rel[0] == '/' ? rel + 1 : rel;
        char *slash;

        snprintf(dir, sizeof(dir), "%s", s);
        slash = strrchr(dir, '/');
        if (slash) {
                *slash = '\0';
                fx_mkdirs(f, dir);
        }
        for (; *s; s++)
                if (*s == '/')
                        strcat(t, "../");
        strcat(t, target_rel[0] == '/' ? target_rel + 1 : target_rel);
        fx_path(f, p, rel);
        ASSERT_EQ(symlink(t, p), 0);
}

/* A device directory with its uevent file, "subsystem" link to
 * sys/<subsys_dir> ("bus/pci", "class/block") and optional "driver" link to
 * sys/bus/<bus>/drivers/<driver>; registers it under bus/…/devices or
 * class/… and in dev/{block,char} when `devnum` ("b8:0") is given. */
static _unused_ void fx_device(const struct sysfs_fixture *f, const char *devpath,
                               const char *subsys_dir, const char *driver_dir,
                               const char *uevent, const char *devnum)
{
        const char *name = strrchr(devpath, '/') + 1;
        char rel[PATH_MAX], target[PATH_MAX];

        fx_mkdirs(f, devpath);
        fx_attr(f, devpath, "uevent", uevent);
        if (subsys_dir) {
                snprintf(rel, sizeof(rel), "%s/subsystem", devpath);
                fx_link(f, rel, subsys_dir);
                if (strneq(subsys_dir, "bus/", 4))
                        snprintf(rel, sizeof(rel), "%s/devices/%s", subsys_dir, name);
                else
                        snprintf(rel, sizeof(rel), "%s/%s", subsys_dir, name);
                fx_link(f, rel, devpath);
        }
        if (driver_dir) {
                snprintf(rel, sizeof(rel), "%s/driver", devpath);
                fx_link(f, rel, driver_dir);
        }
        if (devnum) {
                snprintf(rel, sizeof(rel), "dev/%s/%s", devnum[0] == 'b' ? "block" : "char",
                         devnum + 1);
                snprintf(target, sizeof(target), "%s", devpath);
                fx_link(f, rel, target);
        }
}

/* A driver directory sys/bus/<bus>/drivers/<name> with a module link. */
static _unused_ void fx_driver(const struct sysfs_fixture *f, const char *bus, const char *name,
                               const char *module)
{
        char rel[PATH_MAX], target[PATH_MAX];

        snprintf(rel, sizeof(rel), "bus/%s/drivers/%s/uevent", bus, name);
        fx_write(f, rel, "", 0, 0200);
        snprintf(rel, sizeof(rel), "bus/%s/drivers/%s/bind", bus, name);
        fx_write(f, rel, "", 0, 0200);
        if (module) {
                snprintf(rel, sizeof(rel), "bus/%s/drivers/%s/module", bus, name);
                snprintf(target, sizeof(target), "module/%s", module);
                fx_link(f, rel, target);
                snprintf(rel, sizeof(rel), "module/%s/uevent", module);
                fx_write(f, rel, "", 0, 0200);
                snprintf(rel, sizeof(rel), "module/%s/refcnt", module);
                fx_file(f, rel, "1\n");
        }
}

static _unused_ void fx_build_pci_usb_scsi(const struct sysfs_fixture *f)
{
        static const unsigned char config[] = { 0x86, 0x80, 0x26, 0x1c, 0, 0, 0x10, 0 };

        fx_device(f, "/devices/pci0000:00", NULL, NULL, "", NULL);
        fx_driver(f, "pci", "ehci-pci", "ehci_pci");
        fx_driver(f, "pci", "e1000e", "e1000e");
        fx_device(f, PCI_USB, "bus/pci", "bus/pci/drivers/ehci-pci",
                  "DRIVER=ehci-pci\nPCI_CLASS=C0320\nPCI_ID=8086:1C26\n"
                  "MODALIAS=pci:v00008086d00001C26sv00001AF4sd00001100bc0Csc03i20\n",
                  NULL);
        fx_attr(f, PCI_USB, "vendor", "0x8086\n");
        fx_attr(f, PCI_USB, "device", "0x1c26\n");
        fx_attr(f, PCI_USB, "crlf", "value\r\n\n");
        fx_attr(f, PCI_USB, "spaces", "  lead and trail  \n");
        fx_attr(f, PCI_USB, "power/control", "auto\n");
        fx_write(f, PCI_USB "/config", config, sizeof(config), 0644);
        fx_write(f, PCI_USB "/nulend", "abc\n\0", 5, 0644);
        fx_write(f, PCI_USB "/nulmid", "abc\n\0xyz", 8, 0644);
        fx_write(f, PCI_USB "/remove", "", 0, 0200);
        fx_link(f, PCI_USB "/firmware_node", "devices/pci0000:00");

        fx_driver(f, "usb", "usb", NULL);
        fx_driver(f, "usb", "usb-storage", "usb_storage");
        fx_device(f, USB1, "bus/usb", "bus/usb/drivers/usb",
                  "MAJOR=189\nMINOR=0\nDEVNAME=bus/usb/001/001\nDEVTYPE=usb_device\n"
                  "DRIVER=usb\nPRODUCT=1d6b/2/510\nTYPE=9/0/1\nBUSNUM=001\nDEVNUM=001\n",
                  "c189:0");
        fx_attr(f, USB1, "idVendor", "1d6b\n");
        fx_attr(f, USB1, "manufacturer", "Linux 5.10.0 ehci_hcd\n");
        fx_device(f, USB_DEV, "bus/usb", "bus/usb/drivers/usb",
                  "MAJOR=189\nMINOR=1\nDEVNAME=bus/usb/001/002\nDEVTYPE=usb_device\n"
                  "DRIVER=usb\nPRODUCT=781/5567/100\nTYPE=0/0/0\nBUSNUM=001\nDEVNUM=002\n",
                  "c189:1");
        fx_attr(f, USB_DEV, "idVendor", "0781\n");
        fx_attr(f, USB_DEV, "idProduct", "5567\n");
        fx_attr(f, USB_DEV, "serial", "4C530001 \n");
        fx_attr(f, USB_DEV, "product", "Cruzer\tBlade\n");
        fx_attr(f, USB_DEV, "manufacturer", "  San Disk  \n");
        fx_device(f, USB_INTF, "bus/usb", "bus/usb/drivers/usb-storage",
                  "DEVTYPE=usb_interface\nDRIVER=usb-storage\nPRODUCT=781/5567/100\n"
                  "INTERFACE=8/6/80\nMODALIAS=usb:v0781p5567d0100dc00dsc00dp00ic08isc06ip50in00\n",
                  NULL);
        fx_attr(f, USB_INTF, "bInterfaceClass", "08\n");

        fx_driver(f, "scsi", "sd", "sd_mod");
        fx_device(f, SCSI_HOST, "bus/scsi", NULL, "DEVTYPE=scsi_host\n", NULL);
        fx_device(f, SCSI_HOST "/scsi_host/host0", "class/scsi_host", NULL, "", NULL);
        fx_device(f, SCSI_TARGET, "bus/scsi", NULL, "DEVTYPE=scsi_target\n", NULL);
        fx_device(f, SCSI_DEV, "bus/scsi", "bus/scsi/drivers/sd",
                  "DEVTYPE=scsi_device\nDRIVER=sd\nMODALIAS=scsi:t-0x00\n", NULL);
        fx_attr(f, SCSI_DEV, "vendor", "SanDisk \n");
        fx_attr(f, SCSI_DEV, "model", "Cruzer Blade    \n");
        fx_attr(f, SCSI_DEV, "type", "0\n");
        fx_device(f, SDA, "class/block", NULL,
                  "MAJOR=8\nMINOR=0\nDEVNAME=sda\nDEVTYPE=disk\nDISKSEQ=9\n", "b8:0");
        fx_attr(f, SDA, "size", "30031872\n");
        fx_attr(f, SDA, "removable", "1\n");
        fx_attr(f, SDA, "dev", "8:0\n");
        fx_device(f, SDA1, "class/block", NULL,
                  "MAJOR=8\nMINOR=1\nDEVNAME=sda1\nDEVTYPE=partition\nDISKSEQ=9\nPARTN=1\n",
                  "b8:1");
        fx_attr(f, SDA1, "partition", "1\n");
        fx_attr(f, SDA1, "size", "2048000\n");
        fx_device(f, SDA2, "class/block", NULL,
                  "MAJOR=8\nMINOR=2\nDEVNAME=sda2\nDEVTYPE=partition\nDISKSEQ=9\nPARTN=2\n",
                  "b8:2");
}

static _unused_ void fx_build_others(const struct sysfs_fixture *f)
{
        char big[5000];

        fx_device(f, PCI_NET, "bus/pci", "bus/pci/drivers/e1000e",
                  "DRIVER=e1000e\nPCI_CLASS=20000\nPCI_ID=8086:15BC\n", NULL);
        fx_device(f, ETH0, "class/net", NULL, "INTERFACE=eth0\nIFINDEX=2\n", NULL);
        fx_attr(f, ETH0, "ifindex", "2\n");
        fx_attr(f, ETH0, "address", "52:54:00:12:34:56\n");
        fx_attr(f, ETH0, "mtu", "1500\n");
        fx_device(f, LO, "class/net", NULL, "INTERFACE=lo\nIFINDEX=1\n", NULL);
        fx_attr(f, LO, "ifindex", "1\n");
        fx_attr(f, LO, "address", "00:00:00:00:00:00\n");

        fx_device(f, TTY0, "class/tty", NULL, "MAJOR=4\nMINOR=0\nDEVNAME=tty0\n", "c4:0");
        fx_driver(f, "pnp", "serial", NULL);
        fx_device(f, "/devices/pnp0", NULL, NULL, "", NULL);
        fx_device(f, "/devices/pnp0/00:05", "bus/pnp", "bus/pnp/drivers/serial", "", NULL);
        fx_device(f, TTYS0, "class/tty", NULL, "MAJOR=4\nMINOR=64\nDEVNAME=ttyS0\n", "c4:64");

        fx_device(f, "/devices/platform", NULL, NULL, "", NULL);
        fx_driver(f, "platform", "i8042", NULL);
        fx_driver(f, "serio", "atkbd", NULL);
        fx_device(f, "/devices/platform/i8042", "bus/platform", "bus/platform/drivers/i8042",
                  "DRIVER=i8042\nMODALIAS=platform:i8042\n", NULL);
        fx_device(f, "/devices/platform/i8042/serio0", "bus/serio", "bus/serio/drivers/atkbd",
                  "DRIVER=atkbd\nSERIO_TYPE=06\n", NULL);
        fx_device(f, INPUT3, "class/input", NULL,
                  "PRODUCT=11/1/1/ab41\nNAME=\"AT Translated Set 2 keyboard\"\n"
                  "PHYS=\"isa0060/serio0/input0\"\nEV=120013\n",
                  NULL);
        fx_attr(f, INPUT3, "name", "AT Translated Set 2 keyboard\n");
        fx_device(f, EVENT3, "class/input", NULL, "MAJOR=13\nMINOR=67\nDEVNAME=input/event3\n",
                  "c13:67");

        fx_device(f, CCISS, "class/block", NULL,
                  "MAJOR=104\nMINOR=0\nDEVNAME=cciss/c0d0\nDEVTYPE=disk\n", "b104:0");
        fx_link(f, "dev/char/104:0", CCISS); /* wrong type on purpose */
        fx_device(f, DMI, "class/dmi", NULL, "MODALIAS=dmi:bvnSeaBIOS:pnStandardPC\n", NULL);
        fx_attr(f, DMI, "product_name", "Standard PC (Q35 + ICH9, 2009)\n");
        fx_attr(f, DMI, "sys_vendor", "QEMU\n");

        fx_device(f, "/devices/virtual/test/1234", "class/test", NULL, "", NULL);
        fx_device(f, "/devices/virtual/test/devonly", "class/test", NULL, "FOO=bar\n", NULL);
        fx_attr(f, "/devices/virtual/test/devonly", "dev", "10:200\n");
        fx_device(f, "/devices/virtual/test/weird", "class/test", NULL,
                  "A=1\r\nNOEQUALS\n\n=novalue\nB=\nDEVNAME=../etc/passwd\nIFINDEX=abc\n"
                  "MINOR=5\nA=2\nC=unterminated",
                  NULL);
        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        fx_attr(f, "/devices/virtual/test/weird", "big", big);
        fx_attr(f, "/devices/virtual/test/weird", "utf8", "caf\xc3\xa9 \xff\xfe|x\n");

        fx_mkdirs(f, "firmware/acpi/tables");
        fx_file(f, "firmware/acpi/tables/DSDT", "dsdt");
}

static _unused_ void fixture_setup(struct sysfs_fixture *f)
{
        char p[PATH_MAX];

        memset(f, 0, sizeof(*f));
        snprintf(f->root, sizeof(f->root), "/tmp/tudev-sysfs-XXXXXX");
        ASSERT_TRUE(mkdtemp(f->root) != NULL);
        snprintf(f->sys, sizeof(f->sys), "%s/sys", f->root);
        snprintf(f->dev, sizeof(f->dev), "%s/dev", f->root);
        snprintf(f->run, sizeof(f->run), "%s/run", f->root);
        ASSERT_EQ(mkdir(f->sys, 0755), 0);
        ASSERT_EQ(mkdir(f->dev, 0755), 0);
        ASSERT_EQ(mkdir(f->run, 0755), 0);
        f->roots = (struct device_roots){ .sys = f->sys, .dev = f->dev, .run = f->run };

        fx_build_pci_usb_scsi(f);
        fx_build_others(f);

        snprintf(p, sizeof(p), "%s/data", f->run);
        ASSERT_EQ(mkdir(p, 0755), 0);
        snprintf(p, sizeof(p), "%s/data/b8:0", f->run);
        {
                static const char rec[] = "S:disk/by-id/usb-SanDisk_Cruzer\nI:1000\n"
                                          "E:ID_FS_TYPE=vfat\nE:ID_SERIAL=SanDisk_1\nG:systemd\n"
                                          "Q:systemd\nV:1\n";
                int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

                ASSERT_TRUE(fd >= 0);
                ASSERT_EQ(write(fd, rec, sizeof(rec) - 1), (ssize_t)(sizeof(rec) - 1));
                close(fd);
        }
}

static _unused_ int fx_rm(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
        (void)st;
        (void)ftw;
        if (type == FTW_DP)
                return rmdir(path);
        return unlink(path);
}

static _unused_ void fixture_teardown(struct sysfs_fixture *f)
{
        if (!f->root[0])
                return;
        ASSERT_EQ(nftw(f->root, fx_rm, 16, FTW_DEPTH | FTW_PHYS), 0);
        f->root[0] = '\0';
}

/* Parse a kernel datagram given as "\0"-separated text (last string included
 * in `len`). */
static _unused_ struct uevent *fx_uevent(const char *data, size_t len)
{
        struct uevent *ev = NULL;

        ASSERT_EQ(uevent_parse_kernel(data, len, 1, &ev), 0);
        return ev;
}
#define FX_UEVENT(lit) fx_uevent((lit), sizeof(lit))
