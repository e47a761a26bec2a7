/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: test (single-threaded) */
/* The rules compiler and loader (rules-compile.c, rules-load.c): table-driven
 * text -> compiled lines/tokens/messages, every row of the operator table,
 * patterns, ordering, masks, GOTO, verify checks, file loading, reload
 * detection, and Debian 12's rules compiling without an error. Expected
 * behaviour was checked against systemd 252's udevadm. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rules/test-rules-util.h"
#include "shared/log.h"
#include "shared/tests.h"

static const struct rules_load_options early = { .resolve_names = RESOLVE_NAMES_EARLY };
static const struct rules_load_options late = { .resolve_names = RESOLVE_NAMES_LATE };
static const struct rules_load_options never = { .resolve_names = RESOLVE_NAMES_NEVER };
static const struct rules_load_options verify = { .resolve_names = RESOLVE_NAMES_LATE,
                                                  .verify = true };

#define CHECK(text, dump, msgs) check_compile(text, &early, dump, msgs, #text)
#define CHECK_OPTS(opts, text, dump, msgs) check_compile(text, opts, dump, msgs, #text)

/* ---------------------------------------------------------- operator table */

/* Outcome per operator (==, !=, =, +=, -=, :=):
 *   M match token, same op      A assignment token, same op
 *   = assignment, op '=' + warning   a assignment, op '=' silently
 *   m match token, op '==' silently  L GOTO/LABEL taken
 *   E line dropped with an error */
static const struct {
        const char *key;   /* with {attr} */
        const char *value; /* quoted */
        const char *outcome;
        enum token_type match, assign;
} op_rows[] = {
        { "ACTION", "\"add\"", "MMEEEE", TK_M_ACTION, 0 },
        { "DEVPATH", "\"/devices/x\"", "MMEEEE", TK_M_DEVPATH, 0 },
        { "KERNEL", "\"sda\"", "MMEEEE", TK_M_KERNEL, 0 },
        { "SUBSYSTEM", "\"block\"", "MMEEEE", TK_M_SUBSYSTEM, 0 },
        { "DRIVER", "\"e1000\"", "MMEEEE", TK_M_DRIVER, 0 },
        { "KERNELS", "\"1-1\"", "MMEEEE", TK_M_PARENTS_KERNEL, 0 },
        { "SUBSYSTEMS", "\"usb\"", "MMEEEE", TK_M_PARENTS_SUBSYSTEM, 0 },
        { "DRIVERS", "\"usb\"", "MMEEEE", TK_M_PARENTS_DRIVER, 0 },
        { "TAGS", "\"seat\"", "MMEEEE", TK_M_PARENTS_TAG, 0 },
        { "RESULT", "\"r\"", "MMEEEE", TK_M_RESULT, 0 },
        { "CONST{arch}", "\"x86-64\"", "MMEEEE", TK_M_CONST, 0 },
        { "CONST{virt}", "\"kvm\"", "MMEEEE", TK_M_CONST, 0 },
        { "ATTRS{idVendor}", "\"0bda\"", "MMEEEE", TK_M_PARENTS_ATTR, 0 },
        { "TEST", "\"/x\"", "MMEEEE", TK_M_TEST, 0 },
        { "TEST{0644}", "\"/x\"", "MMEEEE", TK_M_TEST, 0 },
        { "SYMLINK", "\"disk/x\"", "MMAAEA", TK_M_DEVLINK, TK_A_DEVLINK },
        { "NAME", "\"eth9\"", "MMA=EA", TK_M_NAME, TK_A_NAME },
        { "ENV{FOO}", "\"v\"", "MMAAE=", TK_M_ENV, TK_A_ENV },
        { "TAG", "\"seat\"", "MMAAA=", TK_M_TAG, TK_A_TAG },
        { "ATTR{power/control}", "\"on\"", "MMA=E=", TK_M_ATTR, TK_A_ATTR },
        { "SYSCTL{net.x}", "\"1\"", "MMA=E=", TK_M_SYSCTL, TK_A_SYSCTL },
        { "PROGRAM", "\"p\"", "MMmmEm", TK_M_PROGRAM, 0 },
        { "IMPORT{file}", "\"f\"", "MMmmEm", TK_M_IMPORT_FILE, 0 },
        { "IMPORT{program}", "\"/bin/p\"", "MMmmEm", TK_M_IMPORT_PROGRAM, 0 },
        { "IMPORT{builtin}", "\"path_id\"", "MMmmEm", TK_M_IMPORT_BUILTIN, 0 },
        { "IMPORT{db}", "\"K\"", "MMmmEm", TK_M_IMPORT_DB, 0 },
        { "IMPORT{cmdline}", "\"k\"", "MMmmEm", TK_M_IMPORT_CMDLINE, 0 },
        { "IMPORT{parent}", "\"K*\"", "MMmmEm", TK_M_IMPORT_PARENT, 0 },
        { "OWNER", "\"0\"", "EEA=EA", 0, TK_A_OWNER_ID },
        { "GROUP", "\"0\"", "EEA=EA", 0, TK_A_GROUP_ID },
        { "MODE", "\"0644\"", "EEA=EA", 0, TK_A_MODE_ID },
        { "SECLABEL{selinux}", "\"l\"", "EEAAE=", 0, TK_A_SECLABEL },
        { "RUN", "\"r\"", "EEAAEA", 0, TK_A_RUN_PROGRAM },
        { "RUN{program}", "\"r\"", "EEAAEA", 0, TK_A_RUN_PROGRAM },
        { "RUN{builtin}", "\"kmod load\"", "EEAAEA", 0, TK_A_RUN_BUILTIN },
        { "OPTIONS", "\"watch\"", "EEAaEA", 0, TK_A_OPTIONS_INOTIFY_WATCH },
        { "GOTO", "\"l\"", "EELEEE", 0, 0 },
        { "LABEL", "\"l\"", "EELEEE", 0, 0 },
};

static const struct token *find_token(const struct rules *r, enum token_type type,
                                      const char *not_value)
{
        for (size_t i = 0; i < r->n_lines; i++)
                for (unsigned k = 0; k < r->lines[i].n_tokens; k++) {
                        const struct token *t = &r->lines[i].tokens[k];

                        if (t->type == type && !(t->value && streq(t->value, not_value)))
                                return t;
                }
        return NULL;
}

