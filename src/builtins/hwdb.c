/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (per-thread hwdb mapping in _Thread_local state; reload baseline under a mutex) */
/* The hwdb builtin, as systemd 252's
 * udev-builtin-hwdb.c:
 *
 *   hwdb [--filter=GLOB] [--device=DEVICE-ID] [--subsystem=SUBSYS]
 *        [--lookup-prefix=PREFIX] [MODALIAS]
 *
 * With MODALIAS: look up PREFIX+MODALIAS. Without: walk from the event device
 * (or the --device one) up through its parents, skipping those of another
 * subsystem than --subsystem, looking up each one's MODALIAS property (a
 * usb_device without one gets "usb:vXXXXpXXXX:<product>"; a usb_device is the
 * last device examined); stop at the first lookup that found something.
 * Returns the number of properties added; no match is -ENODATA, no hwdb.bin
 * -ENOENT.
 *
 * Each thread maps hwdb.bin itself, on first use, and maps it again after
 * builtins_reload(), or by itself when the file in use was replaced (checked
 * at most every HWDB_CHECK_USEC). */
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins/builtins-internal.h"
#include "builtins/hwdb-reader.h"
#include "device/device.h"
#include "event/udev-event.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"

#define HWDB_CHECK_USEC (3 * USEC_PER_SEC) /* as often as systemd's manager checks */

static pthread_mutex_t base_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hwdb_stamp base_stamp; /* hwdb.bin at the last reload; under base_lock */
static bool base_set;                /* under base_lock */
static atomic_uint generation = 1;

static _Thread_local struct {
        struct hwdb *hwdb;      /* NULL if none could be opened */
        unsigned generation;    /* 0 = nothing tried yet in this thread */
        uint64_t checked_usec;  /* last look at the files */
} tls;

static void take_baseline_locked(void)
{
        hwdb_stamp_current(&base_stamp);
        base_set = true;
}

/* This thread's hwdb, (re)opened if a reload happened since; NULL if there
 * is no usable hwdb.bin. */
/* True if this thread's mapping (or the absence of one) is current: same
 * generation and the file search finds what was mapped (checked at most
 * every HWDB_CHECK_USEC). */
static bool thread_hwdb_valid(unsigned gen)
{
        struct hwdb_stamp now_stamp, none = {};
        uint64_t now;

        if (tls.generation != gen)
                return false;
        now = now_usec(CLOCK_MONOTONIC);
        if (now < tls.checked_usec + HWDB_CHECK_USEC)
                return true;
        tls.checked_usec = now;
        hwdb_stamp_current(&now_stamp);
        if (hwdb_stamp_equal(&now_stamp, tls.hwdb ? hwdb_stamp(tls.hwdb) : &none))
                return true;
        log_debug("hwdb needs reloading.");
        return false;
}

static struct hwdb *thread_hwdb(void)
{
        unsigned gen = atomic_load(&generation);
        int r;

        if (thread_hwdb_valid(gen))
                return tls.hwdb;
        hwdb_close(tls.hwdb);
        tls.hwdb = NULL;
        tls.generation = gen;

        pthread_mutex_lock(&base_lock);
        if (!base_set)
                take_baseline_locked();
        pthread_mutex_unlock(&base_lock);

        tls.checked_usec = now_usec(CLOCK_MONOTONIC);
        r = hwdb_open_default(&tls.hwdb);
        if (r < 0 && r != -ENOENT)
                log_debug_errno(r, "Failed to open hwdb: %m");
        return tls.hwdb;
}

void builtin_hwdb_thread_exit(void)
{
        hwdb_close(tls.hwdb);
        tls.hwdb = NULL;
        tls.generation = 0;
}

bool builtin_hwdb_should_reload(void)
{
        struct hwdb_stamp now;
        bool changed;

        hwdb_stamp_current(&now);
        pthread_mutex_lock(&base_lock);
        if (!base_set) {
                base_stamp = now;
                base_set = true;
        }
        changed = !hwdb_stamp_equal(&now, &base_stamp);
        pthread_mutex_unlock(&base_lock);
        if (changed)
                log_debug("hwdb needs reloading.");
        return changed;
}

void builtin_hwdb_reload(void)
{
        pthread_mutex_lock(&base_lock);
        take_baseline_locked();
        pthread_mutex_unlock(&base_lock);
        atomic_fetch_add(&generation, 1);
}

int builtin_hwdb_lookup(struct udev_event *ev, bool test, const char *prefix,
                        const char *modalias, const char *filter)
{
        struct hwdb *h = thread_hwdb();
        struct hwdb_result res = {};
        _cleanup_free_ char *key = NULL;
        int r, n = 0;

        if (!h)
                return -ENOENT;
        if (prefix) {
                if (asprintf(&key, "%s%s", prefix, modalias) < 0) {
                        key = NULL;
                        return -ENOMEM;
                }
                modalias = key;
        }
        r = hwdb_lookup(h, modalias, &res);
        for (size_t i = 0; r >= 0 && i < res.n; i++) {
                if (filter && fnmatch(filter, res.items[i].key, FNM_NOESCAPE) != 0)
                        continue;
                r = builtin_add_property(ev, test, res.items[i].key, res.items[i].value);
                n++;
        }
        hwdb_result_done(&res);
        return r < 0 ? r : n;
}

