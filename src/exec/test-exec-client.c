/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (main thread; the helper runs as a re-executed copy of this binary) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
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

static struct exec_client *client;
static char self_path[PATH_MAX];
static char out[16384], err[4096];

/* Run argv with default settings and the shared buffers. */
static int run(char *const *argv, char *const *envp, uint64_t timeout, struct exec_result *res)
{
        struct exec_request req = {
                .argv = argv,
                .envp = envp,
                .timeout_usec = timeout,
                .kill_grace_usec = 300 * MSEC,
                .out = out,
                .out_size = sizeof(out),
                .err = err,
                .err_size = sizeof(err),
        };
        return exec_run(client, &req, res);
}

static void test_exit_codes(void)
{
        struct exec_result res;
        char buf[64];

        ASSERT_EQ(run((char *[]){ "/bin/true", NULL }, NULL, 0, &res), 0);
        ASSERT_EQ(res.outcome, EXEC_EXITED);
        ASSERT_EQ(res.exit_status, 0);
        ASSERT_TRUE(exec_result_ok(&res));
        ASSERT_TRUE(res.pid > 0);
        ASSERT_EQ(res.out_len, 0);

        ASSERT_EQ(run((char *[]){ "/bin/false", NULL }, NULL, 0, &res), 0);
        ASSERT_EQ(res.outcome, EXEC_EXITED);
        ASSERT_EQ(res.exit_status, 1);
        ASSERT_TRUE(!exec_result_ok(&res));
        ASSERT_STREQ(exec_result_to_string(&res, buf, sizeof(buf)), "exited with status 1");

        ASSERT_EQ(run((char *[]){ "/bin/sh", "-c", "echo out; echo err >&2; exit 77", NULL },
                      NULL, 0, &res), 0);
        ASSERT_EQ(res.outcome, EXEC_EXITED);
        ASSERT_EQ(res.exit_status, 77);
        ASSERT_STREQ(out, "out\n");
        ASSERT_EQ(res.out_len, 4);
        ASSERT_STREQ(err, "err\n");
        ASSERT_EQ(res.err_len, 4);
        ASSERT_TRUE(!res.out_truncated && !res.err_truncated);

        /* stdin is /dev/null: cat ends at once. */
        ASSERT_EQ(run((char *[]){ "/bin/cat", NULL }, NULL, 0, &res), 0);
        ASSERT_TRUE(exec_result_ok(&res));
        ASSERT_EQ(res.out_len, 0);
}

