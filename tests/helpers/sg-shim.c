/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (a test preload; the programs it serves are single-threaded) */
/* LD_PRELOAD shim that plays a recorded SCSI/ATA device for ata_id and
 * scsi_id (tudev's and systemd's alike), so both can be compared without
 * hardware (tests/integration/test_helpers_ata_scsi.py).
 *
 *   SGSHIM_DEV=/dev/fake-sda     the path that opens the recorded device
 *   SGSHIM_CONF=FILE             its description, one directive a line:
 *     v4 yes|no                  answer sg v4 headers (bsg) or EINVAL (sd; default)
 *     open_errno N               open() of the device fails with errno N
 *     sg_errno N                 every SG_IO fails with errno N
 *     hdio HEX | hdio_errno N    HDIO_GET_IDENTITY data (512 bytes) or its errno
 *                                (default ENOTTY)
 *     inquiry HEX                standard INQUIRY data
 *     vpd PAGE HEX               VPD page PAGE (hex); absent pages: CHECK
 *                                CONDITION, ILLEGAL REQUEST
 *     ata HEX | atapi HEX        IDENTIFY (PACKET) DEVICE data for ATA PASS-THROUGH
 *     ata_sense desc|fixed|none  how pass-through returns the ATA registers
 *                                (default desc: descriptor sense 0x72/0x09)
 *     status KEY ST HOST DRV [SENSEHEX]   statuses for KEY (std, vpdXX, ata,
 *                                atapi) instead of the normal answer
 * Any other fd and ioctl goes to libc. Built by the test with
 * cc -shared -fPIC -o sg-shim.so sg-shim.c -ldl. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bsg.h>
#include <linux/hdreg.h>
#include <scsi/sg.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define MAX_FDS 16
#define MAX_DATA 4096
#define MAX_ITEMS 64

struct item {
        char key[16];
        uint8_t data[MAX_DATA];
        size_t len;
        int has_status;
        unsigned st, host, drv;
        uint8_t sense[32];
        size_t sense_len;
};

static struct {
        int loaded;
        int v4;
        int open_errno, sg_errno, hdio_errno;
        int ata_sense; /* 0 desc, 1 fixed, 2 none */
        struct item items[MAX_ITEMS];
        size_t n_items;
        int fds[MAX_FDS];
} S;

static size_t unhex(const char *s, uint8_t *out, size_t max)
{
        size_t n = 0;

        while (*s && n < max) {
                unsigned v;

                while (*s == ' ' || *s == ':')
                        s++;
                if (!s[0] || !s[1] || sscanf(s, "%2x", &v) != 1)
                        break;
                out[n++] = (uint8_t)v;
                s += 2;
        }
        return n;
}

static struct item *find_item(const char *key, int create)
{
        for (size_t i = 0; i < S.n_items; i++)
                if (strcmp(S.items[i].key, key) == 0)
                        return &S.items[i];
        if (!create || S.n_items >= MAX_ITEMS)
                return NULL;
        snprintf(S.items[S.n_items].key, sizeof(S.items[0].key), "%s", key);
        return &S.items[S.n_items++];
}

static void load(void)
{
        const char *path = getenv("SGSHIM_CONF");
        char *line = NULL;
        size_t cap = 0;
        FILE *f;

        if (S.loaded)
                return;
        S.loaded = 1;
        S.hdio_errno = ENOTTY;
        for (int i = 0; i < MAX_FDS; i++)
                S.fds[i] = -1;
        if (!path || !(f = fopen(path, "re")))
                return;
        while (getline(&line, &cap, f) > 0) {
                char key[32] = "", arg[8] = "";
                int off = 0;
                struct item *it;

                line[strcspn(line, "\n")] = '\0';
                if (sscanf(line, "%31s %n", key, &off) < 1)
                        continue;
                if (strcmp(key, "v4") == 0)
                        S.v4 = strncmp(line + off, "yes", 3) == 0;
                else if (strcmp(key, "open_errno") == 0)
                        S.open_errno = atoi(line + off);
                else if (strcmp(key, "sg_errno") == 0)
                        S.sg_errno = atoi(line + off);
                else if (strcmp(key, "hdio_errno") == 0)
                        S.hdio_errno = atoi(line + off);
                else if (strcmp(key, "ata_sense") == 0)
                        S.ata_sense = strncmp(line + off, "fixed", 5) == 0 ? 1 :
                                      strncmp(line + off, "none", 4) == 0 ? 2 : 0;
                else if (strcmp(key, "vpd") == 0) {
                        int o2 = 0;

                        if (sscanf(line + off, "%7s %n", arg, &o2) < 1)
                                continue;
                        snprintf(key, sizeof(key), "vpd%s", arg);
                        it = find_item(key, 1);
                        if (it)
                                it->len = unhex(line + off + o2, it->data, MAX_DATA);
                } else if (strcmp(key, "status") == 0) {
                        unsigned st, host, drv;
                        int o2 = 0;

                        if (sscanf(line + off, "%7s %u %u %u %n", arg, &st, &host, &drv, &o2) < 4)
                                continue;
                        it = find_item(arg, 1);
                        if (!it)
                                continue;
                        it->has_status = 1;
                        it->st = st;
                        it->host = host;
                        it->drv = drv;
                        if (o2 > 0)
                                it->sense_len = unhex(line + off + o2, it->sense, sizeof(it->sense));
                } else {
                        it = find_item(key, 1);
                        if (it)
                                it->len = unhex(line + off, it->data, MAX_DATA);
                }
        }
        free(line);
        fclose(f);
}