static void test_operator_table(void)
{
        static const enum token_op ops[] = { OP_MATCH, OP_NOMATCH, OP_ASSIGN,
                                             OP_ADD, OP_REMOVE, OP_ASSIGN_FINAL };
        static const char *const op_str[] = { "==", "!=", "=", "+=", "-=", ":=" };
        unsigned rows = 0;

        for (size_t i = 0; i < ARRAY_SIZE(op_rows); i++)
                for (size_t o = 0; o < ARRAY_SIZE(ops); o++) {
                        char text[256], *msgs;
                        char want = op_rows[i].outcome[o];

                        snprintf(text, sizeof(text), "%s%s%s, ENV{ZZ}=\"z\"\nLABEL=\"l\"\n",
                                 op_rows[i].key, op_str[o], op_rows[i].value);
                        struct rules *r = load_text(text, strlen(text), &early, &msgs);
                        const struct token *t = NULL;
                        const struct rule_line *l0 = r->n_lines ? &r->lines[0] : NULL;
                        bool first_is_ours = l0 && l0->lineno == 1;

                        switch (want) {
                        case 'M': case 'm':
                                t = find_token(r, op_rows[i].match, "z");
                                ASSERT_TRUE(t != NULL);
                                ASSERT_EQ(t->op, want == 'M' ? ops[o] : OP_MATCH);
                                ASSERT_STREQ(msgs, "");
                                break;
                        case 'A': case '=': case 'a':
                                t = find_token(r, op_rows[i].assign, "z");
                                ASSERT_TRUE(t != NULL);
                                ASSERT_EQ(t->op, want == 'A' ? ops[o] : OP_ASSIGN);
                                if (want == '=')
                                        ASSERT_TRUE(strstr(msgs, "W 1:") == msgs &&
                                                    strstr(msgs, "assuming '='"));
                                else
                                        ASSERT_STREQ(msgs, "");
                                break;
                        case 'L':
                                ASSERT_TRUE(first_is_ours);
                                ASSERT_STREQ(msgs, "");
                                if (streq(op_rows[i].key, "GOTO"))
                                        ASSERT_EQ(l0->goto_line, 1);
                                else
                                        ASSERT_STREQ(l0->label, "l");
                                break;
                        case 'E':
                                ASSERT_TRUE(!first_is_ours);
                                ASSERT_TRUE(strncmp(msgs, "E 1:", 4) == 0);
                                ASSERT_TRUE(strstr(msgs, "ignoring line"));
                                ASSERT_EQ(r->stats.errors, 1);
                                break;
                        default:
                                ASSERT_TRUE(false);
                        }
                        free(msgs);
                        rules_unref(r);
                        rows++;
                }
        ASSERT_EQ(rows, ARRAY_SIZE(op_rows) * 6);
}

/* ---------------------------------------------------------------- tables */

static void test_patterns(void)
{
        CHECK("KERNEL==\"sda\", ENV{A}=\"1\"", "1 U: KERNEL==p\"sda\"[sda] ENV{A}=\"1\"", NULL);
        CHECK("KERNEL==\"sd*|nvme*\", ENV{A}=\"1\"",
              "1 U: KERNEL==g\"sd*|nvme*\"[sd*|nvme*] ENV{A}=\"1\"", NULL);
        /* empty alternatives: one "" entry, "or empty" */
        CHECK("KERNEL==\"|a\", ENV{A}=\"1\"", "1 U: KERNEL==p\"|a\"[|a] ENV{A}=\"1\"", NULL);
        CHECK("KERNEL==\"a||b|\", ENV{A}=\"1\"", "1 U: KERNEL==p\"a||b|\"[a||b] ENV{A}=\"1\"",
              NULL);
        CHECK("KERNEL!=\"a|\", ENV{A}=\"1\"", "1 U: KERNEL!=p\"a|\"[a|] ENV{A}=\"1\"", NULL);
        CHECK("KERNEL==\"|\", ENV{A}=\"1\"", "1 U: KERNEL==p\"|\"[] ENV{A}=\"1\"", NULL);
        /* glob decided once for the whole value; '|' cannot be escaped */
        CHECK("KERNEL==\"a|b*\", ENV{A}=\"1\"", "1 U: KERNEL==g\"a|b*\"[a|b*] ENV{A}=\"1\"",
              NULL);
        CHECK("KERNEL==\"[a|b]\", ENV{A}=\"1\"", "1 U: KERNEL==g\"[a|b]\"[[a|b]] ENV{A}=\"1\"",
              NULL);
        CHECK("KERNEL==\"a\\|b\", ENV{A}=\"1\"", "1 U: KERNEL==p\"a\\|b\"[a\\|b] ENV{A}=\"1\"",
              NULL);
        /* empty and "?*" */
        CHECK("KERNEL==\"\", ENV{A}=\"1\"", "1 U: KERNEL==e\"\" ENV{A}=\"1\"", NULL);
        CHECK("KERNEL==\"?*\", ENV{A}=\"1\"", "1 U: KERNEL!=e\"?*\" ENV{A}=\"1\"", NULL);
        CHECK("ENV{X}!=\"?*\", ENV{A}=\"1\"", "1 U: ENV{X}==e\"?*\" ENV{A}=\"1\"", NULL);
        CHECK("TEST==\"?*\", ENV{A}=\"1\"", "1 U: TEST!=e\"?*\" ENV{A}=\"1\"", NULL);
        /* SUBSYSTEM special values */
        CHECK("SUBSYSTEM==\"subsystem\", ENV{A}=\"1\"",
              "1 U: SUBSYSTEM==s\"subsystem\" ENV{A}=\"1\"", NULL);
        CHECK("SUBSYSTEM!=\"bus\", ENV{A}=\"1\"", "1 U: SUBSYSTEM!=s\"bus\" ENV{A}=\"1\"",
              "W 1:12 \"bus\" must be specified as \"subsystem\".\n");
        CHECK("SUBSYSTEM==\"class\", ENV{A}=\"1\"", "1 U: SUBSYSTEM==s\"class\" ENV{A}=\"1\"",
              "W 1:12 \"class\" must be specified as \"subsystem\".\n");
        CHECK("SUBSYSTEMS==\"bus\", ENV{A}=\"1\"",
              "1 U: SUBSYSTEMS==p\"bus\"[bus] ENV{A}=\"1\"", NULL);
        /* no alternatives for TEST, PROGRAM, IMPORT */
        CHECK("PROGRAM==\"a|b\", TEST==\"x*|y\", IMPORT{file}==\"p|q\"",
              "1 U: TEST==g\"x*|y\" PROGRAM==p\"a|b\" IMPORT{file}==p\"p|q\"", NULL);
        CHECK("RESULT==\"x|y*\", ENV{A}=\"1\"", "1 U: RESULT==g\"x|y*\"[x|y*] ENV{A}=\"1\"",
              NULL);
}

