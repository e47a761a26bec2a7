/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (many request threads; the helper is a re-executed copy of this binary) */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "exec/exec-client.h"
#include "exec/exec-helper.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/tests.h"
#include "shared/thread-util.h"
#include "shared/time-util.h"

#define MSEC (USEC_PER_MSEC)
#define REQUESTS 1000

/* ThreadSanitizer makes each thread creation cost ~50 ms on a small VM, so
 * there the 1,000 requests come from 100 threads, 10 each. */
#if defined(__SANITIZE_THREAD__)
#define THREADS 100
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define THREADS 100
#endif
#endif
#ifndef THREADS
#define THREADS REQUESTS /* all 1,000 in flight at once */
#endif

static struct exec_client *client;
static char self_path[PATH_MAX];

/* ---- 1,000 requests from many threads at once ---- */

struct one {
        pthread_t thread;
        unsigned first;            /* index of its first request */
        pthread_barrier_t *start;
        int r[REQUESTS / THREADS];
        struct exec_result res[REQUESTS / THREADS];
        char out[REQUESTS / THREADS][32];
        char err[REQUESTS / THREADS][32];
};

static void *one_main(void *userdata)
{
        struct one *o = userdata;

        pthread_barrier_wait(o->start);
        for (unsigned k = 0; k < REQUESTS / THREADS; k++) {
                char arg[16], env[32];
                snprintf(arg, sizeof(arg), "%u", o->first + k);
                snprintf(env, sizeof(env), "INDEX=%u", o->first + k);
                struct exec_request req = {
                        .argv = (char *[]){ "/bin/sh", "-c",
                                            "echo \"$1 $INDEX\"; echo e$1 >&2; exit $(($1 % 100))",
                                            "sh", arg, NULL },
                        .envp = (char *[]){ env, NULL },
                        .timeout_usec = 120 * USEC_PER_SEC,
                        .out = o->out[k],
                        .out_size = sizeof(o->out[k]),
                        .err = o->err[k],
                        .err_size = sizeof(o->err[k]),
                };
                o->r[k] = exec_run(client, &req, &o->res[k]);
        }
        return NULL;
}

static void test_concurrent(void)
{
        struct one *ones = calloc(THREADS, sizeof(*ones));
        pthread_barrier_t start;
        pthread_attr_t attr;

        ASSERT_TRUE(ones);
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        pthread_barrier_init(&start, NULL, THREADS);
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        for (unsigned i = 0; i < THREADS; i++) {
                ones[i].first = i * (REQUESTS / THREADS);
                ones[i].start = &start;
                ASSERT_EQ(pthread_create(&ones[i].thread, &attr, one_main, &ones[i]), 0);
        }
        for (unsigned i = 0; i < THREADS; i++)
                pthread_join(ones[i].thread, NULL);
        uint64_t took = now_usec(CLOCK_MONOTONIC) - t0;
        for (unsigned i = 0; i < THREADS; i++) {
                for (unsigned k = 0; k < REQUESTS / THREADS; k++) {
                        const struct one *o = &ones[i];
                        unsigned index = o->first + k;
                        char expect[32];
                        ASSERT_EQ(o->r[k], 0);
                        ASSERT_EQ(o->res[k].outcome, EXEC_EXITED);
                        ASSERT_EQ(o->res[k].exit_status, (int)(index % 100));
                        snprintf(expect, sizeof(expect), "%u %u\n", index, index);
                        ASSERT_STREQ(o->out[k], expect);
                        snprintf(expect, sizeof(expect), "e%u\n", index);
                        ASSERT_STREQ(o->err[k], expect);
                }
        }
        fprintf(stderr, "(%d requests from %d threads: %.1f s) ", REQUESTS, THREADS,
                (double)took / 1e6);
        pthread_barrier_destroy(&start);
        pthread_attr_destroy(&attr);
        free(ones);
}

/* ---- the helper killed with SIGKILL under load ---- */

#define LOADERS 32

struct loader {
        pthread_t thread;
        _Atomic bool *stop;
        unsigned ok, reset, other;
        int other_r;
        unsigned ok_after_reset;   /* successes after this thread saw a reset */
        uint64_t last_reset_usec;  /* when its last failed call returned */
};