static void test_signals(void)
{
        struct exec_result res;
        char buf[64];

        ASSERT_EQ(run((char *[]){ "/bin/sh", "-c", "kill -USR1 $$; sleep 5", NULL }, NULL, 0,
                      &res), 0);
        ASSERT_EQ(res.outcome, EXEC_SIGNALED);
        ASSERT_EQ(res.signal, SIGUSR1);
        ASSERT_EQ(res.exit_status, -1);
        ASSERT_STREQ(exec_result_to_string(&res, buf, sizeof(buf)), "killed by signal SIGUSR1");

        /* The helper's blocked signals and SIG_IGN do not reach programs. */
        ASSERT_EQ(run((char *[]){ "/bin/sh", "-c", "kill -TERM $$; sleep 5", NULL }, NULL, 0,
                      &res), 0);
        ASSERT_EQ(res.outcome, EXEC_SIGNALED);
        ASSERT_EQ(res.signal, SIGTERM);
        ASSERT_EQ(run((char *[]){ "/bin/sh", "-c", "grep -E '^Sig(Blk|Ign)' /proc/self/status",
                                  NULL }, NULL, 0, &res), 0);
        ASSERT_STREQ(out, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
}

static void test_timeout(void)
{
        struct exec_result res;
        char buf[64];

        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        ASSERT_EQ(run((char *[]){ "/bin/sleep", "100", NULL }, NULL, 300 * MSEC, &res), 0);
        uint64_t took = now_usec(CLOCK_MONOTONIC) - t0;
        ASSERT_EQ(res.outcome, EXEC_TIMED_OUT);
        ASSERT_EQ(res.signal, SIGTERM);
        ASSERT_TRUE(!res.killed);
        ASSERT_TRUE(took >= 290 * MSEC && took < 1500 * MSEC);
        ASSERT_STREQ(exec_result_to_string(&res, buf, sizeof(buf)), "timed out (SIGTERM)");

        /* The worker carries on. */
        ASSERT_EQ(run((char *[]){ "/bin/echo", "next", NULL }, NULL, 0, &res), 0);
        ASSERT_TRUE(exec_result_ok(&res));
        ASSERT_STREQ(out, "next\n");

        /* An absolute deadline earlier than the timeout wins. */
        struct exec_request req = {
                .argv = (char *[]){ "/bin/sleep", "100", NULL },
                .timeout_usec = 100 * USEC_PER_SEC,
                .deadline_usec = now_usec(CLOCK_MONOTONIC) + 200 * MSEC,
        };
        t0 = now_usec(CLOCK_MONOTONIC);
        ASSERT_EQ(exec_run(client, &req, &res), 0);
        ASSERT_EQ(res.outcome, EXEC_TIMED_OUT);
        ASSERT_TRUE(now_usec(CLOCK_MONOTONIC) - t0 < 1500 * MSEC);

        /* A deadline already gone: not started at all. */
        req.deadline_usec = now_usec(CLOCK_MONOTONIC) - 1;
        ASSERT_EQ(exec_run(client, &req, &res), 0);
        ASSERT_EQ(res.outcome, EXEC_SPAWN_FAILED);
        ASSERT_EQ(res.spawn_errno, ETIME);
        ASSERT_EQ(res.pid, 0);
}

static bool process_gone(pid_t pid)
{
        char path[64], buf[512];

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return true;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static bool wait_gone(pid_t pid, uint64_t usec)
{
        uint64_t until = now_usec(CLOCK_MONOTONIC) + usec;
        while (!process_gone(pid)) {
                if (now_usec(CLOCK_MONOTONIC) > until)
                        return false;
                usleep(10000);
        }
        return true;
}

static void test_timeout_needs_sigkill(void)
{
        struct exec_result res;
        char buf[64];

        /* Ignores SIGTERM, and so does the sleep it started: both get SIGKILL
         * (the whole process group) after the grace period. */
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        ASSERT_EQ(run((char *[]){ "/bin/sh", "-c", "trap '' TERM; sleep 100 & echo $!; wait",
                                  NULL }, NULL, 300 * MSEC, &res), 0);
        uint64_t took = now_usec(CLOCK_MONOTONIC) - t0;
        ASSERT_EQ(res.outcome, EXEC_TIMED_OUT);
        ASSERT_TRUE(res.killed);
        ASSERT_EQ(res.signal, SIGKILL);
        ASSERT_TRUE(took >= 590 * MSEC && took < 2000 * MSEC);
        ASSERT_STREQ(exec_result_to_string(&res, buf, sizeof(buf)), "timed out (SIGKILL needed)");
        pid_t grandchild = (pid_t)atoi(out);
        ASSERT_TRUE(grandchild > 0);
        ASSERT_TRUE(wait_gone(grandchild, 2 * USEC_PER_SEC));

        /* Another timeout signal. */
        struct exec_request req = {
                .argv = (char *[]){ "/bin/sleep", "100", NULL },
                .timeout_usec = 200 * MSEC,
                .timeout_signal = SIGUSR2,
        };
        ASSERT_EQ(exec_run(client, &req, &res), 0);
        ASSERT_EQ(res.outcome, EXEC_TIMED_OUT);
        ASSERT_EQ(res.signal, SIGUSR2);
        ASSERT_TRUE(!res.killed);

        /* SIGKILL as the timeout signal: no grace period. */
        req.argv = (char *[]){ "/bin/sh", "-c", "trap '' TERM; sleep 100", NULL };
        req.timeout_signal = SIGKILL;
        req.kill_grace_usec = 10 * USEC_PER_SEC;
        t0 = now_usec(CLOCK_MONOTONIC);
        ASSERT_EQ(exec_run(client, &req, &res), 0);
        ASSERT_EQ(res.outcome, EXEC_TIMED_OUT);
        ASSERT_TRUE(res.killed);
        ASSERT_EQ(res.signal, SIGKILL);
        ASSERT_TRUE(now_usec(CLOCK_MONOTONIC) - t0 < 1500 * MSEC);

        /* A program that handles SIGTERM and exits: timed out, with its status. */
        ASSERT_EQ(run((char *[]){ "/bin/sh", "-c", "trap 'exit 3' TERM; sleep 100 & wait", NULL },
                      NULL, 200 * MSEC, &res), 0);
        ASSERT_EQ(res.outcome, EXEC_TIMED_OUT);
        ASSERT_TRUE(!res.killed);
        ASSERT_EQ(res.exit_status, 3);
        ASSERT_EQ(res.signal, 0);
}

/* Spawned as a program: print our open descriptors except the directory's. */
static int list_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        struct dirent *de;
        char line[256] = "";

        if (!d)
                return 2;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.' || atoi(de->d_name) == dirfd(d))
                        continue;
                char target[128] = "";
                ssize_t n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
                target[n > 0 ? n : 0] = '\0';
                size_t l = strlen(line);
                if (l + 32 >= sizeof(line))
                        break;
                snprintf(line + l, sizeof(line) - l, "%s%d=%.6s", l ? " " : "",
                         atoi(de->d_name), target);
        }
        closedir(d);
        printf("%s\n", line);
        return 0;
}