static void test_ordering(void)
{
        /* stable sort by token type, as systemd evaluates a line */
        CHECK("RUN+=\"r\", RUN{builtin}=\"kmod load x\", SYSCTL{k}=\"1\", ATTR{a}=\"1\", "
              "SYMLINK+=\"l\", NAME=\"n\", ENV{E}=\"1\", SECLABEL{selinux}=\"s\", "
              "OPTIONS+=\"static_node=kvm\", TAG+=\"t\", MODE=\"0600\", GROUP=\"0\", "
              "OWNER=\"0\", MODE=\"$env{M}\", GROUP=\"$env{G}\", OWNER=\"$env{O}\", "
              "OPTIONS=\"log_level=7\", OPTIONS=\"link_priority=5\", OPTIONS=\"nowatch\", "
              "OPTIONS=\"db_persist\", OPTIONS=\"string_escape=replace\", "
              "OPTIONS=\"string_escape=none\", RESULT==\"r\", IMPORT{parent}=\"P\", "
              "IMPORT{cmdline}=\"c\", IMPORT{db}=\"D\", IMPORT{builtin}=\"hwdb\", "
              "IMPORT{program}=\"/p\", IMPORT{file}=\"/f\", PROGRAM=\"/q\", TEST==\"/t\", "
              "TAGS==\"ts\", ATTRS{as}==\"1\", DRIVERS==\"ds\", SUBSYSTEMS==\"ss\", "
              "KERNELS==\"ks\", SYSCTL{k}==\"1\", ATTR{a}==\"1\", DRIVER==\"d\", "
              "SUBSYSTEM==\"s\", TAG==\"t\", CONST{arch}==\"x\", ENV{E}==\"1\", "
              "NAME==\"n\", SYMLINK==\"l\", KERNEL==\"k\", DEVPATH==\"/d\", ACTION==\"add\"",
              "1 NDSUO: ACTION==p\"add\"[add] DEVPATH==p\"/d\"[/d] KERNEL==p\"k\"[k] "
              "SYMLINK==p\"l\"[l] NAME==p\"n\"[n] ENV{E}==p\"1\"[1] CONST{arch}==p\"x\"[x]#arch "
              "TAG==p\"t\"[t] SUBSYSTEM==p\"s\"[s] DRIVER==p\"d\"[d] ATTR{a}==p\"1\"[1] "
              "SYSCTL{k}==p\"1\"[1] KERNELS==p\"ks\"[ks] SUBSYSTEMS==p\"ss\"[ss] "
              "DRIVERS==p\"ds\"[ds] ATTRS{as}==p\"1\"[1] TAGS==p\"ts\"[ts] TEST==p\"/t\" "
              "PROGRAM==p\"/q\" IMPORT{file}==p\"/f\" IMPORT{program}==p\"/p\" "
              "IMPORT{builtin}==p\"hwdb\"#hwdb IMPORT{db}==p\"D\" IMPORT{cmdline}==p\"c\" "
              "IMPORT{parent}==p\"P\" RESULT==p\"r\"[r] "
              "OPTIONS=\"string_escape=none\" OPTIONS=\"string_escape=replace\" "
              "OPTIONS=\"db_persist\" OPTIONS=\"nowatch\"#0 OPTIONS=\"link_priority=5\"#5 "
              "OPTIONS=\"log_level=7\"#7 OWNER=\"$env{O}\"$ GROUP=\"$env{G}\"$ "
              "MODE=\"$env{M}\"$ OWNER=\"0\"#0 GROUP=\"0\"#0 MODE=\"0600\"#0600 TAG+=\"t\" "
              "OPTIONS=\"kvm\" SECLABEL{selinux}=\"s\" ENV{E}=\"1\" NAME=\"n\" "
              "SYMLINK+=\"l\" ATTR{a}=\"1\" SYSCTL{k}=\"1\" RUN{builtin}=\"kmod load x\"#kmod "
              "RUN{program}+=\"r\"",
              NULL);
        /* stability */
        CHECK("ENV{A}=\"1\", TAG+=\"x\", ENV{B}=\"2\", ENV{A}+=\"3\", TAG-=\"y\"",
              "1 U: TAG+=\"x\" TAG-=\"y\" ENV{A}=\"1\" ENV{B}=\"2\" ENV{A}+=\"3\"", NULL);
}

static void test_masks(void)
{
        CHECK("KERNEL==\"a\", NAME=\"x\"", "1 N: KERNEL==p\"a\"[a] NAME=\"x\"", NULL);
        CHECK("SYMLINK+=\"x\"", "1 D: SYMLINK+=\"x\"", NULL);
        CHECK("OWNER=\"0\"\nGROUP=\"0\"\nMODE=\"0600\"\nMODE=\"$env{X}\"",
              "1 O: OWNER=\"0\"#0\n2 O: GROUP=\"0\"#0\n3 O: MODE=\"0600\"#0600\n"
              "4 O: MODE=\"$env{X}\"$",
              NULL);
        CHECK("OPTIONS+=\"static_node=kvm\", GROUP=\"0\", MODE=\"0666\"",
              "1 SO: GROUP=\"0\"#0 MODE=\"0666\"#0666 OPTIONS=\"kvm\"", NULL);
        CHECK("LABEL=\"x\"", "1 L: LABEL=x", NULL);
        CHECK("KERNEL==\"a\", PROGRAM==\"x\"\nIMPORT{db}=\"x\"\nOPTIONS=\"watch\"\n"
              "TAG+=\"t\"\nRUN+=\"r\"\nENV{A}=\"\"",
              "1 U: KERNEL==p\"a\"[a] PROGRAM==p\"x\"\n2 U: IMPORT{db}==p\"x\"\n"
              "3 U: OPTIONS=\"watch\"#1\n4 U: TAG+=\"t\"\n5 U: RUN{program}+=\"r\"\n"
              "6 U: ENV{A}=\"\"",
              NULL);
        CHECK("SYMLINK+=\"a\", NAME=\"b\", OWNER=\"0\", ENV{A}=\"1\", GOTO=\"x\"\nLABEL=\"x\"",
              "1 NDGUO: GOTO=x>1 OWNER=\"0\"#0 ENV{A}=\"1\" NAME=\"b\" SYMLINK+=\"a\"\n"
              "2 L: LABEL=x",
              NULL);
        /* matches only */
        CHECK("KERNEL==\"a\"\n  ENV{X}==\"1\", ATTR{x}==\"y\"", "",
              "W 1:1 The line has no effect, ignoring.\n"
              "W 2:3 The line has no effect, ignoring.\n");
}

static void test_goto(void)
{
        /* first later LABEL of the file */
        CHECK("GOTO=\"a\"\nLABEL=\"a\"\nLABEL=\"a\"",
              "1 G: GOTO=a>1\n2 L: LABEL=a\n3 L: LABEL=a", NULL);
        /* a label on the GOTO line itself or before it does not count */
        CHECK("LABEL=\"a\"\nLABEL=\"a\", GOTO=\"a\", ENV{X}=\"1\"\nLABEL=\"a\"",
              "1 L: LABEL=a\n2 GLU: LABEL=a GOTO=a>2 ENV{X}=\"1\"\n3 L: LABEL=a", NULL);
        CHECK("LABEL=\"a\"\nKERNEL==\"x\", GOTO=\"a\"", "1 L: LABEL=a",
              "E 2:14 GOTO=\"a\" has no matching label, ignoring.\n"
              "W 2:14 The line has no effect any more, dropping.\n");
        /* unresolved GOTO: removed; line kept if something else is left */
        CHECK("KERNEL==\"x\", GOTO=\"b\", ENV{A}=\"1\"", "1 U: KERNEL==p\"x\"[x] ENV{A}=\"1\"",
              "E 1:14 GOTO=\"b\" has no matching label, ignoring.\n");
        CHECK("KERNEL==\"x\", GOTO=\"b\", LABEL=\"c\"", "1 L: LABEL=c",
              "E 1:14 GOTO=\"b\" has no matching label, ignoring.\n"
              "W 1:14 The line has no effect any more, dropping.\n");
        /* indices stay right when a line in between is dropped */
        CHECK("GOTO=\"x\"\nGOTO=\"nope\"\nGOTO=\"y\"\nLABEL=\"x\"\nLABEL=\"y\"",
              "1 G: GOTO=x>2\n3 G: GOTO=y>3\n4 L: LABEL=x\n5 L: LABEL=y",
              "E 2:1 GOTO=\"nope\" has no matching label, ignoring.\n"
              "W 2:1 The line has no effect any more, dropping.\n");
        /* a LABEL on a dropped line does not exist */
        CHECK("GOTO=\"x\", ENV{A}=\"1\"\nLABEL=\"x\", FOO=\"1\"\n",
              "1 U: ENV{A}=\"1\"",
              "E 2:12 Invalid key 'FOO', ignoring line.\n"
              "E 1:1 GOTO=\"x\" has no matching label, ignoring.\n");
        /* one GOTO per line; the last LABEL wins */
        CHECK("GOTO=\"a\", GOTO=\"b\"\nLABEL=\"b\"\nLABEL=\"a\", LABEL=\"c\"\nLABEL=\"a\"",
              "1 G: GOTO=a>3\n2 L: LABEL=b\n3 L: LABEL=c\n4 L: LABEL=a",
              "W 1:11 Contains multiple GOTO keys, ignoring GOTO=\"b\".\n"
              "W 3:12 Contains multiple LABEL keys, ignoring LABEL=\"a\".\n");
        /* GOTO/LABEL take only '=' and no attribute */
        CHECK("GOTO{x}=\"a\"\nLABEL==\"a\"", "",
              "E 1:6 Invalid attribute for GOTO, ignoring line.\n"
              "E 2:6 Invalid operator '==' for LABEL, ignoring line.\n");
}

