/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: main, plus worker threads in test_concurrent_loads */
/* Unit tests of builtin-util (systemd's number/address parsers, the
 * kernel command line, naming schemes) and of the .link loader and matcher
 * (link-config): search path override by $TUDEV_NETWORK_DIRS, basename
 * override, masking, drop-ins, systemd's parser rules, conditions, [Match]
 * semantics, the messages for ignored keys, reload fingerprint, concurrent
 * loading. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "builtins/builtin-util.h"
#include "builtins/link-config.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/tests.h"
#include "shared/thread-util.h"

static char root[64];
static char dir_etc[128], dir_lib[128];

static void write_file(const char *dir, const char *name, const char *content)
{
        char p[PATH_MAX], d[PATH_MAX];
        FILE *f;

        snprintf(p, sizeof(p), "%s/%s", dir, name);
        snprintf(d, sizeof(d), "%s", p);
        *strrchr(d, '/') = '\0';
        mkdir(d, 0755);
        f = fopen(p, "we");
        ASSERT_TRUE(f);
        fputs(content, f);
        fclose(f);
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st, (void)flag, (void)ftw;
        return remove(p);
}

/* ------------------------------------------------------------ builtin-util */

static void test_parsers(void)
{
        unsigned u = 0;
        int i = 0;
        unsigned long long llu = 0;
        long long ll = 0;

        ASSERT_EQ(parse_atou("42", &u), 0);
        ASSERT_EQ(u, 42);
        ASSERT_EQ(parse_atou(" 0x10", &u), 0);
        ASSERT_EQ(u, 16);
        ASSERT_EQ(parse_atou("010", &u), 0); /* C octal, as strtoul(.., 0) */
        ASSERT_EQ(u, 8);
        ASSERT_EQ(parse_atou("0b101", &u), 0);
        ASSERT_EQ(u, 5);
        ASSERT_EQ(parse_atou("0o17", &u), 0);
        ASSERT_EQ(u, 15);
        ASSERT_EQ(parse_atou("-1", &u), -ERANGE);
        ASSERT_EQ(parse_atou("-0", &u), 0);
        ASSERT_EQ(parse_atou("5x", &u), -EINVAL);
        ASSERT_EQ(parse_atou("", &u), -EINVAL);
        ASSERT_EQ(parse_atou("4294967296", &u), -ERANGE);
        ASSERT_EQ(parse_atou_full("08", 16, &u), 0);
        ASSERT_EQ(u, 8);
        ASSERT_EQ(parse_atou_full("+5", 10 | PARSE_REFUSE_PLUS_MINUS, &u), -EINVAL);
        ASSERT_EQ(parse_atou_full("05", 10 | PARSE_REFUSE_LEADING_ZERO, &u), -EINVAL);
        ASSERT_EQ(parse_atou_full("0", 10 | PARSE_REFUSE_LEADING_ZERO, &u), 0);
        ASSERT_EQ(parse_atou_full(" 5", 10 | PARSE_REFUSE_LEADING_WHITESPACE, &u), -EINVAL);
        ASSERT_EQ(parse_atoi("-12", &i), 0);
        ASSERT_EQ(i, -12);
        ASSERT_EQ(parse_atoi("2147483648", &i), -ERANGE);
        ASSERT_EQ(parse_atollu_full("18446744073709551615", 10, &llu), 0);
        ASSERT_TRUE(llu == UINT64_MAX);
        ASSERT_EQ(parse_atolli("-0x10", &ll), 0);
        ASSERT_EQ(ll, -16);
        ASSERT_EQ(parse_boolean("Yes"), 1);
        ASSERT_EQ(parse_boolean("off"), 0);
        ASSERT_EQ(parse_boolean("2"), -EINVAL);
}

