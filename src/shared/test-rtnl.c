/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single-threaded) */
/* shared/rtnl: building requests, finding the answer in received datagrams,
 * and live requests to the kernel that need no privilege (RTM_GETLINK of
 * "lo"; skipped, with a note, where no NETLINK_ROUTE socket can be had). */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shared/macro.h"
#include "shared/rtnl.h"
#include "shared/tests.h"

static void test_build(void)
{
        struct rtnl_req q;
        const struct ifinfomsg *ifi;
        struct rtattr *a, *nest, *inner;
        size_t base = NLMSG_LENGTH(sizeof(struct ifinfomsg));

        rtnl_req_link(&q, RTM_NEWLINKPROP, NLM_F_ACK | NLM_F_CREATE, 7);
        ASSERT_EQ(q.u.hdr.nlmsg_type, RTM_NEWLINKPROP);
        ASSERT_EQ(q.u.hdr.nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE);
        ASSERT_EQ(q.u.hdr.nlmsg_len, base);
        ifi = NLMSG_DATA(&q.u.hdr);
        ASSERT_EQ(ifi->ifi_family, AF_UNSPEC);
        ASSERT_EQ(ifi->ifi_index, 7);

        a = rtnl_req_u32(&q, IFLA_MTU, 1400);
        ASSERT_TRUE(a == (struct rtattr *)(q.u.buf + NLMSG_ALIGN(base)));
        ASSERT_EQ(a->rta_len, RTA_LENGTH(4));
        ASSERT_EQ(*(uint32_t *)RTA_DATA(a), 1400);

        nest = rtnl_req_nest_begin(&q, IFLA_PROP_LIST);
        ASSERT_TRUE(nest != NULL);
        ASSERT_EQ(nest->rta_type, IFLA_PROP_LIST | NLA_F_NESTED);
        inner = rtnl_req_str(&q, IFLA_ALT_IFNAME, "abcde"); /* 6 bytes, padded to 8 */
        ASSERT_TRUE(inner == (struct rtattr *)((char *)nest + RTA_LENGTH(0)));
        ASSERT_EQ(inner->rta_len, RTA_LENGTH(6));
        ASSERT_STREQ((const char *)RTA_DATA(inner), "abcde");
        ASSERT_EQ(((char *)RTA_DATA(inner))[6], 0); /* padding zeroed */
        ASSERT_EQ(((char *)RTA_DATA(inner))[7], 0);
        ASSERT_EQ(rtnl_req_nest_end(&q, nest), 0);
        ASSERT_EQ(nest->rta_len, RTA_LENGTH(0) + RTA_SPACE(6));
        ASSERT_EQ(q.u.hdr.nlmsg_len, NLMSG_ALIGN(base) + RTA_SPACE(4) + RTA_LENGTH(0) +
                                     RTA_SPACE(6));
        ASSERT_TRUE(!q.overflow);
}

static void test_overflow(void)
{
        static char big[RTNL_REQUEST_MAX];
        struct rtnl_req q;
        struct rtattr *nest;
        uint32_t len;
        int fd = -1;

        rtnl_req_link(&q, RTM_SETLINK, NLM_F_ACK, 1);
        nest = rtnl_req_nest_begin(&q, IFLA_PROP_LIST);
        len = q.u.hdr.nlmsg_len;
        ASSERT_TRUE(rtnl_req_attr(&q, IFLA_ALT_IFNAME, big, sizeof(big) - 16) == NULL);
        ASSERT_TRUE(q.overflow);
        ASSERT_EQ(q.u.hdr.nlmsg_len, len); /* nothing appended */
        /* once overflowed, even what would fit is refused */
        ASSERT_TRUE(rtnl_req_u32(&q, IFLA_MTU, 1) == NULL);
        ASSERT_EQ(rtnl_req_nest_end(&q, nest), -ENOBUFS);
        ASSERT_EQ(rtnl_call(&fd, &q, NULL, 0, NULL), -ENOBUFS);
        ASSERT_EQ(fd, -1); /* refused before any socket was opened */

        /* the last byte that fits */
        rtnl_req_link(&q, RTM_SETLINK, 0, 1);
        ASSERT_TRUE(rtnl_req_attr(&q, IFLA_IFALIAS, big,
                                  RTNL_REQUEST_MAX - NLMSG_ALIGN(q.u.hdr.nlmsg_len) -
                                          RTA_LENGTH(0)) != NULL);
        ASSERT_EQ(q.u.hdr.nlmsg_len, RTNL_REQUEST_MAX);
        ASSERT_TRUE(!q.overflow);
}

