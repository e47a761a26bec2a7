# SPDX-License-Identifier: GPL-2.0-or-later
"""Fake sysfs fixtures for path_id, usb_id and net_id (devices this VM lacks).

build(root) creates one tree with all of them and returns the list of
(builtin command, devpath) cases to compare with systemd 252's test-builtin.
The shapes follow real machines (kernel 6.x): a USB stick with partitions, a
SATA disk on AHCI (+ port multiplier), virtio-scsi/-blk, NVMe (+ multipath and
NVMe-oF), SAS (direct, expander, wide port), FC, iSCSI, Hyper-V, cciss, tapes,
MMC, serio, ACPI, Xen, s390 (ccw/ccwgroup/ap), SPI, BCMA, a USB keyboard,
virtio/PCI/USB network interfaces with firmware indexes, hotplug slots,
bridges, SR-IOV, ARI, phys_port_name, and the non-PCI naming paths (platform,
vio, ccwgroup, xen, netdevsim).
"""

import os

from sysfs_tree import SysfsTree, pci_config, pci_modalias, usb_descriptors

PCI = "/devices/pci0000:00"


def _pci_root(t):
    t.device(PCI)
    t.subsystem_dir("pci")
    os.makedirs(t.path("/bus/pci/slots"), exist_ok=True)


def pci_dev(t, addr, driver=None, parent=PCI, cls=(2, 0), multifunction=False, attrs=None,
            vendor=0x8086, device=0x15b8):
    a = {"vendor": "0x%04x" % vendor, "device": "0x%04x" % device,
         "class": "0x%02x%02x00" % cls, "modalias": pci_modalias(vendor, device, *cls),
         "config": pci_config(multifunction, vendor=vendor, device=device)}
    a.update(attrs or {})
    return t.device(parent + "/" + addr, subsystem="pci", driver=driver, attrs=a,
                    uevent={"PCI_CLASS": "%X%02X00" % cls, "PCI_SLOT_NAME": addr,
                            "MODALIAS": a["modalias"]})


def scsi_chain(t, parent, host, lun, vendor="ATA     ", model="Disk            ",
               rev="1.0 ", stype="0", disk=None, devnum=None, extra_hosts=(), attrs=None,
               host_name=None):
    """host<h>/target<h>:<c>:<t>/<h>:<c>:<t>:<l>[/block/<disk>]; returns (scsi_dev, disk)."""
    h, c, tg = host
    hp = t.device("%s/%s" % (parent, host_name or "host%d" % h), subsystem="scsi",
                  devtype="scsi_host")
    t.device(hp + "/scsi_host/host%d" % h, subsystem="scsi_host")
    for x in extra_hosts:
        t.device("%s/host%d" % (parent, x), subsystem="scsi", devtype="scsi_host")
    tp = t.device("%s/target%d:%d:%d" % (hp, h, c, tg), subsystem="scsi", devtype="scsi_target")
    a = {"vendor": vendor, "model": model, "rev": rev, "type": stype}
    a.update(attrs or {})
    sd = t.device("%s/%d:%d:%d:%d" % (tp, h, c, tg, lun), subsystem="scsi",
                  devtype="scsi_device", driver="sd", attrs=a)
    dk = None
    if disk:
        dk = t.device(sd + "/block/" + disk, subsystem="block", devtype="disk",
                      devnum=("b",) + devnum, devname=disk, attrs={"size": "1024"})
    return sd, dk


def partition(t, disk, name, num, devnum):
    return t.device(disk + "/" + name, subsystem="block", devtype="partition",
                    devnum=("b",) + devnum, devname=name,
                    attrs={"partition": str(num), "start": "2048", "size": "512"},
                    uevent={"PARTN": str(num)})


def usb_device(t, parent, name, vid, pid, interfaces, manufacturer=None, product=None,
               serial=None, bcd="0100", devnum=(189, 1), descriptors=None, extra=None):
    a = {"idVendor": "%04x" % vid, "idProduct": "%04x" % pid, "bcdDevice": bcd,
         "busnum": name.split("-")[0].replace("usb", ""), "speed": "480",
         "descriptors": descriptors if descriptors is not None else
         usb_descriptors(vid, pid, [i[:4] for i in interfaces])}
    if manufacturer is not None:
        a["manufacturer"] = manufacturer
    if product is not None:
        a["product"] = product
    if serial is not None:
        a["serial"] = serial
    a.update(extra or {})
    bus = int(a["busnum"] or "1")
    d = t.device("%s/%s" % (parent, name), subsystem="usb", devtype="usb_device", driver="usb",
                 devnum=("c",) + devnum, devname="bus/usb/%03d/%03d" % (bus, devnum[1] + 1),
                 attrs=a, uevent={"PRODUCT": "%x/%x/%s" % (vid, pid, bcd.lstrip("0") or "0"),
                                  "TYPE": "0/0/0"})
    intfs = []
    for i, iface in enumerate(interfaces):
        cls, sub, proto, _neps = iface[:4]
        drv = iface[4] if len(iface) > 4 else None
        cfg = iface[5] if len(iface) > 5 else 1
        p = t.device("%s/%s:%d.%d" % (d, name, cfg, i), subsystem="usb",
                     devtype="usb_interface", driver=drv,
                     attrs={"bInterfaceNumber": "%02x" % i, "bInterfaceClass": "%02x" % cls,
                            "bInterfaceSubClass": "%02x" % sub,
                            "bInterfaceProtocol": "%02x" % proto,
                            "bAlternateSetting": " 0"},
                     uevent={"INTERFACE": "%d/%d/%d" % (cls, sub, proto)})
        intfs.append(p)
    return d, intfs