static void test_hw_addr(void)
{
        struct hw_addr a;
        char s[HW_ADDR_STR_MAX];

        ASSERT_EQ(parse_hw_addr_full("00:1B:21:aa:bb:cc", 0, &a), 0);
        ASSERT_EQ(a.length, 6);
        ASSERT_STREQ(hw_addr_to_string(&a, false, s), "00:1b:21:aa:bb:cc");
        ASSERT_STREQ(hw_addr_to_string(&a, true, s), "001b21aabbcc");
        ASSERT_EQ(parse_hw_addr_full("0-1b-21-a-bb-c", 6, &a), 0);
        ASSERT_STREQ(hw_addr_to_string(&a, false, s), "00:1b:21:0a:bb:0c");
        ASSERT_EQ(parse_hw_addr_full("001b.21aa.bbcc", 0, &a), 0);
        ASSERT_STREQ(hw_addr_to_string(&a, true, s), "001b21aabbcc");
        ASSERT_EQ(parse_hw_addr_full("10.0.0.1", 0, &a), 0);
        ASSERT_EQ(a.length, 4);
        ASSERT_EQ(parse_hw_addr_full("fe80::1", 0, &a), 0);
        ASSERT_EQ(a.length, 16);
        ASSERT_EQ(parse_hw_addr_full("00:11:22:33:44", 0, &a), -EINVAL); /* 5 bytes */
        ASSERT_EQ(parse_hw_addr_full("00:11:22:33:44", SIZE_MAX, &a), 0);
        ASSERT_EQ(parse_hw_addr_full("00:11:22:33:44:55", 4, &a), -EINVAL);
        ASSERT_EQ(parse_hw_addr_full("00:111:22:33:44:55", 0, &a), -EINVAL);
        ASSERT_EQ(parse_hw_addr_full("00:11:22:33:44:5g", 0, &a), -EINVAL);
        ASSERT_EQ(parse_hw_addr_full("", 0, &a), -EINVAL);
        ASSERT_EQ(parse_hw_addr_full("::", 6, &a), -EINVAL);
}

static void test_cmdline(void)
{
        char *v = NULL;

        setenv("SYSTEMD_PROC_CMDLINE", "quiet net_ifnames=0 'a=b c' rd.x=1 net.ifnames=1 foo "
                                       "net-ifnames k=\"v w\"", 1);
        ASSERT_EQ(cmdline_get_key("net.ifnames", true, &v), 1);
        ASSERT_STREQ(v, "1"); /* the last value wins; a bare key keeps it */
        free(v);
        ASSERT_EQ(cmdline_get_key("a", false, &v), 1);
        ASSERT_STREQ(v, "b c");
        free(v);
        ASSERT_EQ(cmdline_get_key("k", false, &v), 1);
        ASSERT_STREQ(v, "v w");
        free(v);
        ASSERT_EQ(cmdline_get_key("x", false, &v), 0); /* rd.x only in the initrd */
        ASSERT_TRUE(!v);
        ASSERT_EQ(cmdline_get_key("foo", false, &v), 0);
        ASSERT_EQ(cmdline_get_key("foo", true, &v), 1);
        ASSERT_TRUE(!v);
        unsetenv("SYSTEMD_PROC_CMDLINE");
}

static void test_specifiers(void)
{
        char *v = NULL;

        ASSERT_EQ(link_specifier_expand("a%%b%", &v), 0);
        ASSERT_STREQ(v, "a%b%");
        free(v);
        ASSERT_EQ(link_specifier_expand("%Y", &v), -EBADSLT);
        ASSERT_EQ(link_specifier_expand("%T/%V", &v), 0);
        ASSERT_TRUE(strstr(v, "/") != NULL);
        free(v);
        ASSERT_EQ(link_specifier_expand("%l", &v), 0);
        ASSERT_TRUE(!strchr(v, '.'));
        free(v);
        if (link_specifier_expand("%b", &v) == 0) {
                ASSERT_EQ(strlen(v), 32); /* without dashes, as systemd */
                free(v);
        }
        ASSERT_TRUE(link_property_can_set("ID_NET_MANAGED_BY"));
        ASSERT_TRUE(!link_property_can_set("DEVNAME"));
        ASSERT_TRUE(!link_property_can_set("SYNTH_ARG_X"));
        ASSERT_TRUE(!link_property_can_set("CURRENT_TAGS"));
}