static void test_keys(void)
{
        /* attributes */
        CHECK("ACTION{x}==\"add\"\nENV=\"1\"\nENV{}=\"1\"\nCONST{cvm}==\"x\"\nIMPORT=\"x\"\n"
              "IMPORT{foo}=\"x\"\nRUN{}=\"x\"\nRUN{foo}=\"x\"\nSECLABEL=\"x\"\nATTRS==\"x\"\n"
              "SYSCTL{}=\"x\"",
              "",
              "E 1:8 Invalid attribute for ACTION, ignoring line.\n"
              "E 2:1 Invalid attribute for ENV, ignoring line.\n"
              "E 3:1 Invalid attribute for ENV, ignoring line.\n"
              "E 4:7 Invalid attribute for CONST, ignoring line.\n"
              "E 5:1 Invalid attribute for IMPORT, ignoring line.\n"
              "E 6:8 Invalid attribute for IMPORT, ignoring line.\n"
              "E 7:1 Invalid attribute for RUN, ignoring line.\n"
              "E 8:5 Invalid attribute for RUN, ignoring line.\n"
              "E 9:1 Invalid attribute for SECLABEL, ignoring line.\n"
              "E 10:1 Invalid attribute for ATTRS, ignoring line.\n"
              "E 11:1 Invalid attribute for SYSCTL, ignoring line.\n");
        /* unknown keys (not keys in systemd) */
        CHECK("SEQNUM==\"1\"\nDEVTYPE==\"disk\"\nWAIT_FOR=\"x\"\nBUS==\"usb\"\nSYSFS{x}==\"1\"\n"
              "kernel==\"sda\"\n=\"x\"",
              "",
              "E 1:1 Invalid key 'SEQNUM', ignoring line.\n"
              "E 2:1 Invalid key 'DEVTYPE', ignoring line.\n"
              "E 3:1 Invalid key 'WAIT_FOR', ignoring line.\n"
              "E 4:1 Invalid key 'BUS', ignoring line.\n"
              "E 5:1 Invalid key 'SYSFS', ignoring line.\n"
              "E 6:1 Invalid key 'kernel', ignoring line.\n"
              "E 7:1 Invalid key '', ignoring line.\n");
        /* ENV keys that cannot be set */
        static const char *const forbidden[] = { "ACTION", "DEVLINKS", "DEVNAME", "DEVPATH",
                                                 "DEVTYPE", "DRIVER", "IFINDEX", "MAJOR",
                                                 "MINOR", "SEQNUM", "SUBSYSTEM", "TAGS" };
        for (size_t i = 0; i < ARRAY_SIZE(forbidden); i++) {
                char text[128], msg[160];

                snprintf(text, sizeof(text), "ENV{%s}+=\"x\"\nENV{%s}==\"x\", ENV{A}=\"1\"",
                         forbidden[i], forbidden[i]);
                snprintf(msg, sizeof(msg),
                         "E 1:5 Invalid ENV attribute. '%s' cannot be set, ignoring line.\n",
                         forbidden[i]);
                check_compile(text, &early, NULL, msg, forbidden[i]);
        }
        CHECK("ENV{CURRENT_TAGS}=\"x\", ENV{.hidden}=\"1\", ENV{devname}=\"y\"",
              "1 U: ENV{CURRENT_TAGS}=\"x\" ENV{.hidden}=\"1\" ENV{devname}=\"y\"", NULL);
        /* NAME */
        CHECK("NAME=\"%k\"\nNAME=\"\"\nNAME==\"\", ENV{A}=\"1\"\nNAME:=\"%k1\"",
              "3 U: NAME==e\"\" ENV{A}=\"1\"\n4 N: NAME:=\"%k1\"$",
              "E 1:1 Ignoring NAME=\"%k\", as it will take no effect.\n"
              "E 2:1 Ignoring NAME=\"\", as udev will not delete any network interfaces.\n");
        /* SYMLINK-= is v253+ */
        CHECK("SYMLINK-=\"x\"", "", "E 1:8 Invalid operator '-=' for SYMLINK, ignoring line.\n");
        /* CONST */
        CHECK("CONST{virt}==\"kvm|qemu\", ENV{A}=\"1\"",
              "1 U: CONST{virt}==p\"kvm|qemu\"[kvm|qemu]#virt ENV{A}=\"1\"", NULL);
        /* ATTRS warnings */
        CHECK("ATTRS{device/x}==\"1\", ATTRS{../y}==\"2\", ENV{A}=\"1\"",
              "1 U: ATTRS{device/x}==p\"1\"[1] ATTRS{../y}==p\"2\"[2] ENV{A}=\"1\"",
              "W 1:7 'device' link may not be available in future kernels.\n"
              "W 1:29 Direct reference to parent sysfs directory, may break in future "
              "kernels.\n");
        /* TEST{mode} */
        CHECK("TEST{0644}==\"/x\", TEST{7}!=\"y\", ENV{A}=\"1\"\nTEST{999}==\"/x\", "
              "ENV{A}=\"1\"\nTEST{10000}==\"/x\", ENV{A}=\"1\"",
              "1 U: TEST{0644}==p\"/x\"#0644 TEST{7}!=p\"y\"#0007 ENV{A}=\"1\"",
              "E 2:6 Failed to parse mode '999' of TEST, ignoring line.\n"
              "E 3:6 Failed to parse mode '10000' of TEST, ignoring line.\n");
}

static void test_attributes(void)
{
        CHECK("ATTR{[net/eth0]address}==\"x\", ATTRS{[pci/0000:00:01.0]/vendor}==\"y\", "
              "ATTR{[block/sda]queue/rotational}=\"0\", ENV{A}=\"1\"",
              "1 U: ATTR{[net/eth0]address}@net/eth0/address==p\"x\"[x] "
              "ATTRS{[pci/0000:00:01.0]/vendor}@pci/0000:00:01.0/vendor==p\"y\"[y] "
              "ENV{A}=\"1\" ATTR{[block/sda]queue/rotational}@block/sda/queue/rotational=\"0\"",
              NULL);
        CHECK("ATTR{[net/eth0]}==\"x\", ATTR{[bad}==\"y\", ATTR{[a]b}==\"z\", ENV{A}=\"1\"",
              "1 U: ATTR{[net/eth0]}@net/eth0/==p\"x\"[x] ATTR{[bad}==p\"y\"[y] "
              "ATTR{[a]b}==p\"z\"[z] ENV{A}=\"1\"",
              NULL);
        /* substituted attribute names: matches and SYSCTL only */
        CHECK("ATTR{x$kernel}==\"1\", ATTRS{x%k}==\"2\", SYSCTL{net.%k.x}==\"3\", "
              "ATTR{%k}=\"4\", SYSCTL{a%k}=\"5\", ENV{$x}=\"6\"",
              "1 U: ATTR{x$kernel}$==p\"1\"[1] SYSCTL{net.%k.x}$==p\"3\"[3] "
              "ATTRS{x%k}$==p\"2\"[2] ENV{$x}=\"6\" ATTR{%k}=\"4\" SYSCTL{a%k}$=\"5\"",
              NULL);
        /* no nesting: the attribute ends at the first '}' */
        CHECK("ATTR{$env{F}}==\"1\", ENV{A}=\"1\"", "",
              "E 1:13 Invalid key/value pair (expected an operator (==, !=, =, +=, -=, :=)), "
              "ignoring line.\n");
}

