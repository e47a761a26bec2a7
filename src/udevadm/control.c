/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (udevadm is single-threaded) */
/* udevadm control: send requests to the daemon over /run/udev/control
 * (udevadm(8) UDEVADM CONTROL; the protocol is in proto/ctrl-msg.h).
 *
 * Requests go out in a fixed order whatever the order of the options: log
 * level, stop or start exec queue (the last of -s/-S wins), reload, each
 * property, children max, ping; then END, and we wait for the daemon to close
 * the connection (--timeout, default 60 s; 0: do not wait). --exit is sent
 * alone, then END, and we wait the same way: the daemon holds the connection
 * of an exit request open until its process is gone (udevd/ctrl-server.h),
 * so a return means the daemon has exited and a new one may start. */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "udevadm/udevadm.h"

#define CONTROL_DEFAULT_TIMEOUT_USEC (60 * USEC_PER_SEC)

struct control_args {
        bool exit, reload, ping;
        int log_level;          /* -1: not given */
        int start_exec_queue;   /* -1: not given, 0: stop, 1: start */
        long long children_max; /* -1: not given */
        uint64_t timeout_usec;
        struct arg_list props;  /* "KEY=VALUE" */
};

static int help(void)
{
        printf("%s control OPTION...\n\n"
               "Send requests to the running daemon.\n\n"
               "  -h --help                This text\n"
               "  -V --version             Print the version\n"
               "  -e --exit                Ask the daemon to clean up and terminate, and wait\n"
               "                           until it has exited\n"
               "  -l --log-level=LEVEL     Change the daemon's log level (name or 0-7)\n"
               "  -s --stop-exec-queue     Keep queueing events but stop processing them\n"
               "  -S --start-exec-queue    Resume processing queued events\n"
               "  -R --reload              Reload rules and other configuration\n"
               "  -p --property=KEY=VALUE  Set (KEY=VALUE) or unset (KEY=) a global property\n"
               "  -m --children-max=N      Limit the number of workers\n"
               "     --ping                Wait until the daemon has queued all earlier events\n"
               "  -t --timeout=SECONDS     How long to wait for the reply or the exit\n"
               "                           (default: 60)\n",
               program_invocation_short_name);
        return 0;
}

static int add_property(struct control_args *a, const char *arg)
{
        if (!strchr(arg, '='))
                return log_error_errno(-EINVAL, "expect <KEY>=<value> instead of '%s'", arg);
        if (strlen(arg) >= CTRL_MSG_VALUE_MAX)
                return log_error_errno(-EINVAL, "Property '%s' is too long (at most %d bytes).",
                                       arg, CTRL_MSG_VALUE_MAX - 1);
        return arg_list_add(&a->props, arg);
}

static int parse_children_max(const char *s, long long *ret)
{
        char *end;

        if (*s == '-')
                return -ERANGE;
        if (!(*s >= '0' && *s <= '9'))
                return -EINVAL;
        errno = 0;
        unsigned long v = strtoul(s, &end, 10);
        if (errno != 0 || *end != '\0' || v > INT32_MAX)
                return errno == ERANGE || v > INT32_MAX ? -ERANGE : -EINVAL;
        *ret = (long long)v;
        return 0;
}