static void test_naming_schemes(void)
{
        const struct naming_scheme *v254 = naming_scheme_from_name("v254");
        const struct naming_scheme *v255 = naming_scheme_from_name("v255");
        const struct naming_scheme *v257 = naming_scheme_from_name("v257");

        /* systemd 257's list: v253, v254, v255, v257; there is no v256 */
        ASSERT_STREQ(naming_scheme_from_name("latest")->name, "v257");
        ASSERT_TRUE(!naming_scheme_from_name("v256"));
        ASSERT_TRUE(!naming_scheme_from_name("v258"));
        ASSERT_EQ(v257->version, 257);
        ASSERT_TRUE(naming_scheme_from_name("v253")->flags & NAMING_USB_HOST);
        ASSERT_TRUE(!(naming_scheme_from_name("v252")->flags & NAMING_USB_HOST));
        ASSERT_TRUE(v254->flags & NAMING_SR_IOV_R);
        ASSERT_TRUE(v254->flags & NAMING_BRIDGE_MULTIFUNCTION_SLOT);
        /* v255 reverts v251's multi-function bridge slots */
        ASSERT_TRUE(!(v255->flags & NAMING_BRIDGE_MULTIFUNCTION_SLOT));
        ASSERT_TRUE(v255->flags & NAMING_BRIDGE_NO_SLOT);
        ASSERT_TRUE(!(v255->flags & NAMING_FIRMWARE_NODE_SUN));
        ASSERT_EQ(v257->flags, v255->flags | NAMING_FIRMWARE_NODE_SUN |
                                       NAMING_DEVICETREE_PORT_ALIASES);
        /* configure --with-default-net-naming-scheme (v252 unless given) */
        ASSERT_TRUE(naming_scheme_from_name(naming_scheme_default_name()) != NULL);
        ASSERT_STREQ(naming_scheme_from_name("v247")->name, "v247");
        ASSERT_TRUE(!naming_scheme_from_name("v248"));
        ASSERT_TRUE(naming_scheme_from_name("v238")->flags == 0);
        ASSERT_TRUE(naming_scheme_from_name("v252")->flags & NAMING_DEVICETREE_ALIASES);
        ASSERT_TRUE(!(naming_scheme_from_name("v251")->flags & NAMING_DEVICETREE_ALIASES));
        ASSERT_TRUE(naming_scheme_from_name("v240")->flags & NAMING_ALLOW_RERENAMES);
}

/* ------------------------------------------------------------ link-config */

static const struct link_config *find(const struct link_config_set *s, const char *base)
{
        for (const struct link_config *c = s->first; c; c = c->next)
                if (streq(strrchr(c->filename, '/') + 1, base))
                        return c;
        return NULL;
}