def net_dev(t, parent, name, ifindex, address, iflink=None, type_=1, addr_assign_type=0,
            dev_port=0, devtype=None, attrs=None, dev_id="0x0"):
    a = {"type": str(type_), "iflink": str(iflink if iflink is not None else ifindex),
         "address": address, "addr_assign_type": str(addr_assign_type),
         "dev_port": str(dev_port), "dev_id": dev_id, "name_assign_type": "1",
         "addr_len": "6"}
    a.update(attrs or {})
    for k in [k for k, v in a.items() if v is None]:
        del a[k]
    return t.device(parent + "/net/" + name, subsystem="net", devtype=devtype, interface=name,
                    ifindex=ifindex, attrs=a)


# ------------------------------------------------------------------ storage

def storage(t, cases):
    _pci_root(t)
    # USB stick: xhci -> usb2 -> 2-1 -> 2-1:1.0 (usb-storage) -> host6 -> sdb (+sdb1, sdb2)
    xhci = pci_dev(t, "0000:00:14.0", "xhci_hcd", cls=(0x0c, 0x03), multifunction=True,
                   device=0xa36d)
    hub, _ = usb_device(t, xhci, "usb2", 0x1d6b, 0x0003, [(9, 0, 0, 1, "hub")],
                        manufacturer="Linux 6.1.0 xhci-hcd", product="xHCI Host Controller",
                        serial="0000:00:14.0", bcd="0601", devnum=(189, 128),
                        extra={"bDeviceProtocol": "03"})
    stick, (stick_if,) = usb_device(
        t, hub, "2-1", 0x0781, 0x5581, [(8, 6, 0x50, 2, "usb-storage")], manufacturer=" USB",
        product=" SanDisk 3.2Gen1", serial="0401396b6c5e8d1f", bcd="0100", devnum=(189, 129))
    sd, sdb = scsi_chain(t, stick_if, (6, 0, 0), 0, vendor=" USB    ",
                         model=" SanDisk 3.2Gen1", rev="1.00", disk="sdb", devnum=(8, 16))
    sdb1 = partition(t, sdb, "sdb1", 1, (8, 17))
    sdb2 = partition(t, sdb, "sdb2", 2, (8, 18))
    for d in (sdb, sdb1, sdb2, sd, stick_if, stick, hub):
        cases += [("path_id", d), ("usb_id", d)]

    # USB card reader with odd strings: SCSI vendor blank -> USB manufacturer,
    # UTF-8 and control characters, a serial with ',' (refused), LUN 1, subclass 02
    rd, (rd_if,) = usb_device(
        t, hub, "2-2", 0x0bda, 0x0129, [(8, 2, 0x50, 2, "usb-storage")],
        manufacturer="Gen\u00e9ric  Corp/Ltd.\x01 ", product="Card\tReader \\ 42",
        serial="12,34", bcd="3960", devnum=(189, 130))
    sdx, sdc = scsi_chain(t, rd_if, (7, 0, 0), 1, vendor="        ", model="SD/MMC  \u00fc",
                          rev="  ", stype="14", disk="sdh", devnum=(8, 112))
    # same card reader, SCSI "type" unreadable -> falls back after vendor/model
    for d in (sdc, sdx, rd_if, rd):
        cases += [("usb_id", d), ("path_id", d)]

    # USB CD drive: subclass 06, SCSI type 5, ID_BUS already set in the uevent file
    cd, (cd_if,) = usb_device(t, hub, "2-3", 0x13fd, 0x0840, [(8, 6, 0x50, 2, "uas")],
                              manufacturer="Initio", product="External", serial="ABC 123  ",
                              devnum=(189, 131))
    cdx, sr = scsi_chain(t, cd_if, (8, 0, 0), 0, vendor="TSSTcorp", model="CDDVDW SE-208GB",
                         rev="TS00", stype="5")
    sr0 = t.device(cdx + "/block/sr0", subsystem="block", devtype="disk", devnum=("b", 11, 0),
                   devname="sr0", uevent={"ID_BUS": "ata"})
    cases += [("usb_id", sr0), ("usb_id", cdx), ("path_id", sr0)]

    # USB device with a corrupt and a short descriptors file, no strings at all
    bad, (bad_if,) = usb_device(
        t, hub, "2-4", 0x1234, 0xabcd, [(0xff, 0, 0, 1)], devnum=(189, 132),
        descriptors=usb_descriptors(0x1234, 0xabcd, [(3, 1, 1, 1), (0xff, 0xff, 0xff, 1)]) +
        bytes([200, 4, 2, 0, 1, 8, 6, 0x50, 0]))
    short, (short_if,) = usb_device(t, hub, "2-5", 0x1234, 0xabce, [(7, 1, 2, 1)],
                                    manufacturer="Printer Co", product="P", devnum=(189, 133),
                                    descriptors=bytes(10))
    for d in (bad, bad_if, short, short_if):
        cases += [("usb_id", d)]

    # SATA on AHCI: ata1 (port_no 1), disk sda + partition; ata2 behind a port multiplier
    ahci = pci_dev(t, "0000:00:17.0", "ahci", cls=(1, 6))
    ata1 = t.device(ahci + "/ata1")
    t.device(ata1 + "/ata_port/ata1", subsystem="ata_port", attrs={"port_no": "1"})
    sda_dev, sda = scsi_chain(t, ata1, (0, 0, 0), 0, vendor="ATA     ",
                              model="Samsung SSD 860 ", rev="4B6Q", disk="sda", devnum=(8, 0))
    sda1 = partition(t, sda, "sda1", 1, (8, 1))
    ata2 = t.device(ahci + "/ata2")
    t.device(ata2 + "/ata_port/ata2", subsystem="ata_port", attrs={"port_no": "2"})
    pmp_dev, sdd = scsi_chain(t, ata2, (1, 3, 0), 0, disk="sdd", devnum=(8, 48))
    for d in (sda, sda1, sda_dev, sdd, pmp_dev, ahci, ata1):
        cases += [("path_id", d)]
    cases += [("usb_id", sda)]

    # virtio-scsi with two hosts (rebased host numbers), and virtio-blk
    vscsi = pci_dev(t, "0000:00:05.0", "virtio-pci", cls=(1, 0), vendor=0x1af4, device=0x1048)
    v3 = t.device(vscsi + "/virtio3", subsystem="virtio", driver="virtio_scsi")
    _, sde = scsi_chain(t, v3, (3, 0, 1), 3, vendor="QEMU    ", model="QEMU HARDDISK   ",
                        disk="sde", devnum=(8, 64), extra_hosts=(2,), host_name="host3")
    vblk = pci_dev(t, "0000:00:02.0", "virtio-pci", cls=(1, 0), vendor=0x1af4, device=0x1042)
    v1 = t.device(vblk + "/virtio1", subsystem="virtio", driver="virtio_blk")
    vda = t.device(v1 + "/block/vda", subsystem="block", devtype="disk", devnum=("b", 254, 0),
                   devname="vda")
    vda1 = partition(t, vda, "vda1", 1, (254, 1))
    cases += [("path_id", sde), ("path_id", vda), ("path_id", vda1), ("path_id", v1)]

    # NVMe: controller, namespace, partition; multipath (nvme-subsystem); NVMe-oF (virtual)
    pci_dev(t, "0000:00:1c.4", "pcieport", cls=(6, 4))
    nvpci = pci_dev(t, "0000:3c:00.0", "nvme", cls=(1, 8), parent=PCI + "/0000:00:1c.4")
    nvme0 = t.device(nvpci + "/nvme/nvme0", subsystem="nvme", devnum=("c", 240, 0),
                     devname="nvme0", attrs={"serial": "S4EWNX0N123456", "model": "Samsung"})
    n1 = t.device(nvme0 + "/nvme0n1", subsystem="block", devtype="disk", devnum=("b", 259, 0),
                  devname="nvme0n1", attrs={"nsid": "1", "wwid": "eui.0025"})
    n1p1 = partition(t, n1, "nvme0n1p1", 1, (259, 1))
    n2 = t.device(nvme0 + "/nvme0n2", subsystem="block", devtype="disk", devnum=("b", 259, 2),
                  devname="nvme0n2", attrs={"nsid": "2"})
    cases += [("path_id", d) for d in (nvme0, n1, n1p1, n2)]
    t.device("/devices/virtual/nvme-subsystem")
    subsys = t.device("/devices/virtual/nvme-subsystem/nvme-subsys1", subsystem="nvme-subsystem",
                      bus=False)
    nvpci2 = pci_dev(t, "0000:3d:00.0", "nvme", cls=(1, 8))
    t.device(nvpci2 + "/nvme/nvme1", subsystem="nvme", devnum=("c", 240, 1), devname="nvme1")
    mp = t.device(subsys + "/nvme1n1", subsystem="block", devtype="disk", devnum=("b", 259, 3),
                  devname="nvme1n1", attrs={"nsid": "1"})
    t.device("/devices/virtual/nvme-fabrics")
    t.device("/devices/virtual/nvme-fabrics/ctl")
    t.device("/devices/virtual/nvme-fabrics/ctl/nvme2", subsystem="nvme",
             devnum=("c", 240, 2), devname="nvme2")
    subsys2 = t.device("/devices/virtual/nvme-subsystem/nvme-subsys2",
                       subsystem="nvme-subsystem", bus=False)
    mf = t.device(subsys2 + "/nvme2n1", subsystem="block", devtype="disk", devnum=("b", 259, 4),
                  devname="nvme2n1", attrs={"nsid": "1"})
    cases += [("path_id", mp), ("path_id", mf)]

    # SAS HBA: direct disk, behind an expander, wide port
    pci_dev(t, "0000:00:01.0", "pcieport", cls=(6, 4))
    hba = pci_dev(t, "0000:01:00.0", "mpt3sas", cls=(1, 7), parent=PCI + "/0000:00:01.0")
    h0 = t.device(hba + "/host0", subsystem="scsi", devtype="scsi_host")
    port = t.device(h0 + "/port-0:0")
    t.device(port + "/sas_port/port-0:0", subsystem="sas_port", attrs={"num_phys": "1"})
    end = t.device(port + "/end_device-0:0")
    t.device(end + "/sas_device/end_device-0:0", subsystem="sas_device",
             attrs={"sas_address": "0x5000c500a1b2c3d4", "phy_identifier": "4"})
    tg = t.device(end + "/target0:0:0", subsystem="scsi", devtype="scsi_target")
    s0 = t.device(tg + "/0:0:0:0", subsystem="scsi", devtype="scsi_device", driver="sd",
                  attrs={"vendor": "SEAGATE", "model": "ST4000", "type": "0"})
    sdf = t.device(s0 + "/block/sdf", subsystem="block", devtype="disk", devnum=("b", 8, 80),
                   devname="sdf")
    port1 = t.device(h0 + "/port-0:1")
    t.device(port1 + "/sas_port/port-0:1", subsystem="sas_port", attrs={"num_phys": "4"})
    exp = t.device(port1 + "/expander-0:0")
    t.device(exp + "/sas_device/expander-0:0", subsystem="sas_device",
             attrs={"sas_address": "0x500605b0000272bf", "phy_identifier": "0"})
    eport = t.device(exp + "/port-0:0:7")
    t.device(eport + "/sas_port/port-0:0:7", subsystem="sas_port", attrs={"num_phys": "1"})
    eend = t.device(eport + "/end_device-0:0:7")
    t.device(eend + "/sas_device/end_device-0:0:7", subsystem="sas_device",
             attrs={"sas_address": "0x5000c500deadbeef", "phy_identifier": "7"})
    etg = t.device(eend + "/target0:0:7", subsystem="scsi", devtype="scsi_target")
    es = t.device(etg + "/0:0:7:300", subsystem="scsi", devtype="scsi_device",
                  attrs={"vendor": "SEAGATE", "model": "ST4000", "type": "0"})
    sdg = t.device(es + "/block/sdg", subsystem="block", devtype="disk", devnum=("b", 8, 96),
                   devname="sdg")
    wend = t.device(port1 + "/end_device-0:1")
    t.device(wend + "/sas_device/end_device-0:1", subsystem="sas_device",
             attrs={"sas_address": "0x5000c50011112222", "phy_identifier": "1"})
    wtg = t.device(wend + "/target0:0:1", subsystem="scsi", devtype="scsi_target")
    ws = t.device(wtg + "/0:0:1:70000", subsystem="scsi", devtype="scsi_device",
                  attrs={"type": "0"})
    cases += [("path_id", sdf), ("path_id", sdg), ("path_id", ws), ("path_id", es)]

    # Fibre Channel
    fcpci = pci_dev(t, "0000:05:00.0", "qla2xxx", cls=(0x0c, 4))
    h5 = t.device(fcpci + "/host5", subsystem="scsi", devtype="scsi_host")
    rport = t.device(h5 + "/rport-5:0-2")
    ftg = t.device(rport + "/target5:0:0", subsystem="scsi", devtype="scsi_target")
    t.device(ftg + "/fc_transport/target5:0:0", subsystem="fc_transport",
             attrs={"port_name": "0x50060e8016e2a301"})
    fs = t.device(ftg + "/5:0:0:1", subsystem="scsi", devtype="scsi_device",
                  attrs={"type": "0"})
    cases += [("path_id", fs)]

    # iSCSI (software initiator under /devices/platform/hostN)
    plat = t.device("/devices/platform")
    h7 = t.device(plat + "/host7", subsystem="scsi", devtype="scsi_host")
    sess = t.device(h7 + "/session3")
    t.device(sess + "/iscsi_session/session3", subsystem="iscsi_session",
             attrs={"targetname": "iqn.2003-01.org.linux-iscsi.t:sn.1234"})
    conn = t.device(sess + "/connection3:0")
    t.device(conn + "/iscsi_connection/connection3:0", subsystem="iscsi_connection",
             attrs={"persistent_address": "10.0.0.1", "persistent_port": "3260"})
    itg = t.device(sess + "/target7:0:0", subsystem="scsi", devtype="scsi_target")
    isd = t.device(itg + "/7:0:0:2", subsystem="scsi", devtype="scsi_device",
                   attrs={"type": "0"})
    sdi = t.device(isd + "/block/sdi", subsystem="block", devtype="disk", devnum=("b", 8, 128),
                   devname="sdi")
    cases += [("path_id", sdi)]

    # Hyper-V storvsc: ACPI VMBUS -> vmbus device -> host -> disk
    t.device("/devices/LNXSYSTM:00", subsystem="acpi")
    t.device("/devices/LNXSYSTM:00/LNXSYBUS:00", subsystem="acpi")
    vmb = t.device("/devices/LNXSYSTM:00/LNXSYBUS:00/VMBUS:00", subsystem="acpi")
    guid = "f8b3781a-1e82-4818-a1c3-63d806ec15bb"
    vdev = t.device(vmb + "/" + guid, subsystem="vmbus", driver="hv_storvsc",
                    attrs={"device_id": "{%s}" % guid})
    _, hvd = scsi_chain(t, vdev, (3, 0, 0), 0, vendor="Msft    ", model="Virtual Disk    ",
                        disk="sdj", devnum=(8, 144))
    cases += [("path_id", hvd)]

    # Hyper-V with the "vmbus_" bus name (systemd then expects a 37-character id)
    acpi4 = t.device("/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00", subsystem="acpi")
    vb0 = t.device(acpi4 + "/vmbus_0")
    for n, guid in (("4", "{1b1c2d3e-aaaa-bbbb-cccc-0123456789ab}"),
                    ("5", "{1b1c2d3e-aaaa-bbbb-cccc-0123456789a}")):
        vd = t.device(vb0 + "/dev" + n, subsystem="vmbus", attrs={"device_id": guid})
        _, vdisk = scsi_chain(t, vd, (int(n), 0, 0), 1, disk="sdv" + n,
                              devnum=(8, 200 + int(n)))
        cases.append(("path_id", vdisk))

    # FireWire SBP-2 disk (ieee1394_id on the SCSI device)
    ohci = pci_dev(t, "0000:09:00.0", "firewire_ohci", cls=(0x0c, 0))
    fw = t.device(ohci + "/fw0", subsystem="firewire")
    fwu = t.device(fw + "/fw0.0", subsystem="firewire", driver="firewire_sbp2")
    fsd, fdisk = scsi_chain(t, fwu, (9, 0, 0), 0, disk="sdw", devnum=(8, 208),
                            attrs={"ieee1394_id": "0001d200012345678:0:0"})
    cases += [("path_id", fdisk), ("path_id", fsd)]

    # s390 storage class memory and IUCV
    scm = t.device("/devices/scm")
    scmb = t.device(scm + "/0000000000000000", subsystem="scm", driver="scm_block")
    scma = t.device(scmb + "/block/scma", subsystem="block", devtype="disk",
                    devnum=("b", 252, 0), devname="scma")
    iucv = t.device("/devices/iucv")
    iu = t.device(iucv + "/netiucv0", subsystem="iucv", driver="netiucv")
    cases += [("path_id", scma), ("path_id", iu)]

    # cciss, tapes, MMC (platform), xen vbd (no transport), ccw DASD, ap
    cc = pci_dev(t, "0000:06:00.0", "cciss", cls=(1, 4))
    cc0 = t.device(cc + "/cciss0")
    c0d0 = t.device(cc0 + "/c0d0", subsystem="cciss")
    cdisk = t.device(c0d0 + "/block/cciss!c0d0", subsystem="block", devtype="disk",
                     devnum=("b", 104, 0), devname="cciss/c0d0")
    cases += [("path_id", cdisk)]
    tape_dev, _ = scsi_chain(t, ahci + "/ata2", (1, 0, 2), 0, stype="1")
    for n, mn in (("st0", 0), ("nst0a", 128), ("stl", 1), ("nstm", 129)):
        tp = t.device(tape_dev + "/scsi_tape/" + n, subsystem="scsi_tape", devnum=("c", 9, mn),
                      devname=n)
        cases += [("path_id", tp)]
    soc = t.device(plat + "/soc", subsystem="platform")
    mmc = t.device(soc + "/fe340000.mmc", subsystem="platform", driver="sdhci-iproc")
    host = t.device(mmc + "/mmc_host/mmc0", subsystem="mmc_host")
    card = t.device(host + "/mmc0:aaaa", subsystem="mmc", driver="mmcblk")
    mmcblk = t.device(card + "/block/mmcblk0", subsystem="block", devtype="disk",
                      devnum=("b", 179, 0), devname="mmcblk0")
    mp1 = partition(t, mmcblk, "mmcblk0p1", 1, (179, 1))
    cases += [("path_id", mmcblk), ("path_id", mp1)]
    vbd = t.device("/devices/vbd-51712", subsystem="xen", driver="vbd")
    xvda = t.device(vbd + "/block/xvda", subsystem="block", devtype="disk",
                    devnum=("b", 202, 0), devname="xvda")
    cases += [("path_id", xvda), ("path_id", vbd)]
    css = t.device("/devices/css0", subsystem="css")
    sch = t.device(css + "/0.0.0001", subsystem="css")
    ccwd = t.device(sch + "/0.0.0150", subsystem="ccw", driver="dasd-eckd")
    dasda = t.device(ccwd + "/block/dasda", subsystem="block", devtype="disk",
                     devnum=("b", 94, 0), devname="dasda")
    cases += [("path_id", dasda)]
    ap = t.device("/devices/ap")
    card1 = t.device(ap + "/card01", subsystem="ap", attrs={"type": "CEX7C",
                                                             "ap_functions": "0x92000000"})
    q = t.device(card1 + "/01.0005", subsystem="ap")
    card2 = t.device(ap + "/card02", subsystem="ap")
    cases += [("path_id", q), ("path_id", card2)]


