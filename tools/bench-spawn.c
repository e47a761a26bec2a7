/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: benchmark (main thread + --threads spawning threads) */
/* Spawn benchmark for the exec helper (issue 3); built and run by tools/bench-spawn.
 *
 * A process that looks like udevd under load -- about --rss-mib MiB of touched
 * memory and --threads worker threads -- runs --spawns short programs
 * (default /bin/true), each with stdin /dev/null and stdout/stderr pipes that
 * are read to the end, the exit status collected, three ways:
 *
 *   helper       exec_run() through the exec helper process (src/exec)
 *   posix_spawn  posix_spawn() from the worker threads themselves
 *   fork         fork() + execve() from the worker threads
 *
 * Measured per mode and run: wall time, and CPU time (user + system) of the
 * process and of all its children (getrusage RUSAGE_SELF and RUSAGE_CHILDREN;
 * in helper mode the helper is reaped at the end of the run, so its CPU and
 * that of its programs are included). Reported: the median over --runs runs,
 * per spawn, as a table and as JSON (--json FILE, or - for stdout); for the
 * helper also the helper process's own share (from /proc, clock ticks). Modes
 * are run in a rotating order so drift affects all of them alike. */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/exec-client.h"
#include "exec/exec-helper.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"

#define RUNS_MAX 101

enum mode { MODE_HELPER, MODE_POSIX_SPAWN, MODE_FORK, _MODE_MAX };
static const char *const mode_names[_MODE_MAX] = { "helper", "posix_spawn", "fork" };

struct options {
        unsigned spawns, threads, runs, rss_mib;
        const char *program;
        const char *json;
        char self[4096];
};

struct bench {
        const struct options *o;
        enum mode mode;
        struct exec_client *client;
        _Atomic unsigned next;    /* spawns handed out */
        _Atomic unsigned failed;
        int devnull;
};

struct sample {
        double wall_us, self_cpu_us, child_cpu_us; /* per spawn */
        double helper_cpu_us; /* helper mode: the helper process itself, without its programs */
};

/* Read both pipes to the end. */
static void drain(int out, int err)
{
        struct pollfd p[2] = { { .fd = out, .events = POLLIN }, { .fd = err, .events = POLLIN } };
        char buf[4096];

        while (p[0].fd >= 0 || p[1].fd >= 0) {
                if (poll(p, 2, -1) < 0 && errno != EINTR)
                        return;
                for (int i = 0; i < 2; i++) {
                        if (p[i].fd < 0 || !p[i].revents)
                                continue;
                        ssize_t n = read(p[i].fd, buf, sizeof(buf));
                        if (n <= 0 && !(n < 0 && errno == EINTR))
                                p[i].fd = safe_close(p[i].fd);
                }
        }
}