static int is_fake(int fd)
{
        for (int i = 0; i < MAX_FDS; i++)
                if (S.fds[i] >= 0 && S.fds[i] == fd)
                        return 1;
        return 0;
}

static int fake_open(const char *path, int flags, int *ret)
{
        const char *dev = getenv("SGSHIM_DEV");
        int (*real_openat)(int, const char *, int, ...) = dlsym(RTLD_NEXT, "openat");
        int fd;

        if (!dev || !path || strcmp(path, dev) != 0)
                return 0;
        load();
        if (S.open_errno) {
                errno = S.open_errno;
                *ret = -1;
                return 1;
        }
        fd = real_openat(AT_FDCWD, "/dev/null", O_RDONLY | (flags & O_CLOEXEC));
        if (fd >= 0)
                for (int i = 0; i < MAX_FDS; i++)
                        if (S.fds[i] < 0) {
                                S.fds[i] = fd;
                                break;
                        }
        *ret = fd;
        return 1;
}

#define OPEN_WRAPPER(name, realname)                                               \
        int name(const char *path, int flags, ...)                                 \
        {                                                                          \
                int (*real)(const char *, int, ...) = dlsym(RTLD_NEXT, realname);  \
                mode_t mode = 0;                                                   \
                int r;                                                             \
                if (flags & (O_CREAT | O_TMPFILE)) {                               \
                        va_list ap;                                                \
                        va_start(ap, flags);                                       \
                        mode = va_arg(ap, mode_t);                                 \
                        va_end(ap);                                                \
                }                                                                  \
                if (fake_open(path, flags, &r))                                    \
                        return r;                                                  \
                return real(path, flags, mode);                                    \
        }
OPEN_WRAPPER(open, "open")
OPEN_WRAPPER(open64, "open64")

#define OPENAT_WRAPPER(name, realname)                                             \
        int name(int dirfd, const char *path, int flags, ...)                      \
        {                                                                          \
                int (*real)(int, const char *, int, ...) = dlsym(RTLD_NEXT, realname); \
                mode_t mode = 0;                                                   \
                int r;                                                             \
                if (flags & (O_CREAT | O_TMPFILE)) {                               \
                        va_list ap;                                                \
                        va_start(ap, flags);                                       \
                        mode = va_arg(ap, mode_t);                                 \
                        va_end(ap);                                                \
                }                                                                  \
                if (fake_open(path, flags, &r))                                    \
                        return r;                                                  \
                return real(dirfd, path, flags, mode);                             \
        }
OPENAT_WRAPPER(openat, "openat")
OPENAT_WRAPPER(openat64, "openat64")

int __open_2(const char *path, int flags);
int __open_2(const char *path, int flags)
{
        return open(path, flags);
}
int __open64_2(const char *path, int flags);
int __open64_2(const char *path, int flags)
{
        return open64(path, flags);
}

int close(int fd)
{
        int (*real)(int) = dlsym(RTLD_NEXT, "close");

        for (int i = 0; i < MAX_FDS; i++)
                if (S.fds[i] == fd)
                        S.fds[i] = -1;
        return real(fd);
}

/* Fill in a reply: data, statuses, sense. */
struct reply {
        const uint8_t *data;
        size_t len;
        unsigned st, host, drv;
        uint8_t sense[32];
        size_t sense_len;
};

static void check_condition(struct reply *r, uint8_t key, uint8_t asc)
{
        r->st = 0x02;
        r->drv = 0x08; /* DRIVER_SENSE */
        memset(r->sense, 0, sizeof(r->sense));
        r->sense[0] = 0x70;
        r->sense[2] = key;
        r->sense[7] = 10;
        r->sense[12] = asc;
        r->sense_len = 18;
}

static void ata_return(struct reply *r)
{
        memset(r->sense, 0, sizeof(r->sense));
        if (S.ata_sense == 2)
                return;
        r->st = 0x02;
        r->drv = 0x08;
        if (S.ata_sense == 1) {
                r->sense[0] = 0x70;
                r->sense[2] = 0x01; /* RECOVERED ERROR */
                r->sense[7] = 10;
                r->sense[12] = 0x00;
                r->sense[13] = 0x1d; /* ATA PASS THROUGH INFORMATION AVAILABLE */
                r->sense_len = 18;
                return;
        }
        r->sense[0] = 0x72;
        r->sense[1] = 0x01;
        r->sense[2] = 0x00;
        r->sense[3] = 0x1d;
        r->sense[7] = 14;
        r->sense[8] = 0x09;
        r->sense[9] = 0x0c;
        r->sense[13] = 0x01; /* sector count */
        r->sense[21] = 0x50; /* status: DRDY DSC */
        r->sense_len = 22;
}

