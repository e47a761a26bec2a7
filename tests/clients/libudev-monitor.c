/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: single-threaded test client */
/*
 * libudev-monitor: a libudev client like libinput or NetworkManager, linked
 * against the SYSTEM's libudev only (no tudev code). Used by the integration
 * tests to check that what tudev broadcasts and stores is what libudev expects.
 *
 *   libudev-monitor [--subsystem SUBSYSTEM[/DEVTYPE]]... [--tag TAG]...
 *                   [--count N] [--timeout SEC] [--no-db]
 *
 * Subscribes to the "udev" netlink group with udev_monitor_new_from_netlink(),
 * adds the filters (installed as an in-kernel BPF program by
 * udev_monitor_filter_update(), which reads the header hashes and the tag bloom
 * of every datagram), prints "READY" once receiving, then one JSON object per
 * line for every device received:
 *
 *   {"action":..., "devpath":..., "syspath":..., "subsystem":..., "devtype":...,
 *    "devnode":..., "seqnum":N, "interface":..., "ifindex":..., "usec_initialized":...,
 *    "tags_prop":..., "current_tags_prop":..., "tags":[...], "current_tags":[...],
 *    "is_initialized":0|1, "properties":{...},
 *    "db": null | {"is_initialized":0|1, "usec_since_initialized_positive":true|false,
 *                  "usec_since_initialized":N, "usec_initialized":...,
 *                  "tags":[...], "current_tags":[...], "properties":{...}},
 *    "db_errno": N (only when db is null)}
 *
 * Strings are JSON-escaped; bytes < 0x20 and >= 0x7f are written as \u00XX.
 * Missing values are null. "db" comes from udev_device_new_from_syspath(), i.e.
 * sysfs + /run/udev/data (null for devices that are gone, e.g. on remove).
 *
 * Ends after N devices (--count, exit 0), or at the deadline (--timeout):
 * prints {"timeout":true,"received":M} and exits 0 if no count was requested,
 * 3 otherwise. Usage errors exit 2, libudev failures 1.
 */

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libudev.h>

#define MAX_FILTERS 32
#define FILTER_MAX_LEN 256

struct options {
        char subsystems[MAX_FILTERS][FILTER_MAX_LEN];
        size_t n_subsystems;
        char tags[MAX_FILTERS][FILTER_MAX_LEN];
        size_t n_tags;
        unsigned long count;    /* 0: unlimited */
        double timeout_sec;     /* 0: none */
        bool no_db;
};

static uint64_t now_msec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- JSON output ---- */

static void json_string(const char *s)
{
        if (!s) {
                fputs("null", stdout);
                return;
        }
        putchar('"');
        for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
                switch (*p) {
                case '"':
                        fputs("\\\"", stdout);
                        break;
                case '\\':
                        fputs("\\\\", stdout);
                        break;
                case '\n':
                        fputs("\\n", stdout);
                        break;
                case '\t':
                        fputs("\\t", stdout);
                        break;
                default:
                        if (*p < 0x20 || *p >= 0x7f)
                                printf("\\u%04x", (unsigned)*p);
                        else
                                putchar(*p);
                }
        }
        putchar('"');
}

static void json_key(const char *key)
{
        json_string(key);
        putchar(':');
}

/* Prints the names of a libudev list as a JSON array. */
static void json_name_list(struct udev_list_entry *first)
{
        struct udev_list_entry *e;
        bool sep = false;

        putchar('[');
        udev_list_entry_foreach(e, first) {
                if (sep)
                        putchar(',');
                json_string(udev_list_entry_get_name(e));
                sep = true;
        }
        putchar(']');
}

/* Prints name/value pairs of a libudev list as a JSON object. */
static void json_pair_list(struct udev_list_entry *first)
{
        struct udev_list_entry *e;
        bool sep = false;

        putchar('{');
        udev_list_entry_foreach(e, first) {
                if (sep)
                        putchar(',');
                json_key(udev_list_entry_get_name(e));
                json_string(udev_list_entry_get_value(e));
                sep = true;
        }
        putchar('}');
}

/* Re-reads the device from sysfs and the udev database, as an application
 * that only got a syspath would. */