/* 1: go on, 0: done (help/version), <0: error. */
static int parse_argv(int argc, char *argv[], struct control_args *a)
{
        enum { ARG_PING = 0x100 };
        static const struct option options[] = {
                { "exit", no_argument, NULL, 'e' },
                { "log-level", required_argument, NULL, 'l' },
                { "log-priority", required_argument, NULL, 'l' }, /* old name */
                { "stop-exec-queue", no_argument, NULL, 's' },
                { "start-exec-queue", no_argument, NULL, 'S' },
                { "reload", no_argument, NULL, 'R' },
                { "reload-rules", no_argument, NULL, 'R' }, /* alias of -R */
                { "property", required_argument, NULL, 'p' },
                { "env", required_argument, NULL, 'p' }, /* alias of -p */
                { "children-max", required_argument, NULL, 'm' },
                { "ping", no_argument, NULL, ARG_PING },
                { "timeout", required_argument, NULL, 't' },
                { "version", no_argument, NULL, 'V' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c, r;

        if (argc <= 1)
                return log_error_errno(-EINVAL, "This command expects one or more options.");

        while ((c = getopt_long(argc, argv, "el:sSRp:m:t:Vh", options, NULL)) >= 0) {
                switch (c) {
                case 'e':
                        a->exit = true;
                        break;
                case 'l':
                        a->log_level = log_level_from_string(optarg);
                        if (a->log_level < 0)
                                return log_error_errno(-EINVAL,
                                                       "Failed to parse log level '%s': %m",
                                                       optarg);
                        break;
                case 's':
                        a->start_exec_queue = 0;
                        break;
                case 'S':
                        a->start_exec_queue = 1;
                        break;
                case 'R':
                        a->reload = true;
                        break;
                case 'p':
                        if ((r = add_property(a, optarg)) < 0)
                                return r;
                        break;
                case 'm':
                        r = parse_children_max(optarg, &a->children_max);
                        if (r < 0)
                                return log_error_errno(
                                        r, "Failed to parse maximum number of children '%s': %m",
                                        optarg);
                        break;
                case ARG_PING:
                        a->ping = true;
                        break;
                case 't':
                        r = udevadm_parse_sec(optarg, &a->timeout_usec);
                        if (r < 0)
                                return log_error_errno(r, "Failed to parse timeout value '%s': %m",
                                                       optarg);
                        break;
                case 'V':
                        return udevadm_print_version();
                case 'h':
                        return help();
                default:
                        return -EINVAL;
                }
        }
        if (optind < argc)
                return log_error_errno(-EINVAL, "Extraneous argument: %s", argv[optind]);
        return 1;
}

static int send_requests(const struct control_args *a, struct ctrl_conn *conn)
{
        int r;

        if (a->log_level >= 0 &&
            (r = ctrl_conn_send(conn, CTRL_MSG_SET_LOG_LEVEL, a->log_level, NULL)) < 0)
                return log_error_errno(r, "Failed to send request to set log level: %m");
        if (a->start_exec_queue == 0 &&
            (r = ctrl_conn_send(conn, CTRL_MSG_STOP_EXEC_QUEUE, 0, NULL)) < 0)
                return log_error_errno(r, "Failed to send request to stop exec queue: %m");
        if (a->start_exec_queue == 1 &&
            (r = ctrl_conn_send(conn, CTRL_MSG_START_EXEC_QUEUE, 0, NULL)) < 0)
                return log_error_errno(r, "Failed to send request to start exec queue: %m");
        if (a->reload && (r = ctrl_conn_send(conn, CTRL_MSG_RELOAD, 0, NULL)) < 0)
                return log_error_errno(r, "Failed to send reload request: %m");
        for (size_t i = 0; i < a->props.n; i++)
                if ((r = ctrl_conn_send(conn, CTRL_MSG_SET_ENV, 0, a->props.items[i])) < 0)
                        return log_error_errno(r,
                                               "Failed to send request to update environment: %m");
        if (a->children_max >= 0 &&
            (r = ctrl_conn_send(conn, CTRL_MSG_SET_CHILDREN_MAX, (int)a->children_max, NULL)) < 0)
                return log_error_errno(r,
                                       "Failed to send request to set number of children: %m");
        if (a->ping && (r = ctrl_conn_send(conn, CTRL_MSG_PING, 0, NULL)) < 0)
                return log_error_errno(r, "Failed to send a ping message: %m");

        r = ctrl_conn_finish(conn, a->timeout_usec);
        if (r < 0)
                return log_error_errno(r, "Failed to wait for daemon to reply: %m");
        return 0;
}

static int run(const struct control_args *a)
{
        struct ctrl_conn conn = CTRL_CONN_INIT;
        int r;

        if (geteuid() != 0)
                return log_error_errno(-EPERM, "Need to be root.");

        if (a->exit) {
                r = ctrl_conn_send(&conn, CTRL_MSG_EXIT, 0, NULL);
                if (r < 0) {
                        ctrl_conn_close(&conn);
                        return log_error_errno(r, "Failed to send exit request: %m");
                }
                r = ctrl_conn_finish(&conn, a->timeout_usec);
                ctrl_conn_close(&conn);
                /* Closed before END could be sent: the daemon is gone already. */
                if (r == -EPIPE || r == -ECONNRESET)
                        r = 0;
                if (r < 0)
                        return log_error_errno(r, "Failed to wait for daemon to reply: %m");
                return 0;
        }
        r = send_requests(a, &conn);
        ctrl_conn_close(&conn);
        return r;
}

int control_main(int argc, char *argv[])
{
        struct control_args a = {
                .log_level = -1,
                .start_exec_queue = -1,
                .children_max = -1,
                .timeout_usec = CONTROL_DEFAULT_TIMEOUT_USEC,
        };
        int r;

        r = parse_argv(argc, argv, &a);
        if (r > 0) {
                if (udevadm_running_in_chroot()) {
                        log_info("Running in chroot, ignoring request.");
                        r = 0;
                } else
                        r = run(&a);
        }
        arg_list_done(&a.props);
        return r < 0 ? r : 0;
}
