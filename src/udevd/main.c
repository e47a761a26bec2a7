/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (runs before any other thread exists) */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/exec-client.h"
#include "exec/exec-helper.h"
#include "shared/compat.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "udevd/config.h"
#include "udevd/explain-ring.h"
#include "udevd/instance-lock.h"
#include "udevd/listen-fds.h"
#include "udevd/manager.h"
#include "udevd/notify.h"
#include "udevd/settings.h"

unsigned udevd_cpus(void)
{
        cpu_set_t set;

        if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
                return (unsigned)CPU_COUNT(&set);
        return 1;
}

unsigned udevd_default_children_max(void)
{
        long pages = sysconf(_SC_PHYS_PAGES), pagesize = sysconf(_SC_PAGESIZE);
        unsigned long long mem_limit;
        unsigned n = 8 + 2 * udevd_cpus();
        if (pages > 0 && pagesize > 0) {
                mem_limit = (unsigned long long)pages * (unsigned long long)pagesize /
                            (128ULL * 1024 * 1024);
                n = (unsigned)MIN((unsigned long long)n, MAX(mem_limit, 10ULL));
        }
        return MIN(n, (unsigned)UDEVD_CHILDREN_MAX_LIMIT);
}

/* Two runnable programs per CPU: the exec helper sees a program's state only
 * when it looks (a request, a program's end, every millisecond while it
 * holds one), so with one per CPU a CPU idles whenever its program blocks
 * briefly or is being replaced; a second one takes over at once. */
static unsigned udevd_default_program_limit(void)
{
        return MIN(2 * udevd_cpus(), (unsigned)EXEC_PROGRAM_LIMIT_MAX);
}

static void help(void)
{
        printf("udevd [OPTIONS...]\n\n"
               "Rule-based manager for device events and files (tudev).\n\n"
               "  -h --help                   Print this message\n"
               "  -V --version                Print version of the program\n"
               "  -d --daemon                 Detach and run in the background\n"
               "  -D --debug                  Enable debug output\n"
               "  -c --children-max=INT       Set maximum number of workers\n"
               "  -e --exec-delay=SECONDS     Seconds to wait before executing RUN=\n"
               "  -t --event-timeout=SECONDS  Seconds to wait before terminating an event\n"
               "  -N --resolve-names=early|late|never\n"
               "                              When to resolve users and groups\n"
               "     --timeout-signal=SIGNAL  Signal for timed-out programs\n"
               "     --program-limit=N        Programs running on the CPUs at once\n"
               "                              (default: twice the number of CPUs; 0: no limit)\n"
               "     --kernel-broadcast       Also send each processed event in the kernel's\n"
               "                              format to netlink groups 4 (libudev-zero)\n"
               "     --ready-fd=N             Write a newline to fd N once ready (s6 style)\n"
               "     --rules-dir=DIR          Read rules from DIR instead of the default\n"
               "                              search path (repeatable)\n"
               "     --explain-events=N       Keep the rules traces of the newest N events\n"
               "                              for udevadm explain (default 256; 0: off)\n"
               "     --queue-max-events=N     Events queued and running at most (default 1000)\n"
               "     --queue-max-bytes=SIZE   Bytes of queued and running events at most\n"
               "                              (K, M, G suffixes; default 8M)\n"
               "\nSee the udevd(8) man page for details.\n");
}

enum {
        ARG_TIMEOUT_SIGNAL = 0x100,
        ARG_DEBUG_EVENT_DELAY,
        ARG_DEBUG_EVENT_DELAY_MATCH,
        ARG_TEST_ACCEPT_USER_UEVENTS,
        ARG_RULES_DIR,
        ARG_READY_FD,
        ARG_DEBUG_NETLINK_RCVBUF,
        ARG_DEBUG_RESYNC_MATCH,
        ARG_PROGRAM_LIMIT,
        ARG_KERNEL_BROADCAST,
        ARG_EXPLAIN_EVENTS,
        ARG_QUEUE_MAX_EVENTS,
        ARG_QUEUE_MAX_BYTES,
};

