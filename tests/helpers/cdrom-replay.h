/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one struct replay per thread) */
#pragma once
/* Recorded CD-ROM ioctl exchanges, written by tests/helpers/cdrom-shim.c in
 * record mode and answered from in replay mode (by the shim under any
 * program, and by src/helpers/test-cdrom-mmc.c without a device).
 *
 * The format is text, one exchange a line, numbers in hex, '#' starts a
 * comment line:
 *
 *   ioctl REQUEST ARG RET ERRNO
 *   ioctlout REQUEST RET ERRNO DATA .
 *   sgio CDB DXFER_LEN RET ERRNO STATUS MASKED HOST DRIVER INFO RESID SENSE DATA .
 *
 * ARG is the integer argument of a plain ioctl (CDROM_DRIVE_STATUS's slot,
 * CDROM_LOCKDOOR's 0/1, ...); an ioctlout line answers a request whose
 * argument is a structure the kernel fills (VIDIOC_QUERYCAP, MEMGETINFO)
 * with DATA copied there, whatever the argument. CDB is the command bytes, SENSE the sense
 * bytes the kernel wrote (sb_len_wr) and DATA the bytes transferred from the
 * device with trailing zero bytes dropped ("-" for none): the recorder zeroes
 * the buffer before the call, so the buffer the caller saw is DATA followed
 * by zeros up to DXFER_LEN. A request is answered by the first unused line
 * with the same REQUEST and ARG (or the same CDB and DXFER_LEN); once all such
 * lines are used, by the last of them again. A request without a line fails
 * with EIO. Header-only so that the shim (a shared object built by the
 * integration test) and the unit test can both use it. */

#include <errno.h>
#include <scsi/sg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#define REPLAY_CDB_MAX 16
#define REPLAY_SENSE_MAX 64
#define REPLAY_DATA_MAX (128 * 1024)

struct replay_entry {
        bool sgio;
        bool out; /* ioctlout: DATA goes to *arg */
        bool used;
        unsigned long request;
        unsigned long arg;
        long ret;
        int err;
        uint8_t cdb[REPLAY_CDB_MAX];
        size_t cdb_len;
        unsigned long dxfer_len;
        unsigned long status, masked_status, host_status, driver_status, info;
        long resid;
        uint8_t sense[REPLAY_SENSE_MAX];
        size_t sense_len;
        uint8_t *data;
        size_t data_len;
};

struct replay {
        struct replay_entry *entries;
        size_t n;
};

static inline void replay_free(struct replay *r)
{
        for (size_t i = 0; i < r->n; i++)
                free(r->entries[i].data);
        free(r->entries);
        r->entries = NULL;
        r->n = 0;
}

/* Hex string (or "-") into at most max bytes. Byte count or -1. */
static inline long replay_unhex(const char *s, uint8_t *out, size_t max)
{
        size_t n = 0;

        if (strcmp(s, "-") == 0)
                return 0;
        for (; s[0] && s[1]; s += 2) {
                char b[3] = { s[0], s[1], 0 };
                char *end;
                unsigned long v = strtoul(b, &end, 16);

                if (*end || n >= max)
                        return -1;
                out[n++] = (uint8_t)v;
        }
        return *s ? -1 : (long)n;
}

