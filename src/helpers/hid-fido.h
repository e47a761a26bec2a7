/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no state outside the call) */
#pragma once
/* The work of the fido_id program: is a hidraw device a FIDO CTAP1 ("U2F")
 * or CTAP2 security token? As systemd 252's fido_id, the answer is in the
 * HID report descriptor of the hidraw node's parent HID device: a usage of
 * 0xF1D0:0x0001 (FIDO Alliance page, CTAPHID). */

#include <stddef.h>
#include <stdint.h>

/* The kernel's HID_MAX_DESCRIPTOR_SIZE: the most fido_id reads. */
#define HID_DESCRIPTOR_MAX 4096

/* Walk the short and long items of a report descriptor (HID 1.11, 6.2.2)
 * and look for the FIDO usage, tracking the usage page as systemd does
 * (no push/pop). 1 found, 0 not found, -EINVAL for an item cut by the end
 * of the data or a usage page longer than 2 bytes (found before that: 1). */
int hid_fido_is_token(const uint8_t *desc, size_t len);

/* sd-device's check of a device path (`path`, borrowed) under the sysfs
 * mount point `root`: its canonical form must lie under root; under
 * <root>/devices/ it must have a uevent file, elsewhere be a directory; and
 * it must be on sysfs unless $SYSTEMD_DEVICE_VERIFY_SYSFS is false (test
 * trees). 0 and *ret (the canonical path, caller frees), -ENODEV if it is
 * not a device, -errno. */
int hid_device_syspath(const char *root, const char *path, char **ret);

/* The syspath of the device above `syspath` (an absolute path; borrowed),
 * as sd-device finds it: the nearest ancestor directory that is a device
 * (under <root>/devices/ it must have a uevent file; elsewhere be a
 * directory), stopping at `root` (the sysfs mount point, "/sys"). 0 and
 * *ret (caller frees), -ENODEV without one, -errno. */
int hid_parent_syspath(const char *root, const char *syspath, char **ret);