static void test_fd_hygiene(void)
{
        struct exec_result res;

        ASSERT_EQ(run((char *[]){ self_path, "--list-fds", NULL }, NULL, 0, &res), 0);
        ASSERT_TRUE(exec_result_ok(&res));
        /* readdir order is the fd order for /proc/self/fd. */
        ASSERT_STREQ(out, "0=/dev/n 1=pipe:[ 2=pipe:[\n");

        /* With no buffers, stdout and stderr are /dev/null too. */
        struct exec_request req = { .argv = (char *[]){ self_path, "--list-fds", NULL } };
        ASSERT_EQ(exec_run(client, &req, &res), 0);
        ASSERT_TRUE(exec_result_ok(&res));
        ASSERT_EQ(res.out_len, 0);

        /* The soft descriptor limit is the select()-safe one. */
        ASSERT_EQ(run((char *[]){ "/bin/sh", "-c", "ulimit -n", NULL }, NULL, 0, &res), 0);
        struct rlimit rl;
        ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
        ASSERT_TRUE(atoi(out) == 1024 || (rl.rlim_cur < 1024 && atoi(out) == (int)rl.rlim_cur));
}

static void test_environment_exact(void)
{
        char *envp[] = { "UDEV_DATABASE_VERSION=1", "A=1", "B=x=y==z", "C=line1\nline2\n",
                         "EMPTY=", "SPACES=  a  b  ", "UTF8=\xc3\xa9t\xc3\xa9", NULL };
        struct exec_result res;
        char expect[256];
        size_t n = 0;

        for (size_t i = 0; envp[i]; i++) {
                size_t l = strlen(envp[i]) + 1;
                memcpy(expect + n, envp[i], l);
                n += l;
        }
        ASSERT_EQ(run((char *[]){ "/usr/bin/env", "-0", NULL }, envp, 0, &res), 0);
        ASSERT_TRUE(exec_result_ok(&res));
        ASSERT_EQ(res.out_len, n);
        ASSERT_TRUE(memcmp(out, expect, n) == 0);

        /* An empty environment is empty. */
        ASSERT_EQ(run((char *[]){ "/usr/bin/env", "-0", NULL }, NULL, 0, &res), 0);
        ASSERT_TRUE(exec_result_ok(&res));
        ASSERT_EQ(res.out_len, 0);

        /* Arguments arrive as sent, too. */
        ASSERT_EQ(run((char *[]){ "/bin/sh", "-c", "printf '[%s]' \"$@\"", "sh", "a b", "",
                                  "c=d", "x\ny", "'\"\\", NULL }, NULL, 0, &res), 0);
        ASSERT_STREQ(out, "[a b][][c=d][x\ny]['\"\\]");
}

