/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "udevadm/udevadm.h"

int udevadm_print_version(void)
{
        printf("%s\n", UDEVADM_COMPAT_VERSION);
        return 0;
}

static bool env_is_true(const char *name)
{
        const char *v = getenv(name);

        if (!v)
                return false;
        return streq(v, "1") || streq(v, "yes") || streq(v, "y") || streq(v, "true") ||
               streq(v, "t") || streq(v, "on");
}

bool udevadm_running_in_chroot(void)
{
        struct stat a, b;

        if (env_is_true("SYSTEMD_IGNORE_CHROOT"))
                return false;
        /* Unknown (e.g. no permission to look at PID 1): assume no chroot. */
        if (stat("/proc/1/root", &a) < 0 || stat("/", &b) < 0)
                return false;
        return a.st_dev != b.st_dev || a.st_ino != b.st_ino;
}

char *udevadm_path_simplify(char *path)
{
        bool absolute = path[0] == '/';
        char *out = path, *in = path;

        if (absolute)
                *out++ = '/';
        while (*in) {
                size_t n;

                in += strspn(in, "/");
                n = strcspn(in, "/");
                if (n == 0)
                        break;
                if (n == 1 && in[0] == '.') {
                        in += n;
                        continue;
                }
                if (out > path && out[-1] != '/')
                        *out++ = '/';
                memmove(out, in, n); /* out <= in: moving left */
                out += n;
                in += n;
        }
        if (out == path)
                *out++ = '.'; /* relative and nothing left */
        *out = '\0';
        return path;
}

bool udevadm_path_is_safe(const char *path)
{
        size_t len = strlen(path);

        if (len == 0 || len >= PATH_MAX)
                return false;
        for (const char *p = path; *p;) {
                size_t n;

                p += strspn(p, "/");
                n = strcspn(p, "/");
                if (n > NAME_MAX || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                p += n;
        }
        return true;
}

int udevadm_path_absolute(const char *path, char **ret)
{
        _cleanup_free_ char *cwd = NULL;
        char *s;

        if (path[0] == '/')
                s = strdup(path);
        else {
                cwd = getcwd(NULL, 0);
                if (!cwd)
                        return negative_errno();
                if (asprintf(&s, "%s/%s", cwd, path) < 0)
                        s = NULL;
        }
        if (!s)
                return -ENOMEM;
        *ret = udevadm_path_simplify(s);
        return 0;
}

int udevadm_parse_action(const char *arg, enum uevent_action *ret)
{
        int a;

        if (streq(arg, "help")) {
                for (int i = 0; i < _UEVENT_ACTION_MAX; i++)
                        printf("%s\n", uevent_action_to_string((enum uevent_action)i));
                return 0;
        }
        a = (int)uevent_action_from_string(arg);
        if (a < 0)
                return -EINVAL;
        *ret = (enum uevent_action)a;
        return 1;
}

int udevadm_parse_sec(const char *s, uint64_t *ret)
{
        if (streq(s, "infinity")) {
                *ret = USEC_INFINITY;
                return 0;
        }
        return parse_timespan_usec(s, ret);
}

int arg_list_add(struct arg_list *l, const char *s)
{
        const char **n = realloc(l->items, (l->n + 1) * sizeof(*n));

        if (!n)
                return log_error_errno(-ENOMEM, "Out of memory.");
        l->items = n;
        n[l->n++] = s;
        return 0;
}

void arg_list_done(struct arg_list *l)
{
        free(l->items);
        l->items = NULL;
        l->n = 0;
}

int ctrl_conn_send(struct ctrl_conn *c, enum ctrl_msg_type type, int intval, const char *strval)
{
        struct ctrl_msg m = { .type = type, .intval = intval };
        int r;

        if (strval) {
                size_t n = strlen(strval);

                if (n >= sizeof(m.strval))
                        return -ENAMETOOLONG;
                memcpy(m.strval, strval, n + 1);
        }
        if (c->fd < 0) {
                r = ctrl_client_connect(CTRL_SOCKET_PATH, &c->fd);
                if (r < 0) {
                        c->fd = -1;
                        return r;
                }
        }
        return ctrl_client_send(c->fd, &m);
}

int ctrl_conn_finish(struct ctrl_conn *c, uint64_t timeout_usec)
{
        if (c->fd < 0)
                return 0;
        return ctrl_client_finish(c->fd, timeout_usec);
}

void ctrl_conn_close(struct ctrl_conn *c)
{
        c->fd = safe_close(c->fd);
}

int udevadm_query(const char *query, uint64_t timeout_usec, struct ctrl_reply *ret)
{
        _cleanup_close_ int fd = -1;
        int r;

        r = ctrl_client_connect_timeout(CTRL_SOCKET_PATH, timeout_usec, &fd);
        if (r < 0)
                return r;
        return ctrl_client_query(fd, query, timeout_usec, ret);
}

int udevadm_open_signalfd(int *ret_fd)
{
        sigset_t mask;
        int fd;

        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return negative_errno();
        fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        *ret_fd = fd;
        return 0;
}