static int spawn_direct(struct bench *b, bool use_fork)
{
        char *argv[] = { (char *)b->o->program, NULL };
        char *envp[] = { "UDEV_DATABASE_VERSION=1", "ACTION=add", "SUBSYSTEM=bench", NULL };
        int out[2], err[2], status;
        pid_t pid;

        if (pipe2(out, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(err, O_CLOEXEC) < 0) {
                safe_close(out[0]);
                safe_close(out[1]);
                return -errno;
        }
        if (use_fork) {
                pid = fork();
                if (pid == 0) {
                        sigset_t none;
                        sigemptyset(&none);
                        if (dup2(b->devnull, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
                                _exit(127);
                        sigprocmask(SIG_SETMASK, &none, NULL);
                        execve(argv[0], argv, envp);
                        _exit(127);
                }
                if (pid < 0)
                        pid = -errno;
        } else {
                posix_spawn_file_actions_t fa;
                posix_spawnattr_t attr;
                sigset_t none, all;
                sigemptyset(&none);
                sigfillset(&all);
                posix_spawn_file_actions_init(&fa);
                posix_spawn_file_actions_adddup2(&fa, b->devnull, 0);
                posix_spawn_file_actions_adddup2(&fa, out[1], 1);
                posix_spawn_file_actions_adddup2(&fa, err[1], 2);
                posix_spawn_file_actions_addclosefrom_np(&fa, 3);
                posix_spawnattr_init(&attr);
                posix_spawnattr_setsigmask(&attr, &none);
                posix_spawnattr_setsigdefault(&attr, &all);
                posix_spawnattr_setpgroup(&attr, 0);
                posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
                                                        POSIX_SPAWN_SETPGROUP);
                int r = posix_spawn(&pid, argv[0], &fa, &attr, argv, envp);
                posix_spawnattr_destroy(&attr);
                posix_spawn_file_actions_destroy(&fa);
                if (r != 0)
                        pid = -r;
        }
        safe_close(out[1]);
        safe_close(err[1]);
        if (pid < 0) {
                safe_close(out[0]);
                safe_close(err[0]);
                return pid;
        }
        drain(out[0], err[0]);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

static int spawn_helper(struct bench *b)
{
        char *argv[] = { (char *)b->o->program, NULL };
        char *envp[] = { "UDEV_DATABASE_VERSION=1", "ACTION=add", "SUBSYSTEM=bench", NULL };
        char out[256], err[256];
        struct exec_result res;
        struct exec_request req = {
                .argv = argv,
                .envp = envp,
                .timeout_usec = 60 * USEC_PER_SEC,
                .out = out,
                .out_size = sizeof(out),
                .err = err,
                .err_size = sizeof(err),
        };
        int r = exec_run(b->client, &req, &res);
        if (r < 0)
                return r;
        return exec_result_ok(&res) ? 0 : -EIO;
}

static void *worker(void *userdata)
{
        struct bench *b = userdata;

        while (atomic_fetch_add(&b->next, 1) < b->o->spawns) {
                int r = b->mode == MODE_HELPER ? spawn_helper(b)
                                               : spawn_direct(b, b->mode == MODE_FORK);
                if (r < 0)
                        atomic_fetch_add(&b->failed, 1);
        }
        return NULL;
}

static double tv_us(struct timeval tv)
{
        return (double)tv.tv_sec * 1e6 + (double)tv.tv_usec;
}

static double rusage_us(int who)
{
        struct rusage ru;
        getrusage(who, &ru);
        return tv_us(ru.ru_utime) + tv_us(ru.ru_stime);
}

/* user + system time of a live process, from /proc (clock ticks). */
static double proc_cpu_us(pid_t pid)
{
        char path[64], buf[1024];
        unsigned long utime = 0, stime = 0;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return 0;
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        /* After "pid (comm)": state is field 3, utime 14, stime 15. */
        if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
                         &stime) != 2)
                return 0;
        return (double)(utime + stime) * 1e6 / (double)sysconf(_SC_CLK_TCK);
}

static int run_once(const struct options *o, enum mode mode, struct sample *ret)
{
        struct bench b = { .o = o, .mode = mode };
        pthread_t *threads = calloc(o->threads, sizeof(pthread_t));
        int r = 0;

        if (!threads)
                return -ENOMEM;
        b.devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (mode == MODE_HELPER) {
                struct exec_client_config cfg = { .helper_path = o->self };
                r = exec_client_new(&cfg, &b.client);
                if (r < 0) {
                        free(threads);
                        return r;
                }
        }
        pid_t helper = b.client ? exec_client_helper_pid(b.client) : 0;
        double helper0 = helper > 0 ? proc_cpu_us(helper) : 0;
        double self0 = rusage_us(RUSAGE_SELF), child0 = rusage_us(RUSAGE_CHILDREN);
        uint64_t t0 = now_usec(CLOCK_MONOTONIC);
        for (unsigned i = 0; i < o->threads; i++)
                pthread_create(&threads[i], NULL, worker, &b);
        for (unsigned i = 0; i < o->threads; i++)
                pthread_join(threads[i], NULL);
        uint64_t t1 = now_usec(CLOCK_MONOTONIC);
        double helper1 = helper > 0 ? proc_cpu_us(helper) : 0;
        exec_client_free(b.client); /* reaps the helper: its CPU joins RUSAGE_CHILDREN */
        double self1 = rusage_us(RUSAGE_SELF), child1 = rusage_us(RUSAGE_CHILDREN);
        safe_close(b.devnull);
        free(threads);
        if (atomic_load(&b.failed) > 0) {
                fprintf(stderr, "%s: %u of %u spawns failed\n", mode_names[mode],
                        atomic_load(&b.failed), o->spawns);
                return -EIO;
        }
        ret->wall_us = (double)(t1 - t0) / o->spawns;
        ret->self_cpu_us = (self1 - self0) / o->spawns;
        ret->child_cpu_us = (child1 - child0) / o->spawns;
        ret->helper_cpu_us = (helper1 - helper0) / o->spawns;
        return 0;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
        qsort(v, n, sizeof(double), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double rss_mib(void)
{
        FILE *f = fopen("/proc/self/status", "re");
        char line[256];
        double kib = 0;

        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, "VmRSS:", 6) == 0)
                        kib = atof(line + 6);
        fclose(f);
        return kib / 1024;
}

static void usage(void)
{
        printf("tools/bench-spawn [--spawns N] [--threads N] [--runs N] [--rss-mib N]\n"
               "                  [--program PATH] [--json FILE|-]\n");
}

static int parse_argv(int argc, char *argv[], struct options *o)
{
        static const struct option opts[] = {
                { "spawns", required_argument, NULL, 's' },
                { "threads", required_argument, NULL, 't' },
                { "runs", required_argument, NULL, 'r' },
                { "rss-mib", required_argument, NULL, 'm' },
                { "program", required_argument, NULL, 'p' },
                { "json", required_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "s:t:r:m:p:j:h", opts, NULL)) >= 0) {
                switch (c) {
                case 's': o->spawns = (unsigned)atoi(optarg); break;
                case 't': o->threads = (unsigned)atoi(optarg); break;
                case 'r': o->runs = (unsigned)atoi(optarg); break;
                case 'm': o->rss_mib = (unsigned)atoi(optarg); break;
                case 'p': o->program = optarg; break;
                case 'j': o->json = optarg; break;
                case 'h': usage(); return 0;
                default: return -EINVAL;
                }
        }
        if (o->spawns == 0 || o->threads == 0 || o->threads > 1024 || o->runs == 0 ||
            o->runs > RUNS_MAX || o->program[0] != '/') {
                usage();
                return -EINVAL;
        }
        return 1;
}