static void test_substitution_checks(void)
{
        /* bad substitutions: error logged at the character, token kept */
        CHECK("ENV{A}=\"x$foo\"", "1 U: ENV{A}=\"x$foo\"$",
              "E 1:10 Invalid value \"x$foo\" for ENV (char 2: invalid substitution type).\n");
        CHECK("ENV{A}=\"%q\"\nENV{A}=\"$attr\"\nENV{A}=\"%E\"\nENV{A}=\"$env{}\"\n"
              "ENV{A}=\"%c{x}\"\nENV{A}=\"$attr{foo\"\nENV{A}=\"%c{2+} %c{0} $result{3}\"\n"
              "ENV{A}=\"$$ %% $kernelX %k{ignored} $sysfs{a} $sys $tempnode\"",
              "1 U: ENV{A}=\"%q\"$\n2 U: ENV{A}=\"$attr\"$\n3 U: ENV{A}=\"%E\"$\n"
              "4 U: ENV{A}=\"$env{}\"$\n5 U: ENV{A}=\"%c{x}\"$\n6 U: ENV{A}=\"$attr{foo\"$\n"
              "7 U: ENV{A}=\"%c{2+} %c{0} $result{3}\"$\n"
              "8 U: ENV{A}=\"$$ %% $kernelX %k{ignored} $sysfs{a} $sys $tempnode\"$",
              "E 1:9 Invalid value \"%q\" for ENV (char 1: invalid substitution type).\n"
              "E 2:9 Invalid value \"$attr\" for ENV (char 1: attribute value missing).\n"
              "E 3:9 Invalid value \"%E\" for ENV (char 1: attribute value missing).\n"
              "E 4:9 Invalid value \"$env{}\" for ENV (char 1: invalid substitution type).\n"
              "E 5:9 Invalid value \"%c{x}\" for ENV (char 1: attribute value not a valid "
              "number).\n"
              "E 6:9 Invalid value \"$attr{foo\" for ENV (char 1: invalid substitution "
              "type).\n");
        /* positions inside e"" and \" values */
        CHECK("RUN+=e\"\\tx %z\", RUN+=\"a\\\"b $q\"",
              "1 U: RUN{program}+=\"\tx %z\"$ RUN{program}+=\"a\"b $q\"$",
              "E 1:12 Invalid value \"\tx %z\" for RUN (char 4: invalid substitution type).\n"
              "E 1:28 Invalid value \"a\"b $q\" for RUN (char 5: invalid substitution type).\n");
        /* attribute names */
        CHECK("ATTR{%z}==\"1\", ENV{A}=\"1\"", "1 U: ATTR{%z}$==p\"1\"[1] ENV{A}=\"1\"",
              "E 1:6 Invalid attribute \"%z\" for ATTR (char 1: invalid substitution type).\n");
        /* match values are not checked */
        CHECK("KERNEL==\"$foo\", ENV{A}=\"1\"", "1 U: KERNEL==p\"$foo\"$[$foo] ENV{A}=\"1\"",
              NULL);
        /* empty values where one is required */
        CHECK("TAG+=\"\"\nRUN+=\"\"\nPROGRAM==\"\", ENV{A}=\"1\"\nIMPORT{db}=\"\"\n"
              "SECLABEL{smack}=\"\"\nMODE=\"\"\nTEST==\"\", ENV{A}=\"1\"",
              "1 U: TAG+=\"\"\n2 U: RUN{program}+=\"\"\n3 U: PROGRAM==e\"\" ENV{A}=\"1\"\n"
              "4 U: IMPORT{db}==e\"\"\n5 U: SECLABEL{smack}=\"\"\n6 O: MODE=\"\"\n"
              "7 U: TEST==e\"\" ENV{A}=\"1\"",
              "E 1:6 Invalid value \"\" for TAG (empty value).\n"
              "E 2:6 Invalid value \"\" for RUN (empty value).\n"
              "E 3:10 Invalid value \"\" for PROGRAM (empty value).\n"
              "E 4:12 Invalid value \"\" for IMPORT (empty value).\n"
              "E 5:17 Invalid value \"\" for SECLABEL (empty value).\n"
              "E 6:6 Invalid value \"\" for MODE (empty value).\n"
              "E 7:7 Invalid value \"\" for TEST (empty value).\n");
}

static void test_owner_group_mode(void)
{
        CHECK("OWNER=\"root\", GROUP=\"root\"\nOWNER=\"0\"\nOWNER=\"4294967294\"\n"
              "OWNER=\"$env{U}\"\nGROUP=\"[x\"",
              "1 O: OWNER=\"root\"#0 GROUP=\"root\"#0\n2 O: OWNER=\"0\"#0\n"
              "3 O: OWNER=\"4294967294\"#-2\n4 O: OWNER=\"$env{U}\"$\n5 O: GROUP=\"[x\"",
              NULL);
        /* not numeric ids: looked up as names */
        CHECK("OWNER=\"nosuchuser-tudev\"\nGROUP:=\"nosuchgroup-tudev\"\nOWNER=\"0123\"\n"
              "OWNER=\"65535\"\nOWNER=\"-1\"",
              "1 O: OWNER=\"nosuchuser-tudev\"#-1\n2 O: GROUP:=\"nosuchgroup-tudev\"#-1\n"
              "3 O: OWNER=\"0123\"#-1\n4 O: OWNER=\"65535\"#-1\n5 O: OWNER=\"-1\"#-1",
              "E 1:7 Unknown user 'nosuchuser-tudev', ignoring.\n"
              "E 2:8 Unknown group 'nosuchgroup-tudev', ignoring.\n"
              "E 3:7 Unknown user '0123', ignoring.\n"
              "E 4:7 Unknown user '65535', ignoring.\n"
              "E 5:7 Unknown user '-1', ignoring.\n");
        CHECK_OPTS(&late, "OWNER=\"root\", GROUP=\"0\"",
                   "1 O: OWNER=\"root\" GROUP=\"0\"#0", NULL);
        CHECK_OPTS(&never, "OWNER=\"root\", GROUP=\"0\"\nGROUP=\"disk\"",
                   "1 O: GROUP=\"0\"#0", "W 2:1 The line has no effect, ignoring.\n");
        CHECK("MODE=\"0644\"\nMODE=\"644\"\nMODE=\" 0600\"\nMODE=\"07777\"\nMODE=\"10000\"\n"
              "MODE=\"0o644\"\nMODE=\"0600 \"\nMODE=\"$env{M}\"",
              "1 O: MODE=\"0644\"#0644\n2 O: MODE=\"644\"#0644\n3 O: MODE=\" 0600\"#0600\n"
              "4 O: MODE=\"07777\"#7777\n5 O: MODE=\"10000\"\n6 O: MODE=\"0o644\"\n"
              "7 O: MODE=\"0600 \"\n8 O: MODE=\"$env{M}\"$",
              NULL);
}

