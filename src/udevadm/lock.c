/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded; SIGALRM while waiting for a lock) */
/* udevadm lock: hold BSD locks on whole block devices while a command runs
 * (udevadm(8), "UDEVADM LOCK"; the behaviour of systemd 252's udevadm lock;
 * the protocol is systemd.io/BLOCK_DEVICE_LOCKING, which udevd honours, see
 * lock_whole_disk() in ../udevd/event-process.c).
 *
 *   udevadm lock [-d DEVICE]... [-b PATH]... [-t SEC] COMMAND [ARGS...]
 *   udevadm lock [-d DEVICE]... [-b PATH]... --print
 *
 * Each --device must be a block device node; --backing may also be a regular
 * file or directory, which stands for the block device its file system is on
 * (btrfs: its only device). A partition stands for its whole disk. The whole
 * disks are deduplicated and sorted by major, then minor number, the order in
 * which they are locked (flock(LOCK_EX) on the node), so that two lockers
 * never deadlock. Then COMMAND runs with the locks held by this process (the
 * command gets no descriptor but 0, 1 and 2) and its exit status becomes ours;
 * a command killed by a signal gives status 1.
 *
 * --timeout bounds the wait for all locks together: 0 tries once ("Device
 * '...' is currently locked.", status 1), "infinity" (the default) waits for
 * ever. flock() has no timeout: a bounded wait is interrupted by SIGALRM,
 * which keeps firing every 10 ms after the deadline so that a signal that
 * came just before flock() began to wait cannot leave it waiting (systemd
 * waits in a child process instead). */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/btrfs.h>
#include <linux/magic.h>

#include "shared/compat.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "udevadm/udevadm.h"
#include "udevadm/udevice.h"

#define LOCK_PATH_LIST_MAX 4096 /* --device/--backing arguments */
#define LOCK_SPAN_MAX 128
#define LOCK_ALARM_INTERVAL_USEC (10 * USEC_PER_MSEC)

struct devnum {
        unsigned major, minor;
};

struct lock_args {
        uint64_t timeout_usec;
        bool print;
        char **devices, **backing;     /* owned arrays of owned absolute paths */
        size_t n_devices, n_backing;
        char **cmdline;                /* borrowed from argv, NULL-terminated */
};

static void strv_free_n(char **l, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(l[i]);
        free(l);
}

static void lock_args_done(struct lock_args *a)
{
        strv_free_n(a->devices, a->n_devices);
        strv_free_n(a->backing, a->n_backing);
}

static int help(void)
{
        printf("%s lock [OPTIONS...] COMMAND [ARGS...]\n"
               "%s lock [OPTIONS...] --print\n\n"
               "Run a command while holding locks on whole block devices.\n\n"
               "  -h --help            This text\n"
               "  -V --version         Print the version\n"
               "  -d --device=DEVICE   A block device whose whole disk to lock\n"
               "  -b --backing=PATH    Also a file or directory: the disk of its file system\n"
               "  -t --timeout=SEC     Give up waiting for the locks after SEC seconds\n"
               "                       (default: infinity)\n"
               "  -p --print           Only print the devices that would be locked\n",
               program_invocation_short_name, program_invocation_short_name);
        return 0;
}

static int add_path(char ***l, size_t *n, const char *arg)
{
        char **m, *p;
        int r;

        if (*n >= LOCK_PATH_LIST_MAX)
                return log_error_errno(-E2BIG, "Too many devices specified.");
        r = udevadm_path_absolute(arg, &p);
        if (r == -ENOMEM)
                return log_error_errno(r, "Out of memory.");
        if (r < 0)
                return log_error_errno(r, "Failed to make path '%s' absolute: %m", arg);
        m = realloc(*l, (*n + 1) * sizeof(*m));
        if (!m) {
                free(p);
                return log_error_errno(-ENOMEM, "Out of memory.");
        }
        *l = m;
        m[(*n)++] = p;
        return 0;
}