static void setup_tree(void)
{
        char p[PATH_MAX];

        write_file(dir_lib, "10-a.link", "[Match]\nOriginalName=*\n[Link]\nName=lib0\n");
        write_file(dir_etc, "10-a.link", "[Match]\nOriginalName=etc*\n[Link]\nName=etc0\n");
        write_file(dir_lib, "20-masked.link", "[Match]\nOriginalName=*\n");
        snprintf(p, sizeof(p), "%s/20-masked.link", dir_etc);
        ASSERT_EQ(symlink("/dev/null", p), 0);
        write_file(dir_lib, "30-dropin.link", "[Match]\nDriver=e1000e\n[Link]\nName=x\n");
        write_file(dir_lib, "30-dropin.link.d/20-b.conf", "[Link]\nName=shadowed\n");
        write_file(dir_etc, "30-dropin.link.d/20-b.conf", "[Link]\nName=fromdropin\n");
        write_file(dir_lib, "30-dropin.link.d/10-a.conf", "[Match]\nDriver=\nDriver=igb\n");
        write_file(dir_etc, "40-badheader.link", "[Match\nOriginalName=*\n");
        write_file(dir_etc, "41-emptymatch.link", "[Match]\n[Link]\nName=e\n");
        write_file(dir_etc, "42-empty.link", "");
        write_file(dir_etc, "43-utf8.link", "[Match]\nOriginalName=*\nDescription=\xff\n");
        write_file(dir_etc, "50-syntax.link",
                   "\xef\xbb\xbf# comment\n  ; comment\nName=outside\n[X-Foo]\nA=1\n"
                   "[Match]\nOriginalName=tv\\\n   a* \"tv b\" 1234 all bad/x\n"
                   "MACAddress=02:00:00:00:00:aa bogus 02-00-00-00-00-bb\n"
                   "Driver=!e1000* igb\nProperty=ID_BUS=usb \"ID_X=a b\" bad\n"
                   "NoEquals\n=novalue\nX-Ok=1\n"
                   "[Link]\nNamePolicy=bogus mac mac  path\nName=bad/name\nName=good0\n"
                   "Alias=\xc3\xa4lias\nMTUBytes=1.5K\nTransmitQueueLength=2000\n"
                   "TransmitQueues=5000\nAlternativeName=alt1 alt2\nAlternativeName=alt1 a/b alt3\n"
                   "AlternativeNamesPolicy=kernel path\nMACAddressPolicy=random\n"
                   "MACAddressPolicy=bogus\nMACAddress=02:11:22:33:44:55\nWakeOnLan=off\n"
                   "[SR-IOV]\nTrust=yes\n");
        write_file(dir_etc, "60-cond.link", "[Match]\nKernelCommandLine=tudev.yes\n"
                                            "OriginalName=*\n");
        write_file(dir_etc, "61-cond.link", "[Match]\nKernelCommandLine=!tudev.yes\n"
                                            "OriginalName=*\n");
        write_file(dir_etc, "62-virt.link", "[Match]\nVirtualization=no\nOriginalName=*\n");
        write_file(dir_etc, "70-reset.link", "[Match]\nOriginalName=*\n[Link]\n"
                                             "NamePolicy=mac\nNamePolicy=\nName=x0\nName=\n");
        write_file(dir_etc, "80-props.link",
                   "[Match]\nOriginalName=*\n[Link]\n"
                   "Property=ID_NET_MANAGED_BY=io.systemd.Network A=1 \"B=x y\" DEVPATH=z 1X=2\n"
                   "Property=A=2 C=%v%% D=%Z noeq\n"
                   "ImportProperty=OLD1 ACTION OLD2 bad-name\n"
                   "UnsetProperty=U1\nUnsetProperty=\nUnsetProperty=U2 SEQNUM\n"
                   "ReceivePacketSteeringCPUMask=all\nReceivePacketSteeringCPUMask=0-1\n");
        /* keys tudev parses and does not apply (test_ignored_keys) */
        write_file(dir_etc, "85-ignored.link",
                   "[Match]\nOriginalName=ign*\n[Link]\nWakeOnLan=magic\nDuplex=full\n"
                   "WakeOnLan=off\nReceivePacketSteeringCPUMask=all\nName=ign0\n"
                   "[SR-IOV]\nVLANId=5\nMACAddress=02:00:00:00:00:01\nVLANId=6\n");
        write_file(dir_etc, "85-ignored.link.d/10-more.conf",
                   "[Link]\nWakeOnLan=phy\nMDI=auto\nReceivePacketSteeringCPUMask=0\n");
        write_file(dir_etc, "not-a-link.conf", "[Match]\nOriginalName=*\n");
        write_file(dir_etc, ".hidden.link", "[Match]\nOriginalName=*\n");
}