static void test_options(void)
{
        CHECK("OPTIONS+=\"link_priority=-100\"\nOPTIONS=\"link_priority=0x10\"\n"
              "OPTIONS=\"link_priority= 0b11\"\nOPTIONS=\"log_level=debug\"\n"
              "OPTIONS=\"log_level=3\"\nOPTIONS=\"log_level=reset\"\nOPTIONS:=\"watch\"\n"
              "OPTIONS=\"nowatch\"\nOPTIONS=\"static_node=snd/seq\"",
              "1 U: OPTIONS=\"link_priority=-100\"#-100\n"
              "2 U: OPTIONS=\"link_priority=0x10\"#16\n"
              "3 U: OPTIONS=\"link_priority= 0b11\"#3\n4 U: OPTIONS=\"log_level=debug\"#7\n"
              "5 U: OPTIONS=\"log_level=3\"#3\n6 U: OPTIONS=\"log_level=reset\"#-1\n"
              "7 U: OPTIONS:=\"watch\"#1\n8 U: OPTIONS=\"nowatch\"#0\n9 S: OPTIONS=\"snd/seq\"",
              NULL);
        /* one option per token; unknown: only that expression is ignored */
        CHECK("OPTIONS+=\"watch,link_priority=10\", ENV{A}=\"1\"\nOPTIONS=\"nope\"\n"
              "OPTIONS=\"link_priority=abc\", ENV{A}=\"1\"\nOPTIONS=\"log_level=error\"\n"
              "OPTIONS=\"log_level=8\"\nOPTIONS=\"link_priority=99999999999\"",
              "1 U: ENV{A}=\"1\"",
              "W 1:10 Invalid value for OPTIONS key, ignoring: 'watch,link_priority=10'\n"
              "W 2:9 Invalid value for OPTIONS key, ignoring: 'nope'\n"
              "W 2:1 The line has no effect, ignoring.\n"
              "E 3:9 Failed to parse link priority 'abc', ignoring line.\n"
              "E 4:9 Failed to parse log level 'error', ignoring line.\n"
              "E 5:9 Failed to parse log level '8', ignoring line.\n"
              "E 6:9 Failed to parse link priority '99999999999', ignoring line.\n");
}

static void test_builtins(void)
{
        CHECK("IMPORT{program}=\"path_id %p\"\nIMPORT{program}=\"hw\"\n"
              "IMPORT{program}=\"/bin/path_id\"\nIMPORT{builtin}=\"input\"\n"
              "IMPORT{builtin}=\"  usb_id\"\nRUN{builtin}+=\"kmod load $env{MODALIAS}\"\n"
              "IMPORT{program}=\"uaccess x\"",
              "1 U: IMPORT{builtin}==p\"path_id %p\"$#path_id\n"
              "2 U: IMPORT{builtin}==p\"hw\"#hwdb\n"
              "3 U: IMPORT{program}==p\"/bin/path_id\"\n"
              "4 U: IMPORT{builtin}==p\"input\"#input_id\n"
              "5 U: IMPORT{builtin}==p\"  usb_id\"#usb_id\n"
              "6 U: RUN{builtin}+=\"kmod load $env{MODALIAS}\"$#kmod\n"
              "7 U: IMPORT{builtin}==p\"uaccess x\"#uaccess",
              NULL);
        /* tpm2_id is systemd 258's; net_driver (systemd 253) is known */
        CHECK("IMPORT{builtin}=\"nope\"\nIMPORT{builtin}=\"tpm2_id\"\nRUN{builtin}=\"x\"",
              "",
              "E 1:17 Unknown builtin command: nope, ignoring line.\n"
              "E 2:17 Unknown builtin command: tpm2_id, ignoring line.\n"
              "E 3:14 Unknown builtin command 'x', ignoring line.\n");
}

static void test_syntax_errors(void)
{
        /* one error per line, the line is dropped, the rest of the file loads */
        CHECK("KERNEL==\"a\", ENV{A}=1\nKERNEL==\"a\", ENV{A}=\"1\nENV{A}=\"1\" BAD\n"
              "ENV{A}=e\"\\q\"\nENV{X=\"1\"\nENV{B}=\"ok\"",
              "6 U: ENV{B}=\"ok\"",
              "E 1:21 Invalid key/value pair (the value must be quoted), ignoring line.\n"
              "E 2:21 Invalid key/value pair (missing closing quote), ignoring line.\n"
              "E 3:12 Invalid key/value pair (expected an operator after the key), ignoring "
              "line.\n"
              "E 4:10 Invalid key/value pair (invalid escape sequence), ignoring line.\n"
              "E 5:4 Invalid key/value pair (missing '}' after the attribute), ignoring "
              "line.\n");
        /* positions in continued lines; the rule is numbered by its last line */
        CHECK("KERNEL==\"a\", \\\n  ENV{A}=\"1\", \\\n\tFOO=\"x\"\nKERNEL==\"b\",\\\n"
              "# comment\n  ENV{B}=\"$bad\"",
              "6 U: KERNEL==p\"b\"[b] ENV{B}=\"$bad\"$",
              "E 3:2 Invalid key 'FOO', ignoring line.\n"
              "E 6:11 Invalid value \"$bad\" for ENV (char 1: invalid substitution type).\n");
        /* CRLF */
        CHECK("KERNEL==\"a\", ENV{A}=\"1\"\r\nENV{B}=\"2\"\r\n",
              "1 U: KERNEL==p\"a\"[a] ENV{A}=\"1\"\n2 U: ENV{B}=\"2\"", NULL);
}

static void test_values(void)
{
        CHECK("ENV{A}=e\"a\\tb\\x41\\s\", ENV{B}=\"a\\tb\\\"c\", ENV{C}=\"\"",
              "1 U: ENV{A}=\"a\tbA \" ENV{B}=\"a\\tb\"c\" ENV{C}=\"\"", NULL);
        /* no separator needed; repeated commas are fine */
        CHECK(",,KERNEL==\"a\"ENV{A}=\"1\",,, ,ENV{B}=\"2\",",
              "1 U: KERNEL==p\"a\"[a] ENV{A}=\"1\" ENV{B}=\"2\"", NULL);
}

/* ---------------------------------------------------------------- verify */

