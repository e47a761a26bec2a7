/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one internal mutex, taken only in this file) */
/*
 * Dependencies (which earlier events an event waits for) are event-deps.h's:
 * each event owns a dep_node, added at push and removed when the event
 * completes (done or abandoned); dependants whose last blocker goes are
 * appended to the runnable FIFO.
 *
 * Concurrency (event_queue_set_soft_running()): besides max_running, a soft
 * limit (the number of CPUs) bounds the events that run at once, not
 * counting those whose worker announced a wait for another process
 * (event_queue_set_blocked()). While the running events make progress (one
 * is taken or completes at least every stall_usec), runnable events beyond
 * the soft limit wait: CPU-bound events run back to back on as many threads
 * as there are CPUs, without a wake-up or a context switch per event. When
 * nothing has progressed for stall_usec (the running events wait for the
 * kernel, a lock, ...) one more event may start, and so on once per
 * stall_usec up to max_running. One idle taker (the "standby") sleeps with
 * that deadline; the others sleep until woken.
 *
 * With a CPU load signal (the cpu_busy hook; udevd: runnable tasks in
 * /proc/loadavg) a wait for a program frees the event's place only within a
 * window: the first `prog_window` blocked events do not count, the others
 * do. Once per stall period, while events are held back and every exempt
 * place is used, the window grows by one if the CPUs have room; while they
 * are saturated it shrinks by one per period (down to zero). Programs that
 * sleep (waiting for hardware, a timeout) thus soon run many at once, and
 * CPU-bound ones about one per CPU: twenty programs on two busy CPUs finish
 * no sooner than two, and hold twenty processes' memory. Events that run no
 * program are not steered by the load: the stall rule above still lets one
 * more start whenever nothing progressed for stall_usec while they alone
 * fill the soft limit. When waits for programs beyond the window are needed
 * to fill it, the stall rule waits program_stall_usec instead (udevd: 100 ms):
 * sleeping programs do not run one after the other for long when other tasks
 * keep the CPUs saturated.
 *
 * Lanes. The runnable events wait in two FIFOs. Per event class (subsystem
 * and action; a table of EVENT_CLASSES, the least recently used replaced)
 * the queue keeps a moving average of whether the class's events waited for
 * another process (event_queue_set_blocked()) while they ran. Classes whose
 * events recently did go to the slow lane; the others, and classes not seen
 * yet, to the fast lane (one event that waits for a program moves a new
 * class). The class learns from an event at its first wait, or when it
 * finishes without one; an event that starts to wait moves to the slow
 * lane's counts at once. Everything above (soft limit, stall rule, program
 * window) applies to each lane on its own, and max_running to both
 * together. A taker starts the fast lane's first event while that lane has
 * room. So a disk's events, which run no program, do not
 * wait behind network interfaces' events that each wait for a program whose
 * places the soft limit and the window hold scarce (a "mixed storm"). A
 * class changing lanes takes its runnable events along (in order, to the end
 * of the other FIFO); the averages move by a quarter per event and change
 * lanes with hysteresis, so that costs O(runnable) rarely. Only runnable
 * events are reordered: the dependency rules above are untouched, and each
 * lane is served in arrival order.
 *
 * The program gate (exec/program-gate.h) may make a worker wait for its turn
 * to start a program (event_queue_set_turn_wait()). While an event of a lane
 * does, that lane's stall rule starts no event (the gate has a stall rule of
 * its own; another event would most likely wait at the gate too, holding a
 * thread and a place), and the program window does not grow.
 *
 * Requeued events (block device locked, event-processing.md §3.3) go back from
 * running to queued without leaving the indexes, so their dependants stay
 * blocked; they wait on the `delayed` list until their not-before time (or a
 * retry_disk() for their disk) moves them to the runnable FIFO. Takers waiting
 * while the list is not empty sleep at most until its earliest time.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shared/cond.h"
#include "shared/fnv.h"
#include "shared/macro.h"
#include "shared/time-util.h"
#include "udevd/event-deps.h"
#include "udevd/event-queue.h"

enum qe_state {
        QE_QUEUED,    /* blocked or runnable */
        QE_RUNNING,   /* lent to a worker */
        QE_ABANDONED, /* still lent, but out of the counts and the indexes */
};

enum {
        QE_RESULT_OPEN,      /* running, nobody has published a result */
        QE_RESULT_WORKER,    /* the worker publishes (broadcasts) its result */
        QE_RESULT_ABANDONED, /* the manager gave up on it (event timeout) */
};

struct queued_event {
        struct uevent *ev;
        struct queued_event *prev, *next; /* in q->queued or q->lent */
        struct queued_event *runnable_next;
        enum qe_state state;
        /* QE_RESULT_*: decided once, by whoever wins the compare-and-swap -- the
         * worker publishing its result or the manager abandoning the event. */
        atomic_int result_owner;
        uint64_t start_usec;
        struct queued_event *delayed_next; /* in q->delayed */
        uint64_t not_before;  /* while delayed: CLOCK_MONOTONIC µs */
        uint64_t retry_until; /* set at the first requeue: no requeue after it */
        uint64_t class_hash;       /* (subsystem, action); never 0 */
        struct event_class *cls;   /* its entry, if still that class's (see class_of()) */
        unsigned lane;             /* LANE_*: the FIFO it waits in, or was taken from */
        bool blocked;              /* its worker waits for another process right now */
        bool turn_wait;            /* ... for its turn to start a program (the gate) */
        bool waited;               /* ... did so at least once during this run */
        struct dep_node *deps;     /* its dependency tracking (event-deps.h) */
};