static void test_load(void)
{
        struct link_config_set s = { 0 };
        const struct link_config *c;
        const char *order[] = { "10-a.link", "30-dropin.link", "50-syntax.link",
                                "60-cond.link", "70-reset.link", "80-props.link",
                                "85-ignored.link" };
        size_t n = 0;

        setenv("SYSTEMD_PROC_CMDLINE", "quiet tudev.yes", 1);
        ASSERT_EQ(link_config_load(&s), 0);
        for (c = s.first; c; c = c->next, n++) {
                ASSERT_TRUE(n < ARRAY_SIZE(order));
                ASSERT_STREQ(strrchr(c->filename, '/') + 1, order[n]);
        }
        ASSERT_EQ(n, ARRAY_SIZE(order));

        /* /etc overrides /usr/lib by basename */
        c = find(&s, "10-a.link");
        ASSERT_TRUE(strneq(c->filename, dir_etc, strlen(dir_etc)));
        ASSERT_STREQ(c->name, "etc0");
        /* drop-ins: same-named ones override, applied in basename order */
        c = find(&s, "30-dropin.link");
        ASSERT_STREQ(c->name, "fromdropin");
        ASSERT_STREQ(c->match.driver[0], "igb");
        ASSERT_TRUE(!c->match.driver[1]);

        c = find(&s, "50-syntax.link");
        /* the continuation's backslash becomes a space */
        ASSERT_STREQ(c->match.ifname[0], "tv");
        ASSERT_STREQ(c->match.ifname[1], "a*");
        ASSERT_STREQ(c->match.ifname[2], "\"tv"); /* OriginalName= does not unquote */
        ASSERT_STREQ(c->match.ifname[3], "b\"");
        ASSERT_TRUE(!c->match.ifname[4]);         /* numeric, "all", '/' refused */
        ASSERT_EQ(c->match.n_hw_addrs, 2);
        ASSERT_STREQ(c->match.driver[0], "!e1000*");
        ASSERT_STREQ(c->match.driver[1], "!igb"); /* '!' applies to every word */
        ASSERT_STREQ(c->match.property[0], "ID_BUS=usb");
        ASSERT_STREQ(c->match.property[1], "ID_X=a b");
        ASSERT_TRUE(!c->match.property[2]);
        ASSERT_EQ(c->name_policy[0], NAMEPOLICY_MAC);
        ASSERT_EQ(c->name_policy[1], NAMEPOLICY_PATH);
        ASSERT_EQ(c->name_policy[2], _NAMEPOLICY_END);
        ASSERT_STREQ(c->name, "good0");
        ASSERT_TRUE(!c->alias); /* not ASCII */
        ASSERT_EQ(c->mtu, 1536);
        ASSERT_EQ(c->txqueuelen, 2000);
        ASSERT_EQ(c->txqueues, 0);
        ASSERT_STREQ(c->alt_names[0], "alt1");
        ASSERT_STREQ(c->alt_names[1], "alt2");
        ASSERT_STREQ(c->alt_names[2], "alt3");
        ASSERT_TRUE(!c->alt_names[3]);
        ASSERT_EQ(c->alt_names_policy[0], NAMEPOLICY_PATH);
        ASSERT_EQ(c->alt_names_policy[1], _NAMEPOLICY_END);
        ASSERT_EQ(c->mac_policy, MAC_POLICY_RANDOM);
        ASSERT_EQ(c->mac.length, 6);

        c = find(&s, "70-reset.link");
        ASSERT_EQ(c->name_policy[0], _NAMEPOLICY_END);
        ASSERT_TRUE(!c->name);

        /* systemd 256's [Link] Property=, ImportProperty=, UnsetProperty= */
        c = find(&s, "80-props.link");
        {
                struct utsname u;
                char want[sizeof(u.release) + 8];

                ASSERT_EQ(uname(&u), 0);
                snprintf(want, sizeof(want), "C=%s%%", u.release);
                ASSERT_STREQ(c->properties[0], "ID_NET_MANAGED_BY=io.systemd.Network");
                ASSERT_STREQ(c->properties[1], "A=2"); /* replaced in place */
                ASSERT_STREQ(c->properties[2], "B=x y");
                ASSERT_STREQ(c->properties[3], want);
                ASSERT_TRUE(!c->properties[4]); /* DEVPATH, 1X, %Z, noeq refused */
        }
        ASSERT_STREQ(c->import_properties[0], "OLD1");
        ASSERT_STREQ(c->import_properties[1], "OLD2");
        ASSERT_TRUE(!c->import_properties[2]);
        ASSERT_STREQ(c->unset_properties[0], "U2"); /* the empty one reset the list */
        ASSERT_TRUE(!c->unset_properties[1]);
        ASSERT_EQ(c->warned[0], 1u); /* one info message for the two RPS lines */
        link_config_set_free(&s);

        /* the other condition holds without the word */
        setenv("SYSTEMD_PROC_CMDLINE", "quiet tudev.yes=1", 1);
        ASSERT_EQ(link_config_load(&s), 0);
        ASSERT_TRUE(find(&s, "60-cond.link"));
        ASSERT_TRUE(!find(&s, "61-cond.link"));
        setenv("SYSTEMD_PROC_CMDLINE", "quiet", 1);
        ASSERT_EQ(link_config_load(&s), 0);
        ASSERT_TRUE(!find(&s, "60-cond.link"));
        ASSERT_TRUE(find(&s, "61-cond.link"));
        link_config_set_free(&s);
        unsetenv("SYSTEMD_PROC_CMDLINE");
}

static const char *prop(void *userdata, const char *key)
{
        (void)userdata;
        return streq(key, "ID_BUS") ? "usb" : streq(key, "ID_X") ? "a b" : NULL;
}

static unsigned count_bits(const uint32_t *w, size_t n)
{
        unsigned bits = 0;

        for (size_t i = 0; i < n; i++)
                for (uint32_t v = w[i]; v; v &= v - 1)
                        bits++;
        return bits;
}

