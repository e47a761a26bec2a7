/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single-threaded) */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/uevent.h"
#include "shared/macro.h"
#include "shared/tests.h"
#include "udevd/event-deps.h"

/* ------------------------------------------------------------- helpers */

static void put_str(char *buf, size_t *len, const char *s)
{
        size_t n = strlen(s) + 1;

        ASSERT_TRUE(*len + n <= UEVENT_BUFFER_MAX);
        memcpy(buf + *len, s, n);
        *len += n;
}

static void put_kv(char *buf, size_t *len, const char *key, const char *v)
{
        char s[UEVENT_BUFFER_MAX];
        int n = snprintf(s, sizeof(s), "%s=%s", key, v);

        ASSERT_TRUE(n > 0 && (size_t)n < sizeof(s));
        put_str(buf, len, s);
}

/* A parsed kernel uevent; extra "KEY=VALUE" strings end with NULL. */
static struct uevent *mk(uint64_t seqnum, const char *action, const char *devpath,
                         const char *subsystem, ...)
{
        char buf[UEVENT_BUFFER_MAX], hdr[UEVENT_BUFFER_MAX], seq[32];
        struct uevent *ev = NULL;
        size_t len = 0;
        const char *s;
        va_list ap;

        snprintf(hdr, sizeof(hdr), "%s@%s", action, devpath);
        snprintf(seq, sizeof(seq), "%" PRIu64, seqnum);
        put_str(buf, &len, hdr);
        put_kv(buf, &len, "ACTION", action);
        put_kv(buf, &len, "DEVPATH", devpath);
        put_kv(buf, &len, "SUBSYSTEM", subsystem);
        va_start(ap, subsystem);
        while ((s = va_arg(ap, const char *)))
                put_str(buf, &len, s);
        va_end(ap);
        put_kv(buf, &len, "SEQNUM", seq);

        ASSERT_EQ(uevent_parse_kernel(buf, len, 0, &ev), 0);
        ASSERT_TRUE(ev);
        return ev;
}

/* The live events of a test: records, nodes, and the order in which nodes
 * were reported runnable. */
struct world {
        struct event_deps d;
        struct uevent *ev[64];
        struct dep_node *n[64]; /* index = seqnum */
        bool live[64];
        uint64_t reported[64];
        size_t n_reported;
};

static void world_init(struct world *w)
{
        memset(w, 0, sizeof(*w));
        event_deps_init(&w->d);
}

static void world_done(struct world *w)
{
        for (size_t i = 0; i < ARRAY_SIZE(w->n); i++) {
                ASSERT_TRUE(!w->live[i]);
                dep_node_free(w->n[i]);
                uevent_free(w->ev[i]);
        }
        event_deps_done(&w->d);
}

/* Add the event; returns its number of blockers. */
static int add(struct world *w, struct uevent *ev)
{
        uint64_t s = ev->seqnum;
        int r;

        ASSERT_TRUE(s < ARRAY_SIZE(w->n) && !w->n[s]);
        w->ev[s] = ev;
        w->n[s] = dep_node_new(ev, &w->ev[s]);
        ASSERT_TRUE(w->n[s]);
        ASSERT_TRUE(dep_node_owner(w->n[s]) == &w->ev[s]);
        r = event_deps_add(&w->d, w->n[s]);
        ASSERT_TRUE(r >= 0);
        ASSERT_EQ(dep_node_blockers(w->n[s]), r);
        w->live[s] = true;
        return r;
}

static void on_runnable(struct dep_node *n, void *userdata)
{
        struct world *w = userdata;
        struct uevent **slot = dep_node_owner(n);

        ASSERT_EQ(dep_node_blockers(n), 0);
        ASSERT_TRUE(w->n_reported < ARRAY_SIZE(w->reported));
        w->reported[w->n_reported++] = (*slot)->seqnum;
}

/* Remove the event; returns how many dependants became runnable. */
static size_t rm(struct world *w, uint64_t s)
{
        size_t before = w->n_reported;

        ASSERT_TRUE(w->live[s]);
        event_deps_remove(&w->d, w->n[s], on_runnable, w);
        w->live[s] = false;
        return w->n_reported - before;
}