static void test_verify_checks(void)
{
        CHECK_OPTS(&verify, "KERNEL==\"a\", ENV{A}=\"1\"", NULL, NULL);
        CHECK_OPTS(&verify,
                   ",KERNEL==\"a\",ENV{A}=\"1\"\nKERNEL==\"a\" ENV{A}=\"1\"\n"
                   "KERNEL==\"a\"ENV{A}=\"1\"\nKERNEL==\"a\",, ENV{A}=\"1\"\n"
                   "KERNEL==\"a\" , ENV{A}=\"1\",\nKERNEL==\"a\", ENV{A}=\"1\" ,  ",
                   NULL,
                   "N 1:1 style: stray leading comma.\n"
                   "N 1:14 style: whitespace after comma is expected.\n"
                   "N 2:13 style: a comma between tokens is expected.\n"
                   "N 3:12 style: a comma between tokens is expected.\n"
                   "N 3:12 style: whitespace between tokens is expected.\n"
                   "N 4:12 style: more than one comma between tokens.\n"
                   "N 5:12 style: stray whitespace before comma.\n"
                   "N 5:25 style: stray trailing comma.\n"
                   "N 6:24 style: stray trailing comma.\n");
        /* duplicates and conflicts (matches with ==/!= of the same value, or
         * plain/glob values that cannot both match) */
        CHECK_OPTS(&verify,
                   "KERNEL==\"a\", KERNEL!=\"a\", ENV{A}=\"1\"\n"
                   "KERNEL==\"a|b\", KERNEL==\"c\", ENV{A}=\"1\"\n"
                   "KERNEL==\"a|b\", KERNEL==\"b|a\", ENV{A}=\"1\"\n"
                   "KERNEL==\"sd*\", KERNEL==\"nvme*\", ENV{A}=\"1\"\n"
                   "KERNEL==\"sd*\", KERNEL==\"s*\", ENV{A}=\"1\"\n"
                   "KERNEL==\"|a\", KERNEL==\"|b\", ENV{A}=\"1\"\n"
                   "ENV{A}=\"1\", ENV{A}=\"1\"\n"
                   "ENV{X}==\"1\", ENV{Y}==\"2\", ENV{A}=\"1\"\n"
                   "KERNEL==\"?*\", KERNEL!=\"\", ENV{A}=\"1\"\n"
                   "OWNER=\"root\", OWNER=\"root\"\n",
                   NULL,
                   "E 1:14 conflicting match expressions, the line has no effect.\n"
                   "E 2:16 conflicting match expressions, the line has no effect.\n"
                   "W 3:16 duplicate expressions.\n"
                   "E 4:16 conflicting match expressions, the line has no effect.\n"
                   "W 7:13 duplicate expressions.\n"
                   "W 9:15 duplicate expressions.\n"
                   "W 10:15 duplicate expressions.\n");
        /* RESULT before PROGRAM, unused labels */
        CHECK_OPTS(&verify,
                   "RESULT==\"x\", PROGRAM=\"p\", ENV{A}=\"1\"\nGOTO=\"used\"\n"
                   "LABEL=\"unused\"\nLABEL=\"used\"",
                   "1 U: PROGRAM==p\"p\" RESULT==p\"x\"[x] ENV{A}=\"1\"\n2 G: GOTO=used>3\n"
                   "3 L: LABEL=unused\n4 L: LABEL=used",
                   "W 1:14 Reordering RESULT check after PROGRAM assignment.\n"
                   "N 3:1 style: LABEL=\"unused\" is unused.\n");
}

/* ---------------------------------------------------------------- files */

static char tmpdir[] = "/tmp/test-rules-compile.XXXXXX";

static void path_of(char *buf, const char *rel)
{
        int n = snprintf(buf, PATH_MAX, "%s/%s", tmpdir, rel);

        ASSERT_TRUE(n > 0 && n < PATH_MAX);
}

static void put(const char *rel, const char *text, mode_t mode)
{
        char path[PATH_MAX];
        FILE *f;

        path_of(path, rel);
        unlink(path);
        f = fopen(path, "we");
        ASSERT_TRUE(f != NULL);
        ASSERT_EQ(fwrite(text, 1, strlen(text), f), strlen(text));
        ASSERT_EQ(fclose(f), 0);
        ASSERT_EQ(chmod(path, mode), 0);
}

static void mkdir_rel(const char *rel)
{
        char path[PATH_MAX];

        path_of(path, rel);
        ASSERT_TRUE(mkdir(path, 0755) == 0 || errno == EEXIST);
}

static void symlink_rel(const char *target, const char *rel)
{
        char path[PATH_MAX];

        path_of(path, rel);
        unlink(path);
        ASSERT_EQ(symlink(target, path), 0);
}

static struct rules *load_dirs(const char *const *rels, char **msgs)
{
        char paths[4][PATH_MAX];
        const char *dirs[5];
        size_t n = 0;
        struct capture cap;
        struct rules *r;

        for (; rels[n]; n++) {
                path_of(paths[n], rels[n]);
                dirs[n] = paths[n];
        }
        dirs[n] = NULL;
        struct rules_load_options o = { .dirs = dirs };
        capture_begin(&cap);
        ASSERT_EQ(rules_load(&o, &r), 0);
        *msgs = capture_end(&cap);
        return r;
}

/* "name:line name:line ..." of the compiled lines */
static char *lines_of(const struct rules *r)
{
        char *out = malloc(4096);
        size_t o = 0;

        ASSERT_TRUE(out);
        out[0] = '\0';
        for (size_t i = 0; i < r->n_lines; i++) {
                const char *base = strrchr(r->lines[i].file, '/');

                o += (size_t)snprintf(out + o, 4096 - o, "%s%s/%s:%u", i ? " " : "",
                                      strstr(r->lines[i].file, "/etc/") ? "etc" : "lib",
                                      base + 1, r->lines[i].lineno);
        }
        return out;
}

