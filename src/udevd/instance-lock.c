/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (main(), before any thread exists) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "udevd/instance-lock.h"

#define PID_TEXT_MAX 32

enum ctrl_probe ctrl_probe_from_errno(int err)
{
        switch (err) {
        case 0:
        case EAGAIN:
        case EINPROGRESS:
                return CTRL_PROBE_ANSWERS;
        case ENOENT:
        case ECONNREFUSED:
                return CTRL_PROBE_NOBODY;
        default:
                return CTRL_PROBE_UNKNOWN;
        }
}

int instance_lock_parse_pid(const char *text, size_t len, pid_t *ret)
{
        long long v = 0;
        size_t i = 0;

        if (len > 0 && text[len - 1] == '\n')
                len--;
        if (len == 0)
                return -EINVAL;
        for (; i < len; i++) {
                if (text[i] < '0' || text[i] > '9')
                        return -EINVAL;
                v = v * 10 + (text[i] - '0');
                if (v > INT_MAX)
                        return -EINVAL;
        }
        if (v <= 0)
                return -EINVAL;
        *ret = (pid_t)v;
        return 0;
}

int instance_lock_format_refusal(char *buf, size_t size, pid_t pid, bool answers,
                                 const char *control_path, const char *lock_path)
{
        char who[PID_TEXT_MAX] = "";

        if (pid > 0)
                snprintf(who, sizeof(who), "PID %d, ", (int)pid);
        if (answers)
                return snprintf(buf, size,
                                "another udev daemon is running (%s%s answers); not starting",
                                who, control_path);
        return snprintf(buf, size, "another udev daemon is running (%sholds %s); not starting",
                        who, lock_path);
}

/* Try the control socket. *ret_pid: the listener's PID (SO_PEERCRED) when
 * it answered and the kernel says, else 0. */
static enum ctrl_probe probe_control(const char *path, pid_t *ret_pid)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        struct ucred cred = {};
        socklen_t len = sizeof(cred);
        enum ctrl_probe p;
        int err = 0;

        *ret_pid = 0;
        if (strlen(path) >= sizeof(sa.sun_path))
                return CTRL_PROBE_UNKNOWN;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return CTRL_PROBE_UNKNOWN;
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                err = errno;
        p = ctrl_probe_from_errno(err);
        if (p == CTRL_PROBE_UNKNOWN)
                log_debug_errno(err, "Cannot tell whether a daemon serves %s: %m", path);
        if (err == 0 && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
            len == sizeof(cred))
                *ret_pid = cred.pid;
        return p;
}

static pid_t read_lock_pid(int fd)
{
        char buf[PID_TEXT_MAX];
        ssize_t n;
        pid_t pid;

        n = pread(fd, buf, sizeof(buf), 0);
        if (n <= 0 || instance_lock_parse_pid(buf, (size_t)n, &pid) < 0)
                return 0;
        return pid;
}

int instance_lock_set_pid(int fd, pid_t pid)
{
        char buf[PID_TEXT_MAX];
        int n = snprintf(buf, sizeof(buf), "%d\n", (int)pid);

        if (ftruncate(fd, 0) < 0)
                return negative_errno();
        if (pwrite(fd, buf, (size_t)n, 0) != n)
                return errno > 0 ? -errno : -EIO;
        return 0;
}

static int refuse(pid_t pid, bool answers, const char *control_path, const char *lock_path)
{
        char msg[512];

        instance_lock_format_refusal(msg, sizeof(msg), pid, answers, control_path, lock_path);
        log_error("%s", msg);
        return -EBUSY;
}

int instance_lock_take(const char *run_dir, const char *control_path)
{
        char lock_path[PATH_MAX];
        _cleanup_close_ int fd = -1;
        pid_t peer = 0;
        enum ctrl_probe p;
        int r;

        if (snprintf(lock_path, sizeof(lock_path), "%s/%s", run_dir, INSTANCE_LOCK_NAME) >=
            (int)sizeof(lock_path))
                return log_error_errno(-ENAMETOOLONG, "Lock file name too long: %m");
        r = mkdir_p(run_dir, 0755);
        if (r < 0)
                return log_error_errno(r, "Failed to create %s: %m", run_dir);
        fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
        if (fd < 0)
                return log_error_errno(errno, "Failed to open %s: %m", lock_path);
        while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                if (errno == EINTR)
                        continue;
                if (errno != EWOULDBLOCK)
                        return log_error_errno(errno, "Failed to lock %s: %m", lock_path);
                /* A tudev udevd holds it; say whether its socket answers already. */
                p = control_path ? probe_control(control_path, &peer) : CTRL_PROBE_UNKNOWN;
                pid_t pid = read_lock_pid(fd);
                return refuse(pid > 0 ? pid : peer, p == CTRL_PROBE_ANSWERS, control_path,
                              lock_path);
        }
        /* NULL: the service manager passed the control socket; it answers,
         * and it is ours. */
        p = control_path ? probe_control(control_path, &peer) : CTRL_PROBE_NOBODY;
        if (p == CTRL_PROBE_ANSWERS)
                return refuse(peer, true, control_path, lock_path);
        r = instance_lock_set_pid(fd, getpid());
        if (r < 0)
                log_warning_errno(r, "Failed to write our PID into %s: %m", lock_path);
        return TAKE_FD(fd);
}

int instance_lock_release(int fd)
{
        if (fd >= 0)
                (void)flock(fd, LOCK_UN);
        return safe_close(fd);
}