struct qe_list {
        struct queued_event *head, *tail;
};

/* What the queue learns per event class (subsystem, action): whether its
 * events wait for programs (see "Lanes" at the top of the file). */
#define EVENT_CLASSES 64
#define CLASS_SCORE_MAX 256 /* score: moving average of "waited", x256 */
#define CLASS_SCORE_NEW 140  /* a new class starts fast: one event that waits turns it slow */
#define CLASS_SCORE_SLOW 160 /* a fast class turns slow above this, */
#define CLASS_SCORE_FAST 96  /* a slow one fast again below this */

struct event_class {
        uint64_t hash; /* 0: free */
        uint64_t last_used;
        int score;
        bool fast;
};

enum { LANE_FAST, LANE_SLOW, N_LANES };

struct lane {
        struct queued_event *head, *tail; /* runnable FIFO (runnable_next) */
        size_t n_runnable;
        size_t n_running;       /* QE_RUNNING events taken from this lane */
        size_t n_blocked;       /* ... whose worker waits for another process */
        size_t n_turn_wait;     /* ... for its turn to start a program */
        uint64_t last_progress; /* CLOCK_MONOTONIC µs of its last take or completion */
        uint64_t taken_total;
};

struct event_queue {
        pthread_mutex_t lock;
        pthread_cond_t takers; /* workers blocked in take() */
        pthread_cond_t space;  /* wait_capacity() and wait_empty() */
        struct event_queue_hooks hooks;
        size_t capacity;      /* 0: unlimited */
        unsigned max_running; /* 0: unlimited */
        unsigned soft_running; /* 0: no soft limit (see the top of the file) */
        uint64_t stall_usec;
        uint64_t program_stall_usec; /* see stall_period_locked() */
        bool standby;           /* a taker sleeps until the stall deadline */
        size_t prog_window;     /* with hooks.cpu_busy: blocked events that do not count */
        uint64_t window_usec;   /* when prog_window was last adjusted (0: never) */
        bool paused;
        bool shutdown;
        bool busy;

        struct qe_list queued; /* QE_QUEUED, insertion order */
        struct qe_list lent;   /* QE_RUNNING and QE_ABANDONED */
        struct lane lanes[N_LANES];
        struct queued_event *delayed; /* requeued, waiting for not_before */
        size_t n_queued, n_running, n_runnable, n_delayed; /* all lanes */
        uint64_t pushed_total, done_total;
        struct event_class classes[EVENT_CLASSES];
        uint64_t class_clock;
        unsigned class_flips;

        size_t n_waiting;   /* takers blocked on `takers` */
        size_t n_signalled; /* wake-ups sent and not yet consumed */
        size_t n_space_waiters;

        struct event_deps deps;
};

/* ------------------------------------------------------------------ lists */

static void list_append(struct qe_list *l, struct queued_event *qe)
{
        qe->next = NULL;
        qe->prev = l->tail;
        if (l->tail)
                l->tail->next = qe;
        else
                l->head = qe;
        l->tail = qe;
}

static void list_remove(struct qe_list *l, struct queued_event *qe)
{
        if (qe->prev)
                qe->prev->next = qe->next;
        else
                l->head = qe->next;
        if (qe->next)
                qe->next->prev = qe->prev;
        else
                l->tail = qe->prev;
        qe->prev = qe->next = NULL;
}

/* ------------------------------------------------------------ event alloc */

static void qe_free(struct queued_event *qe)
{
        if (!qe)
                return;
        dep_node_free(qe->deps);
        uevent_free(qe->ev);
        free(qe);
}

/* Hash of the subsystem and the action; never 0 (0 marks a free class). */
static uint64_t class_hash_of(const struct uevent *ev)
{
        unsigned char action = (unsigned char)ev->action;
        /* with its NUL, so that no subsystem's bytes run into the action */
        uint64_t h = fnv1a64(FNV1A64_INIT, ev->subsystem, strlen(ev->subsystem) + 1);

        h = fnv1a64(h, &action, 1);
        return h ?: 1;
}

/* Takes ev only on success. */
static struct queued_event *qe_new(struct uevent *ev)
{
        struct queued_event *qe;

        qe = calloc(1, sizeof(*qe));
        if (!qe)
                return NULL;
        qe->deps = dep_node_new(ev, qe);
        if (!qe->deps) {
                free(qe);
                return NULL;
        }
        qe->ev = ev;
        qe->state = QE_QUEUED;
        qe->class_hash = class_hash_of(ev);
        atomic_init(&qe->result_owner, QE_RESULT_OPEN);
        return qe;
}

/* Free a chain linked through ->next, records included. */
static void qe_free_chain(struct queued_event *qe)
{
        while (qe) {
                struct queued_event *next = qe->next;

                qe_free(qe);
                qe = next;
        }
}

/* -------------------------------------------------------------- accounting */

static size_t total_locked(const struct event_queue *q)
{
        return q->n_queued + q->n_running;
}

/* Room below max_running. */
static size_t hard_slots_locked(const struct event_queue *q)
{
        if (q->paused)
                return 0;
        if (q->max_running == 0)
                return SIZE_MAX;
        return q->n_running >= q->max_running ? 0 : q->max_running - q->n_running;
}