# ------------------------------------------------------------------ input / misc path_id

def misc(t, cases):
    plat = "/devices/platform"
    i8042 = t.device(plat + "/i8042", subsystem="platform", driver="i8042")
    serio = t.device(i8042 + "/serio0", subsystem="serio", driver="atkbd")
    inp = t.device(serio + "/input/input3", subsystem="input", bus=False)
    ev = t.device(inp + "/event3", subsystem="input", bus=False, devnum=("c", 13, 67),
                  devname="input/event3")
    cases += [("path_id", ev), ("path_id", inp), ("usb_id", ev)]
    pwr = t.device("/devices/LNXSYSTM:00/LNXPWRBN:00", subsystem="acpi", driver="button")
    pin = t.device(pwr + "/input/input2", subsystem="input", bus=False)
    pev = t.device(pin + "/event2", subsystem="input", bus=False, devnum=("c", 13, 66),
                   devname="input/event2")
    cases += [("path_id", pev)]
    spim = t.device(plat + "/soc/fe204000.spi", subsystem="platform", driver="spi-bcm2835")
    t.device(spim + "/spi_master")
    spi = t.device(spim + "/spi_master/spi0")
    sdev = t.device(spi + "/spi0.1", subsystem="spi", driver="spidev")
    spidev = t.device(sdev + "/spidev/spidev0.1", subsystem="spidev", devnum=("c", 153, 1),
                      devname="spidev0.1")
    cases += [("path_id", spidev)]
    # USB keyboard: event device below HID below the interface
    xhci = PCI + "/0000:00:14.0"
    hub, _ = usb_device(t, xhci, "usb1", 0x1d6b, 0x0002, [(9, 0, 0, 1, "hub")],
                        manufacturer="Linux 6.1.0 xhci-hcd", product="xHCI Host Controller",
                        serial="0000:00:14.0", bcd="0601", devnum=(189, 0),
                        extra={"bDeviceProtocol": "01"})
    kbd, (k0, k1) = usb_device(t, hub, "1-1", 0x046d, 0xc31c,
                               [(3, 1, 1, 1, "usbhid"), (3, 0, 0, 1, "usbhid")],
                               manufacturer="Logitech", product="USB Keyboard", bcd="6400",
                               devnum=(189, 1))
    hid = t.device(k0 + "/0003:046D:C31C.0001", subsystem="hid", driver="hid-generic")
    kin = t.device(hid + "/input/input5", subsystem="input", bus=False)
    kev = t.device(kin + "/event5", subsystem="input", bus=False, devnum=("c", 13, 69),
                   devname="input/event5")
    hidraw = t.device(hid + "/hidraw/hidraw0", subsystem="hidraw", devnum=("c", 243, 0),
                      devname="hidraw0")
    for d in (kev, kin, hid, hidraw, k1, kbd):
        cases += [("usb_id", d), ("path_id", d)]
    # hub chain 1-4 -> 1-4.2 (two interfaces, second configuration)
    h4, _ = usb_device(t, hub, "1-4", 0x05e3, 0x0610, [(9, 0, 0, 1, "hub")],
                       manufacturer="GenesysLogic", product="USB2.1 Hub", devnum=(189, 3))
    ser, (s0,) = usb_device(t, h4, "1-4.2", 0x0403, 0x6001, [(0xff, 0xff, 0xff, 2, "ftdi_sio")],
                            manufacturer="FTDI", product="FT232R USB UART",
                            serial="A50285BI", bcd="0600", devnum=(189, 4))
    tty = t.device(s0 + "/ttyUSB0/tty/ttyUSB0", subsystem="tty", devnum=("c", 188, 0),
                   devname="ttyUSB0")
    t.device(s0 + "/ttyUSB0", subsystem="usb-serial", driver="ftdi_sio")
    cases += [("usb_id", tty), ("path_id", tty)]
    # BCMA core
    bc = pci_dev(t, "0000:07:00.0", "bcma-pci-bridge", cls=(2, 0x80), vendor=0x14e4,
                 device=0x4331)
    core = t.device(bc + "/bcma0:1", subsystem="bcma", driver="b43")
    cases += [("path_id", core)]
    # no supported parent at all, and a virtual device
    t.device("/devices/virtual/misc")
    fuse = t.device("/devices/virtual/misc/fuse", subsystem="misc", devnum=("c", 10, 229),
                    devname="fuse")
    cases += [("path_id", fuse), ("usb_id", fuse)]


