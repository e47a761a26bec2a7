/* threads: any */
/* Temporary stub; the implementation follows. */
#include <errno.h>

#include "builtins/builtins-internal.h"

int builtin_hwdb(struct udev_event *ev, int argc, char *argv[], bool test)
{
        (void)ev, (void)argc, (void)argv, (void)test;
        return -EOPNOTSUPP;
}

void builtin_hwdb_thread_exit(void)
{
}

bool builtin_hwdb_should_reload(void)
{
        return false;
}

void builtin_hwdb_reload(void)
{
}

int builtin_hwdb_lookup(struct udev_event *ev, bool test, const char *prefix,
                        const char *modalias, const char *filter)
{
        (void)ev, (void)test, (void)prefix, (void)modalias, (void)filter;
        return -ENOENT;
}
