/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
#pragma once
/* The modes of `udevadm info` that walk many devices: --export-db, --tree,
 * --attribute-walk (info-tree.c). Each returns 0 or a negative errno after
 * logging; output goes to stdout. */

#include "udevadm/udevice.h"

/* -e: the record of every device (sysfs enumeration, initialized or not). */
int info_export_db(void);
/* -t: the device tree, or the part of it around `below` (NULL: all). */
int info_print_tree(struct udevice *below);
/* -a: the device and its ancestors in rule-key form. */
int info_attribute_walk(struct udevice *d);