/* Append one message to a datagram under construction. */
static size_t put_msg(char *buf, size_t off, uint16_t type, uint32_t seq, const void *payload,
                      size_t len)
{
        struct nlmsghdr *h = (struct nlmsghdr *)(buf + off);

        memset(h, 0, NLMSG_SPACE(len));
        h->nlmsg_len = (uint32_t)NLMSG_LENGTH(len);
        h->nlmsg_type = type;
        h->nlmsg_seq = seq;
        if (len)
                memcpy(NLMSG_DATA(h), payload, len);
        return off + NLMSG_SPACE(len);
}

static size_t put_err(char *buf, size_t off, uint32_t seq, int error)
{
        struct nlmsgerr e = { .error = error };

        return put_msg(buf, off, NLMSG_ERROR, seq, &e, sizeof(e));
}

static void test_find_answer(void)
{
        char buf[1024] __attribute__((aligned(8)));
        struct ifinfomsg ifi = { .ifi_index = 3 };
        struct nlmsghdr *h = NULL;
        size_t n, first;
        int r = 12345;

        /* an ack, after an answer to another request */
        n = put_err(buf, 0, 41, -ENODEV);
        n = put_err(buf, n, 42, 0);
        ASSERT_TRUE(rtnl_find_answer(buf, n, 42, false, NULL, &r));
        ASSERT_EQ(r, 0);
        ASSERT_TRUE(rtnl_find_answer(buf, n, 41, false, NULL, &r));
        ASSERT_EQ(r, -ENODEV);
        ASSERT_TRUE(!rtnl_find_answer(buf, n, 43, false, NULL, &r));

        /* data for an ack-only request is passed over; the ack decides */
        n = put_msg(buf, 0, RTM_NEWLINK, 42, &ifi, sizeof(ifi));
        ASSERT_TRUE(!rtnl_find_answer(buf, n, 42, false, NULL, &r));
        n = put_err(buf, n, 42, -EPERM);
        ASSERT_TRUE(rtnl_find_answer(buf, n, 42, false, NULL, &r));
        ASSERT_EQ(r, -EPERM);

        /* data asked for: the first message of the number */
        first = put_msg(buf, 0, RTM_NEWLINK, 7, &ifi, sizeof(ifi));
        n = put_msg(buf, first, RTM_NEWLINK, 42, &ifi, sizeof(ifi));
        ASSERT_TRUE(rtnl_find_answer(buf, n, 42, true, &h, &r));
        ASSERT_EQ(r, 0);
        ASSERT_TRUE(h == (struct nlmsghdr *)(buf + first));
        /* ... an ack where data was due, or NLMSG_DONE, is -EIO */
        n = put_err(buf, 0, 42, 0);
        ASSERT_TRUE(rtnl_find_answer(buf, n, 42, true, &h, &r));
        ASSERT_EQ(r, -EIO);
        n = put_msg(buf, 0, NLMSG_DONE, 42, NULL, 0);
        ASSERT_TRUE(rtnl_find_answer(buf, n, 42, true, &h, &r));
        ASSERT_EQ(r, -EIO);

        /* an error code no kernel sends */
        n = put_err(buf, 0, 42, 5);
        ASSERT_TRUE(rtnl_find_answer(buf, n, 42, false, NULL, &r));
        ASSERT_EQ(r, -EIO);
        n = put_err(buf, 0, 42, -100000);
        ASSERT_TRUE(rtnl_find_answer(buf, n, 42, false, NULL, &r));
        ASSERT_EQ(r, -EIO);
        /* an NLMSG_ERROR too short for its nlmsgerr */
        n = put_msg(buf, 0, NLMSG_ERROR, 42, "ab", 2);
        ASSERT_TRUE(rtnl_find_answer(buf, n, 42, false, NULL, &r));
        ASSERT_EQ(r, -EBADMSG);

        /* lengths that run past the datagram end the scan */
        n = put_err(buf, 0, 42, 0);
        ASSERT_TRUE(!rtnl_find_answer(buf, n - 1, 42, false, NULL, &r));
        ((struct nlmsghdr *)buf)->nlmsg_len = (uint32_t)n + 4;
        ASSERT_TRUE(!rtnl_find_answer(buf, n, 42, false, NULL, &r));
        ((struct nlmsghdr *)buf)->nlmsg_len = 8; /* shorter than a header */
        ASSERT_TRUE(!rtnl_find_answer(buf, n, 42, false, NULL, &r));
        ASSERT_TRUE(!rtnl_find_answer(buf, 0, 42, false, NULL, &r));
}