static struct lane *slow_lane(struct event_queue *q)
{
        return &q->lanes[LANE_SLOW];
}

/* The lane's running events whose worker waits for another process. */
static size_t lane_blocked(const struct lane *l)
{
        return MIN(l->n_blocked, l->n_running);
}

/* How long the lane's running events may make no progress before one more of
 * its events may start anyway (the stall rule): stall_usec when its events
 * that wait for no program fill the soft limit on their own;
 * program_stall_usec when waits for programs beyond the window are needed to
 * fill it. Those are the window's business: the longer period only keeps
 * sleeping programs from running one after the other while other tasks keep
 * the CPUs saturated, and must exceed the run time of common CPU-bound
 * programs. */
static uint64_t lane_stall_period(const struct event_queue *q, const struct lane *l)
{
        size_t others = l->n_running - lane_blocked(l);

        return others >= q->soft_running ? q->stall_usec : q->program_stall_usec;
}

/* The lane's running events whose wait for another process frees their
 * place: all of them, or with a load signal those within the program window
 * (only the slow lane has any: an event that waits moves there). */
static size_t lane_exempt(const struct event_queue *q, const struct lane *l)
{
        size_t blocked = lane_blocked(l);

        return q->hooks.cpu_busy ? MIN(blocked, q->prog_window) : blocked;
}

/* How many of the lane's runnable events takers could start right now, given
 * `hard` places below max_running. */
static size_t lane_takeable(const struct event_queue *q, const struct lane *l, size_t hard)
{
        size_t slots = hard;

        if (l->n_runnable == 0 || hard == 0)
                return 0;
        if (q->soft_running > 0) {
                size_t active = l->n_running - lane_exempt(q, l);
                size_t soft = active >= q->soft_running ? 0 : q->soft_running - active;

                /* The stall rule, except while one of the lane's events
                 * waits for its turn at the program gate: the gate has its
                 * own, and another event would most likely wait there too. */
                if (soft == 0 && l->n_turn_wait == 0 &&
                    now_usec(CLOCK_MONOTONIC) >= l->last_progress + lane_stall_period(q, l))
                        soft = 1;
                slots = MIN(slots, soft);
        }
        return MIN(l->n_runnable, slots);
}

/* How many runnable events takers could pick up right now. */
static size_t takeable_locked(const struct event_queue *q)
{
        size_t hard = hard_slots_locked(q);
        size_t n = 0;

        for (size_t i = 0; i < N_LANES; i++)
                n += lane_takeable(q, &q->lanes[i], hard);
        return MIN(n, hard);
}

/* The lane's runnable events that only the soft limit holds back. */
static bool lane_held_back(const struct event_queue *q, const struct lane *l, size_t hard)
{
        return q->soft_running > 0 && l->n_runnable > 0 &&
               MIN(l->n_runnable, hard) > lane_takeable(q, l, hard);
}

/* Runnable events that only the soft limit holds back (a standby watches). */
static bool held_back_locked(const struct event_queue *q)
{
        size_t hard = hard_slots_locked(q);

        for (size_t i = 0; i < N_LANES; i++)
                if (lane_held_back(q, &q->lanes[i], hard))
                        return true;
        return false;
}

/* Once per stall period while the slow lane's events wait for programs
 * (take() calls it for every event: the cheap checks come before the clock):
 * shrink the program window by one per period since the last adjustment
 * while the CPUs are saturated; grow it by one while they have room, slow
 * events are held back, every exempt place is used and none of them waits
 * for its turn to start a program (the program gate holds programs back:
 * another event would only wait there too, holding a thread and a place). */
static void adjust_window_locked(struct event_queue *q)
{
        struct lane *slow = slow_lane(q);
        uint64_t now, periods;

        if (!q->hooks.cpu_busy || q->soft_running == 0 || slow->n_blocked == 0)
                return;
        now = now_usec(CLOCK_MONOTONIC);
        if (q->window_usec != 0 && now < q->window_usec + q->stall_usec)
                return;
        periods = q->window_usec == 0 ? 1 : (now - q->window_usec) / q->stall_usec;
        q->window_usec = now;
        if (q->hooks.cpu_busy(q->hooks.userdata))
                q->prog_window -= (size_t)MIN(periods, (uint64_t)q->prog_window);
        else if (lane_held_back(q, slow, hard_slots_locked(q)) &&
                 slow->n_blocked >= q->prog_window && slow->n_turn_wait == 0 &&
                 (q->max_running == 0 || q->prog_window < q->max_running))
                q->prog_window++;
}

/* Wake as many blocked takers as there is work for, counting wake-ups that
 * are already on their way. */
static void wake_takers_locked(struct event_queue *q)
{
        size_t want = takeable_locked(q);

        while (q->n_signalled < want && q->n_signalled < q->n_waiting) {
                q->n_signalled++;
                pthread_cond_signal(&q->takers);
        }
        /* Held-back work needs a standby, or the stall rule and the window
         * wait for the next completion: wake an idle taker to become it. */
        if (!q->standby && q->n_waiting > q->n_signalled && held_back_locked(q)) {
                q->n_signalled++;
                pthread_cond_signal(&q->takers);
        }
}

/* Runnable work that no idle or already woken taker will pick up, or held
 * back work with no idle taker left to stand by. */
