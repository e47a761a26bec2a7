/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/close_range.h>

#include "shared/compat.h"
#include "shared/macro.h"

struct number_name {
        int number;
        const char *name;
};

#define ENTRY(prefix, n) { n, &#n[sizeof(prefix) - 1] }

/* Every standard signal; where two names share a number, glibc's choice. */
static const struct number_name signal_names[] = {
        ENTRY("SIG", SIGHUP),    ENTRY("SIG", SIGINT),    ENTRY("SIG", SIGQUIT),
        ENTRY("SIG", SIGILL),    ENTRY("SIG", SIGTRAP),   ENTRY("SIG", SIGABRT),
        ENTRY("SIG", SIGBUS),    ENTRY("SIG", SIGFPE),    ENTRY("SIG", SIGKILL),
        ENTRY("SIG", SIGUSR1),   ENTRY("SIG", SIGSEGV),   ENTRY("SIG", SIGUSR2),
        ENTRY("SIG", SIGPIPE),   ENTRY("SIG", SIGALRM),   ENTRY("SIG", SIGTERM),
#ifdef SIGSTKFLT
        ENTRY("SIG", SIGSTKFLT),
#endif
        ENTRY("SIG", SIGCHLD),   ENTRY("SIG", SIGCONT),   ENTRY("SIG", SIGSTOP),
        ENTRY("SIG", SIGTSTP),   ENTRY("SIG", SIGTTIN),   ENTRY("SIG", SIGTTOU),
        ENTRY("SIG", SIGURG),    ENTRY("SIG", SIGXCPU),   ENTRY("SIG", SIGXFSZ),
        ENTRY("SIG", SIGVTALRM), ENTRY("SIG", SIGPROF),   ENTRY("SIG", SIGWINCH),
        ENTRY("SIG", SIGPOLL),
#ifdef SIGPWR
        ENTRY("SIG", SIGPWR),
#endif
        ENTRY("SIG", SIGSYS),
#ifdef SIGEMT
        ENTRY("SIG", SIGEMT),
#endif
};

/* Every errno value of Linux (asm-generic/errno-base.h and errno.h; the
 * architectures that number them differently define the same names). Aliases
 * that share a value with a name listed earlier (EWOULDBLOCK, ENOTSUP,
 * EDEADLOCK on most architectures) are left out: the first match wins. */
