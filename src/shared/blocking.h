/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (the hook and the nesting depth are per thread) */
#pragma once
/* Announcing a wait that does not use this thread's CPU (a spawned program,
 * another process's reply), so that whoever schedules the thread's work may
 * run something else meanwhile. The worker pool installs a hook per thread;
 * without one the calls do nothing. Enter/leave calls nest; each enter needs a
 * leave. */

#include <stdbool.h>

enum blocking_event {
        BLOCKING_ENTER,     /* the outermost blocking_enter() */
        BLOCKING_LEAVE,     /* the matching blocking_leave() */
};

typedef void (*blocking_hook_fn)(enum blocking_event ev, void *userdata);

/* For the calling thread only; fn NULL removes the hook. */
void blocking_set_thread_hook(blocking_hook_fn fn, void *userdata);

void blocking_enter(void);
void blocking_leave(void);