/* 1: go on, 0: done (help/version), <0: error. */
static int parse_argv(int argc, char *argv[], struct lock_args *a)
{
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { "device", required_argument, NULL, 'd' },
                { "backing", required_argument, NULL, 'b' },
                { "timeout", required_argument, NULL, 't' },
                { "print", no_argument, NULL, 'p' },
                {}
        };
        int c, r;

        /* '+': the options end at the command, whose own options are its own. */
        while ((c = getopt_long(argc, argv, "+hVd:b:t:p", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        return help();
                case 'V':
                        return udevadm_print_version();
                case 'd':
                        if ((r = add_path(&a->devices, &a->n_devices, optarg)) < 0)
                                return r;
                        break;
                case 'b':
                        if ((r = add_path(&a->backing, &a->n_backing, optarg)) < 0)
                                return r;
                        break;
                case 't':
                        r = udevadm_parse_sec(optarg, &a->timeout_usec);
                        if (r < 0)
                                return log_error_errno(r, "Failed to parse --timeout= parameter: %s",
                                                       optarg);
                        break;
                case 'p':
                        a->print = true;
                        break;
                default:
                        return -EINVAL;
                }
        }
        if (a->print) {
                if (optind != argc)
                        return log_error_errno(-EINVAL, "No arguments expected");
        } else {
                if (optind >= argc)
                        return log_error_errno(-EINVAL, "Too few arguments, command to execute.");
                a->cmdline = argv + optind;
        }
        if (a->n_devices == 0 && a->n_backing == 0)
                return log_error_errno(-EINVAL, "No devices to lock specified, refusing.");
        return 1;
}

/* ---------------------------------------------------------------- which devices */

/* The one block device of the btrfs file system `fd` (an O_PATH descriptor of
 * a regular file or directory) is on. -ENOTTY: not btrfs; -ENODEV: several
 * devices or none; -EUCLEAN: the kernel names it "/dev/root" (root file
 * system mounted without an initrd), which says nothing. */
static int btrfs_backing_device(int fd, dev_t *ret)
{
        struct btrfs_ioctl_fs_info_args fsi = {};
        _cleanup_close_ int rfd = -1;
        char proc[64];
        struct statfs sfs;

        if (fstatfs(fd, &sfs) < 0)
                return negative_errno();
        if (sfs.f_type != BTRFS_SUPER_MAGIC)
                return -ENOTTY;
        /* ioctl() needs a real descriptor; reopening through /proc keeps
         * looking at the same inode. */
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        rfd = open(proc, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (rfd < 0)
                return negative_errno();
        if (ioctl(rfd, BTRFS_IOC_FS_INFO, &fsi) < 0)
                return negative_errno();
        if (fsi.num_devices != 1)
                return -ENODEV;
        for (uint64_t id = 1; id <= fsi.max_id; id++) {
                struct btrfs_ioctl_dev_info_args di = { .devid = id };
                struct stat st;

                if (ioctl(rfd, BTRFS_IOC_DEV_INFO, &di) < 0) {
                        if (errno == ENODEV)
                                continue;
                        return negative_errno();
                }
                di.path[sizeof(di.path) - 1] = '\0';
                if (streq((const char *)di.path, "/dev/root"))
                        return -EUCLEAN;
                if (stat((const char *)di.path, &st) < 0)
                        return negative_errno();
                if (!S_ISBLK(st.st_mode))
                        return -ENOTBLK;
                if (major(st.st_rdev) == 0)
                        return -ENODEV;
                *ret = st.st_rdev;
                return 0;
        }
        return -ENODEV;
}

/* The whole disk of block device major:minor: itself, or for a partition its
 * parent disk. */
static int whole_disk(unsigned major, unsigned minor, struct devnum *ret)
{
        _cleanup_(udevice_freep) struct udevice *d = NULL;
        struct udevice *disk;
        const char *devtype, *subsystem;
        int r;

        if (major == 0)
                return -ENODEV;
        r = udevice_new_from_devnum('b', major, minor, &d);
        if (r < 0)
                return r;
        disk = d;
        r = udevice_get_devtype(d, &devtype);
        if (r < 0 && r != -ENOENT)
                return r;
        if (r >= 0 && streq(devtype, "partition")) {
                r = udevice_get_parent(d, &disk);
                if (r == -ENOENT)
                        return -ENODEV; /* removed meanwhile */
                if (r < 0)
                        return r;
                if (udevice_get_subsystem(disk, &subsystem) < 0 || !streq(subsystem, "block") ||
                    udevice_get_devtype(disk, &devtype) < 0 || !streq(devtype, "disk"))
                        return -ENXIO;
        }
        r = udevice_get_devnum(disk, &ret->major, &ret->minor);
        return r == -ENOENT ? -ENODEV : r;
}

/* The whole disk `path` stands for (a block device node; with `backing`
 * also a regular file or directory: the disk of its file system). */
static int path_whole_disk(const char *path, bool backing, struct devnum *ret)
{
        _cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC); /* opens no device */
        struct stat st;
        dev_t devt;
        int r;

        if (fd < 0 || fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISBLK(st.st_mode))
                devt = st.st_rdev;
        else if (!backing || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)))
                return -ENOTBLK;
        else if (major(st.st_dev) != 0)
                devt = st.st_dev;
        else {
                r = btrfs_backing_device(fd, &devt);
                if (r == -ENOTTY)
                        return -ENOTBLK; /* tmpfs, overlayfs, NFS, ...: no block device */
                if (r < 0)
                        return r;
        }
        return whole_disk(major(devt), minor(devt), ret);
}