static bool runnable(const struct world *w, uint64_t s)
{
        return w->live[s] && dep_node_blockers(w->n[s]) == 0;
}

/* Add a, then b; b must wait for a (or, if independent, not). */
static void check_pair(struct uevent *a, struct uevent *b, bool conflict)
{
        uint64_t sa = a->seqnum, sb = b->seqnum;
        struct world w;

        world_init(&w);
        ASSERT_EQ(add(&w, a), 0);
        ASSERT_EQ(add(&w, b), conflict ? 1 : 0);
        ASSERT_EQ(rm(&w, sa), conflict ? 1 : 0);
        if (conflict)
                ASSERT_EQ(w.reported[0], sb);
        ASSERT_TRUE(runnable(&w, sb));
        ASSERT_EQ(rm(&w, sb), 0);
        world_done(&w);
}

/* ------------------------------------------------------------ ordering */

static void test_same_devpath(void)
{
        check_pair(mk(1, "add", "/devices/a", "test", NULL),
                   mk(2, "remove", "/devices/a", "test", NULL), true);
}

static void test_parent_child(void)
{
        /* parent blocks child */
        check_pair(mk(1, "add", "/devices/p", "test", NULL),
                   mk(2, "add", "/devices/p/c", "test", NULL), true);
        /* child blocks parent */
        check_pair(mk(1, "add", "/devices/p/c", "test", NULL),
                   mk(2, "add", "/devices/p", "test", NULL), true);
        /* grandchild */
        check_pair(mk(1, "remove", "/devices/p/c/g", "test", NULL),
                   mk(2, "remove", "/devices/p", "test", NULL), true);
        /* '/' boundary: /devices/a vs /devices/ab are unrelated */
        check_pair(mk(1, "add", "/devices/a", "test", NULL),
                   mk(2, "add", "/devices/ab", "test", NULL), false);
        check_pair(mk(1, "add", "/devices/ab", "test", NULL),
                   mk(2, "add", "/devices/a", "test", NULL), false);
        check_pair(mk(1, "add", "/devices/a/x", "test", NULL),
                   mk(2, "add", "/devices/ab/y", "test", NULL), false);
        /* siblings are independent */
        check_pair(mk(1, "add", "/devices/p/c1", "test", NULL),
                   mk(2, "add", "/devices/p/c2", "test", NULL), false);
}

static void test_same_devnum(void)
{
        check_pair(mk(1, "add", "/devices/x/sda", "block", "MAJOR=8", "MINOR=0", "DEVNAME=sda",
                      NULL),
                   mk(2, "add", "/devices/y/sdz", "block", "MAJOR=8", "MINOR=0", "DEVNAME=sdz",
                      NULL),
                   true);
        check_pair(mk(1, "add", "/devices/x/sda", "block", "MAJOR=8", "MINOR=0", "DEVNAME=sda",
                      NULL),
                   mk(2, "add", "/devices/y/sdb", "block", "MAJOR=8", "MINOR=16", "DEVNAME=sdb",
                      NULL),
                   false);
}

static void test_same_ifindex(void)
{
        check_pair(mk(1, "add", "/devices/virtual/net/eth0", "net", "IFINDEX=3",
                      "INTERFACE=eth0", NULL),
                   mk(2, "move", "/devices/virtual/net/lan0", "net", "IFINDEX=3",
                      "INTERFACE=lan0", NULL),
                   true);
        check_pair(mk(1, "add", "/devices/virtual/net/eth0", "net", "IFINDEX=3", NULL),
                   mk(2, "add", "/devices/virtual/net/eth1", "net", "IFINDEX=4", NULL), false);
}

static void test_same_devnode(void)
{
        check_pair(mk(1, "remove", "/devices/x/sda", "block", "MAJOR=8", "MINOR=0",
                      "DEVNAME=sda", NULL),
                   mk(2, "add", "/devices/y/sda", "block", "MAJOR=8", "MINOR=32",
                      "DEVNAME=sda", NULL),
                   true);
        check_pair(mk(1, "add", "/devices/x/ttyA", "tty", "MAJOR=4", "MINOR=1",
                      "DEVNAME=/dev/ttyA", NULL),
                   mk(2, "add", "/devices/y/ttyB", "tty", "MAJOR=4", "MINOR=2",
                      "DEVNAME=ttyB", NULL),
                   false);
}