static void write_json(FILE *f, const struct options *o, double rss, double med[_MODE_MAX][4],
                       struct sample s[_MODE_MAX][RUNS_MAX])
{
        fprintf(f, "{\n  \"benchmark\": \"spawn\",\n  \"program\": \"%s\",\n  \"spawns\": %u,\n"
                   "  \"threads\": %u,\n  \"runs\": %u,\n  \"rss_mib\": %.1f,\n"
                   "  \"cpus\": %ld,\n  \"modes\": {\n",
                o->program, o->spawns, o->threads, o->runs, rss, sysconf(_SC_NPROCESSORS_ONLN));
        for (int m = 0; m < _MODE_MAX; m++) {
                fprintf(f, "    \"%s\": {\"wall_us_per_spawn\": %.1f, "
                           "\"cpu_us_per_spawn\": %.1f, \"process_cpu_us_per_spawn\": %.1f, "
                           "\"children_cpu_us_per_spawn\": %.1f, "
                           "\"helper_cpu_us_per_spawn\": %.1f, \"runs\": [",
                        mode_names[m], med[m][0], med[m][1] + med[m][2], med[m][1], med[m][2],
                        med[m][3]);
                for (unsigned r = 0; r < o->runs; r++)
                        fprintf(f, "%s{\"wall_us\": %.1f, \"process_cpu_us\": %.1f, "
                                   "\"children_cpu_us\": %.1f}", r ? ", " : "", s[m][r].wall_us,
                                s[m][r].self_cpu_us, s[m][r].child_cpu_us);
                fprintf(f, "]}%s\n", m + 1 < _MODE_MAX ? "," : "");
        }
        fprintf(f, "  }\n}\n");
}