static int devnum_compare(const struct devnum *a, const struct devnum *b)
{
        if (a->major != b->major)
                return a->major < b->major ? -1 : 1;
        if (a->minor != b->minor)
                return a->minor < b->minor ? -1 : 1;
        return 0;
}

/* Insert into the sorted set `l` (room for one more). */
static void devnum_set_add(struct devnum *l, size_t *n, struct devnum d)
{
        size_t i = 0;

        while (i < *n && devnum_compare(&l[i], &d) < 0)
                i++;
        if (i < *n && devnum_compare(&l[i], &d) == 0) {
                log_debug("Device %u:%u already listed for locking, ignoring.", d.major, d.minor);
                return;
        }
        memmove(l + i + 1, l + i, (*n - i) * sizeof(*l));
        l[i] = d;
        (*n)++;
}

static int collect(const struct lock_args *a, struct devnum **ret, size_t *ret_n)
{
        _cleanup_free_ struct devnum *l = calloc(a->n_devices + a->n_backing, sizeof(*l));
        size_t n = 0;

        if (!l)
                return log_error_errno(-ENOMEM, "Out of memory.");
        for (size_t i = 0; i < a->n_devices + a->n_backing; i++) {
                bool backing = i >= a->n_devices;
                const char *p = backing ? a->backing[i - a->n_devices] : a->devices[i];
                struct devnum d;
                int r = path_whole_disk(p, backing, &d);

                if (r < 0)
                        return log_error_errno(r, "Failed to find whole block device for '%s': %m",
                                               p);
                devnum_set_add(l, &n, d);
        }
        *ret = TAKE_PTR(l);
        *ret_n = n;
        return 0;
}

/* The node of a block device: where /dev/block/M:m leads (as systemd), or,
 * without that link (no udev has run), /dev/ plus the kernel's DEVNAME. */