static void print_db_view(struct udev *udev, const char *syspath)
{
        struct udev_device *d;
        unsigned long long since;

        errno = 0;
        d = syspath ? udev_device_new_from_syspath(udev, syspath) : NULL;
        if (!d) {
                int e = errno;

                fputs(",\"db\":null,\"db_errno\":", stdout);
                printf("%d", e);
                return;
        }
        since = udev_device_get_usec_since_initialized(d);
        fputs(",\"db\":{", stdout);
        json_key("is_initialized");
        printf("%d,", udev_device_get_is_initialized(d));
        json_key("usec_since_initialized_positive");
        fputs(since > 0 ? "true," : "false,", stdout);
        json_key("usec_since_initialized");
        printf("%llu,", since);
        json_key("usec_initialized");
        json_string(udev_device_get_property_value(d, "USEC_INITIALIZED"));
        putchar(',');
        json_key("tags");
        json_name_list(udev_device_get_tags_list_entry(d));
        putchar(',');
        json_key("current_tags");
        json_name_list(udev_device_get_current_tags_list_entry(d));
        putchar(',');
        json_key("properties");
        json_pair_list(udev_device_get_properties_list_entry(d));
        putchar('}');
        udev_device_unref(d);
}

static void print_device(struct udev *udev, struct udev_device *dev, bool with_db)
{
        putchar('{');
        json_key("action");
        json_string(udev_device_get_action(dev));
        putchar(',');
        json_key("devpath");
        json_string(udev_device_get_devpath(dev));
        putchar(',');
        json_key("syspath");
        json_string(udev_device_get_syspath(dev));
        putchar(',');
        json_key("subsystem");
        json_string(udev_device_get_subsystem(dev));
        putchar(',');
        json_key("devtype");
        json_string(udev_device_get_devtype(dev));
        putchar(',');
        json_key("devnode");
        json_string(udev_device_get_devnode(dev));
        putchar(',');
        json_key("seqnum");
        printf("%llu,", udev_device_get_seqnum(dev));
        json_key("interface");
        json_string(udev_device_get_property_value(dev, "INTERFACE"));
        putchar(',');
        json_key("ifindex");
        json_string(udev_device_get_property_value(dev, "IFINDEX"));
        putchar(',');
        json_key("usec_initialized");
        json_string(udev_device_get_property_value(dev, "USEC_INITIALIZED"));
        putchar(',');
        json_key("tags_prop");
        json_string(udev_device_get_property_value(dev, "TAGS"));
        putchar(',');
        json_key("current_tags_prop");
        json_string(udev_device_get_property_value(dev, "CURRENT_TAGS"));
        putchar(',');
        json_key("tags");
        json_name_list(udev_device_get_tags_list_entry(dev));
        putchar(',');
        json_key("current_tags");
        json_name_list(udev_device_get_current_tags_list_entry(dev));
        putchar(',');
        json_key("is_initialized");
        printf("%d,", udev_device_get_is_initialized(dev));
        json_key("properties");
        json_pair_list(udev_device_get_properties_list_entry(dev));
        if (with_db)
                print_db_view(udev, udev_device_get_syspath(dev));
        fputs("}\n", stdout);
        fflush(stdout);
}

/* ---- options ---- */

static void usage(FILE *f)
{
        fputs("usage: libudev-monitor [--subsystem SUBSYSTEM[/DEVTYPE]]... [--tag TAG]...\n"
              "                       [--count N] [--timeout SEC] [--no-db]\n",
              f);
}

static int add_filter(char (*list)[FILTER_MAX_LEN], size_t *n, const char *arg)
{
        size_t len = strlen(arg);

        if (*n >= MAX_FILTERS || len == 0 || len >= FILTER_MAX_LEN)
                return -EINVAL;
        memcpy(list[*n], arg, len + 1);
        (*n)++;
        return 0;
}