int main(int argc, char *argv[])
{
        static struct sample samples[_MODE_MAX][RUNS_MAX];
        struct options o = {
                .spawns = 5000, .threads = 8, .runs = 5, .rss_mib = 50, .program = "/bin/true",
        };
        double med[_MODE_MAX][4], v[RUNS_MAX];
        int r;

        exec_helper_run_if_requested(argc, argv);
        r = parse_argv(argc, argv, &o);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        ssize_t n = readlink("/proc/self/exe", o.self, sizeof(o.self) - 1);
        if (n <= 0)
                return EXIT_FAILURE;
        o.self[n] = '\0';
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
                rl.rlim_cur = rl.rlim_max;
                (void)setrlimit(RLIMIT_NOFILE, &rl);
        }
        log_set_max_level(LOG_WARNING);

        /* Look like a busy udevd: this much memory, touched. */
        size_t bytes = (size_t)o.rss_mib * 1024 * 1024;
        char *ballast = malloc(bytes ?: 1);
        if (!ballast)
                return EXIT_FAILURE;
        for (size_t i = 0; i < bytes; i += 4096)
                ballast[i] = (char)i;
        double rss = rss_mib();

        fprintf(stderr, "bench-spawn: %u x %s from %u threads, process RSS %.1f MiB, %u runs\n",
                o.spawns, o.program, o.threads, rss, o.runs);
        for (unsigned run = 0; run < o.runs; run++) {
                for (int k = 0; k < _MODE_MAX; k++) {
                        enum mode m = (enum mode)((run + (unsigned)k) % _MODE_MAX);
                        r = run_once(&o, m, &samples[m][run]);
                        if (r < 0) {
                                fprintf(stderr, "%s: run %u failed: %s\n", mode_names[m], run,
                                        strerrorname_np(-r) ?: "?");
                                return EXIT_FAILURE;
                        }
                        fprintf(stderr, "  run %u %-12s wall %7.1f us  cpu %7.1f us/spawn\n", run,
                                mode_names[m], samples[m][run].wall_us,
                                samples[m][run].self_cpu_us + samples[m][run].child_cpu_us);
                }
        }
        for (int m = 0; m < _MODE_MAX; m++) {
                for (unsigned i = 0; i < o.runs; i++)
                        v[i] = samples[m][i].wall_us;
                med[m][0] = median(v, o.runs);
                for (unsigned i = 0; i < o.runs; i++)
                        v[i] = samples[m][i].self_cpu_us;
                med[m][1] = median(v, o.runs);
                for (unsigned i = 0; i < o.runs; i++)
                        v[i] = samples[m][i].child_cpu_us;
                med[m][2] = median(v, o.runs);
                for (unsigned i = 0; i < o.runs; i++)
                        v[i] = samples[m][i].helper_cpu_us;
                med[m][3] = median(v, o.runs);
        }

        printf("%u x %s from %u threads, process RSS %.1f MiB, %ld CPUs, median of %u runs\n\n",
               o.spawns, o.program, o.threads, rss, sysconf(_SC_NPROCESSORS_ONLN), o.runs);
        printf("| mode         | wall/spawn | CPU/spawn | of which process | of which children "
               "| (helper itself) |\n");
        printf("|--------------|-----------:|----------:|-----------------:|------------------:"
               "|----------------:|\n");
        for (int m = 0; m < _MODE_MAX; m++) {
                char helper[32] = "-";
                if (m == MODE_HELPER)
                        snprintf(helper, sizeof(helper), "%.0f us", med[m][3]);
                printf("| %-12s | %7.0f us | %6.0f us | %13.0f us | %14.0f us | %15s |\n",
                       mode_names[m], med[m][0], med[m][1] + med[m][2], med[m][1], med[m][2],
                       helper);
        }
        if (o.json) {
                FILE *f = streq(o.json, "-") ? stdout : fopen(o.json, "we");
                if (!f) {
                        fprintf(stderr, "cannot write %s\n", o.json);
                        return EXIT_FAILURE;
                }
                if (f == stdout)
                        printf("\n");
                write_json(f, &o, rss, med, samples);
                if (f != stdout)
                        fclose(f);
        }
        free(ballast);
        return EXIT_SUCCESS;
}