static void *loader_main(void *userdata)
{
        struct loader *l = userdata;
        struct exec_result res;
        char out[16];

        while (!atomic_load(l->stop)) {
                struct exec_request req = {
                        .argv = (char *[]){ "/bin/sh", "-c", "sleep 0.2; echo ok", NULL },
                        .timeout_usec = 30 * USEC_PER_SEC,
                        .out = out,
                        .out_size = sizeof(out),
                };
                int r = exec_run(client, &req, &res);
                if (r == -ECONNRESET) {
                        l->reset++;
                        l->last_reset_usec = now_usec(CLOCK_MONOTONIC);
                } else if (r == 0 && exec_result_ok(&res) && streq(out, "ok\n")) {
                        l->ok++;
                        if (l->reset > 0)
                                l->ok_after_reset++;
                } else {
                        l->other++;
                        l->other_r = r;
                }
        }
        return NULL;
}

static void test_helper_killed_under_load(void)
{
        struct loader loaders[LOADERS] = { 0 };
        _Atomic bool stop = false;
        unsigned starts = exec_client_helper_starts(client);

        for (unsigned i = 0; i < LOADERS; i++) {
                loaders[i].stop = &stop;
                ASSERT_EQ(thread_start(&loaders[i].thread, loader_main, &loaders[i]), 0);
        }
        usleep(300 * 1000);
        pid_t old = exec_client_helper_pid(client);
        ASSERT_TRUE(old > 0);
        uint64_t killed_at = now_usec(CLOCK_MONOTONIC);
        ASSERT_EQ(kill(old, SIGKILL), 0);
        usleep(800 * 1000);
        atomic_store(&stop, true);
        unsigned ok = 0, reset = 0, ok_after = 0;
        uint64_t last_reset = 0;
        for (unsigned i = 0; i < LOADERS; i++) {
                struct loader *l = &loaders[i];
                pthread_join(l->thread, NULL);
                if (l->other > 0)
                        fprintf(stderr, "thread %u: %u unexpected results (last r=%d)\n", i,
                                l->other, l->other_r);
                ASSERT_EQ(l->other, 0);
                ok += l->ok;
                reset += l->reset;
                ok_after += l->ok_after_reset;
                last_reset = MAX(last_reset, l->last_reset_usec);
        }
        fprintf(stderr, "(%u ok, %u failed with ECONNRESET, %u ok after) ", ok, reset, ok_after);
        /* Requests in flight failed cleanly and at once... */
        ASSERT_TRUE(reset >= 1);
        ASSERT_TRUE(reset <= LOADERS);
        ASSERT_TRUE(last_reset - killed_at < 500 * MSEC);
        /* ... and later ones ran on a new helper. */
        ASSERT_TRUE(ok_after >= LOADERS / 2);
        pid_t now = exec_client_helper_pid(client);
        ASSERT_TRUE(now > 0 && now != old);
        ASSERT_EQ(exec_client_helper_starts(client), starts + 1);
        ASSERT_TRUE(kill(old, 0) < 0 && errno == ESRCH); /* the dead one was reaped */
}

/* ---- the event-loop path: the watch fd, then exec_client_process() ---- */

static void test_helper_death_noticed(void)
{
        struct exec_result res;
        pid_t old = exec_client_helper_pid(client);
        struct pollfd p = { .fd = exec_client_get_fd(client), .events = POLLIN };

        ASSERT_EQ(poll(&p, 1, 0), 0);
        ASSERT_EQ(exec_client_process(client), 0); /* nothing to do */
        ASSERT_EQ(kill(old, SIGKILL), 0);
        ASSERT_EQ(poll(&p, 1, 2000), 1);
        ASSERT_EQ(exec_client_process(client), 1);
        pid_t now = exec_client_helper_pid(client);
        ASSERT_TRUE(now > 0 && now != old);
        ASSERT_EQ(poll(&p, 1, 0), 0);
        ASSERT_TRUE(kill(old, 0) < 0 && errno == ESRCH);

        struct exec_request req = { .argv = (char *[]){ "/bin/true", NULL } };
        ASSERT_EQ(exec_run(client, &req, &res), 0);
        ASSERT_TRUE(exec_result_ok(&res));
}

