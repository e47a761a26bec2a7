/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager */
#pragma once
/* A tiny level-triggered epoll loop for the manager thread: one callback per
 * fd. Callbacks may add or remove fds (including their own) while dispatching. */

#include <stdbool.h>
#include <stdint.h>

struct loop;
typedef void (*loop_handler_t)(struct loop *l, int fd, uint32_t revents, void *userdata);

int loop_new(struct loop **ret);
void loop_free(struct loop *l);
/* Register fd (borrowed: the loop never closes it). 0 or -errno. */
int loop_add(struct loop *l, int fd, uint32_t events, loop_handler_t cb, void *userdata);
int loop_modify(struct loop *l, int fd, uint32_t events);
void loop_remove(struct loop *l, int fd);
/* Wait up to timeout_ms (-1: forever) and dispatch. 0 or -errno. */
int loop_run_once(struct loop *l, int timeout_ms);