/* systemd's safe_atoux16(): whole string, hex, at most 0xffff. */
static int parse_hex16(const char *s, unsigned *ret)
{
        unsigned long v;
        char *end;

        s += strspn(s, " \t\n\r");
        if (*s == '-' || *s == '+' || *s == '\0')
                return -EINVAL;
        errno = 0;
        v = strtoul(s, &end, 16);
        if (errno != 0 || *end != '\0' || end == s || v > 0xffff)
                return -EINVAL;
        *ret = (unsigned)v;
        return 0;
}

/* "usb:v%04Xp%04X:<product>" for a usb_device without MODALIAS; NULL if its
 * ids are unreadable. */
static const char *modalias_usb(struct device *d, char *buf, size_t size)
{
        const char *v, *p, *product = "";
        unsigned vn, pn;

        if (device_get_sysattr(d, "idVendor", &v) < 0 ||
            device_get_sysattr(d, "idProduct", &p) < 0 || parse_hex16(v, &vn) < 0 ||
            parse_hex16(p, &pn) < 0)
                return NULL;
        (void)device_get_sysattr(d, "product", &product);
        snprintf(buf, size, "usb:v%04Xp%04X:%s", vn, pn, product);
        return buf;
}

static const char *device_modalias(struct udev_event *ev, struct device *d)
{
        const char *v = NULL;

        if (d == ev->dev)
                return proplist_get(&ev->props, "MODALIAS");
        return device_get_property(d, "MODALIAS", &v) >= 0 ? v : NULL;
}

static bool is_usb_device(struct device *d, const char *subsystem)
{
        const char *devtype;

        return streq(subsystem, "usb") && device_get_devtype(d, &devtype) >= 0 &&
               streq(devtype, "usb_device");
}

struct hwdb_args {
        const char *filter, *device, *subsystem, *prefix, *modalias;
};

static int hwdb_search(struct udev_event *ev, bool test, struct device *src,
                       const struct hwdb_args *a)
{
        char buf[HWDB_LINE_MAX];
        int r = 0;

        for (struct device *d = src; d;) {
                const char *subsystem, *modalias;
                bool last = false;

                if (device_get_subsystem(d, &subsystem) < 0)
                        goto next;
                if (a->subsystem && !streq(subsystem, a->subsystem))
                        goto next;
                modalias = device_modalias(ev, d);
                if (is_usb_device(d, subsystem)) {
                        if (!modalias)
                                modalias = modalias_usb(d, buf, sizeof(buf));
                        last = true; /* its parents are just hubs */
                }
                if (!modalias)
                        goto next;
                log_debug("%s: hwdb modalias key: \"%s\"", device_sysname(ev->dev), modalias);
                r = builtin_hwdb_lookup(ev, test, a->prefix, modalias, a->filter);
                if (r > 0 || last)
                        break;
        next:
                if (device_get_parent(d, &d) < 0)
                        break;
        }
        return r;
}

static void parse_args(int argc, char *argv[], struct hwdb_args *a)
{
        static const struct builtin_option options[] = {
                { "filter", true, 'f' },        { "device", true, 'd' },
                { "subsystem", true, 's' },     { "lookup-prefix", true, 'p' },
                {}
        };
        struct builtin_getopt st = {};
        int c;

        while ((c = builtin_getopt_long(&st, argc, argv, "f:d:s:p:", options)) >= 0) {
                switch (c) {
                case 'f':
                        a->filter = st.optarg;
                        break;
                case 'd':
                        a->device = st.optarg;
                        break;
                case 's':
                        a->subsystem = st.optarg;
                        break;
                case 'p':
                        a->prefix = st.optarg;
                        break;
                default: /* unknown options are ignored, as systemd does */
                        break;
                }
        }
        a->modalias = st.optind < argc ? argv[st.optind] : NULL;
}

int builtin_hwdb(struct udev_event *ev, int argc, char *argv[], bool test)
{
        const char *sysname = device_sysname(ev->dev);
        struct hwdb_args a = {};
        struct device *src = ev->dev;
        int r;

        if (!thread_hwdb())
                return -EINVAL;
        parse_args(argc, argv, &a);

        if (a.modalias)
                r = builtin_hwdb_lookup(ev, test, a.prefix, a.modalias, a.filter);
        else {
                if (a.device) {
                        r = device_from_id(ev->ctx, a.device, &src);
                        if (r < 0)
                                return log_debug_errno(
                                        r, "%s: Failed to create sd_device object '%s': %m",
                                        sysname, a.device);
                }
                r = hwdb_search(ev, test, src, &a);
        }
        if (r < 0)
                return log_debug_errno(r, "%s: Failed to look up hwdb: %m", sysname);
        if (r == 0)
                return log_debug_errno(-ENODATA, "%s: No entry found from hwdb.", sysname);
        return r;
}