static const struct number_name errno_names[] = {
        ENTRY("", EPERM),           ENTRY("", ENOENT),          ENTRY("", ESRCH),
        ENTRY("", EINTR),           ENTRY("", EIO),             ENTRY("", ENXIO),
        ENTRY("", E2BIG),           ENTRY("", ENOEXEC),         ENTRY("", EBADF),
        ENTRY("", ECHILD),          ENTRY("", EAGAIN),          ENTRY("", ENOMEM),
        ENTRY("", EACCES),          ENTRY("", EFAULT),          ENTRY("", ENOTBLK),
        ENTRY("", EBUSY),           ENTRY("", EEXIST),          ENTRY("", EXDEV),
        ENTRY("", ENODEV),          ENTRY("", ENOTDIR),         ENTRY("", EISDIR),
        ENTRY("", EINVAL),          ENTRY("", ENFILE),          ENTRY("", EMFILE),
        ENTRY("", ENOTTY),          ENTRY("", ETXTBSY),         ENTRY("", EFBIG),
        ENTRY("", ENOSPC),          ENTRY("", ESPIPE),          ENTRY("", EROFS),
        ENTRY("", EMLINK),          ENTRY("", EPIPE),           ENTRY("", EDOM),
        ENTRY("", ERANGE),          ENTRY("", EDEADLK),         ENTRY("", ENAMETOOLONG),
        ENTRY("", ENOLCK),          ENTRY("", ENOSYS),          ENTRY("", ENOTEMPTY),
        ENTRY("", ELOOP),           ENTRY("", ENOMSG),          ENTRY("", EIDRM),
        ENTRY("", ECHRNG),          ENTRY("", EL2NSYNC),        ENTRY("", EL3HLT),
        ENTRY("", EL3RST),          ENTRY("", ELNRNG),          ENTRY("", EUNATCH),
        ENTRY("", ENOCSI),          ENTRY("", EL2HLT),          ENTRY("", EBADE),
        ENTRY("", EBADR),           ENTRY("", EXFULL),          ENTRY("", ENOANO),
        ENTRY("", EBADRQC),         ENTRY("", EBADSLT),         ENTRY("", EBFONT),
        ENTRY("", ENOSTR),          ENTRY("", ENODATA),         ENTRY("", ETIME),
        ENTRY("", ENOSR),           ENTRY("", ENONET),          ENTRY("", ENOPKG),
        ENTRY("", EREMOTE),         ENTRY("", ENOLINK),         ENTRY("", EADV),
        ENTRY("", ESRMNT),          ENTRY("", ECOMM),           ENTRY("", EPROTO),
        ENTRY("", EMULTIHOP),       ENTRY("", EDOTDOT),         ENTRY("", EBADMSG),
        ENTRY("", EOVERFLOW),       ENTRY("", ENOTUNIQ),        ENTRY("", EBADFD),
        ENTRY("", EREMCHG),         ENTRY("", ELIBACC),         ENTRY("", ELIBBAD),
        ENTRY("", ELIBSCN),         ENTRY("", ELIBMAX),         ENTRY("", ELIBEXEC),
        ENTRY("", EILSEQ),          ENTRY("", ERESTART),        ENTRY("", ESTRPIPE),
        ENTRY("", EUSERS),          ENTRY("", ENOTSOCK),        ENTRY("", EDESTADDRREQ),
        ENTRY("", EMSGSIZE),        ENTRY("", EPROTOTYPE),      ENTRY("", ENOPROTOOPT),
        ENTRY("", EPROTONOSUPPORT), ENTRY("", ESOCKTNOSUPPORT), ENTRY("", EOPNOTSUPP),
        ENTRY("", EPFNOSUPPORT),    ENTRY("", EAFNOSUPPORT),    ENTRY("", EADDRINUSE),
        ENTRY("", EADDRNOTAVAIL),   ENTRY("", ENETDOWN),        ENTRY("", ENETUNREACH),
        ENTRY("", ENETRESET),       ENTRY("", ECONNABORTED),    ENTRY("", ECONNRESET),
        ENTRY("", ENOBUFS),         ENTRY("", EISCONN),         ENTRY("", ENOTCONN),
        ENTRY("", ESHUTDOWN),       ENTRY("", ETOOMANYREFS),    ENTRY("", ETIMEDOUT),
        ENTRY("", ECONNREFUSED),    ENTRY("", EHOSTDOWN),       ENTRY("", EHOSTUNREACH),
        ENTRY("", EALREADY),        ENTRY("", EINPROGRESS),     ENTRY("", ESTALE),
        ENTRY("", EUCLEAN),         ENTRY("", ENOTNAM),         ENTRY("", ENAVAIL),
        ENTRY("", EISNAM),          ENTRY("", EREMOTEIO),       ENTRY("", EDQUOT),
        ENTRY("", ENOMEDIUM),       ENTRY("", EMEDIUMTYPE),     ENTRY("", ECANCELED),
        ENTRY("", ENOKEY),          ENTRY("", EKEYEXPIRED),     ENTRY("", EKEYREVOKED),
        ENTRY("", EKEYREJECTED),    ENTRY("", EOWNERDEAD),      ENTRY("", ENOTRECOVERABLE),
        ENTRY("", ERFKILL),         ENTRY("", EHWPOISON),
#if EDEADLOCK != EDEADLK
        ENTRY("", EDEADLOCK),
#endif
};

static const char *name_of(const struct number_name *table, size_t n, int number)
{
        for (size_t i = 0; i < n; i++)
                if (table[i].number == number)
                        return table[i].name;
        return NULL;
}

const char *signal_abbrev_portable(int sig)
{
        return name_of(signal_names, ARRAY_SIZE(signal_names), sig);
}

const char *errno_name_portable(int err)
{
        if (err == 0)
                return "0";
        return name_of(errno_names, ARRAY_SIZE(errno_names), err);
}

#ifndef HAVE_STRERROR_R_CHAR_P
const char *error_message_portable(int err, char *buf, size_t size)
{
        if (size == 0)
                return "";
        /* POSIX's strerror_r(): 0, ERANGE with the message cut to fit, or
         * EINVAL for a value it has no message for. */
        if (strerror_r(err, buf, size) == EINVAL)
                snprintf(buf, size, "Unknown error %d", err);
        return buf;
}
#endif

int spawn_close_from_portable(posix_spawn_file_actions_t *fa, int lowfd)
{
        int saved_errno = errno;

        (void)fa;
        if (lowfd < 0)
                return EBADF;
        /* Fails on kernels before 5.11 (EINVAL, ENOSYS): then O_CLOEXEC alone
         * keeps tudev's descriptors out of the child (compat.h). */
        (void)syscall(SYS_close_range, (unsigned)lowfd, ~0U, CLOSE_RANGE_CLOEXEC);
        errno = saved_errno;
        return 0;
}