static bool need_worker_locked(const struct event_queue *q)
{
        return q->hooks.on_need_worker &&
               (takeable_locked(q) > q->n_signalled ||
                (q->n_waiting == 0 && held_back_locked(q)));
}

/* After a change that may let more events start (a limit, a blocked worker,
 * delayed events due): wake takers for them; true if the pool should be
 * asked for a worker (call on_need_worker after unlocking). */
static bool rewake_locked(struct event_queue *q)
{
        wake_takers_locked(q);
        return !q->shutdown && need_worker_locked(q);
}

static void update_busy_locked(struct event_queue *q)
{
        bool busy = total_locked(q) > 0;

        if (busy == q->busy)
                return;
        q->busy = busy;
        if (q->hooks.on_busy_changed)
                q->hooks.on_busy_changed(busy, q->hooks.userdata);
}

/* After queued+running went down. */
static void count_decreased_locked(struct event_queue *q)
{
        size_t total = total_locked(q);

        update_busy_locked(q);
        if (q->n_space_waiters > 0 && (total == 0 || (q->capacity > 0 && total < q->capacity)))
                pthread_cond_broadcast(&q->space);
}

/* ----------------------------------------------------------------- lanes */

/* The event's class entry, or NULL once the entry went to another class. */
static struct event_class *class_of(const struct queued_event *qe)
{
        return qe->cls && qe->cls->hash == qe->class_hash ? qe->cls : NULL;
}

/* The entry of `hash`, made (the least recently used one replaced) if new. */
static struct event_class *class_get_locked(struct event_queue *q, uint64_t hash)
{
        struct event_class *victim = &q->classes[0];

        for (size_t i = 0; i < EVENT_CLASSES; i++) {
                struct event_class *c = &q->classes[i];

                if (c->hash == hash) {
                        c->last_used = ++q->class_clock;
                        return c;
                }
                if (c->last_used < victim->last_used)
                        victim = c; /* free entries have last_used 0 */
        }
        *victim = (struct event_class){
                .hash = hash,
                .last_used = ++q->class_clock,
                .score = CLASS_SCORE_NEW,
                .fast = true,
        };
        return victim;
}

static bool qe_fast(const struct queued_event *qe)
{
        const struct event_class *c = class_of(qe);

        return c && c->fast;
}

static void lane_append(struct lane *l, struct queued_event *qe)
{
        qe->runnable_next = NULL;
        if (l->tail)
                l->tail->runnable_next = qe;
        else
                l->head = qe;
        l->tail = qe;
        l->n_runnable++;
}

static void runnable_append_locked(struct event_queue *q, struct queued_event *qe)
{
        qe->lane = qe_fast(qe) ? LANE_FAST : LANE_SLOW;
        lane_append(&q->lanes[qe->lane], qe);
        q->n_runnable++;
}

static struct queued_event *lane_pop(struct lane *l)
{
        struct queued_event *qe = l->head;

        assert(qe);
        l->head = qe->runnable_next;
        if (!l->head)
                l->tail = NULL;
        qe->runnable_next = NULL;
        l->n_runnable--;
        return qe;
}

/* The next event to start: the fast lane's first while it may start one
 * (its events need no program, so they do not wait behind those that do),
 * else the slow lane's. Call only when takeable_locked() > 0. */
static struct queued_event *runnable_pop_locked(struct event_queue *q)
{
        size_t hard = hard_slots_locked(q);
        struct lane *l = &q->lanes[LANE_FAST];

        if (lane_takeable(q, l, hard) == 0)
                l = slow_lane(q);
        q->n_runnable--;
        return lane_pop(l);
}

/* Move the runnable events of class `c` from lane `from` to the end of the
 * other lane, in their order. */
static void lane_move_class_locked(struct event_queue *q, unsigned from,
                                   const struct event_class *c)
{
        unsigned to = from == LANE_FAST ? LANE_SLOW : LANE_FAST;
        struct lane *src = &q->lanes[from], kept = { 0 };
        struct queued_event *qe, *next;

        for (qe = src->head; qe; qe = next) {
                next = qe->runnable_next;
                if (class_of(qe) == c) {
                        qe->lane = to;
                        lane_append(&q->lanes[to], qe);
                } else
                        lane_append(&kept, qe);
        }
        src->head = kept.head;
        src->tail = kept.tail;
        src->n_runnable = kept.n_runnable;
}

/* Learn from a running event whether its class waits for programs: at its
 * first wait, or when it finishes without one. A class changing lanes takes
 * its runnable events along. */
static void class_learn_locked(struct event_queue *q, const struct queued_event *qe)
{
        struct event_class *c = class_of(qe);

        if (!c)
                return;
        c->score += ((qe->waited ? CLASS_SCORE_MAX : 0) - c->score) / 4;
        if (!c->fast && c->score < CLASS_SCORE_FAST) {
                c->fast = true;
                q->class_flips++;
                lane_move_class_locked(q, LANE_SLOW, c);
        } else if (c->fast && c->score > CLASS_SCORE_SLOW) {
                c->fast = false;
                q->class_flips++;
                lane_move_class_locked(q, LANE_FAST, c);
        }
}

/* A running event leaves its lane's counts (done, abandoned or requeued). */
static void lane_release_locked(struct event_queue *q, struct queued_event *qe, uint64_t now)
{
        struct lane *l = &q->lanes[qe->lane];

        assert(l->n_running > 0);
        l->n_running--;
        if (qe->blocked) {
                assert(l->n_blocked > 0);
                l->n_blocked--;
                qe->blocked = false;
        }
        if (qe->turn_wait) {
                assert(l->n_turn_wait > 0);
                l->n_turn_wait--;
                qe->turn_wait = false;
        }
        l->last_progress = now;
        q->n_running--;
}