static void test_output_limits(void)
{
        char small[100];
        struct exec_result res;

        /* 588,895 bytes into 100: cut, drained, the program finishes normally. */
        struct exec_request req = {
                .argv = (char *[]){ "/usr/bin/seq", "1", "100000", NULL },
                .out = small,
                .out_size = sizeof(small),
                .err = err,
                .err_size = sizeof(err),
        };
        ASSERT_EQ(exec_run(client, &req, &res), 0);
        ASSERT_TRUE(exec_result_ok(&res));
        ASSERT_EQ(res.out_len, sizeof(small) - 1);
        ASSERT_TRUE(res.out_truncated);
        ASSERT_EQ(strlen(small), sizeof(small) - 1);
        ASSERT_TRUE(strncmp(small, "1\n2\n3\n4\n", 8) == 0);

        /* The same on stderr. */
        req.argv = (char *[]){ "/bin/sh", "-c", "seq 1 100000 >&2", NULL };
        req.err = small;
        req.err_size = sizeof(small);
        req.out = out;
        req.out_size = sizeof(out);
        ASSERT_EQ(exec_run(client, &req, &res), 0);
        ASSERT_TRUE(exec_result_ok(&res));
        ASSERT_EQ(res.err_len, sizeof(small) - 1);
        ASSERT_TRUE(res.err_truncated);
        ASSERT_EQ(res.out_len, 0);

        /* Output that fits exactly is not truncated. */
        req.argv = (char *[]){ "/usr/bin/printf", "%099d", "0", NULL };
        req.out = small;
        req.out_size = sizeof(small);
        req.err = NULL;
        ASSERT_EQ(exec_run(client, &req, &res), 0);
        ASSERT_EQ(res.out_len, 99);
        ASSERT_TRUE(!res.out_truncated);

        /* Endless output: cut, and not waited for until the timeout. */
        req.argv = (char *[]){ "/usr/bin/yes", NULL };
        req.timeout_usec = 20 * USEC_PER_SEC;
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        ASSERT_EQ(exec_run(client, &req, &res), 0);
        ASSERT_TRUE(now_usec(CLOCK_MONOTONIC) - t0 < 5 * USEC_PER_SEC);
        ASSERT_TRUE(res.out_truncated);
        ASSERT_EQ(res.outcome, EXEC_SIGNALED);
        ASSERT_EQ(res.signal, SIGPIPE);
        ASSERT_TRUE(strncmp(small, "y\ny\ny\n", 6) == 0);
}

static void test_closed_stdout_still_times_out(void)
{
        struct exec_result res;

        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        ASSERT_EQ(run((char *[]){ "/bin/sh", "-c", "echo early; exec >&- 2>&-; sleep 100", NULL },
                      NULL, 400 * MSEC, &res), 0);
        uint64_t took = now_usec(CLOCK_MONOTONIC) - t0;
        ASSERT_EQ(res.outcome, EXEC_TIMED_OUT);
        ASSERT_TRUE(took >= 390 * MSEC && took < 1500 * MSEC);
        ASSERT_STREQ(out, "early\n");
}