static void answer(const uint8_t *cdb, size_t cdb_len, struct reply *r)
{
        struct item *it = NULL;
        char key[16] = "";

        memset(r, 0, sizeof(*r));
        if (cdb_len >= 6 && cdb[0] == 0x12) {
                if (cdb[1] & 1)
                        snprintf(key, sizeof(key), "vpd%02x", cdb[2]);
                else
                        snprintf(key, sizeof(key), "std");
        } else if ((cdb_len == 12 && cdb[0] == 0xa1 && cdb[9] == 0xec) ||
                   (cdb_len == 16 && cdb[0] == 0x85 && cdb[14] == 0xec))
                snprintf(key, sizeof(key), "ata");
        else if ((cdb_len == 12 && cdb[0] == 0xa1 && cdb[9] == 0xa1) ||
                 (cdb_len == 16 && cdb[0] == 0x85 && cdb[14] == 0xa1))
                snprintf(key, sizeof(key), "atapi");
        if (key[0])
                it = find_item(strcmp(key, "std") == 0 ? "inquiry" : key, 0);
        if (key[0]) {
                struct item *ov = find_item(key, 0);

                if (ov && ov->has_status) {
                        r->st = ov->st;
                        r->host = ov->host;
                        r->drv = ov->drv;
                        memcpy(r->sense, ov->sense, sizeof(r->sense));
                        r->sense_len = ov->sense_len;
                        if (it && it->len) {
                                r->data = it->data;
                                r->len = it->len;
                        }
                        return;
                }
        }
        if (!it || !it->len) {
                check_condition(r, 0x05, key[0] ? 0x24 : 0x20); /* ILLEGAL REQUEST */
                return;
        }
        r->data = it->data;
        r->len = it->len;
        if (strcmp(key, "ata") == 0 || strcmp(key, "atapi") == 0)
                ata_return(r);
}

static int fake_sg_io(void *arg)
{
        struct reply r;
        int guard = *(int *)arg;

        if (S.sg_errno) {
                errno = S.sg_errno;
                return -1;
        }
        if (guard == 'Q') {
                struct sg_io_v4 *io = arg;
                size_t n, alloc;

                if (!S.v4) {
                        errno = EINVAL;
                        return -1;
                }
                answer((const uint8_t *)(uintptr_t)io->request, io->request_len, &r);
                alloc = io->din_xfer_len;
                n = r.len < alloc ? r.len : alloc;
                if (n)
                        memcpy((void *)(uintptr_t)io->din_xferp, r.data, n);
                io->din_resid = (int)(alloc - n);
                io->device_status = r.st;
                io->transport_status = r.host;
                io->driver_status = r.drv;
                n = r.sense_len < io->max_response_len ? r.sense_len : io->max_response_len;
                if (n && io->response)
                        memcpy((void *)(uintptr_t)io->response, r.sense, n);
                io->response_len = (uint32_t)n;
                return 0;
        }
        if (guard == 'S') {
                struct sg_io_hdr *io = arg;
                size_t n;

                answer(io->cmdp, io->cmd_len, &r);
                n = r.len < io->dxfer_len ? r.len : io->dxfer_len;
                if (n)
                        memcpy(io->dxferp, r.data, n);
                io->resid = (int)(io->dxfer_len - n);
                io->status = (unsigned char)r.st;
                io->masked_status = (unsigned char)(r.st >> 1);
                io->host_status = (unsigned short)r.host;
                io->driver_status = (unsigned short)r.drv;
                n = r.sense_len < io->mx_sb_len ? r.sense_len : io->mx_sb_len;
                if (n && io->sbp)
                        memcpy(io->sbp, r.sense, n);
                io->sb_len_wr = (unsigned char)n;
                return 0;
        }
        errno = EINVAL;
        return -1;
}

int ioctl(int fd, unsigned long req, ...)
{
        int (*real)(int, unsigned long, ...) = dlsym(RTLD_NEXT, "ioctl");
        va_list ap;
        void *arg;

        va_start(ap, req);
        arg = va_arg(ap, void *);
        va_end(ap);
        if (!is_fake(fd))
                return real(fd, req, arg);
        if (req == SG_IO)
                return fake_sg_io(arg);
        if (req == HDIO_GET_IDENTITY) {
                struct item *it = find_item("hdio", 0);

                if (!it || it->len < sizeof(struct hd_driveid)) {
                        errno = S.hdio_errno;
                        return -1;
                }
                memcpy(arg, it->data, sizeof(struct hd_driveid));
                return 0;
        }
        errno = ENOTTY;
        return -1;
}