static void test_devpath_old(void)
{
        /* E.devpath_old == L.devpath */
        check_pair(mk(1, "add", "/devices/m/old", "test", NULL),
                   mk(2, "move", "/devices/m/new", "test", "DEVPATH_OLD=/devices/m/old", NULL),
                   true);
        /* E.devpath_old below L.devpath */
        check_pair(mk(1, "change", "/devices/m", "test", NULL),
                   mk(2, "move", "/devices/n/new", "test", "DEVPATH_OLD=/devices/m/old", NULL),
                   true);
        /* E.devpath_old above L.devpath */
        check_pair(mk(1, "add", "/devices/m/old/child", "test", NULL),
                   mk(2, "move", "/devices/n/new", "test", "DEVPATH_OLD=/devices/m/old", NULL),
                   true);
        /* E.devpath == L.devpath_old */
        check_pair(mk(1, "move", "/devices/m/new", "test", "DEVPATH_OLD=/devices/m/old", NULL),
                   mk(2, "add", "/devices/m/old", "test", NULL), true);
        /* E.devpath below L.devpath_old */
        check_pair(mk(1, "move", "/devices/m/new", "test", "DEVPATH_OLD=/devices/m/old", NULL),
                   mk(2, "add", "/devices/m/old/child", "test", NULL), true);
        /* E.devpath above L.devpath_old */
        check_pair(mk(1, "move", "/devices/n/new", "test", "DEVPATH_OLD=/devices/m/old/x",
                      NULL),
                   mk(2, "change", "/devices/m/old", "test", NULL), true);
        /* unrelated */
        check_pair(mk(1, "move", "/devices/m/new", "test", "DEVPATH_OLD=/devices/m/old", NULL),
                   mk(2, "add", "/devices/m/older", "test", NULL), false);
        check_pair(mk(1, "add", "/devices/m/older", "test", NULL),
                   mk(2, "move", "/devices/m/new", "test", "DEVPATH_OLD=/devices/m/old", NULL),
                   false);
}

static void test_chain(void)
{
        static const char *const paths[] = {
                "/devices/c",     "/devices/c/1",   "/devices/c/1/2", "/devices/c/1",
                "/devices/c",     "/devices/c/1/2", "/devices/c/1/2", "/devices/c",
        };
        struct world w;

        world_init(&w);
        ASSERT_EQ(add(&w, mk(1, "change", paths[0], "test", NULL)), 0);
        for (unsigned i = 1; i < ARRAY_SIZE(paths); i++)
                ASSERT_TRUE(add(&w, mk(i + 1, "change", paths[i], "test", NULL)) > 0);
        for (unsigned i = 0; i < ARRAY_SIZE(paths); i++) {
                ASSERT_TRUE(runnable(&w, i + 1));
                for (unsigned j = i + 2; j <= ARRAY_SIZE(paths); j++)
                        ASSERT_TRUE(!runnable(&w, j));
                ASSERT_EQ(rm(&w, i + 1), i + 1 < ARRAY_SIZE(paths) ? 1 : 0);
        }
        world_done(&w);
}

/* Blocked and released in the right order when several chains interleave:
 * 1 /a, 2 /a/x, 3 /b, 4 /a/y, 5 /a */
static void test_fan_in(void)
{
        struct world w;

        world_init(&w);
        ASSERT_EQ(add(&w, mk(1, "add", "/devices/a", "test", NULL)), 0);
        ASSERT_EQ(add(&w, mk(2, "add", "/devices/a/x", "test", NULL)), 1);
        ASSERT_EQ(add(&w, mk(3, "add", "/devices/b", "test", NULL)), 0);
        ASSERT_EQ(add(&w, mk(4, "add", "/devices/a/y", "test", NULL)), 1);
        ASSERT_EQ(add(&w, mk(5, "remove", "/devices/a", "test", NULL)), 3); /* 1, 2, 4 */
        ASSERT_EQ(rm(&w, 1), 2);
        ASSERT_EQ(w.reported[0], 2); /* in the order they were added */
        ASSERT_EQ(w.reported[1], 4);
        ASSERT_EQ(rm(&w, 4), 0);
        ASSERT_TRUE(!runnable(&w, 5)); /* 5 still waits for 2 */
        ASSERT_EQ(rm(&w, 2), 1);
        ASSERT_EQ(w.reported[2], 5);
        ASSERT_EQ(rm(&w, 5), 0);
        ASSERT_EQ(rm(&w, 3), 0);
        world_done(&w);
}