# ------------------------------------------------------------------ network

def network(t, cases):
    def both(d):
        cases.extend([("net_id", d), ("path_id", d)])

    # virtio net
    vnet = pci_dev(t, "0000:00:03.0", "virtio-pci", cls=(2, 0), vendor=0x1af4, device=0x1041)
    v2 = t.device(vnet + "/virtio2", subsystem="virtio", driver="virtio_net")
    both(net_dev(t, v2, "eth0", 2, "52:54:00:12:34:56"))
    # PCI ethernet with firmware index + label, multi-function (f6)
    lan = pci_dev(t, "0000:00:1f.6", "e1000e", multifunction=True,
                  attrs={"acpi_index": "1", "label": "Onboard - Ethernet"})
    both(net_dev(t, lan, "eth1", 3, "00:e0:4c:68:00:01"))
    # SMBIOS index (no acpi_index) and dev_port; index 0; index beyond 16 bits
    idx = pci_dev(t, "0000:00:19.0", "e1000e", attrs={"index": "3"})
    both(net_dev(t, idx, "eth2", 4, "00:1b:21:aa:bb:cc", dev_port=1))
    zero = pci_dev(t, "0000:00:19.1", "e1000e", attrs={"acpi_index": "0"})
    both(net_dev(t, zero, "eth3", 5, "00:00:00:11:22:33"))
    big = pci_dev(t, "0000:00:19.2", "e1000e", attrs={"acpi_index": "16777215"})
    both(net_dev(t, big, "eth4", 6, "00:1b:21:aa:bb:cd", addr_assign_type=3))
    bad = pci_dev(t, "0000:00:19.3", "e1000e", attrs={"acpi_index": "x1"})
    both(net_dev(t, bad, "eth5", 7, "00:1b:21:aa:bb:ce"))
    # hotplug slot behind a bridge; SR-IOV physical + virtual function
    br = pci_dev(t, "0000:00:1c.0", "pcieport", cls=(6, 4))
    pf = pci_dev(t, "0000:02:00.0", "ixgbe", parent=br, multifunction=True)
    vf = pci_dev(t, "0000:02:10.0", "ixgbevf", parent=br)
    t.link(pf, "virtfn0", vf)
    t.link(vf, "physfn", pf)
    t.write("/bus/pci/slots/5", "address", "0000:02:00\n")
    both(net_dev(t, pf, "eth6", 8, "a0:36:9f:00:00:01"))
    both(net_dev(t, vf, "eth7", 9, "ae:36:9f:00:00:02", addr_assign_type=1))
    # slot that belongs to a bridge: single function below -> no slot name,
    # multi-function below -> slot name
    br2 = pci_dev(t, "0000:00:1d.0", "pcieport", cls=(6, 4))
    t.write("/bus/pci/slots/7", "address", "0000:00:1d\n")
    single = pci_dev(t, "0000:03:00.0", "igb", parent=br2)
    both(net_dev(t, single, "eth8", 10, "00:1b:21:00:00:08"))
    br3 = pci_dev(t, "0000:00:1d.1", "pcieport", cls=(6, 4))
    t.write("/bus/pci/slots/8", "address", "0000:00:1d.1\n")
    multi = pci_dev(t, "0000:04:00.1", "igb", parent=br3, multifunction=True)
    both(net_dev(t, multi, "eth9", 11, "00:1b:21:00:00:09", dev_port=2))
    # PCI domain > 0, ARI, phys_port_name, wlan, InfiniBand, stacked, loopback type
    t.device("/devices/pci0001:00")
    dom = pci_dev(t, "0001:00:02.0", "mlx5_core", parent="/devices/pci0001:00")
    both(net_dev(t, dom, "eth10", 12, "b8:59:9f:00:00:0a",
                 attrs={"phys_port_name": "p1"}))
    ari = pci_dev(t, "0000:05:01.2", "i40e", attrs={"ari_enabled": "1"})
    both(net_dev(t, ari, "eth11", 13, "3c:fd:fe:00:00:0b"))
    wl = pci_dev(t, "0000:06:00.0", "iwlwifi", cls=(2, 0x80))
    both(net_dev(t, wl, "wlan0", 14, "f8:16:54:00:00:0c", devtype="wlan"))
    ib = pci_dev(t, "0000:07:00.0", "mlx4_core", cls=(0x0c, 6))
    both(net_dev(t, ib, "ib0", 15, "80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:03:00:0a:0b:0c",
                 type_=32, dev_port=0, dev_id="0x1"))
    both(net_dev(t, lan, "vlan5", 16, "00:e0:4c:68:00:01", iflink=3))
    both(net_dev(t, idx, "weird0", 17, "00:00:00:00:00:00", type_=772))
    both(net_dev(t, idx, "slip0", 18, "", type_=256, attrs={"addr_len": "0"}))
    # USB ethernet: xhci (multi-function) -> 1-4.2.. ; second config/interface
    xhci = PCI + "/0000:00:14.0"
    h = xhci + "/usb1/1-4"
    rtl, (r0,) = usb_device(t, h, "1-4.3", 0x0bda, 0x8153, [(0xff, 0xff, 0, 3, "r8152")],
                            manufacturer="Realtek", product="USB 10/100/1000 LAN",
                            serial="000001", devnum=(189, 5))
    both(net_dev(t, r0, "eth12", 19, "00:e0:4c:68:12:34"))
    cases.append(("usb_id", r0 + "/net/eth12"))
    cdc = t.device(rtl + "/1-4.3:2.1", subsystem="usb", devtype="usb_interface",
                   driver="cdc_ether", attrs={"bInterfaceNumber": "01", "bInterfaceClass": "02",
                                              "bInterfaceSubClass": "06"})
    both(net_dev(t, cdc, "eth13", 20, "02:e0:4c:68:12:35"))
    cases.append(("usb_id", cdc + "/net/eth13"))
    # BCMA wireless core below PCI
    core = PCI + "/0000:07:00.0/bcma0:1"
    both(net_dev(t, core, "wlan1", 21, "00:90:4c:00:00:15", devtype="wlan"))
    # non-PCI naming: ACPI platform, vio, ccwgroup, xen, netdevsim
    p = t.device("/devices/platform/HISI00C2:03", subsystem="platform", driver="hns")
    both(net_dev(t, p, "eth0", 22, "00:18:82:00:00:16"))
    p3 = t.device("/devices/platform/ABC1234:0f", subsystem="platform", driver="x")
    both(net_dev(t, p3, "eth3", 23, "00:18:82:00:00:17"))
    t.device("/devices/vio")
    vio = t.device("/devices/vio/30000002", subsystem="vio", driver="ibmveth")
    both(net_dev(t, vio, "eth1", 24, "00:18:82:00:00:18"))
    qeth = t.device("/devices/qeth/0.0.f5f0", subsystem="ccwgroup", driver="qeth")
    t.device("/devices/qeth")
    both(net_dev(t, qeth, "eth2", 25, "00:18:82:00:00:19"))
    vif = t.device("/devices/vif-0", subsystem="xen", driver="vif")
    both(net_dev(t, vif, "eth0", 26, "00:16:3e:00:00:1a"))
    vif2 = t.device("/devices/vif-01", subsystem="xen", driver="vif")
    both(net_dev(t, vif2, "eth1", 27, "00:16:3e:00:00:1b"))
    sim = t.device("/devices/netdevsim0", subsystem="netdevsim")
    both(net_dev(t, sim, "eni0np1", 28, "ce:7a:00:00:00:1c", addr_assign_type=1,
                 attrs={"phys_port_name": "p1"}))
    # systemd 253-257 naming: USB on a host controller that is not on PCI
    # (v253), an SR-IOV representor (v254), firmware_node/sun slots (v257),
    # a bridge's slot above a multi-function device (v255 drops it)
    dwc = t.device("/devices/platform/soc/38100000.usb", subsystem="platform", driver="dwc3")
    ohub, _ = usb_device(t, dwc, "usb3", 0x1d6b, 0x0002, [(9, 0, 0, 1, "hub")],
                         devnum=(189, 256), extra={"bDeviceProtocol": "00"})
    ax, (ax0,) = usb_device(t, ohub, "3-1", 0x0b95, 0x1790, [(0xff, 0xff, 0, 3, "ax88179")],
                            devnum=(189, 257))
    both(net_dev(t, ax0, "eth30", 30, "00:0e:c6:00:00:1e"))
    cases.append(("usb_id", ax0 + "/net/eth30"))
    rep = pci_dev(t, "0000:08:00.0", "mlx5_core", multifunction=True)
    both(net_dev(t, rep, "eth31", 31, "b8:59:9f:00:00:1f", addr_assign_type=1,
                 attrs={"phys_port_name": "pf0vf3"}))
    both(net_dev(t, rep, "eth32", 32, "b8:59:9f:00:00:20", attrs={"phys_port_name": "pf0vfx"}))
    sun = pci_dev(t, "0000:09:00.0", "igc", attrs={"firmware_node/sun": "12"})
    both(net_dev(t, sun, "eth33", 33, "00:1b:21:00:00:21"))
    brs = pci_dev(t, "0000:00:1e.0", "pcieport", cls=(6, 4), attrs={"firmware_node/sun": "4"})
    below = pci_dev(t, "0000:0a:00.0", "igc", parent=brs)
    both(net_dev(t, below, "eth34", 34, "00:1b:21:00:00:22"))
    bad_sun = pci_dev(t, "0000:0b:00.0", "igc", attrs={"firmware_node/sun": "x"})
    both(net_dev(t, bad_sun, "eth35", 35, "00:1b:21:00:00:23"))
    # virtual (no parent bus)
    t.device("/devices/virtual/net")
    both(net_dev(t, "/devices/virtual", "veth0", 29, "ce:7a:00:00:00:1d", addr_assign_type=3))


def build(root):
    """Returns (tree, cases): path_id and usb_id on every device the fixtures
    name, net_id on every network interface (and on two devices that are not
    interfaces), hwdb (the modalias lookup) on the USB devices."""
    t = SysfsTree(root)
    named = []
    storage(t, named)
    misc(t, named)
    network(t, named)
    devices = list(dict.fromkeys(d for _, d in named))
    cases = []
    for d in devices:
        cases += [("path_id", d), ("usb_id", d)]
        if "/net/" in d:
            cases.append(("net_id", d))
    cases += [("net_id", PCI + "/0000:00:14.0"), ("net_id", "/devices/virtual/misc/fuse")]
    cases += [("hwdb", d) for d in devices if os.path.basename(d) in ("2-1", "1-1", "1-4.2")]
    return t, cases
