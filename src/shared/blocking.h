/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once
/* Announcing a wait that does not use this thread's CPU (a spawned program,
 * another process's reply), so that whoever schedules the thread's work may
 * run something else meanwhile. The worker pool installs a hook per thread;
 * without one the calls do nothing. Enter/leave calls nest; each enter needs a
 * leave. Within such a wait, blocking_turn() tells apart the part spent
 * waiting for a turn (the program gate: other programs run, this one has not
 * started yet). */

#include <stdbool.h>

enum blocking_event {
        BLOCKING_ENTER,     /* the outermost blocking_enter() */
        BLOCKING_LEAVE,     /* the matching blocking_leave() */
        BLOCKING_TURN_WAIT, /* blocking_turn(true) */
        BLOCKING_TURN_GOT,  /* blocking_turn(false) */
};

typedef void (*blocking_hook_fn)(enum blocking_event ev, void *userdata);

/* For the calling thread only; fn NULL removes the hook. */
void blocking_set_thread_hook(blocking_hook_fn fn, void *userdata);

void blocking_enter(void);
void blocking_leave(void);
/* true: the thread starts waiting for its turn to start a program; false: it
 * got it (or gave up waiting). Pairs; not nested. */
void blocking_turn(bool waiting);