/* A removed event no longer blocks newcomers; a live one that was added
 * later than the newcomer's other blockers still does. */
static void test_remove_then_add(void)
{
        struct world w;

        world_init(&w);
        ASSERT_EQ(add(&w, mk(1, "add", "/devices/p", "test", NULL)), 0);
        ASSERT_EQ(add(&w, mk(2, "add", "/devices/p/c", "test", NULL)), 1);
        ASSERT_EQ(rm(&w, 1), 1);
        ASSERT_EQ(add(&w, mk(3, "change", "/devices/p", "test", NULL)), 1); /* 2 only */
        ASSERT_EQ(add(&w, mk(4, "change", "/devices/q", "test", NULL)), 0);
        ASSERT_EQ(rm(&w, 2), 1);
        ASSERT_EQ(rm(&w, 3), 0);
        ASSERT_EQ(rm(&w, 4), 0);
        ASSERT_EQ(add(&w, mk(5, "change", "/devices/p/c", "test", NULL)), 0);
        ASSERT_EQ(rm(&w, 5), 0);
        world_done(&w);
}

/* One blocker is counted once, however many keys it shares; of a chain on
 * one key only the latest live event counts (it waits for the others). */
static void test_blocker_counted_once(void)
{
        struct world w;

        world_init(&w);
        ASSERT_EQ(add(&w, mk(1, "add", "/devices/x/sda", "block", "MAJOR=8", "MINOR=0",
                             "DEVNAME=sda", NULL)), 0);
        ASSERT_EQ(add(&w, mk(2, "change", "/devices/x/sda", "block", "MAJOR=8", "MINOR=0",
                             "DEVNAME=sda", NULL)), 1);
        ASSERT_EQ(add(&w, mk(3, "move", "/devices/x/sdb", "block", "MAJOR=8", "MINOR=0",
                             "DEVNAME=sda", "DEVPATH_OLD=/devices/x/sda", NULL)), 1);
        ASSERT_EQ(rm(&w, 1), 1);
        ASSERT_EQ(rm(&w, 2), 1);
        ASSERT_EQ(w.reported[1], 3);
        ASSERT_EQ(rm(&w, 3), 0);
        world_done(&w);
}

/* Dropping at shutdown: a running event forgets its dependants, which are
 * removed without reports; removing it later releases nothing. */
static void test_forget_dependants(void)
{
        struct world w;

        world_init(&w);
        ASSERT_EQ(add(&w, mk(1, "add", "/devices/a", "test", NULL)), 0);
        ASSERT_EQ(add(&w, mk(2, "add", "/devices/a/b", "test", NULL)), 1);
        ASSERT_EQ(add(&w, mk(3, "add", "/devices/a/b/c", "test", NULL)), 2);
        dep_node_forget_dependants(w.n[1]);
        event_deps_remove(&w.d, w.n[2], NULL, NULL);
        w.live[2] = false;
        event_deps_remove(&w.d, w.n[3], NULL, NULL);
        w.live[3] = false;
        ASSERT_EQ(rm(&w, 1), 0);
        ASSERT_EQ(w.n_reported, 0);
        /* the indexes are empty again */
        ASSERT_EQ(add(&w, mk(4, "add", "/devices/a/b/c", "test", NULL)), 0);
        ASSERT_EQ(rm(&w, 4), 0);
        world_done(&w);
}

/* The latest live event a new one conflicts with, whatever key links them. */
static uint64_t latest(struct world *w, struct uevent *probe)
{
        struct dep_node *n = event_deps_latest_conflict(&w->d, probe);
        uint64_t s = n ? (*(struct uevent **)dep_node_owner(n))->seqnum : 0;

        uevent_free(probe);
        return s;
}