static int devnode(const struct devnum *d, char **ret)
{
        _cleanup_(udevice_freep) struct udevice *u = NULL;
        char link[64];
        const char *name;
        char *p;
        int r;

        snprintf(link, sizeof(link), "/dev/block/%u:%u", d->major, d->minor);
        p = realpath(link, NULL);
        if (p) {
                *ret = p;
                return 0;
        }
        if (errno != ENOENT)
                return negative_errno();
        r = udevice_new_from_devnum('b', d->major, d->minor, &u);
        if (r >= 0)
                r = udevice_get_devname(u, &name);
        if (r < 0)
                return r == -ENODEV ? -ENOENT : r;
        p = strdup(name);
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

/* ---------------------------------------------------------------- locking */

/* "1.5s", "2min 0.25s", "1h 0min 3s". */
static const char *format_span(char buf[static LOCK_SPAN_MAX], uint64_t usec)
{
        uint64_t s = usec / USEC_PER_SEC, frac = usec % USEC_PER_SEC;
        char secs[32];
        int n = snprintf(secs, sizeof(secs), "%llu", (unsigned long long)(s % 60));

        if (frac > 0) {
                n += snprintf(secs + n, sizeof(secs) - (size_t)n, ".%06llu",
                              (unsigned long long)frac);
                while (secs[n - 1] == '0')
                        secs[--n] = '\0';
        }
        if (s >= 3600)
                snprintf(buf, LOCK_SPAN_MAX, "%lluh %llumin %ss", (unsigned long long)(s / 3600),
                         (unsigned long long)(s / 60 % 60), secs);
        else if (s >= 60)
                snprintf(buf, LOCK_SPAN_MAX, "%llumin %ss", (unsigned long long)(s / 60), secs);
        else
                snprintf(buf, LOCK_SPAN_MAX, "%ss", secs);
        return buf;
}

static void on_alarm(int sig)
{
        (void)sig; /* only there to interrupt flock() */
}

/* Wait for the lock until `deadline` (CLOCK_MONOTONIC): flock() is
 * interrupted by SIGALRM at the deadline, and again every
 * LOCK_ALARM_INTERVAL_USEC after it, in case the first one came just before
 * the call began to wait. */
static int flock_until(int fd, const char *path, uint64_t deadline)
{
        struct sigaction sa = { .sa_handler = on_alarm }, saved_sa; /* no SA_RESTART */
        struct itimerval off = {}, it = {
                .it_interval = { .tv_usec = (suseconds_t)LOCK_ALARM_INTERVAL_USEC },
        };
        char span[LOCK_SPAN_MAX];
        sigset_t alrm, saved_mask;
        int r;

        log_info("Device '%s' is currently locked, waiting %s...", path,
                 format_span(span, deadline - MIN(deadline, now_usec(CLOCK_MONOTONIC))));
        sigemptyset(&sa.sa_mask);
        sigemptyset(&alrm);
        sigaddset(&alrm, SIGALRM);
        if (sigaction(SIGALRM, &sa, &saved_sa) < 0)
                return log_error_errno(errno, "Failed to set up SIGALRM handler: %m");
        (void)sigprocmask(SIG_UNBLOCK, &alrm, &saved_mask);
        for (;;) {
                uint64_t now = now_usec(CLOCK_MONOTONIC), left;

                if (now >= deadline) {
                        r = log_error_errno(-ETIMEDOUT, "Timeout reached.");
                        break;
                }
                left = deadline - now;
                it.it_value.tv_sec = (time_t)(left / USEC_PER_SEC);
                it.it_value.tv_usec = (suseconds_t)(left % USEC_PER_SEC);
                if (setitimer(ITIMER_REAL, &it, NULL) < 0) {
                        r = log_error_errno(errno, "Failed to set up timer: %m");
                        break;
                }
                if (flock(fd, LOCK_EX) >= 0) {
                        r = 0;
                        break;
                }
                if (errno != EINTR) {
                        r = log_error_errno(errno, "Failed to lock device '%s': %m", path);
                        break;
                }
        }
        (void)setitimer(ITIMER_REAL, &off, NULL);
        (void)sigprocmask(SIG_SETMASK, &saved_mask, NULL);
        (void)sigaction(SIGALRM, &saved_sa, NULL);
        return r;
}

/* Open and lock the node of `d`; returns the descriptor holding the lock. */
static int lock_device(const char *path, const struct devnum *d, uint64_t deadline)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        struct stat st;
        int r;

        if (fd < 0)
                return log_error_errno(errno, "Failed to open '%s': %m", path);
        if (fstat(fd, &st) < 0)
                return log_error_errno(errno, "Failed to stat '%s': %m", path);
        /* The node may have been replaced since it was looked up. */
        if (!S_ISBLK(st.st_mode) || st.st_rdev != makedev(d->major, d->minor))
                return log_error_errno(-ENXIO, "Path '%s' no longer refers to specified block "
                                               "device %u:%u: %m", path, d->major, d->minor);
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno != EWOULDBLOCK)
                        return log_error_errno(errno, "Failed to lock device '%s': %m", path);
                if (deadline == 0)
                        return log_error_errno(-EBUSY, "Device '%s' is currently locked.", path);
                if (deadline == USEC_INFINITY) {
                        log_info("Device '%s' is currently locked, waiting...", path);
                        while (flock(fd, LOCK_EX) < 0)
                                if (errno != EINTR)
                                        return log_error_errno(errno,
                                                               "Failed to lock device '%s': %m",
                                                               path);
                } else if ((r = flock_until(fd, path, deadline)) < 0)
                        return r;
        }
        log_debug("Successfully locked %s (%u:%u)...", path, d->major, d->minor);
        return TAKE_FD(fd);
}

/* ---------------------------------------------------------------- the command */

