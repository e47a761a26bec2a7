/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
#pragma once
/* The device-level filters of `udevadm trigger` (attributes, properties,
 * tags, initialized state), with the semantics of systemd 252's
 * sd-device enumerator (udevadm(8) UDEVADM TRIGGER):
 *
 *  --attr-match=FILE[=GLOB]    every FILE must be readable and, if globs
 *                              were given for it, match one of them
 *                              (FILE alone: any value, also after globs)
 *  --attr-nomatch=FILE[=GLOB]  no FILE may be readable and match
 *  --property-match=KEY=GLOB   some property whose name matches the KEY
 *                              glob has a value matching one of its globs
 *                              (KEY without '=' matches nothing)
 *  --tag-match=TAG             the device has every TAG
 *  --initialized-[no]match     a database record exists / does not
 *
 * Devices are examined with udevice.h (uevent file, /run/udev/data). */

#include <stdbool.h>
#include <stddef.h>

#include "udevadm/udevadm.h"

struct key_globs {
        char *key;              /* owned */
        struct arg_list globs;  /* borrowed strings (option arguments) */
};

struct key_globs_list {
        struct key_globs *items;
        size_t n;
};

enum match_initialized {
        MATCH_INITIALIZED_ALL,
        MATCH_INITIALIZED_YES,
        MATCH_INITIALIZED_NO,
};

struct trigger_match {
        struct key_globs_list attr_match, attr_nomatch, property_match;
        struct arg_list tags;   /* borrowed */
        enum match_initialized initialized;
};

void trigger_match_done(struct trigger_match *m);

/* "FILE[=GLOB]" / "KEY=GLOB" option arguments (borrowed; the '=' is
 * replaced by a NUL). 0 or -ENOMEM (logged). */
int trigger_match_add_attr(struct trigger_match *m, char *arg, bool match);
int trigger_match_add_property(struct trigger_match *m, char *arg);

/* Whether any device-level filter is set (else nothing needs to be read). */
bool trigger_match_needed(const struct trigger_match *m);

/* device_enum_filter.match: 1 listed, 0 not, <0 error. userdata: the
 * struct trigger_match. */
int trigger_match_device(void *userdata, const char *devpath, const char *subsystem,
                         unsigned flags);
/* device_enum_filter.resolve_id: a tag index entry to a devpath. */
int trigger_match_resolve_id(void *userdata, const char *id, char *buf, size_t size);