static void test_spawn_failures(void)
{
        struct exec_result res;
        char buf[64];

        ASSERT_EQ(run((char *[]){ "/nonexistent/program", NULL }, NULL, 0, &res), 0);
        ASSERT_EQ(res.outcome, EXEC_SPAWN_FAILED);
        ASSERT_EQ(res.spawn_errno, ENOENT);
        ASSERT_EQ(res.pid, 0);
        ASSERT_STREQ(exec_result_to_string(&res, buf, sizeof(buf)), "failed to start: ENOENT");

        ASSERT_EQ(run((char *[]){ "/etc/passwd", NULL }, NULL, 0, &res), 0);
        ASSERT_EQ(res.outcome, EXEC_SPAWN_FAILED);
        ASSERT_EQ(res.spawn_errno, EACCES);

        /* Rejected before anything is sent. */
        ASSERT_EQ(run((char *[]){ "true", NULL }, NULL, 0, &res), -EINVAL);
        ASSERT_EQ(run((char *[]){ NULL }, NULL, 0, &res), -EINVAL);
        ASSERT_EQ(run((char *[]){ "/bin/true", NULL }, (char *[]){ "NOVALUE", NULL }, 0, &res),
                  -EINVAL);
        struct exec_request req = { .argv = (char *[]){ "/bin/true", NULL }, .out = out };
        ASSERT_EQ(exec_run(client, &req, &res), -EINVAL); /* out without a size */

        /* The helper is still fine. */
        ASSERT_EQ(run((char *[]){ "/bin/true", NULL }, NULL, 0, &res), 0);
        ASSERT_TRUE(exec_result_ok(&res));
}

static void test_exec_delay(void)
{
        struct exec_client *c;
        struct exec_result res;
        struct exec_client_config cfg = { .helper_path = self_path, .exec_delay_usec = 300 * MSEC };

        ASSERT_EQ(exec_client_new(&cfg, &c), 0);
        struct exec_request req = { .argv = (char *[]){ "/bin/true", NULL }, .is_run = true };
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        ASSERT_EQ(exec_run(c, &req, &res), 0);
        ASSERT_TRUE(exec_result_ok(&res));
        ASSERT_TRUE(now_usec(CLOCK_MONOTONIC) - t0 >= 300 * MSEC);

        req.is_run = false; /* PROGRAM / IMPORT{program}: no delay */
        t0 = now_usec(CLOCK_MONOTONIC);
        ASSERT_EQ(exec_run(c, &req, &res), 0);
        ASSERT_TRUE(now_usec(CLOCK_MONOTONIC) - t0 < 250 * MSEC);

        pid_t helper = exec_client_helper_pid(c);
        ASSERT_TRUE(helper > 0);
        exec_client_free(c);
        ASSERT_TRUE(process_gone(helper) && kill(helper, 0) < 0); /* reaped */
}

/* The helper reports each program's CPU time (its rusage): a shell that
 * counts uses some, never more than its run took; one that sleeps hardly
 * any. (What share of its run the counting shell gets depends on the
 * machine's load, so that is not asserted.) */
static void test_cpu_time(void)
{
        struct exec_result res;

        ASSERT_EQ(run((char *[]){ "/bin/sh", "-c", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done",
                                  NULL }, NULL, 0, &res), 0);
        ASSERT_TRUE(exec_result_ok(&res));
        fprintf(stderr, "(spin: %" PRIu64 " us CPU in %" PRIu64 " us) ", res.cpu_usec, res.usec);
        ASSERT_TRUE(res.cpu_usec >= 10 * MSEC);
        ASSERT_TRUE(res.cpu_usec <= res.usec + 10 * MSEC);

        ASSERT_EQ(run((char *[]){ "/bin/sleep", "0.3", NULL }, NULL, 0, &res), 0);
        ASSERT_TRUE(exec_result_ok(&res));
        ASSERT_TRUE(res.usec >= 300 * MSEC);
        ASSERT_TRUE(res.cpu_usec < 100 * MSEC);
}

/* The program limit (exec-helper.h). Each program appends "start" and "end"
 * lines to one log; a spinning program runs until the test creates its stop
 * file, so the test decides when it ends. */
struct limited_run {
        struct exec_client *client;
        char *const *argv;
        uint64_t timeout_usec;
        int r;
        struct exec_result res;
        pthread_t thread;
};

static void *limited_run_thread(void *userdata)
{
        struct limited_run *l = userdata;
        char o[256];
        struct exec_request req = { .argv = l->argv, .timeout_usec = l->timeout_usec,
                                    .out = o, .out_size = sizeof(o) };

        l->r = exec_run(l->client, &req, &l->res);
        return NULL;
}