/* ------------------------------------------------------- delayed (requeued) */

static void delayed_append_locked(struct event_queue *q, struct queued_event *qe)
{
        struct queued_event **pp = &q->delayed;

        while (*pp)
                pp = &(*pp)->delayed_next;
        qe->delayed_next = NULL;
        *pp = qe;
        q->n_delayed++;
}

/* Move delayed events that `due` selects to the runnable FIFO (in requeue
 * order). Returns the earliest not-before time of those left, or
 * USEC_INFINITY. */
static uint64_t promote_delayed_locked(struct event_queue *q,
                                       bool (*due)(const struct queued_event *qe,
                                                   const void *arg),
                                       const void *arg)
{
        struct queued_event **pp = &q->delayed;
        uint64_t next = USEC_INFINITY;

        while (*pp) {
                struct queued_event *qe = *pp;

                if (due(qe, arg)) {
                        *pp = qe->delayed_next;
                        qe->delayed_next = NULL;
                        q->n_delayed--;
                        runnable_append_locked(q, qe);
                        continue;
                }
                next = MIN(next, qe->not_before);
                pp = &qe->delayed_next;
        }
        return next;
}

static bool due_by_time(const struct queued_event *qe, const void *arg)
{
        return qe->not_before <= *(const uint64_t *)arg;
}

static bool due_by_disk(const struct queued_event *qe, const void *arg)
{
        char disk[UEVENT_BUFFER_MAX];

        return uevent_lock_disk(qe->ev, disk, sizeof(disk)) && streq(disk, (const char *)arg);
}

/* ------------------------------------------------------------ dependencies */

static void on_deps_runnable(struct dep_node *n, void *userdata)
{
        struct queued_event *d = dep_node_owner(n);

        assert(d->state == QE_QUEUED);
        runnable_append_locked(userdata, d);
}

/* A live event completes: leave the indexes, release the dependants. */
static void release_locked(struct event_queue *q, struct queued_event *qe)
{
        event_deps_remove(&q->deps, qe->deps, on_deps_runnable, q);
}

/* Append one event. On failure nothing observable has changed (some arrays
 * may have grown) and the caller still owns qe. */
static int insert_locked(struct event_queue *q, struct queued_event *qe)
{
        int r = event_deps_add(&q->deps, qe->deps);

        if (r < 0)
                return r;
        qe->cls = class_get_locked(q, qe->class_hash);
        list_append(&q->queued, qe);
        q->n_queued++;
        q->pushed_total++;
        if (r == 0)
                runnable_append_locked(q, qe);
        return 0;
}

/* ------------------------------------------------------------------ public */

int event_queue_new(const struct event_queue_hooks *hooks, size_t capacity,
                    struct event_queue **ret)
{
        struct event_queue *q;
        int r;

        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        if (hooks)
                q->hooks = *hooks;
        q->capacity = capacity;
        event_deps_init(&q->deps);

        r = -pthread_mutex_init(&q->lock, NULL);
        if (r < 0)
                goto fail_mutex;
        r = cond_init_monotonic(&q->takers);
        if (r < 0)
                goto fail_takers;
        r = cond_init_monotonic(&q->space);
        if (r < 0)
                goto fail_space;
        *ret = q;
        return 0;

fail_space:
        pthread_cond_destroy(&q->takers);
fail_takers:
        pthread_mutex_destroy(&q->lock);
fail_mutex:
        free(q);
        return r;
}

void event_queue_free(struct event_queue *q)
{
        if (!q)
                return;
        qe_free_chain(q->queued.head);
        qe_free_chain(q->lent.head);
        event_deps_done(&q->deps);
        pthread_cond_destroy(&q->space);
        pthread_cond_destroy(&q->takers);
        pthread_mutex_destroy(&q->lock);
        free(q);
}

static void free_records(struct uevent **evs, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (evs[i])
                        uevent_free(evs[i]);
}

/* A new uevent for a disk: it may have been unlocked (systemd:
 * event_queue_assume_block_device_unlocked()). */
static void retry_disk_of_locked(struct event_queue *q, const struct uevent *ev)
{
        char disk[UEVENT_BUFFER_MAX];

        if (q->n_delayed > 0 && uevent_lock_disk(ev, disk, sizeof(disk)))
                (void)promote_delayed_locked(q, due_by_disk, disk);
}

int event_queue_push(struct event_queue *q, struct uevent **evs, size_t n)
{
        struct qe_list batch = { NULL, NULL };
        struct queued_event *qe;
        bool need;
        int r = 0;

        /* Allocate outside the lock. */
        for (size_t i = 0; i < n; i++) {
                if (!evs[i])
                        continue;
                qe = qe_new(evs[i]);
                if (!qe) {
                        /* Records already attached are freed with the chain. */
                        qe_free_chain(batch.head);
                        free_records(evs + i, n - i);
                        return -ENOMEM;
                }
                list_append(&batch, qe);
        }

        pthread_mutex_lock(&q->lock);
        if (q->shutdown) {
                pthread_mutex_unlock(&q->lock);
                qe_free_chain(batch.head);
                return -ESHUTDOWN;
        }
        while ((qe = batch.head)) {
                list_remove(&batch, qe);
                r = insert_locked(q, qe);
                if (r < 0) {
                        list_append(&batch, qe); /* free with the rest below */
                        break;
                }
                retry_disk_of_locked(q, qe->ev);
        }
        update_busy_locked(q);
        wake_takers_locked(q);
        need = need_worker_locked(q);
        pthread_mutex_unlock(&q->lock);

        /* After a failure `batch` holds the event that failed and all later ones. */
        qe_free_chain(batch.head);
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
        return r;
}