static void test_files(void)
{
        static const char *const dirs[] = { "etc", "lib", NULL };
        char *msgs, *got;
        struct rules *r;

        mkdir_rel("etc");
        mkdir_rel("lib");
        put("lib/50-a.rules", "ENV{A}=\"1\"\nENV{A}=\"2\"\n", 0644);
        put("lib/60-b.rules", "ENV{B}=\"1\"\n", 0644);
        put("etc/60-b.rules", "\n\nENV{B}=\"etc\"\n", 0644);
        put("lib/10-c.rules", "GOTO=\"end\"\n", 0644);   /* GOTO cannot cross files */
        put("etc/55-d.rules", "LABEL=\"end\"\n", 0644);
        put("lib/70-masked.rules", "ENV{M}=\"1\"\n", 0644);
        symlink_rel("/dev/null", "etc/70-masked.rules");
        put("lib/71-empty.rules", "ENV{M}=\"1\"\n", 0644);
        put("etc/71-empty.rules", "", 0644);
        put("lib/.hidden.rules", "ENV{H}=\"1\"\n", 0644);
        put("lib/80-x.rule", "ENV{X}=\"1\"\n", 0644);
        put("lib/.rules", "ENV{X}=\"1\"\n", 0644);
        mkdir_rel("lib/90-dir.rules");
        put("lib/95-exec.rules", "ENV{E}=\"1\"\n", 0755);
        put("lib/96-ww.rules", "ENV{W}=\"1\"\n", 0646);
        symlink_rel("nonexistent", "lib/97-dangling.rules");
        put("lib/Z-upper.rules", "ENV{Z}=\"1\"\n", 0644); /* strcmp order: after digits */
        put("lib/A-upper.rules", "ENV{Z}=\"1\"\n", 0644);
        put("lib/a-lower.rules", "ENV{Z}=\"1\"\n", 0644);

        r = load_dirs(dirs, &msgs);
        got = lines_of(r);
        ASSERT_STREQ(got, "lib/50-a.rules:1 lib/50-a.rules:2 etc/55-d.rules:1 "
                          "etc/60-b.rules:3 lib/95-exec.rules:1 lib/96-ww.rules:1 "
                          "lib/A-upper.rules:1 lib/Z-upper.rules:1 lib/a-lower.rules:1");
        free(got);
        ASSERT_TRUE(strstr(msgs, "E 1:1 GOTO=\"end\" has no matching label"));
        ASSERT_TRUE(strstr(msgs, "95-exec.rules is marked executable"));
        ASSERT_TRUE(strstr(msgs, "96-ww.rules is marked world-writable"));
        ASSERT_EQ(r->stats.files, 9);
        ASSERT_TRUE(!rules_should_reload(r));
        free(msgs);

        /* list used by udevadm verify: masked ones included */
        char paths[2][PATH_MAX];
        const char *dv[3];
        char **list;
        path_of(paths[0], "etc");
        path_of(paths[1], "lib");
        dv[0] = paths[0], dv[1] = paths[1], dv[2] = NULL;
        ASSERT_EQ(rules_list_files(dv, &list), 0);
        size_t n = 0;
        while (list[n])
                n++;
        ASSERT_EQ(n, 12); /* 10 50 55 60 70 71 95 96 97 A Z a (not the directory) */
        ASSERT_TRUE(strstr(list[3], "/etc/60-b.rules"));
        ASSERT_TRUE(strstr(list[4], "/etc/70-masked.rules"));
        ASSERT_TRUE(strstr(list[11], "/lib/a-lower.rules"));
        rules_file_list_free(list);

        /* reload detection: content change, new file, removed file, masking */
        struct timespec ts = { .tv_sec = 0, .tv_nsec = 20 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        put("lib/50-a.rules", "ENV{A}=\"1\"\nENV{A}=\"3\"\n", 0644);
        ASSERT_TRUE(rules_should_reload(r));
        rules_unref(r);

        r = load_dirs(dirs, &msgs);
        free(msgs);
        ASSERT_TRUE(!rules_should_reload(r));
        put("lib/61-new.rules", "ENV{N}=\"1\"\n", 0644);
        ASSERT_TRUE(rules_should_reload(r));
        rules_unref(r);

        r = load_dirs(dirs, &msgs);
        free(msgs);
        char p[PATH_MAX];
        path_of(p, "lib/61-new.rules");
        ASSERT_EQ(unlink(p), 0);
        ASSERT_TRUE(rules_should_reload(r));
        rules_unref(r);

        r = load_dirs(dirs, &msgs);
        free(msgs);
        symlink_rel("/dev/null", "etc/50-a.rules");
        ASSERT_TRUE(rules_should_reload(r));
        rules_unref(r);
        r = load_dirs(dirs, &msgs);
        free(msgs);
        ASSERT_TRUE(!rules_should_reload(r)); /* masked files are recorded: no reload loop */
        got = lines_of(r);
        ASSERT_TRUE(!strstr(got, "50-a.rules"));
        free(got);

        /* refcount */
        struct rules *r2 = rules_ref(r);
        ASSERT_TRUE(r2 == r);
        rules_unref(r);
        ASSERT_EQ(r2->n_lines > 0, 1);
        rules_unref(r2);

        /* an explicit file list */
        const char *files[] = { paths[1], NULL };
        path_of(paths[1], "lib/95-exec.rules");
        struct rules_load_options fo = { .files = files };
        struct capture cap;
        capture_begin(&cap);
        ASSERT_EQ(rules_load(&fo, &r), 0);
        free(capture_end(&cap));
        ASSERT_EQ(r->n_lines, 1);
        ASSERT_TRUE(!rules_should_reload(r));
        rules_unref(r);
}

static void test_string_and_stats(void)
{
        struct rules_stats st;
        struct rules *r;
        char *m;

        r = load_text("", 0, NULL, &m);
        ASSERT_STREQ(m, "");
        ASSERT_EQ(r->n_lines, 0);
        ASSERT_TRUE(!rules_should_reload(r));
        free(m);
        rules_unref(r);

        /* embedded NULs end lines; text need not be NUL-terminated */
        r = load_text("ENV{A}=\"1\"\0ENV{B}=\"2\"xx", 21, NULL, &m);
        ASSERT_EQ(r->n_lines, 2);
        rules_get_stats(r, &st);
        ASSERT_EQ(st.lines, 2);
        ASSERT_EQ(st.tokens, 2);
        ASSERT_EQ(st.errors, 0);
        free(m);
        rules_unref(r);

        r = load_text("FOO=\"1\"\nKERNEL==\"a\"\nENV{A}=\"$q\"\n", 32, &verify, &m);
        rules_get_stats(r, &st);
        ASSERT_EQ(st.files, 1);
        ASSERT_EQ(st.lines, 1);
        ASSERT_EQ(st.errors, 2);
        ASSERT_EQ(st.warnings, 1);
        ASSERT_EQ(st.notices, 0);
        free(m);
        rules_unref(r);
}

/* ---------------------------------------------------------------- Debian */

static const char *debian_rules_dir(char *buf)
{
        const char *root = getenv("SD_UDEV_ROOT");

        snprintf(buf, PATH_MAX, "%s/lib/udev/rules.d", root ? root : "build-ref/sd-udev");
        return access(buf, R_OK) == 0 ? buf : NULL;
}

/* Number of GROUP=/OWNER= names in the Debian rules this machine does not know
 * (systemd 252 logs "Unknown group" for exactly these). */
static unsigned count_unknown_groups(const struct rules *r)
{
        unsigned n = 0;

        for (size_t i = 0; i < r->n_lines; i++)
                for (unsigned k = 0; k < r->lines[i].n_tokens; k++) {
                        const struct token *t = &r->lines[i].tokens[k];

                        if (t->type == TK_A_GROUP && !getgrnam(t->value) &&
                            !streq(t->value, "nogroup"))
                                n++;
                }
        return n;
}

static void test_debian_rules(void)
{
        char dir[PATH_MAX];
        const char *dirs[] = { debian_rules_dir(dir), NULL };
        struct rules_load_options o = { .dirs = dirs, .resolve_names = RESOLVE_NAMES_LATE };
        struct timespec a, b;
        struct capture cap;
        struct rules *r;
        char *msgs;

        if (!dirs[0]) {
                fprintf(stderr, "(Debian rules not found, skipped) ");
                return;
        }

        /* names resolved per event: nothing at all to report */
        capture_begin(&cap);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        ASSERT_EQ(rules_load(&o, &r), 0);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
        msgs = capture_end(&cap);
        ASSERT_STREQ(msgs, "");
        ASSERT_EQ(r->stats.errors, 0);
        ASSERT_EQ(r->stats.warnings, 0);
        ASSERT_TRUE(r->stats.files >= 30);
        ASSERT_TRUE(r->stats.lines > 400);
        fprintf(stderr, "(%u files, %u lines, %u tokens in %.2f ms CPU) ", r->stats.files,
                r->stats.lines, r->stats.tokens,
                (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6);
        unsigned unknown = count_unknown_groups(r);
        free(msgs);
        rules_unref(r);

        /* early resolution: only the groups this machine lacks, as systemd */
        o.resolve_names = RESOLVE_NAMES_EARLY;
        capture_begin(&cap);
        ASSERT_EQ(rules_load(&o, &r), 0);
        msgs = capture_end(&cap);
        ASSERT_EQ(r->stats.errors, unknown);
        ASSERT_EQ(r->stats.warnings, 0);
        for (char *p = msgs; *p; p = strchr(p, '\n') + 1)
                ASSERT_TRUE(strstr(p, "Unknown group") && strstr(p, "Unknown group") <
                                                                   strchr(p, '\n'));
        free(msgs);
        rules_unref(r);
}

int main(void)
{
        log_set_target(LOG_TARGET_CONSOLE, "test");
        log_set_max_level(LOG_INFO);
        umask(022);
        ASSERT_TRUE(mkdtemp(tmpdir) != NULL);

        TEST_RUN(test_operator_table);
        TEST_RUN(test_patterns);
        TEST_RUN(test_ordering);
        TEST_RUN(test_masks);
        TEST_RUN(test_goto);
        TEST_RUN(test_keys);
        TEST_RUN(test_attributes);
        TEST_RUN(test_substitution_checks);
        TEST_RUN(test_owner_group_mode);
        TEST_RUN(test_options);
        TEST_RUN(test_builtins);
        TEST_RUN(test_syntax_errors);
        TEST_RUN(test_values);
        TEST_RUN(test_verify_checks);
        TEST_RUN(test_files);
        TEST_RUN(test_string_and_stats);
        TEST_RUN(test_debian_rules);

        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        ASSERT_EQ(system(cmd), 0);
        return check_failures ? 1 : 0;
}