static int parse_args(int argc, char *argv[], struct options *o)
{
        static const struct option longopts[] = {
                { "subsystem", required_argument, NULL, 's' },
                { "tag", required_argument, NULL, 't' },
                { "count", required_argument, NULL, 'n' },
                { "timeout", required_argument, NULL, 'T' },
                { "no-db", no_argument, NULL, 'D' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        char *end;
        int c;

        while ((c = getopt_long(argc, argv, "s:t:n:T:Dh", longopts, NULL)) >= 0) {
                switch (c) {
                case 's':
                        if (add_filter(o->subsystems, &o->n_subsystems, optarg) < 0)
                                return -EINVAL;
                        break;
                case 't':
                        if (add_filter(o->tags, &o->n_tags, optarg) < 0)
                                return -EINVAL;
                        break;
                case 'n':
                        errno = 0;
                        o->count = strtoul(optarg, &end, 10);
                        if (errno || end == optarg || *end)
                                return -EINVAL;
                        break;
                case 'T':
                        errno = 0;
                        o->timeout_sec = strtod(optarg, &end);
                        if (errno || end == optarg || *end || o->timeout_sec < 0 ||
                            o->timeout_sec > 86400)
                                return -EINVAL;
                        break;
                case 'D':
                        o->no_db = true;
                        break;
                case 'h':
                        usage(stdout);
                        exit(0);
                default:
                        return -EINVAL;
                }
        }
        if (optind != argc)
                return -EINVAL;
        return 0;
}

/* ---- monitor ---- */

static int setup_filters(struct udev_monitor *mon, struct options *o)
{
        int r;

        for (size_t i = 0; i < o->n_subsystems; i++) {
                char *s = o->subsystems[i];
                char *slash = strchr(s, '/');

                if (slash)
                        *slash = '\0';
                r = udev_monitor_filter_add_match_subsystem_devtype(mon, s,
                                                                    slash ? slash + 1 : NULL);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < o->n_tags; i++) {
                r = udev_monitor_filter_add_match_tag(mon, o->tags[i]);
                if (r < 0)
                        return r;
        }
        if (o->n_subsystems > 0 || o->n_tags > 0) {
                r = udev_monitor_filter_update(mon);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int run(struct udev *udev, struct options *o)
{
        struct udev_monitor *mon;
        uint64_t deadline = o->timeout_sec > 0 ? now_msec() + (uint64_t)(o->timeout_sec * 1000) : 0;
        unsigned long received = 0;
        int r, ret = 0;

        mon = udev_monitor_new_from_netlink(udev, "udev");
        if (!mon) {
                fprintf(stderr, "udev_monitor_new_from_netlink failed: errno %d\n", errno);
                return 1;
        }
        r = setup_filters(mon, o);
        if (r < 0) {
                fprintf(stderr, "setting up filters failed: %d\n", r);
                udev_monitor_unref(mon);
                return 1;
        }
        r = udev_monitor_enable_receiving(mon);
        if (r < 0) {
                fprintf(stderr, "udev_monitor_enable_receiving failed: %d\n", r);
                udev_monitor_unref(mon);
                return 1;
        }
        puts("READY");
        fflush(stdout);

        while (o->count == 0 || received < o->count) {
                struct pollfd pfd = { .fd = udev_monitor_get_fd(mon), .events = POLLIN };
                int wait_ms = -1;
                struct udev_device *dev;

                if (deadline) {
                        uint64_t now = now_msec();

                        if (now >= deadline) {
                                printf("{\"timeout\":true,\"received\":%lu}\n", received);
                                fflush(stdout);
                                ret = o->count ? 3 : 0;
                                break;
                        }
                        wait_ms = (int)(deadline - now);
                }
                r = poll(&pfd, 1, wait_ms);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        fprintf(stderr, "poll failed: errno %d\n", errno);
                        ret = 1;
                        break;
                }
                if (r == 0)
                        continue;
                dev = udev_monitor_receive_device(mon);
                if (!dev)
                        continue; /* filtered out in user space, or not a valid message */
                print_device(udev, dev, !o->no_db);
                udev_device_unref(dev);
                received++;
        }
        udev_monitor_unref(mon);
        return ret;
}

int main(int argc, char *argv[])
{
        struct options o = {};
        struct udev *udev;
        int ret;

        if (parse_args(argc, argv, &o) < 0) {
                usage(stderr);
                return 2;
        }
        udev = udev_new();
        if (!udev) {
                fprintf(stderr, "udev_new failed\n");
                return 1;
        }
        ret = run(udev, &o);
        udev_unref(udev);
        return ret;
}
