/* threads: any */
/* Link-time stubs for builtins not yet implemented (see builtins-internal.h).
 * The owner of each builtin deletes its stub here when the real function
 * lands, and deletes this file when it is empty. */
#include <errno.h>
#include <stdbool.h>

#include "builtins/builtins-internal.h"

int builtin_net_setup_link(struct udev_event *ev, int argc, char *argv[], bool test)
{
        (void)ev, (void)argc, (void)argv, (void)test;
        return -EOPNOTSUPP;
}

void builtin_net_setup_link_thread_exit(void)
{
}

bool builtin_net_setup_link_should_reload(void)
{
        return false;
}

void builtin_net_setup_link_reload(void)
{
}