static bool have_rtnl(void)
{
        int fd = -1;
        int r = rtnl_open(&fd);

        if (r < 0) {
                fprintf(stderr, "(no NETLINK_ROUTE socket: %s) ", strerror(-r));
                return false;
        }
        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
        safe_close(fd);
        return true;
}

static const char *link_name(struct nlmsghdr *h)
{
        struct ifinfomsg *ifi = NLMSG_DATA(h);
        int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi)));

        for (struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len))
                if (a->rta_type == IFLA_IFNAME)
                        return RTA_DATA(a);
        return NULL;
}

static void test_live_getlink(void)
{
        static char buf[64 * 1024] __attribute__((aligned(8)));
        _cleanup_close_ int fd = -1;
        struct rtnl_req q;
        struct nlmsghdr *h = NULL;
        unsigned lo = if_nametoindex("lo");

        if (!have_rtnl() || lo == 0)
                return;
        rtnl_req_link(&q, RTM_GETLINK, 0, (int)lo);
        ASSERT_EQ(rtnl_call(&fd, &q, buf, sizeof(buf), &h), 0);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(h->nlmsg_type, RTM_NEWLINK);
        ASSERT_EQ(((struct ifinfomsg *)NLMSG_DATA(h))->ifi_index, (int)lo);
        ASSERT_STREQ(link_name(h), "lo");

        /* the socket is reused; a link that does not exist: the kernel's error */
        rtnl_req_link(&q, RTM_GETLINK, 0, 0x7ffffff0);
        ASSERT_EQ(rtnl_call(&fd, &q, buf, sizeof(buf), &h), -ENODEV);

        /* an answer too large for the buffer is refused, not cut */
        rtnl_req_link(&q, RTM_GETLINK, 0, (int)lo);
        ASSERT_EQ(rtnl_call(&fd, &q, buf, 64, &h), -ENOBUFS);
}

static void test_live_ack_and_sequence(void)
{
        static const struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
        _cleanup_close_ int fd = -1;
        struct rtnl_req q, stale;
        unsigned lo = if_nametoindex("lo");

        if (!have_rtnl() || lo == 0)
                return;
        ASSERT_EQ(rtnl_open(&fd), 0);
        /* an earlier request whose error answer is still queued on the socket
         * when the next call waits: its sequence number is not the call's */
        rtnl_req_link(&stale, RTM_GETLINK, NLM_F_ACK, 0x7ffffff0);
        stale.u.hdr.nlmsg_seq = 0xfffffff0u;
        ASSERT_TRUE(sendto(fd, stale.u.buf, stale.u.hdr.nlmsg_len, 0,
                           (const struct sockaddr *)&kernel, sizeof(kernel)) >= 0);
        /* with NLM_F_ACK and no buffer: the link's data is passed over and
         * the ack that follows is the answer */
        rtnl_req_link(&q, RTM_GETLINK, NLM_F_ACK, (int)lo);
        ASSERT_EQ(rtnl_call(&fd, &q, NULL, 0, NULL), 0);
        ASSERT_TRUE(q.u.hdr.nlmsg_seq != 0xfffffff0u);
        /* a buffer is needed for data */
        ASSERT_EQ(rtnl_call(&fd, &q, NULL, 0, (struct nlmsghdr *[]){ NULL }), -EINVAL);
}

int main(void)
{
        TEST_RUN(test_build);
        TEST_RUN(test_overflow);
        TEST_RUN(test_find_answer);
        TEST_RUN(test_live_getlink);
        TEST_RUN(test_live_ack_and_sequence);
        return 0;
}
