/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any */
#pragma once
/* Every thread tudev starts (the workers, the netlink listener, the inotify
 * thread; the unit tests' threads too) starts through thread_start(), with
 * THREAD_STACK_SIZE of stack whatever the C library's default: glibc takes
 * RLIMIT_STACK (8 MiB on most systems), musl 128 KiB, too little for a
 * worker. */

#include <pthread.h>
#include <stddef.h>

/* 2 MiB. How the need was measured (gcc 12, -O2, x86_64): the frame of every
 * function from `make O=/tmp/su CFLAGS="-g -O2 -fstack-usage"` (*.su), the
 * calls between them from -fcallgraph-info=su (*.ci), with the indirect calls
 * resolved by hand to their possible targets (builtins, spawners, emit and
 * hook callbacks); the deepest chain from each thread's start function:
 *   worker (worker_main): an event's broadcast,
 *     worker_main 176 + event_process 4,976 + broadcast_event 73,712 +
 *     send_nulstr 32,912 + broadcaster_send 65,632 + monitor_msg_encode 160 +
 *     murmur_hash2 8 = 177,576 bytes (173 KiB; 180,000 under ASan+UBSan,
 *     177,840 under ThreadSanitizer);
 *     its rules, a PROGRAM or a builtin through the exec helper: 78 KiB;
 *   inotify thread (watch_main): 30 KiB; netlink listener: 17 KiB.
 * The C library's and libudev's, libkmod's frames come on top (a few KiB).
 * glibc carves a thread's static TLS out of the size asked for: a few KiB
 * normally, but about 770 KiB under ThreadSanitizer (its per-thread state),
 * which would leave 1 MiB only 250 KiB; musl adds the TLS to the size. 2 MiB
 * leaves over 6 times the deepest chain even under ThreadSanitizer, room
 * for library frames and growth, and is still a quarter of glibc's usual
 * default. A stack's pages take memory only once touched, so the size
 * reserves address space, not memory. */
#define THREAD_STACK_SIZE ((size_t)2 << 20)

/* pthread_create(ret, NULL, fn, arg) with a THREAD_STACK_SIZE stack (other
 * attributes the defaults): 0 or a negative errno. */
int thread_start(pthread_t *ret, void *(*fn)(void *), void *arg);

/* Name the calling thread as ps -L, top -H and /proc/PID/task/TID/comm show
 * it (prctl PR_SET_NAME: at most 15 bytes, longer names are cut). Only the
 * thread changes: the process keeps its name (pidof, killall). A failure is
 * ignored: the name is for people, nothing depends on it. */
void thread_set_name(const char *name);
