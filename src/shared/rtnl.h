/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (sockets belong to the caller; the sequence counter is atomic) */
#pragma once
/* One rtnetlink request and its answer, for the NAME= rename (rules/) and
 * net_setup_link (builtins/):
 *
 *  - a request is built in a fixed struct rtnl_req of RTNL_REQUEST_MAX
 *    bytes: an ifinfomsg header, then attributes; an attribute that does not
 *    fit sets `overflow` and is dropped, and rtnl_call() then refuses to
 *    send (-ENOBUFS);
 *  - rtnl_call() opens the NETLINK_ROUTE socket lazily into the int the
 *    caller passes (-1 = not yet; O_CLOEXEC, bound; the caller closes it),
 *    stamps the request with a fresh sequence number, sends it and reads
 *    datagrams from the kernel (port id 0; others are ignored) until the
 *    answer with that number comes, at most RTNL_TIMEOUT_MSEC in all
 *    (-ETIMEDOUT after). Answers of other numbers (say of an earlier request
 *    that timed out on the same socket) are skipped;
 *  - the answer is the kernel's NLMSG_ERROR: 0 for an ack, else its -errno
 *    (an error outside -4095..-1 counts as -EIO); or, when the caller asks
 *    for data, the first message of that number, placed in the caller's
 *    buffer. An answer larger than the buffer is -ENOBUFS, never cut short. */

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RTNL_REQUEST_MAX 8192
#define RTNL_TIMEOUT_MSEC 5000
/* room for an error answer that echoes a whole request (kernels without
 * NETLINK_CAP_ACK) */
#define RTNL_ACK_MAX (RTNL_REQUEST_MAX + 512)

struct rtnl_req {
        union {
                struct nlmsghdr hdr;
                char buf[RTNL_REQUEST_MAX];
        } u;
        bool overflow;
};

/* Start a link request: nlmsghdr (NLM_F_REQUEST | flags) + ifinfomsg of
 * AF_UNSPEC and ifindex. */
void rtnl_req_link(struct rtnl_req *q, uint16_t type, uint16_t flags, int ifindex);
/* Append one attribute of len bytes (data may be NULL when len is 0).
 * Returns it, or NULL (and sets q->overflow) if it does not fit. */
struct rtattr *rtnl_req_attr(struct rtnl_req *q, uint16_t type, const void *data, size_t len);
/* rtnl_req_attr() with a NUL-terminated string (the NUL included). */
struct rtattr *rtnl_req_str(struct rtnl_req *q, uint16_t type, const char *s);
struct rtattr *rtnl_req_u32(struct rtnl_req *q, uint16_t type, uint32_t v);
/* A nest: begin appends an empty attribute of type | NLA_F_NESTED; the
 * attributes appended until end are its content. end fails with -ENOBUFS if
 * the request overflowed (or nest is NULL), else 0. */
struct rtattr *rtnl_req_nest_begin(struct rtnl_req *q, uint16_t type);
int rtnl_req_nest_end(struct rtnl_req *q, struct rtattr *nest);

/* Open *fd if it is -1. 0 or -errno. */
int rtnl_open(int *fd);

/* Send q and wait for its answer (see above). With ret == NULL the answer
 * must be an ack or an error; buf/size may then be NULL/0 and an internal
 * buffer of RTNL_ACK_MAX bytes is used. With ret != NULL, *ret points into
 * buf (aligned for struct nlmsghdr) at the data message of q's sequence
 * number, and an ack without data is -EIO. Returns 0 or -errno. */
int rtnl_call(int *fd, struct rtnl_req *q, void *buf, size_t size, struct nlmsghdr **ret);

/* The parsing half of rtnl_call(), on one received datagram of n bytes:
 * true if it holds the answer to seq, with *result 0 or -errno and, when
 * want_data, *ret the data message; false if not (read on). Messages whose
 * length runs past n end the scan. */
bool rtnl_find_answer(void *buf, size_t n, uint32_t seq, bool want_data, struct nlmsghdr **ret,
                      int *result);