/* Wait on `space` until done(q) is true or the deadline passes. */
static int wait_space(struct event_queue *q, uint64_t deadline_usec,
                      int (*done)(const struct event_queue *q))
{
        bool timed_out = false;
        int r;

        pthread_mutex_lock(&q->lock);
        q->n_space_waiters++;
        for (;;) {
                r = done(q);
                if (r <= 0)
                        break;
                if (timed_out) {
                        r = -ETIMEDOUT;
                        break;
                }
                timed_out = cond_wait_until(&q->space, &q->lock, deadline_usec) == -ETIMEDOUT;
        }
        q->n_space_waiters--;
        pthread_mutex_unlock(&q->lock);
        return r;
}

/* 0: capacity available, -ESHUTDOWN, 1: keep waiting. */
static int capacity_done(const struct event_queue *q)
{
        if (q->shutdown)
                return -ESHUTDOWN;
        if (q->capacity == 0 || total_locked(q) < q->capacity)
                return 0;
        return 1;
}

int event_queue_wait_capacity(struct event_queue *q, uint64_t deadline_usec)
{
        return wait_space(q, deadline_usec, capacity_done);
}

static int empty_done(const struct event_queue *q)
{
        return total_locked(q) == 0 ? 0 : 1;
}

int event_queue_wait_empty(struct event_queue *q, uint64_t deadline_usec)
{
        return wait_space(q, deadline_usec, empty_done);
}

/* When a standby taker must look again at held-back events: the stall
 * deadline, the window's next adjustment (while programs are waited for),
 * and at the latest one stall period from now, since which stall period
 * applies can change without a wake-up (a worker's program ends). */
static uint64_t standby_deadline_locked(const struct event_queue *q)
{
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        uint64_t due = now + q->stall_usec;

        for (size_t i = 0; i < N_LANES; i++) {
                const struct lane *l = &q->lanes[i];
                uint64_t stall_due = l->last_progress + lane_stall_period(q, l);

                if (l->n_runnable > 0 && stall_due > now)
                        due = MIN(due, stall_due);
        }
        if (q->hooks.cpu_busy && q->lanes[LANE_SLOW].n_blocked > 0 &&
            q->window_usec + q->stall_usec > now)
                due = MIN(due, q->window_usec + q->stall_usec);
        return due;
}

/* *need: the pool should start a worker (see need_worker_locked()). */
static struct queued_event *take_locked(struct event_queue *q, bool *need)
{
        struct queued_event *qe;

        for (;;) {
                uint64_t next = USEC_INFINITY;
                bool standby = false;

                if (q->n_delayed > 0) {
                        uint64_t now = now_usec(CLOCK_MONOTONIC);
                        next = promote_delayed_locked(q, due_by_time, &now);
                }
                adjust_window_locked(q);
                if (takeable_locked(q) > 0)
                        break;
                if (q->shutdown && (q->paused || q->n_queued == 0)) {
                        *need = false;
                        return NULL;
                }
                if (!q->standby && held_back_locked(q)) {
                        q->standby = standby = true;
                        next = MIN(next, standby_deadline_locked(q));
                }
                q->n_waiting++;
                /* With delayed events, sleep at most until the earliest is due. */
                (void)cond_wait_until(&q->takers, &q->lock, next);
                q->n_waiting--;
                if (standby)
                        q->standby = false;
                /* Also after a timeout: an undercount only costs extra wake-ups. */
                if (q->n_signalled > 0)
                        q->n_signalled--;
        }

        qe = runnable_pop_locked(q);
        list_remove(&q->queued, qe);
        q->n_queued--;
        qe->state = QE_RUNNING;
        qe->start_usec = now_usec(CLOCK_MONOTONIC);
        qe->blocked = qe->waited = qe->turn_wait = false;
        list_append(&q->lent, qe);
        q->n_running++;
        q->lanes[qe->lane].n_running++;
        q->lanes[qe->lane].last_progress = qe->start_usec;
        q->lanes[qe->lane].taken_total++;

        if (q->shutdown && q->n_queued == 0)
                pthread_cond_broadcast(&q->takers); /* the others may leave now */
        else
                wake_takers_locked(q); /* make up for a wake-up lost to a spurious one,
                                        * and find a standby for held-back work */
        /* No idle taker left to stand by for the held-back work: ask for one
         * (the pool is full otherwise: pushes ask for takeable work). */
        *need = !q->shutdown && q->hooks.on_need_worker && q->n_waiting == 0 &&
                held_back_locked(q);
        return qe;
}

struct queued_event *event_queue_take(struct event_queue *q)
{
        struct queued_event *qe;
        bool need;

        pthread_mutex_lock(&q->lock);
        qe = take_locked(q, &need);
        pthread_mutex_unlock(&q->lock);
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
        return qe;
}

/* Complete qe; with `will_take` the caller takes the next event right after,
 * so the slot qe frees needs no wake-up. */