static void test_latest_conflict(void)
{
        struct world w;

        world_init(&w);
        ASSERT_EQ(latest(&w, mk(9, "change", "/devices/a", "t", NULL)), 0);
        add(&w, mk(1, "change", "/devices/a", "t", NULL));
        add(&w, mk(2, "change", "/devices/b", "t", NULL));
        ASSERT_EQ(latest(&w, mk(9, "change", "/devices/a", "t", NULL)), 1);
        add(&w, mk(3, "add", "/devices/a/child", "t", NULL)); /* below a */
        ASSERT_EQ(latest(&w, mk(9, "change", "/devices/a", "t", NULL)), 3);
        add(&w, mk(4, "change", "/devices", "t", NULL)); /* above a */
        ASSERT_EQ(latest(&w, mk(9, "change", "/devices/a", "t", NULL)), 4);
        ASSERT_EQ(latest(&w, mk(9, "change", "/sys/x", "t", NULL)), 0);
        /* the probes changed nothing: the blockers are as before */
        ASSERT_EQ(rm(&w, 1), 1); /* 3 */
        ASSERT_EQ(latest(&w, mk(9, "change", "/devices/a", "t", NULL)), 4);
        ASSERT_EQ(rm(&w, 3), 0);
        ASSERT_EQ(rm(&w, 2), 1); /* 4 */
        ASSERT_EQ(rm(&w, 4), 0);
        world_done(&w);
}

static void test_coalescible(void)
{
        const char *u = "SYNTH_UUID=11111111-1111-4111-8111-111111111111";
        struct {
                struct uevent *a, *b;
                bool ok;
        } cases[] = {
                { mk(1, "change", "/devices/a", "t", NULL),
                  mk(2, "change", "/devices/a", "t", NULL), true },
                { mk(1, "change", "/devices/a", "t", "SYNTH_UUID=0", NULL),
                  mk(2, "change", "/devices/a", "t", u, NULL), true },
                { mk(1, "change", "/devices/a", "t", u, NULL),
                  mk(2, "change", "/devices/a", "t", u, NULL), true },
                { mk(1, "change", "/devices/a", "t", u, NULL),
                  mk(2, "change", "/devices/a", "t", NULL), false },
                { mk(1, "change", "/devices/a", "t", u, NULL),
                  mk(2, "change", "/devices/a", "t", "SYNTH_UUID=0", NULL), false },
                { mk(1, "add", "/devices/a", "t", NULL),
                  mk(2, "change", "/devices/a", "t", NULL), false },
                { mk(1, "change", "/devices/a", "t", NULL),
                  mk(2, "bind", "/devices/a", "t", NULL), false },
                { mk(1, "change", "/devices/a", "t", NULL),
                  mk(2, "change", "/devices/b", "t", NULL), false },
                { mk(1, "change", "/devices/a", "t", NULL),
                  mk(2, "change", "/devices/a", "u", NULL), false },
                { mk(1, "change", "/devices/a", "t", "MAJOR=1", "MINOR=2", NULL),
                  mk(2, "change", "/devices/a", "t", "MAJOR=1", "MINOR=3", NULL), false },
                { mk(1, "change", "/devices/a", "t", "DEVNAME=x", NULL),
                  mk(2, "change", "/devices/a", "t", "DEVNAME=y", NULL), false },
                { mk(1, "change", "/devices/a", "t", NULL),
                  mk(2, "change", "/devices/a", "t", "DEVPATH_OLD=/devices/z", NULL), false },
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                if (event_deps_coalescible(cases[i].a, cases[i].b) != cases[i].ok) {
                        fprintf(stderr, "case %zu\n", i);
                        ASSERT_TRUE(false);
                }
                uevent_free(cases[i].a);
                uevent_free(cases[i].b);
        }
}

int main(void)
{
        TEST_RUN(test_same_devpath);
        TEST_RUN(test_parent_child);
        TEST_RUN(test_same_devnum);
        TEST_RUN(test_same_ifindex);
        TEST_RUN(test_same_devnode);
        TEST_RUN(test_devpath_old);
        TEST_RUN(test_chain);
        TEST_RUN(test_fan_in);
        TEST_RUN(test_remove_then_add);
        TEST_RUN(test_blocker_counted_once);
        TEST_RUN(test_forget_dependants);
        TEST_RUN(test_latest_conflict);
        TEST_RUN(test_coalescible);
        return 0;
}
