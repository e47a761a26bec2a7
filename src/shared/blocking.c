/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (all state is thread-local) */
#include <stddef.h>

#include "shared/blocking.h"

static _Thread_local blocking_hook_fn hook;
static _Thread_local void *hook_userdata;
static _Thread_local unsigned depth;

void blocking_set_thread_hook(blocking_hook_fn fn, void *userdata)
{
        hook = fn;
        hook_userdata = userdata;
        depth = 0;
}

void blocking_enter(void)
{
        if (depth++ == 0 && hook)
                hook(BLOCKING_ENTER, hook_userdata);
}

void blocking_leave(void)
{
        if (depth == 0)
                return; /* unbalanced: ignore */
        if (--depth == 0 && hook)
                hook(BLOCKING_LEAVE, hook_userdata);
}