static void done_locked(struct event_queue *q, struct queued_event *qe, bool will_take)
{
        assert(qe->state != QE_QUEUED);
        list_remove(&q->lent, qe);
        if (qe->state == QE_RUNNING) {
                struct lane *l = &q->lanes[qe->lane];

                if (!qe->waited) /* first: the dependants go to its class's lane */
                        class_learn_locked(q, qe);
                release_locked(q, qe);
                lane_release_locked(q, qe, now_usec(CLOCK_MONOTONIC));
                q->done_total++;
                count_decreased_locked(q);
                if (will_take) { /* the slot is the caller's: nobody to wake for it */
                        q->n_running++;
                        l->n_running++;
                }
                wake_takers_locked(q);
                if (will_take) {
                        q->n_running--;
                        l->n_running--;
                }
        }
}

void event_queue_done(struct event_queue *q, struct queued_event *qe)
{
        if (!qe)
                return;

        pthread_mutex_lock(&q->lock);
        done_locked(q, qe, false);
        pthread_mutex_unlock(&q->lock);
        qe_free(qe);
}

struct queued_event *event_queue_done_take(struct event_queue *q, struct queued_event *qe)
{
        struct queued_event *next;
        bool need;

        pthread_mutex_lock(&q->lock);
        if (qe)
                done_locked(q, qe, true);
        next = take_locked(q, &need);
        pthread_mutex_unlock(&q->lock);
        qe_free(qe);
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
        return next;
}

void event_queue_set_soft_running(struct event_queue *q, unsigned soft_running,
                                  uint64_t stall_usec, uint64_t program_stall_usec)
{
        bool need;

        pthread_mutex_lock(&q->lock);
        q->soft_running = soft_running;
        q->stall_usec = stall_usec;
        q->program_stall_usec = MAX(program_stall_usec, stall_usec);
        need = rewake_locked(q);
        pthread_mutex_unlock(&q->lock);
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
}

void event_queue_set_blocked(struct event_queue *q, struct queued_event *qe, bool blocked)
{
        bool need = false;

        pthread_mutex_lock(&q->lock);
        if (qe->blocked == blocked) {
                pthread_mutex_unlock(&q->lock);
                return;
        }
        qe->blocked = blocked;
        if (qe->state == QE_RUNNING) {
                if (blocked && !qe->waited) {
                        qe->waited = true;
                        class_learn_locked(q, qe);
                        /* An event that waits for a program counts in the
                         * slow lane, whatever lane it was taken from. */
                        if (qe->lane != LANE_SLOW) {
                                struct lane *slow = slow_lane(q), *from = &q->lanes[qe->lane];

                                from->n_running--;
                                slow->n_running++;
                                if (qe->turn_wait) {
                                        from->n_turn_wait--;
                                        slow->n_turn_wait++;
                                }
                                qe->lane = LANE_SLOW;
                                /* its start counts as the slow lane's progress */
                                slow->last_progress = MAX(slow->last_progress, qe->start_usec);
                        }
                }
                if (blocked)
                        q->lanes[qe->lane].n_blocked++; /* a soft slot may open */
                else
                        q->lanes[qe->lane].n_blocked--; /* the stall rule may apply again */
        }
        need = rewake_locked(q);
        pthread_mutex_unlock(&q->lock);
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
}

void event_queue_set_turn_wait(struct event_queue *q, struct queued_event *qe, bool waiting)
{
        bool need = false;

        pthread_mutex_lock(&q->lock);
        if (qe->turn_wait != waiting) {
                qe->turn_wait = waiting;
                if (qe->state == QE_RUNNING) {
                        if (waiting)
                                q->lanes[qe->lane].n_turn_wait++;
                        else
                                q->lanes[qe->lane].n_turn_wait--; /* the stall rule is back */
                }
                need = rewake_locked(q);
        }
        pthread_mutex_unlock(&q->lock);
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
}

int event_queue_requeue(struct event_queue *q, struct queued_event *qe, uint64_t delay_usec,
                        uint64_t timeout_usec)
{
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        bool need;

        pthread_mutex_lock(&q->lock);
        if (qe->state != QE_RUNNING ||
            atomic_load(&qe->result_owner) != QE_RESULT_OPEN) {
                pthread_mutex_unlock(&q->lock);
                return -ECANCELED;
        }
        if (q->shutdown) {
                pthread_mutex_unlock(&q->lock);
                return -ESHUTDOWN;
        }
        if (qe->retry_until > 0 && now >= qe->retry_until) {
                pthread_mutex_unlock(&q->lock);
                return -ETIMEDOUT;
        }
        if (qe->retry_until == 0)
                qe->retry_until = timeout_usec > UINT64_MAX - now ? UINT64_MAX : now + timeout_usec;
        qe->not_before = delay_usec > UINT64_MAX - now ? UINT64_MAX : now + delay_usec;

        /* Back to queued; it stays in the indexes and keeps its dependants. */
        list_remove(&q->lent, qe);
        qe->state = QE_QUEUED;
        list_append(&q->queued, qe);
        lane_release_locked(q, qe, now);
        q->n_queued++;
        if (delay_usec == 0) {
                runnable_append_locked(q, qe);
                wake_takers_locked(q);
        } else {
                delayed_append_locked(q, qe);
                /* Waiting takers re-arm their sleep with the new earliest time. */
                pthread_cond_broadcast(&q->takers);
        }
        need = need_worker_locked(q);
        pthread_mutex_unlock(&q->lock);
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
        return 0;
}

