#pragma once
/* Announcing a wait that does not use this thread's CPU (a spawned program,
 * another process's reply), so that whoever schedules the thread's work may
 * run something else meanwhile. The worker pool installs a hook per thread;
 * without one both calls do nothing. Calls nest; each enter needs a leave. */

#include <stdbool.h>

typedef void (*blocking_hook_fn)(bool blocked, void *userdata);

/* For the calling thread only; fn NULL removes the hook. */
void blocking_set_thread_hook(blocking_hook_fn fn, void *userdata);

void blocking_enter(void);
void blocking_leave(void);