#define DEBUG_RCVBUF_MAX (64 * 1024 * 1024)

/* Returns 1 to continue, 0 to exit successfully, <0 on error. */
static int parse_argv(int argc, char *argv[], struct udevd_settings *s,
                      struct manager_options *mo)
{
        static const struct option options[] = {
                { "daemon", no_argument, NULL, 'd' },
                { "debug", no_argument, NULL, 'D' },
                { "children-max", required_argument, NULL, 'c' },
                { "exec-delay", required_argument, NULL, 'e' },
                { "event-timeout", required_argument, NULL, 't' },
                { "resolve-names", required_argument, NULL, 'N' },
                { "timeout-signal", required_argument, NULL, ARG_TIMEOUT_SIGNAL },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { "debug-event-delay", required_argument, NULL, ARG_DEBUG_EVENT_DELAY },
                { "debug-event-delay-match", required_argument, NULL,
                  ARG_DEBUG_EVENT_DELAY_MATCH },
                { "test-accept-user-uevents", no_argument, NULL, ARG_TEST_ACCEPT_USER_UEVENTS },
                { "rules-dir", required_argument, NULL, ARG_RULES_DIR },
                { "program-limit", required_argument, NULL, ARG_PROGRAM_LIMIT },
                { "kernel-broadcast", no_argument, NULL, ARG_KERNEL_BROADCAST },
                { "ready-fd", required_argument, NULL, ARG_READY_FD },
                { "explain-events", required_argument, NULL, ARG_EXPLAIN_EVENTS },
                { "debug-netlink-rcvbuf", required_argument, NULL, ARG_DEBUG_NETLINK_RCVBUF },
                { "debug-resync-match", required_argument, NULL, ARG_DEBUG_RESYNC_MATCH },
                { "queue-max-events", required_argument, NULL, ARG_QUEUE_MAX_EVENTS },
                { "queue-max-bytes", required_argument, NULL, ARG_QUEUE_MAX_BYTES },
                {}
        };
        uint64_t usec;
        int c, r;

