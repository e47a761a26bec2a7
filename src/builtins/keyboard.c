/* threads: any */
/* Temporary stub; the implementation follows. */
#include <errno.h>

#include "builtins/builtins-internal.h"

int builtin_keyboard(struct udev_event *ev, int argc, char *argv[], bool test)
{
        (void)ev, (void)argc, (void)argv, (void)test;
        return -EOPNOTSUPP;
}
