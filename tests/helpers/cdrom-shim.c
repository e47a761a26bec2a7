/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (the programs it is preloaded into are single-threaded) */
/* LD_PRELOAD shim around ioctl() for comparing cdrom_id (and v4l_id,
 * mtd_probe) implementations on the same device replies (format:
 * cdrom-replay.h).
 *
 *   CDROM_SHIM_RECORD=FILE   pass every ioctl on a block device through and
 *                            append the exchange to FILE (used once, inside a
 *                            VM with emulated drives, to make the fixtures)
 *   CDROM_SHIM_REPLAY=FILE   answer every ioctl on an fd opened on FILE itself
 *                            from the recording: the program under test is
 *                            given FILE as its device node
 *   CDROM_SHIM_DEVICE=FILE   with CDROM_SHIM_REPLAY: answer the ioctls on an
 *                            fd opened on this FILE instead (a data file
 *                            standing for the device, for mtd_probe's reads)
 *   CDROM_SHIM_LOG=FILE      with CDROM_SHIM_REPLAY: append each replayed
 *                            request (REQUEST ARG, or sgio CDB DXFER_LEN) to
 *                            FILE, so that two programs' requests can be
 *                            compared
 *
 * Built by tests/integration/test_helpers_cdrom_dmi.py:
 *   cc -shared -fPIC -o cdrom-shim.so tests/helpers/cdrom-shim.c */

#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "cdrom-replay.h"

static int (*real_ioctl)(int, unsigned long, ...);
static struct replay replay;
static bool replay_loaded;
static struct stat replay_st;

static void hex_out(FILE *f, const uint8_t *p, size_t n)
{
        if (n == 0) {
                fputs(" -", f);
                return;
        }
        fputc(' ', f);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%02x", p[i]);
}

static int record(int fd, unsigned long request, void *arg)
{
        const char *path = getenv("CDROM_SHIM_RECORD");
        struct sg_io_hdr *h = request == SG_IO ? arg : NULL;
        struct stat st;
        int r, saved;
        FILE *f;

        if (h && h->dxfer_direction == SG_DXFER_FROM_DEV && h->dxferp && h->dxfer_len)
                memset(h->dxferp, 0, h->dxfer_len);
        r = real_ioctl(fd, request, arg);
        saved = errno;
        if (fstat(fd, &st) < 0 || !S_ISBLK(st.st_mode))
                goto out;
        f = fopen(path, "ae");
        if (!f)
                goto out;
        if (h) {
                size_t n = 0;

                if (r >= 0 && h->dxfer_direction == SG_DXFER_FROM_DEV && h->dxferp)
                        for (n = h->dxfer_len; n > 0 && ((uint8_t *)h->dxferp)[n - 1] == 0; n--)
                                ;
                fputs("sgio", f);
                hex_out(f, h->cmdp, h->cmd_len);
                fprintf(f, " %x %s%x %x %x %x %x %x %x %s%x", h->dxfer_len, r < 0 ? "-" : "",
                        r < 0 ? 1 : r, r < 0 ? saved : 0, h->status, h->masked_status,
                        h->host_status, h->driver_status, h->info, h->resid < 0 ? "-" : "",
                        (unsigned)(h->resid < 0 ? -h->resid : h->resid));
                hex_out(f, h->sbp, r < 0 ? 0 : h->sb_len_wr);
                hex_out(f, h->dxferp, n);
                fputs(" .\n", f);
        } else
                fprintf(f, "ioctl %lx %lx %s%x %x\n", request, (unsigned long)arg,
                        r < 0 ? "-" : "", r < 0 ? 1 : r, r < 0 ? saved : 0);
        fclose(f);
out:
        errno = saved;
        return r;
}

static bool is_replay_fd(int fd)
{
        const char *path = getenv("CDROM_SHIM_REPLAY");
        struct stat st;

        if (!path)
                return false;
        if (!replay_loaded) {
                const char *dev = getenv("CDROM_SHIM_DEVICE");
                int r = replay_load(path, &replay);

                if (r < 0 || stat(dev ? dev : path, &replay_st) < 0) {
                        fprintf(stderr, "cdrom-shim: cannot load %s: %s\n", path, strerror(-r));
                        abort();
                }
                replay_loaded = true;
        }
        return fstat(fd, &st) == 0 && st.st_dev == replay_st.st_dev &&
               st.st_ino == replay_st.st_ino;
}

int ioctl(int fd, unsigned long request, ...)
{
        va_list ap;
        void *arg;

        va_start(ap, request);
        arg = va_arg(ap, void *);
        va_end(ap);
        if (!real_ioctl)
                real_ioctl = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
        if (is_replay_fd(fd)) {
                const char *log = getenv("CDROM_SHIM_LOG");
                int r;

                if (log) {
                        FILE *f = fopen(log, "ae");

                        if (f) {
                                if (request == SG_IO) {
                                        struct sg_io_hdr *h = arg;

                                        fputs("sgio", f);
                                        hex_out(f, h->cmdp, h->cmd_len);
                                        fprintf(f, " %x\n", h->dxfer_len);
                                } else
                                        fprintf(f, "ioctl %lx %lx\n", request, (unsigned long)arg);
                                fclose(f);
                        }
                }
                r = replay_ioctl(&replay, request, arg);

                if (r < 0 && errno == EIO && getenv("CDROM_SHIM_TRACE"))
                        fprintf(stderr, "cdrom-shim: ioctl %lx not answered\n", request);
                return r;
        }
        if (getenv("CDROM_SHIM_RECORD"))
                return record(fd, request, arg);
        return real_ioctl(fd, request, arg);
}