        while ((c = getopt_long(argc, argv, "c:de:Dt:N:hV", options, NULL)) >= 0) {
                switch (c) {
                case 'd':
                        s->daemonize = true;
                        break;
                case 'D':
                        s->debug = true;
                        break;
                case 'c': {
                        char *end;
                        unsigned long v = strtoul(optarg, &end, 10);
                        if (!*optarg || *end || v > UDEVD_CHILDREN_MAX_LIMIT)
                                log_warning("Invalid --children-max='%s', ignoring", optarg);
                        else
                                s->children_max = (unsigned)v;
                        break;
                }
                case ARG_KERNEL_BROADCAST:
                        s->kernel_broadcast = true;
                        break;
                case ARG_QUEUE_MAX_EVENTS:
                        if (queue_max_events_from_string(optarg, &s->queue_max_events) < 0)
                                log_warning("Invalid --queue-max-events='%s' (1..%u), ignoring",
                                            optarg, (unsigned)UDEVD_QUEUE_MAX_EVENTS_LIMIT);
                        break;
                case ARG_QUEUE_MAX_BYTES:
                        if (queue_max_bytes_from_string(optarg, &s->queue_max_bytes) < 0)
                                log_warning("Invalid --queue-max-bytes='%s' (16K..64G), ignoring",
                                            optarg);
                        break;
                case ARG_PROGRAM_LIMIT: {
                        char *end;
                        unsigned long v = strtoul(optarg, &end, 10);
                        if (!*optarg || *end || v > EXEC_PROGRAM_LIMIT_MAX)
                                log_warning("Invalid --program-limit='%s', ignoring", optarg);
                        else
                                s->program_limit = (int)v;
                        break;
                }
                case ARG_EXPLAIN_EVENTS: {
                        char *end;
                        unsigned long v = strtoul(optarg, &end, 10);
                        if (!*optarg || *optarg == '-' || *end || v > EXPLAIN_EVENTS_MAX)
                                log_warning("Invalid --explain-events='%s', ignoring", optarg);
                        else
                                s->explain_events = (unsigned)v;
                        break;
                }
                case 'e':
                        if (parse_timespan_usec(optarg, &usec) < 0)
                                log_warning("Invalid --exec-delay='%s', ignoring", optarg);
                        else
                                s->exec_delay_usec = usec;
                        break;
                case 't':
                        if (parse_timespan_usec(optarg, &usec) < 0 || usec == 0)
                                log_warning("Invalid --event-timeout='%s', ignoring", optarg);
                        else
                                s->event_timeout_usec = usec;
                        break;
                case 'N':
                        if (resolve_names_from_string(optarg, &s->resolve_names) < 0)
                                log_warning("Invalid --resolve-names='%s', ignoring", optarg);
                        break;
                case ARG_RULES_DIR: {
                        size_t n = 0;
                        while (s->rules_dirs[n])
                                n++;
                        if (n >= RULES_DIRS_MAX)
                                log_warning("Too many --rules-dir= options, ignoring '%s'", optarg);
                        else
                                s->rules_dirs[n] = optarg;
                        break;
                }
                case ARG_TIMEOUT_SIGNAL:
                        r = signal_from_string(optarg);
                        if (r < 0)
                                log_warning("Invalid --timeout-signal='%s', ignoring", optarg);
                        else
                                s->timeout_signal = r;
                        break;
                case ARG_DEBUG_EVENT_DELAY: {
                        char *end;
                        unsigned long ms = strtoul(optarg, &end, 10);
                        if (!*optarg || *end || ms > 3600000)
                                log_warning("Invalid --debug-event-delay='%s' (milliseconds), "
                                            "ignoring", optarg);
                        else
                                s->debug_event_delay_usec = ms * USEC_PER_MSEC;
                        break;
                }
                case ARG_DEBUG_EVENT_DELAY_MATCH:
                        s->debug_event_delay_match = optarg;
                        break;
                case ARG_DEBUG_NETLINK_RCVBUF: {
                        char *end;
                        unsigned long v = strtoul(optarg, &end, 10);
                        if (!*optarg || *end || v == 0 || v > DEBUG_RCVBUF_MAX)
                                log_warning("Invalid --debug-netlink-rcvbuf='%s' (bytes), "
                                            "ignoring", optarg);
                        else
                                mo->netlink_rcvbuf = (int)v;
                        break;
                }
                case ARG_DEBUG_RESYNC_MATCH:
                        mo->resync_match = *optarg ? optarg : NULL;
                        break;
                case ARG_READY_FD: {
                        char *end;
                        long fd = strtol(optarg, &end, 10);
                        if (!*optarg || *end || fd < 3 || fd > 1024 ||
                            fcntl((int)fd, F_GETFD) < 0) {
                                log_error("Invalid --ready-fd='%s': not an open descriptor >= 3",
                                          optarg);
                                return -EINVAL;
                        }
                        (void)fcntl((int)fd, F_SETFD, FD_CLOEXEC);
                        s->ready_fd = (int)fd;
                        break;
                }
                case ARG_TEST_ACCEPT_USER_UEVENTS:
                        s->accept_user_uevents = true;
                        break;
                case 'h':
                        help();
                        return 0;
                case 'V':
                        printf("%s\n", VERSION);
                        return 0;
                default:
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                log_error("Extraneous argument: %s", argv[optind]);
                return -EINVAL;
        }
        return 1;
}

/* Fork; the parent waits on a pipe until the child reports readiness (one
 * byte) or dies, and exits accordingly. Returns the write end in the child. */
static int daemonize(int *ret_ready_fd)
{
        int pfd[2];
        pid_t pid;

        if (pipe2(pfd, O_CLOEXEC) < 0)
                return log_error_errno(errno, "Failed to create pipe: %m");
        pid = fork();
        if (pid < 0)
                return log_error_errno(errno, "Failed to fork daemon: %m");
        if (pid > 0) {
                char b = 0;
                safe_close(pfd[1]);
                ssize_t n;
                do
                        n = read(pfd[0], &b, 1);
                while (n < 0 && errno == EINTR);
                _exit(n == 1 && b == 'R' ? EXIT_SUCCESS : EXIT_FAILURE);
        }
        safe_close(pfd[0]);
        if (setsid() < 0)
                log_warning_errno(errno, "setsid() failed: %m");
        *ret_ready_fd = pfd[1];
        return 0;
}

static void redirect_stdio_to_null(void)
{
        int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (fd < 0)
                return;
        for (int i = 0; i < 3; i++)
                if (fd != i)
                        dup2(fd, i); /* dup2 clears O_CLOEXEC on the copies */
        if (fd > 2)
                safe_close(fd);
}

int main(int argc, char *argv[])
{
        struct udevd_settings settings = {
                .event_timeout_usec = 180 * USEC_PER_SEC,
                .timeout_signal = SIGTERM,
                .run_dir = UDEVD_RUN_DIR,
                .program_limit = -1,
                .ready_fd = -1,
                .explain_events = EXPLAIN_EVENTS_DEFAULT,
                .queue_max_events = UDEVD_QUEUE_CAPACITY,
                .queue_max_bytes = UDEVD_QUEUE_MAX_BYTES,
        };
        struct manager *m = NULL;
        struct manager_options mopts = {};
        int ready_fd = -1;
        int lock_fd;
        char control_path[256];
        sigset_t all;
        int r;

        exec_helper_run_if_requested(argc, argv); /* hidden --exec-helper=FD: never returns */
        /* Worker threads allocate and free per event; with one malloc arena
         * per thread (glibc's default, up to 8 per CPU) each arena keeps its
         * own high-water mark. Two arenas (thread caches stay per thread)
         * keep a storm's peak memory down. MALLOC_ARENA_MAX in the
         * environment still wins. */
        if (!getenv("MALLOC_ARENA_MAX"))
                malloc_limit_arenas(2);
        log_set_target(LOG_TARGET_CONSOLE, "udevd");
        /* As systemd-udevd: the environment may choose level and target. Read
         * once here, before any thread exists. */
        /* Precedence (udevd(8) CONFIGURATION): defaults < udev.conf <
         * $SYSTEMD_LOG_LEVEL (log level only) < options < kernel command line. */
        struct udevd_config conf = { 0 }, kernel_conf = { 0 };
        udev_conf_load(&conf);
        udevd_config_apply(&conf, &settings);
        const char *env_level = getenv("SYSTEMD_LOG_LEVEL");
        const char *env_target = getenv("SYSTEMD_LOG_TARGET");
        if (env_level && log_level_from_string(env_level) >= 0)
                log_set_max_level(log_level_from_string(env_level));
        r = parse_argv(argc, argv, &settings, &mopts);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        proc_cmdline_load(&kernel_conf);
        udevd_config_apply(&kernel_conf, &settings);
        enum log_target target = LOG_TARGET_AUTO;
        if (env_target) {
                if (streq(env_target, "console"))
                        target = LOG_TARGET_CONSOLE;
                else if (streq(env_target, "kmsg"))
                        target = LOG_TARGET_KMSG;
                else if (streq(env_target, "syslog") || streq(env_target, "journal"))
                        target = LOG_TARGET_SYSLOG;
        }
        if (settings.debug)
                log_set_max_level(LOG_DEBUG);
        else if (!settings.daemonize)
                log_set_target(target, "udevd");
        if (getuid() != 0) {
                log_error("udevd must run as root");
                return EXIT_FAILURE;
        }
        /* One daemon at a time, decided before anything touches the run
         * directory; held until the end (udevd/instance-lock.h). Taken before
         * --daemon's fork so that a refusal reaches the caller's terminal. */
        snprintf(control_path, sizeof(control_path), "%s/control", settings.run_dir);
        /* Socket activation: the control and uevent sockets systemd's socket
         * units passed, if any (udevd/listen-fds.h); the environment is
         * cleaned before any child exists. */
        struct listen_fds passed;
        (void)listen_fds_take(control_path, &passed);
        mopts.control_fd = passed.control_fd >= 0 ? passed.control_fd : 0;
        mopts.uevent_fd = passed.uevent_fd >= 0 ? passed.uevent_fd : 0;
        lock_fd = instance_lock_take(settings.run_dir,
                                     passed.control_fd >= 0 ? NULL : control_path);
        if (lock_fd < 0)
                return EXIT_FAILURE;
        fileio_set_umask(022);
        node_mac_detect("/sys", &settings.mac);
        log_debug("Security labels: SELinux %s, SMACK %s",
                  settings.mac.selinux ? "enabled" : "not enabled",
                  settings.mac.smack ? "enabled" : "not enabled");
        /* Each running program holds pipe ends in the daemon: raise the fd limit
         * to the hard limit, as systemd-udevd does. */
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        log_debug_errno(errno, "Failed to raise RLIMIT_NOFILE: %m");
        }