/* Close every descriptor from `lowfd` on (in the child, before exec). */
static void close_fds_from(int lowfd)
{
        DIR *dir;
        struct dirent *de;

#ifdef SYS_close_range
        if (syscall(SYS_close_range, (unsigned)lowfd, ~0U, 0) == 0)
                return;
#endif
        dir = opendir("/proc/self/fd");
        if (!dir) {
                long max = sysconf(_SC_OPEN_MAX);

                for (long fd = lowfd; fd < (max > 0 ? max : 65536); fd++)
                        close((int)fd);
                return;
        }
        while ((de = readdir(dir))) {
                char *end;
                long fd = strtol(de->d_name, &end, 10);

                if (*end == '\0' && end != de->d_name && fd >= lowfd && fd != dirfd(dir))
                        close((int)fd);
        }
        closedir(dir);
}

/* In the child: the state a command expects to start with. */
static void child_reset(pid_t parent)
{
        struct sigaction sa = { .sa_handler = SIG_DFL };
        struct rlimit rl;
        sigset_t none;

        for (int sig = 1; sig < NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void)sigaction(sig, &sa, NULL);
        sigemptyset(&none);
        (void)sigprocmask(SIG_SETMASK, &none, NULL);
        /* The command goes when we go (and we hold the locks for it). */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
                _exit(EXIT_FAILURE);
        close_fds_from(3);
        /* Programs that still use select() cannot cope with more. */
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > FD_SETSIZE) {
                rl.rlim_cur = FD_SETSIZE;
                (void)setrlimit(RLIMIT_NOFILE, &rl);
        }
}

/* Run the command and return its exit status (>= 0), or -errno. */
static int run_command(char **cmdline)
{
        pid_t parent = getpid(), pid;
        int status;

        /* ^C is for the command; we go when it does. */
        (void)signal(SIGINT, SIG_IGN);
        fflush(stdout);
        fflush(stderr);
        pid = fork();
        if (pid < 0)
                return log_error_errno(errno, "Failed to fork off '(lock)': %m");
        if (pid == 0) {
                child_reset(parent);
                execvp(cmdline[0], cmdline);
                log_error_errno(errno, "Failed to execute %s: %m", cmdline[0]);
                _exit(EXIT_FAILURE);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return log_error_errno(errno, "Failed to wait for %s: %m", cmdline[0]);
        if (WIFEXITED(status)) {
                if (WEXITSTATUS(status) == 0)
                        log_debug("%s succeeded.", cmdline[0]);
                else
                        log_debug("%s failed with exit status %i.", cmdline[0],
                                  WEXITSTATUS(status));
                return WEXITSTATUS(status);
        }
        if (WIFSIGNALED(status)) {
                const char *name = signal_abbrev(WTERMSIG(status));

                log_debug("%s terminated by signal %s%s.", cmdline[0], name ? "SIG" : "",
                          name ? name : "(unknown)");
        }
        return -EPROTO;
}

int lock_main(int argc, char *argv[])
{
        struct lock_args a = { .timeout_usec = USEC_INFINITY };
        _cleanup_free_ struct devnum *devs = NULL;
        _cleanup_free_ int *fds = NULL;
        size_t n_devs = 0, n_fds = 0;
        uint64_t deadline;
        int r;

        /* Children are waited for: an inherited SIG_IGN would reap them. */
        (void)signal(SIGCHLD, SIG_DFL);
        r = parse_argv(argc, argv, &a);
        if (r <= 0)
                goto out;
        r = collect(&a, &devs, &n_devs);
        if (r < 0)
                goto out;
        fds = calloc(n_devs, sizeof(*fds));
        if (!fds) {
                r = log_error_errno(-ENOMEM, "Out of memory.");
                goto out;
        }
        if (a.timeout_usec == 0 || a.timeout_usec == USEC_INFINITY)
                deadline = a.timeout_usec;
        else
                deadline = now_usec(CLOCK_MONOTONIC) + MIN(a.timeout_usec, USEC_INFINITY / 2);

        for (size_t i = 0; i < n_devs; i++) {
                _cleanup_free_ char *node = NULL;

                r = devnode(&devs[i], &node);
                if (r < 0) {
                        log_error_errno(r, "Failed to format block device path: %m");
                        goto out;
                }
                if (a.print) {
                        printf("%s\n", node);
                        continue;
                }
                r = lock_device(node, &devs[i], deadline);
                if (r < 0)
                        goto out;
                fds[n_fds++] = r;
        }
        r = a.print ? 0 : run_command(a.cmdline);
out:
        for (size_t i = 0; i < n_fds; i++)
                safe_close(fds[i]);
        lock_args_done(&a);
        return r;
}