static size_t count_substr(const char *hay, const char *needle)
{
        size_t n = 0;

        for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

/* Each key tudev parses and ignores gives one info message per file (its
 * drop-ins included) naming file:line and the key; repeats are quiet. */
static void test_ignored_keys(void)
{
        struct link_config_set s = { 0 };
        const struct link_config *c;
        char tmpl[] = "/tmp/tudev-link-log-XXXXXX", out[8192], want[PATH_MAX + 128];
        int fd = mkostemp(tmpl, O_CLOEXEC), saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
        ssize_t n;
        struct {
                const char *dir, *file;
                unsigned line;
                const char *key;
        } msgs[] = {
                { dir_etc, "85-ignored.link", 4, "WakeOnLan= in [Link] is" },
                { dir_etc, "85-ignored.link", 5, "Duplex= in [Link] is" },
                { dir_etc, "85-ignored.link", 7,
                  "ReceivePacketSteeringCPUMask= in [Link] (systemd 256) is" },
                { dir_etc, "85-ignored.link", 10, "VLANId= in [SR-IOV] is" },
                { dir_etc, "85-ignored.link", 11, "MACAddress= in [SR-IOV] is" },
                { dir_etc, "85-ignored.link.d/10-more.conf", 3, "MDI= in [Link] is" },
                /* the other files' ignored keys */
                { dir_etc, "50-syntax.link", 29, "WakeOnLan= in [Link] is" },
                { dir_etc, "50-syntax.link", 31, "Trust= in [SR-IOV] is" },
                { dir_etc, "80-props.link", 10,
                  "ReceivePacketSteeringCPUMask= in [Link] (systemd 256) is" },
        };

        ASSERT_TRUE(fd >= 0 && saved >= 0);
        ASSERT_EQ(unlink(tmpl), 0);
        fflush(stderr);
        ASSERT_EQ(dup2(fd, STDERR_FILENO), STDERR_FILENO);
        log_set_max_level(LOG_INFO);
        ASSERT_EQ(link_config_load(&s), 0);
        log_set_max_level(LOG_CRIT);
        ASSERT_EQ(dup2(saved, STDERR_FILENO), STDERR_FILENO);
        close(saved);
        n = pread(fd, out, sizeof(out) - 1, 0);
        close(fd);
        ASSERT_TRUE(n > 0);
        out[n] = '\0';

        for (size_t i = 0; i < ARRAY_SIZE(msgs); i++) {
                snprintf(want, sizeof(want), "%s/%s:%u: %s not applied by tudev, ignoring.",
                         msgs[i].dir, msgs[i].file, msgs[i].line, msgs[i].key);
                if (count_substr(out, want) != 1)
                        fprintf(stderr, "want once: %s\ngot:\n%s", want, out);
                ASSERT_EQ(count_substr(out, want), 1u);
        }
        /* no other message says "not applied": none for the repeated
         * WakeOnLan=, VLANId= and ReceivePacketSteeringCPUMask= */
        ASSERT_EQ(count_substr(out, "not applied by tudev"), ARRAY_SIZE(msgs));
        ASSERT_EQ(count_substr(out, "85-ignored.link:8:"), 0u); /* Name= is applied */

        c = find(&s, "85-ignored.link");
        ASSERT_STREQ(c->name, "ign0");
        ASSERT_EQ(count_bits(c->warned, ARRAY_SIZE(c->warned)), 6u); /* msgs[0..5] */
        link_config_set_free(&s);
}

static void test_match(void)
{
        struct link_config_set s = { 0 };
        const struct link_config *c;
        struct hw_addr a, other;
        struct link_match_input in = { .ifname = "tv", .driver = "veth", .iftype = "ether",
                                       .get_property = prop, .hw_addr = &a };

        ASSERT_EQ(parse_hw_addr_full("02:00:00:00:00:bb", 0, &a), 0);
        ASSERT_EQ(parse_hw_addr_full("02:00:00:00:00:cc", 0, &other), 0);
        ASSERT_EQ(link_config_load(&s), 0);
        c = find(&s, "50-syntax.link");
        ASSERT_TRUE(link_match_test(&c->match, &in));
        in.hw_addr = &other;
        ASSERT_TRUE(!link_match_test(&c->match, &in));
        in.hw_addr = &a;
        in.driver = "e1000e";
        ASSERT_TRUE(!link_match_test(&c->match, &in));
        in.driver = NULL; /* only negative patterns: no driver is fine */
        ASSERT_TRUE(link_match_test(&c->match, &in));
        in.ifname = "eth0";
        ASSERT_TRUE(!link_match_test(&c->match, &in));
        in.ifname = "ab";
        in.get_property = NULL;
        ASSERT_TRUE(!link_match_test(&c->match, &in));
        link_config_set_free(&s);

        ASSERT_TRUE(link_ifname_valid("eth0", false));
        ASSERT_TRUE(!link_ifname_valid("123", false));
        ASSERT_TRUE(!link_ifname_valid("0x10", false));
        ASSERT_TRUE(!link_ifname_valid("default", false));
        ASSERT_TRUE(!link_ifname_valid("a:b", false));
        ASSERT_TRUE(!link_ifname_valid("abcdefghijklmnop", false));
        ASSERT_TRUE(link_ifname_valid("abcdefghijklmnop", true));
        ASSERT_STREQ(arphrd_to_name(1), "ether");
        ASSERT_STREQ(arphrd_to_name(772), "loopback");
        ASSERT_STREQ(arphrd_to_name(32), "infiniband");
        ASSERT_TRUE(!arphrd_to_name(12345));
        ASSERT_EQ(name_policy_from_string("kernel", true), -1);
        ASSERT_EQ(name_policy_from_string("kernel", false), NAMEPOLICY_KERNEL);
}

static void test_fingerprint(void)
{
        uint64_t a = link_config_fingerprint(), b;
        char p[PATH_MAX];

        ASSERT_TRUE(a == link_config_fingerprint());
        write_file(dir_lib, "30-dropin.link.d/30-c.conf", "[Link]\nAlias=x\n");
        b = link_config_fingerprint();
        ASSERT_TRUE(a != b);
        snprintf(p, sizeof(p), "%s/30-dropin.link.d/30-c.conf", dir_lib);
        ASSERT_EQ(unlink(p), 0);
        write_file(dir_etc, "99-new.link", "[Match]\nOriginalName=*\n");
        ASSERT_TRUE(link_config_fingerprint() != b);
}

#define THREADS 4
#define ROUNDS 20

static void *loader(void *arg)
{
        (void)arg;
        for (int i = 0; i < ROUNDS; i++) {
                struct link_config_set s = { 0 };

                ASSERT_EQ(link_config_load(&s), 0);
                ASSERT_TRUE(find(&s, "50-syntax.link"));
                (void)link_config_fingerprint();
                link_config_set_free(&s);
        }
        return NULL;
}

static void test_concurrent_loads(void)
{
        pthread_t t[THREADS];

        for (int i = 0; i < THREADS; i++)
                ASSERT_EQ(thread_start(&t[i], loader, NULL), 0);
        for (int i = 0; i < THREADS; i++)
                ASSERT_EQ(pthread_join(t[i], NULL), 0);
}

int main(void)
{
        char dirs[512];

        log_set_max_level(LOG_CRIT); /* the files are broken on purpose */
        snprintf(root, sizeof(root), "/tmp/tudev-link-XXXXXX");
        ASSERT_TRUE(mkdtemp(root));
        snprintf(dir_etc, sizeof(dir_etc), "%s/etc", root);
        snprintf(dir_lib, sizeof(dir_lib), "%s/lib", root);
        ASSERT_EQ(mkdir(dir_etc, 0755), 0);
        ASSERT_EQ(mkdir(dir_lib, 0755), 0);
        /* set before the first use: the search path is read once */
        snprintf(dirs, sizeof(dirs), "%s:%s/missing:%s", dir_etc, root, dir_lib);
        setenv(LINK_DIRS_ENV, dirs, 1);
        setup_tree();

        TEST_RUN(test_parsers);
        TEST_RUN(test_hw_addr);
        TEST_RUN(test_cmdline);
        TEST_RUN(test_naming_schemes);
        TEST_RUN(test_specifiers);
        TEST_RUN(test_load);
        TEST_RUN(test_ignored_keys);
        TEST_RUN(test_match);
        TEST_RUN(test_concurrent_loads);
        TEST_RUN(test_fingerprint);

        nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        return 0;
}