        /* Every thread inherits this mask; the manager reads signals via signalfd. */
        sigfillset(&all);
        sigdelset(&all, SIGSEGV);
        sigdelset(&all, SIGBUS);
        sigdelset(&all, SIGFPE);
        sigdelset(&all, SIGILL);
        sigdelset(&all, SIGABRT);
        sigprocmask(SIG_SETMASK, &all, NULL);
        signal(SIGPIPE, SIG_IGN);

        if (settings.daemonize) {
                r = daemonize(&ready_fd);
                if (r < 0)
                        return EXIT_FAILURE;
                (void)instance_lock_set_pid(lock_fd, getpid());
                if (!settings.debug) {
                        redirect_stdio_to_null();
                        log_set_target(target == LOG_TARGET_CONSOLE ? LOG_TARGET_AUTO : target,
                                       "udevd");
                }
        }

        /* Before any thread exists (exec/exec-client.h). */
        struct exec_client_config exec_cfg = {
                .timeout_signal = settings.timeout_signal,
                .timeout_usec = settings.event_timeout_usec,
                .exec_delay_usec = settings.exec_delay_usec,
                .helper_log_level = log_get_max_level(),
                .program_limit = settings.program_limit >= 0 ? (unsigned)settings.program_limit
                                                             : udevd_default_program_limit(),
        };
        r = exec_client_new(&exec_cfg, &settings.exec);
        if (r < 0) {
                log_error_errno(r, "Failed to start the exec helper: %m");
                return EXIT_FAILURE;
        }
        r = manager_new(&settings, &mopts, &m);
        if (r < 0) {
                log_error_errno(r, "Failed to initialize: %m");
                exec_client_free(settings.exec);
                return EXIT_FAILURE;
        }
        r = manager_start(m);
        if (r < 0) {
                manager_free(m);
                exec_client_free(settings.exec);
                return EXIT_FAILURE;
        }
        if (ready_fd >= 0) {
                ssize_t _unused_ w = write(ready_fd, "R", 1);
                ready_fd = safe_close(ready_fd);
        }
        struct notifier notifier;
        char status[64];
        notifier_init(&notifier, settings.ready_fd);
        snprintf(status, sizeof(status), "Processing with %u children at max",
                 settings.children_max ?: udevd_default_children_max());
        notifier_ready(&notifier, status);
        r = manager_run(m);
        (void)notifier_send(&notifier, "STOPPING=1");
        if (r == -ETIMEDOUT) {
                lock_fd = instance_lock_release(lock_fd);
                _exit(EXIT_SUCCESS); /* workers stuck in abandoned events: do not join */
        }
        manager_free(m);
        exec_client_free(settings.exec);
        /* Last: nothing of ours touches the run directory any more. The
         * control connections close when the process is gone, after this. */
        lock_fd = instance_lock_release(lock_fd);
        return r == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