static void limited_start(struct limited_run *l)
{
        ASSERT_EQ(thread_start(&l->thread, limited_run_thread, l), 0);
}

static void limited_join(struct limited_run *l)
{
        ASSERT_EQ(pthread_join(l->thread, NULL), 0);
}

static void read_log(const char *path, char *buf, size_t size)
{
        buf[0] = '\0';
        FILE *f = fopen(path, "re");
        if (!f)
                return;
        size_t n = fread(buf, 1, size - 1, f);
        buf[n] = '\0';
        fclose(f);
}

/* Wait (at most 10 s) until the log holds `lines` lines. */
static void wait_log_lines(const char *path, unsigned lines)
{
        char buf[1024];
        for (int tries = 0; tries < 1000; tries++) {
                unsigned n = 0;
                read_log(path, buf, sizeof(buf));
                for (const char *p = buf; (p = strchr(p, '\n')); p++)
                        n++;
                if (n >= lines)
                        return;
                usleep(10000);
        }
        read_log(path, buf, sizeof(buf));
        fprintf(stderr, "log %s: \"%s\"\n", path, buf);
        ASSERT_TRUE(false);
}

static void test_program_limit(void)
{
        char dir[] = "/tmp/test-exec-limit.XXXXXX", log[128], stop[128], script[512], buf[1024];
        struct exec_client *c;

        ASSERT_TRUE(mkdtemp(dir));
        snprintf(log, sizeof(log), "%s/log", dir);
        snprintf(stop, sizeof(stop), "%s/stop", dir);
        ASSERT_EQ(exec_client_new(&(struct exec_client_config){ .helper_path = self_path,
                                                                 .program_limit = 1 }, &c), 0);

        /* Two programs that spin (runnable all along): the second starts
         * only once the first has ended. */
        snprintf(script, sizeof(script),
                 "echo start $0 >> %s; while [ ! -e %s ]; do :; done; echo end $0 >> %s", log,
                 stop, log);
        struct limited_run a = { .client = c, .argv = (char *[]){ "/bin/sh", "-c", script, "a", NULL } };
        struct limited_run b = { .client = c, .argv = (char *[]){ "/bin/sh", "-c", script, "b", NULL } };
        limited_start(&a);
        wait_log_lines(log, 1);
        limited_start(&b);
        usleep(200000); /* time enough for b to start, were it not held */
        read_log(log, buf, sizeof(buf));
        ASSERT_STREQ(buf, "start a\n");
        /* A request held while its deadline passes is answered without running. */
        struct limited_run late = { .client = c, .argv = (char *[]){ "/bin/true", NULL },
                                    .timeout_usec = 50 * MSEC };
        limited_start(&late);
        limited_join(&late);
        ASSERT_EQ(late.r, 0);
        ASSERT_EQ(late.res.outcome, EXEC_SPAWN_FAILED);
        ASSERT_EQ(late.res.spawn_errno, ETIME);
        ASSERT_EQ(late.res.pid, 0);
        int fd = open(stop, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        close(fd);
        limited_join(&a);
        limited_join(&b);
        ASSERT_TRUE(a.r == 0 && exec_result_ok(&a.res));
        ASSERT_TRUE(b.r == 0 && exec_result_ok(&b.res));
        read_log(log, buf, sizeof(buf));
        ASSERT_STREQ(buf, "start a\nend a\nstart b\nend b\n");

        /* Programs that sleep do not count: three run at once under a limit of one. */
        ASSERT_EQ(unlink(log), 0);
        ASSERT_EQ(unlink(stop), 0);
        snprintf(script, sizeof(script),
                 "echo start >> %s; while [ ! -e %s ]; do sleep 0.05; done; echo end >> %s", log,
                 stop, log);
        struct limited_run s[3];
        char *argvs[3][4]; /* one per thread: each reads its own while it runs */
        for (int i = 0; i < 3; i++) {
                argvs[i][0] = (char *)"/bin/sh";
                argvs[i][1] = (char *)"-c";
                argvs[i][2] = script;
                argvs[i][3] = NULL;
                s[i] = (struct limited_run){ .client = c, .argv = argvs[i] };
                limited_start(&s[i]);
        }
        wait_log_lines(log, 3);
        fd = open(stop, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        ASSERT_TRUE(fd >= 0);
        close(fd);
        for (int i = 0; i < 3; i++) {
                limited_join(&s[i]);
                ASSERT_TRUE(s[i].r == 0 && exec_result_ok(&s[i].res));
        }
        read_log(log, buf, sizeof(buf));
        ASSERT_STREQ(buf, "start\nstart\nstart\nend\nend\nend\n");

        exec_client_free(c);
        (void)unlink(log);
        (void)unlink(stop);
        ASSERT_EQ(rmdir(dir), 0);
}

/* Number of open descriptors of pid, and a list of them in buf. */
static unsigned count_fds(pid_t pid, char *buf, size_t size)
{
        char path[64];
        unsigned n = 0;
        size_t l = 0;
        struct dirent *de;

        snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
        DIR *d = opendir(path);
        ASSERT_TRUE(d);
        buf[0] = '\0';
        while ((de = readdir(d))) {
                char target[64] = "";
                if (de->d_name[0] == '.')
                        continue;
                n++;
                ssize_t k = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
                target[k > 0 ? k : 0] = '\0';
                if (l + 100 < size)
                        l += (size_t)snprintf(buf + l, size - l, " %d:%s", atoi(de->d_name),
                                              target);
        }
        closedir(d);
        return n;
}

static void test_helper_process(void)
{
        char path[64], buf[4096];
        pid_t helper = exec_client_helper_pid(client);

        ASSERT_TRUE(helper > 0);
        snprintf(path, sizeof(path), "/proc/%d/comm", (int)helper);
        FILE *f = fopen(path, "re");
        ASSERT_TRUE(f);
        ASSERT_TRUE(fgets(buf, sizeof(buf), f));
        fclose(f);
        ASSERT_STREQ(buf, EXEC_HELPER_COMM "\n");

        /* Its descriptors: 0-2, the request socket, epoll, timerfd; nothing else
         * (once it has closed the last request's pidfd and reply socket, which
         * it does right after answering). */
        unsigned n = 0;
        for (int tries = 0; tries < 100; tries++) {
                n = count_fds(helper, buf, sizeof(buf));
                if (n == 6)
                        break;
                usleep(10000);
        }
        if (n != 6)
                fprintf(stderr, "helper descriptors:%s\n", buf);
        ASSERT_EQ(n, 6);
}

int main(int argc, char *argv[])
{
        struct rlimit rl;

        exec_helper_run_if_requested(argc, argv);
        if (argc == 2 && streq(argv[1], "--list-fds"))
                return list_fds();

        ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
        ASSERT_TRUE(n > 0);
        self_path[n] = '\0';
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
                rl.rlim_cur = rl.rlim_max;
                (void)setrlimit(RLIMIT_NOFILE, &rl);
        }
        log_set_max_level(LOG_WARNING);
        ASSERT_EQ(exec_client_new(&(struct exec_client_config){ .helper_path = self_path },
                                  &client), 0);

        TEST_RUN(test_exit_codes);
        TEST_RUN(test_helper_process); /* after a request: the helper is set up */
        TEST_RUN(test_signals);
        TEST_RUN(test_timeout);
        TEST_RUN(test_timeout_needs_sigkill);
        TEST_RUN(test_fd_hygiene);
        TEST_RUN(test_environment_exact);
        TEST_RUN(test_output_limits);
        TEST_RUN(test_closed_stdout_still_times_out);
        TEST_RUN(test_spawn_failures);
        TEST_RUN(test_exec_delay);
        TEST_RUN(test_cpu_time);
        TEST_RUN(test_program_limit);

        exec_client_free(client);
        return 0;
}
