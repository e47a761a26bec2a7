/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: none of its own (the caller serialises every call, admission.h) */
#include <assert.h>

#include "udevd/admission.h"

#define NO_LIMIT UINT32_MAX

void admission_init(struct admission *a, unsigned cpus, unsigned max_running,
                    uint64_t stall_usec)
{
        *a = (struct admission){ 0 };
        admission_set_limits(a, cpus, max_running, stall_usec);
}

void admission_set_limits(struct admission *a, unsigned cpus, unsigned max_running,
                          uint64_t stall_usec)
{
        a->cpus = cpus;
        a->max_running = max_running;
        a->stall_usec = stall_usec;
}

static void progress(struct admission *a, uint64_t now)
{
        if (now > a->last_progress)
                a->last_progress = now;
}

void admission_started(struct admission *a, uint64_t now)
{
        a->running++;
        progress(a, now);
}

void admission_finished(struct admission *a, bool waiting, uint64_t now)
{
        assert(a->running > 0);
        a->running--;
        if (waiting) {
                assert(a->waiting > 0);
                a->waiting--;
        }
        progress(a, now);
}

void admission_wait_begins(struct admission *a, uint64_t now)
{
        assert(a->waiting < a->running);
        a->waiting++;
        progress(a, now);
}

void admission_wait_ends(struct admission *a, uint64_t now)
{
        assert(a->waiting > 0);
        a->waiting--;
        progress(a, now);
}

unsigned admission_hard_room(const struct admission *a)
{
        if (a->max_running == 0)
                return NO_LIMIT;
        return a->running >= a->max_running ? 0 : a->max_running - a->running;
}

/* Room below the per-CPU limit, not counting the stall rule. */
static unsigned cpu_room(const struct admission *a)
{
        unsigned computing = a->running - a->waiting;

        if (a->cpus == 0)
                return NO_LIMIT;
        return computing >= a->cpus ? 0 : a->cpus - computing;
}

static bool stalled(const struct admission *a, uint64_t now)
{
        return now >= a->last_progress && now - a->last_progress >= a->stall_usec;
}

unsigned admission_room(const struct admission *a, uint64_t now)
{
        unsigned hard = admission_hard_room(a), soft;

        if (hard == 0)
                return 0;
        soft = cpu_room(a);
        if (soft == 0 && stalled(a, now))
                soft = 1;
        return soft < hard ? soft : hard;
}

uint64_t admission_deadline(const struct admission *a)
{
        if (admission_hard_room(a) == 0)
                return UINT64_MAX;
        if (cpu_room(a) > 0)
                return 0;
        return a->last_progress > UINT64_MAX - a->stall_usec ? UINT64_MAX
                                                              : a->last_progress + a->stall_usec;
}