static inline int replay_parse_line(char *line, struct replay_entry *e)
{
        char *tok[16];
        size_t n = 0;
        long k;

        for (char *save = NULL, *t = strtok_r(line, " \t\n", &save); t && n < 16;
             t = strtok_r(NULL, " \t\n", &save))
                tok[n++] = t;
        memset(e, 0, sizeof(*e));
        if (n == 6 && strcmp(tok[0], "ioctlout") == 0 && strcmp(tok[5], ".") == 0) {
                e->out = true;
                e->request = strtoul(tok[1], NULL, 16);
                e->ret = strtol(tok[2], NULL, 16);
                e->err = (int)strtol(tok[3], NULL, 16);
                if (strcmp(tok[4], "-") != 0) {
                        e->data = malloc(REPLAY_DATA_MAX);
                        if (!e->data)
                                return -ENOMEM;
                        k = replay_unhex(tok[4], e->data, REPLAY_DATA_MAX);
                        if (k < 0) {
                                free(e->data);
                                e->data = NULL;
                                return -EINVAL;
                        }
                        e->data_len = (size_t)k;
                }
                return 0;
        }
        if (n == 5 && strcmp(tok[0], "ioctl") == 0) {
                e->request = strtoul(tok[1], NULL, 16);
                e->arg = strtoul(tok[2], NULL, 16);
                e->ret = strtol(tok[3], NULL, 16);
                e->err = (int)strtol(tok[4], NULL, 16);
                return 0;
        }
        if (n != 14 || strcmp(tok[0], "sgio") != 0)
                return -EINVAL;
        e->sgio = true;
        e->request = SG_IO;
        k = replay_unhex(tok[1], e->cdb, sizeof(e->cdb));
        if (k <= 0)
                return -EINVAL;
        e->cdb_len = (size_t)k;
        e->dxfer_len = strtoul(tok[2], NULL, 16);
        e->ret = strtol(tok[3], NULL, 16);
        e->err = (int)strtol(tok[4], NULL, 16);
        e->status = strtoul(tok[5], NULL, 16);
        e->masked_status = strtoul(tok[6], NULL, 16);
        e->host_status = strtoul(tok[7], NULL, 16);
        e->driver_status = strtoul(tok[8], NULL, 16);
        e->info = strtoul(tok[9], NULL, 16);
        e->resid = strtol(tok[10], NULL, 16);
        k = replay_unhex(tok[11], e->sense, sizeof(e->sense));
        if (k < 0)
                return -EINVAL;
        e->sense_len = (size_t)k;
        if (strcmp(tok[12], "-") != 0) {
                e->data = malloc(REPLAY_DATA_MAX);
                if (!e->data)
                        return -ENOMEM;
                k = replay_unhex(tok[12], e->data, REPLAY_DATA_MAX);
                if (k < 0 || (unsigned long)k > e->dxfer_len) {
                        free(e->data);
                        e->data = NULL;
                        return -EINVAL;
                }
                e->data_len = (size_t)k;
        }
        /* "." ends the line, so that a cut line is noticed */
        return strcmp(tok[13], ".") == 0 ? 0 : -EINVAL;
}

/* 0 or -errno (-EINVAL: a malformed line). */
static inline int replay_load(const char *path, struct replay *r)
{
        FILE *f = fopen(path, "re");
        char *line = NULL;
        size_t cap = 0;
        int ret = 0;

        r->entries = NULL;
        r->n = 0;
        if (!f)
                return -errno;
        while (getline(&line, &cap, f) > 0) {
                struct replay_entry e, *p;

                if (line[0] == '#' || line[0] == '\n')
                        continue;
                ret = replay_parse_line(line, &e);
                if (ret < 0)
                        break;
                p = realloc(r->entries, (r->n + 1) * sizeof(*p));
                if (!p) {
                        free(e.data);
                        ret = -ENOMEM;
                        break;
                }
                r->entries = p;
                r->entries[r->n++] = e;
        }
        free(line);
        fclose(f);
        if (ret < 0)
                replay_free(r);
        return ret;
}

static inline bool replay_matches(const struct replay_entry *e, unsigned long request,
                                  unsigned long arg, const struct sg_io_hdr *h)
{
        if (e->request != request)
                return false;
        if (e->out)
                return true;
        if (!e->sgio)
                return e->arg == arg;
        return h && h->cmd_len == e->cdb_len && memcmp(h->cmdp, e->cdb, e->cdb_len) == 0 &&
               h->dxfer_len == e->dxfer_len;
}

/* Answer one ioctl like the kernel did: the return value, or -1 with errno. */
static inline int replay_ioctl(struct replay *r, unsigned long request, void *arg)
{
        struct sg_io_hdr *h = request == SG_IO ? arg : NULL;
        struct replay_entry *e = NULL;

        for (size_t i = 0; i < r->n; i++)
                if (replay_matches(&r->entries[i], request, (unsigned long)arg, h)) {
                        e = &r->entries[i];
                        if (!e->used)
                                break;
                }
        if (!e) {
                errno = EIO;
                return -1;
        }
        e->used = true;
        if (e->out && arg && e->data_len)
                memcpy(arg, e->data, e->data_len);
        if (h) {
                if (h->dxfer_direction == SG_DXFER_FROM_DEV && h->dxferp && h->dxfer_len) {
                        memset(h->dxferp, 0, h->dxfer_len);
                        if (e->data_len)
                                memcpy(h->dxferp, e->data, e->data_len);
                }
                h->status = (unsigned char)e->status;
                h->masked_status = (unsigned char)e->masked_status;
                h->host_status = (unsigned short)e->host_status;
                h->driver_status = (unsigned short)e->driver_status;
                h->info = (unsigned)e->info;
                h->resid = (int)e->resid;
                h->sb_len_wr = 0;
                if (h->sbp && h->mx_sb_len) {
                        size_t n = e->sense_len < h->mx_sb_len ? e->sense_len : h->mx_sb_len;

                        memcpy(h->sbp, e->sense, n);
                        h->sb_len_wr = (unsigned char)n;
                }
        }
        if (e->ret < 0) {
                errno = e->err ? e->err : EIO;
                return -1;
        }
        return (int)e->ret;
}