/* ---- programs of a dead helper are told (PR_SET_PDEATHSIG) ---- */

struct orphan {
        char out[32];
        int r;
};

static void *orphan_main(void *userdata)
{
        struct orphan *o = userdata;
        struct exec_result res;
        struct exec_request req = {
                .argv = (char *[]){ "/bin/sh", "-c", "echo $$; exec sleep 100", NULL },
                .timeout_usec = 30 * USEC_PER_SEC,
                .out = o->out,
                .out_size = sizeof(o->out),
        };
        o->r = exec_run(client, &req, &res);
        return NULL;
}

static bool pid_alive(pid_t pid)
{
        char path[64], buf[512];

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return false;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

static void test_orphans_terminated(void)
{
        struct orphan o = { .r = 1 };
        pthread_t t;

        ASSERT_EQ(thread_start(&t, orphan_main, &o), 0);
        /* Wait until the program has printed its pid (it is then sleeping). */
        pid_t prog = 0;
        for (int i = 0; i < 200 && prog == 0; i++) {
                usleep(10000);
                prog = (pid_t)atoi(o.out);
        }
        ASSERT_TRUE(prog > 0);
        ASSERT_TRUE(pid_alive(prog));
        pid_t old = exec_client_helper_pid(client);
        ASSERT_EQ(kill(old, SIGKILL), 0);
        pthread_join(t, NULL);
        ASSERT_EQ(o.r, -ECONNRESET);
        /* The worker that saw the hang-up has already started a new helper. */
        ASSERT_TRUE(exec_client_helper_pid(client) != old);
        ASSERT_EQ(exec_client_process(client), 0);
        bool gone = false;
        for (int i = 0; i < 200 && !gone; i++) {
                gone = !pid_alive(prog);
                if (!gone)
                        usleep(10000);
        }
        ASSERT_TRUE(gone);
}

/* ---- closing the client ends the helper and its programs ---- */

static void test_free_ends_helper(void)
{
        struct exec_client *c;
        struct exec_result res;
        struct exec_client_config cfg = { .helper_path = self_path };

        ASSERT_EQ(exec_client_new(&cfg, &c), 0);
        struct exec_request req = { .argv = (char *[]){ "/bin/true", NULL } };
        ASSERT_EQ(exec_run(c, &req, &res), 0);
        pid_t helper = exec_client_helper_pid(c);
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        exec_client_free(c);
        ASSERT_TRUE(now_usec(CLOCK_MONOTONIC) - t0 < 1 * USEC_PER_SEC);
        ASSERT_TRUE(kill(helper, 0) < 0 && errno == ESRCH);

        /* A helper that cannot be started is an error, not a hang. */
        cfg.helper_path = "/nonexistent/udevd";
        ASSERT_EQ(exec_client_new(&cfg, &c), -ENOENT);
}

int main(int argc, char *argv[])
{
        struct rlimit rl;

        exec_helper_run_if_requested(argc, argv);

        ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
        ASSERT_TRUE(n > 0);
        self_path[n] = '\0';
        /* 1,000 requests hold 3,000 descriptors here. */
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
                rl.rlim_cur = rl.rlim_max;
                (void)setrlimit(RLIMIT_NOFILE, &rl);
        }
        /* The helper deaths below are logged as errors; TEST_LOG=7 shows them. */
        log_set_max_level(getenv("TEST_LOG") ? atoi(getenv("TEST_LOG")) : LOG_CRIT);
        ASSERT_EQ(exec_client_new(&(struct exec_client_config){ .helper_path = self_path },
                                  &client), 0);

        if (!getenv("TEST_SKIP_CONCURRENT"))
                TEST_RUN(test_concurrent);
        TEST_RUN(test_helper_killed_under_load);
        TEST_RUN(test_helper_death_noticed);
        TEST_RUN(test_orphans_terminated);
        TEST_RUN(test_free_ends_helper);

        exec_client_free(client);
        return 0;
}