void event_queue_retry_disk(struct event_queue *q, const char *disk_devpath)
{
        bool need = false;

        pthread_mutex_lock(&q->lock);
        if (q->n_delayed > 0) {
                size_t before = q->n_delayed;

                (void)promote_delayed_locked(q, due_by_disk, disk_devpath);
                if (q->n_delayed != before)
                        need = rewake_locked(q);
        }
        pthread_mutex_unlock(&q->lock);
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
}

const struct uevent *queued_event_uevent(const struct queued_event *qe)
{
        return qe->ev;
}

uint64_t queued_event_start_usec(const struct queued_event *qe)
{
        return qe->start_usec;
}

void event_queue_set_paused(struct event_queue *q, bool paused)
{
        bool need = false;

        pthread_mutex_lock(&q->lock);
        q->paused = paused;
        if (q->shutdown)
                pthread_cond_broadcast(&q->takers);
        else if (!paused) {
                wake_takers_locked(q);
                need = need_worker_locked(q);
        }
        pthread_mutex_unlock(&q->lock);
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
}

void event_queue_set_max_running(struct event_queue *q, unsigned max_running)
{
        bool need;

        pthread_mutex_lock(&q->lock);
        q->max_running = max_running;
        need = rewake_locked(q);
        pthread_mutex_unlock(&q->lock);
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
}

/* Free every queued event. All dependants of a running event are queued
 * (blocked), so the running events simply forget theirs. */
static struct queued_event *drop_queued_locked(struct event_queue *q)
{
        struct queued_event *dropped = q->queued.head;

        for (struct queued_event *qe = q->lent.head; qe; qe = qe->next)
                if (qe->state == QE_RUNNING)
                        dep_node_forget_dependants(qe->deps);
        for (struct queued_event *qe = q->queued.head; qe; qe = qe->next)
                event_deps_remove(&q->deps, qe->deps, NULL, NULL);
        q->queued = (struct qe_list){ NULL, NULL };
        for (size_t i = 0; i < N_LANES; i++) {
                q->lanes[i].head = q->lanes[i].tail = NULL;
                q->lanes[i].n_runnable = 0;
        }
        q->n_runnable = 0;
        q->delayed = NULL;
        q->n_delayed = 0;
        q->n_queued = 0;
        count_decreased_locked(q);
        return dropped;
}

void event_queue_shutdown(struct event_queue *q, bool drop_queued)
{
        struct queued_event *dropped = NULL;

        pthread_mutex_lock(&q->lock);
        q->shutdown = true;
        if (drop_queued)
                dropped = drop_queued_locked(q);
        pthread_cond_broadcast(&q->takers);
        pthread_cond_broadcast(&q->space);
        pthread_mutex_unlock(&q->lock);
        qe_free_chain(dropped);
}

void event_queue_get_stats(struct event_queue *q, struct event_queue_stats *ret)
{
        pthread_mutex_lock(&q->lock);
        *ret = (struct event_queue_stats){
                .queued = q->n_queued,
                .running = q->n_running,
                .runnable = q->n_runnable,
                .delayed = q->n_delayed,
                .startable = takeable_locked(q) + (held_back_locked(q) ? 1 : 0),
                .pushed_total = q->pushed_total,
                .done_total = q->done_total,
                .fast_taken_total = q->lanes[LANE_FAST].taken_total,
                .class_flips = q->class_flips,
        };
        pthread_mutex_unlock(&q->lock);
}

void event_queue_foreach_running(struct event_queue *q,
                                 void (*cb)(struct queued_event *qe, void *userdata),
                                 void *userdata)
{
        uint64_t done_before;
        bool need;

        pthread_mutex_lock(&q->lock);
        done_before = q->done_total;
        /* Abandoned events stay on the list, so the callback may abandon any. */
        for (struct queued_event *qe = q->lent.head; qe; qe = qe->next)
                if (qe->state == QE_RUNNING)
                        cb(qe, userdata);
        need = q->done_total != done_before && !q->shutdown && need_worker_locked(q);
        pthread_mutex_unlock(&q->lock);
        if (need)
                q->hooks.on_need_worker(q->hooks.userdata);
}

bool queued_event_abandon_locked(struct event_queue *q, struct queued_event *qe)
{
        int open = QE_RESULT_OPEN;

        if (qe->state != QE_RUNNING)
                return false;
        if (!atomic_compare_exchange_strong(&qe->result_owner, &open, QE_RESULT_ABANDONED))
                return false; /* the worker is already publishing its result */
        qe->state = QE_ABANDONED;
        if (!qe->waited)
                class_learn_locked(q, qe);
        release_locked(q, qe);
        lane_release_locked(q, qe, now_usec(CLOCK_MONOTONIC));
        q->done_total++;
        count_decreased_locked(q);
        wake_takers_locked(q);
        return true;
}

bool queued_event_abandoned(const struct queued_event *qe)
{
        return atomic_load(&((struct queued_event *)qe)->result_owner) == QE_RESULT_ABANDONED;
}

bool queued_event_claim_result(struct queued_event *qe)
{
        int open = QE_RESULT_OPEN;

        if (atomic_compare_exchange_strong(&qe->result_owner, &open, QE_RESULT_WORKER))
                return true;
        return open == QE_RESULT_WORKER;
}
