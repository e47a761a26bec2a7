/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: the benchmark's own worker threads; each mode documents what it shares */
/*
 * bench-kmod: one libkmod context per thread against one context shared under
 * a mutex (issue 5), for the lookups tudev's kmod builtin does: for each
 * modalias, kmod_module_new_from_lookup(), then for each module found
 * kmod_module_get_initstate() (what the builtin asks before inserting), and
 * the list released. Nothing is inserted.
 *
 *   bench-kmod [--moddir DIR] [--modules N] [--threads 1,2,8,16]
 *              [--lookups 20000] [--runs 5]
 *
 * Without --moddir the index is /lib/modules/$(uname -r) if it exists, else a
 * synthetic one this program builds in a temporary directory: N fake modules
 * (default 4000, about 28,000 aliases shaped like a distribution kernel's:
 * pci/usb device IDs, acpi, of, hid, platform names, and a few broad class
 * globs), each a minimal ELF object whose .modinfo holds alias= lines,
 * indexed by `depmod -b`. The modaliases looked up are those of the host's
 * devices (/sys/devices/.../modalias) with a real index, else generated ones
 * shaped like real devices' (half of them match a module,
 * as half of a PC's modaliases do).
 *
 * For T threads doing M lookups each (median of R runs) it prints wall time,
 * CPU time (user+system of the process) and lookups per second, for
 *   percontext: each thread its own context (created before the clock starts)
 *   shared:     one context; every call on it or its module objects under a
 *               pthread mutex (libkmod contexts are not thread-safe)
 * and the cost of one context: kmod_new() + kmod_load_resources() (median of
 * 50), and the RSS, PSS and anonymous memory added per live context (16
 * contexts, each having looked up every modalias once).
 *
 * Exit status 1 on setup errors (no index, depmod missing or failing).
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libkmod.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MODALIAS_MAX 256        /* longest modalias kept; longer ones are skipped */
#define LOOKUP_SET_MAX 2000     /* distinct modaliases cycled through */
#define MODINFO_MAX 8192        /* .modinfo bytes per fake module */
#define THREADS_MAX 64
#define RUNS_MAX 15
#define CREATE_SAMPLES 50
#define MEM_CONTEXTS 16
#define SYS_DEPTH_MAX 12
#define BENCH_VERSION "9.9.9-bench"

extern char **environ;

static char lookup_set[LOOKUP_SET_MAX][MODALIAS_MAX];
static unsigned n_lookup;
static const char *moddir;
static unsigned long long lookups_per_thread = 20000;

/* ------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n) /* xorshift64*, deterministic across runs */
{
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32) % n;
}

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
               ru.ru_stime.tv_usec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
        qsort(v, n, sizeof(*v), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* snprintf() into a path buffer; -ENAMETOOLONG if it does not fit. */
__attribute__((format(printf, 3, 4))) static int fmt_path(char *buf, size_t size,
                                                          const char *fmt, ...)
{
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static void add_lookup(const char *s)
{
        size_t len = strcspn(s, "\n");

        if (n_lookup >= LOOKUP_SET_MAX || len == 0 || len >= MODALIAS_MAX)
                return;
        memcpy(lookup_set[n_lookup], s, len);
        lookup_set[n_lookup++][len] = '\0';
}

/* ------------------------------------------------------------ synthetic index */

struct modinfo {
        char buf[MODINFO_MAX];
        size_t len;
};

static void modinfo_add(struct modinfo *mi, const char *key, const char *value)
{
        int n = snprintf(mi->buf + mi->len, sizeof(mi->buf) - mi->len, "%s=%s", key, value);

        if (n < 0 || (size_t)n + 1 >= sizeof(mi->buf) - mi->len)
                return; /* full: the alias is dropped */
        mi->len += (size_t)n + 1; /* keep the NUL */
}

/* A relocatable ELF64 object with .modinfo, an empty .symtab/.strtab and
 * .shstrtab: all depmod reads from a module. */
static int write_elf(const char *path, const struct modinfo *mi)
{
        static const char shstr[] = "\0.modinfo\0.symtab\0.strtab\0.shstrtab";
        Elf64_Ehdr eh = { 0 };
        Elf64_Shdr sh[5] = { 0 };
        Elf64_Sym nullsym = { 0 };
        size_t off_modinfo = sizeof(eh), off_sym, off_str, off_shstr, off_sh;
        FILE *f;
        int fd;

        off_sym = (off_modinfo + mi->len + 7) & ~(size_t)7;
        off_str = off_sym + sizeof(nullsym);
        off_shstr = off_str + 1;
        off_sh = (off_shstr + sizeof(shstr) + 7) & ~(size_t)7;

        memcpy(eh.e_ident, ELFMAG, SELFMAG);
        eh.e_ident[EI_CLASS] = ELFCLASS64;
        eh.e_ident[EI_DATA] = ELFDATA2LSB;
        eh.e_ident[EI_VERSION] = EV_CURRENT;
        eh.e_type = ET_REL;
        eh.e_machine = EM_X86_64;
        eh.e_version = EV_CURRENT;
        eh.e_shoff = off_sh;
        eh.e_ehsize = sizeof(eh);
        eh.e_shentsize = sizeof(Elf64_Shdr);
        eh.e_shnum = 5;
        eh.e_shstrndx = 4;

        sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
                              .sh_offset = off_modinfo, .sh_size = mi->len, .sh_addralign = 1 };
        sh[2] = (Elf64_Shdr){ .sh_name = 10, .sh_type = SHT_SYMTAB, .sh_offset = off_sym,
                              .sh_size = sizeof(nullsym), .sh_link = 3, .sh_info = 1,
                              .sh_addralign = 8, .sh_entsize = sizeof(nullsym) };
        sh[3] = (Elf64_Shdr){ .sh_name = 18, .sh_type = SHT_STRTAB, .sh_offset = off_str,
                              .sh_size = 1, .sh_addralign = 1 };
        sh[4] = (Elf64_Shdr){ .sh_name = 26, .sh_type = SHT_STRTAB, .sh_offset = off_shstr,
                              .sh_size = sizeof(shstr), .sh_addralign = 1 };

        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        f = fdopen(fd, "w");
        if (!f) {
                close(fd);
                return -errno;
        }
        fwrite(&eh, sizeof(eh), 1, f);
        fwrite(mi->buf, 1, mi->len, f);
        fseek(f, (long)off_sym, SEEK_SET);
        fwrite(&nullsym, sizeof(nullsym), 1, f);
        fputc(0, f);
        fwrite(shstr, 1, sizeof(shstr), f);
        fseek(f, (long)off_sh, SEEK_SET);
        fwrite(sh, sizeof(sh), 1, f);
        return fclose(f) == 0 ? 0 : -EIO;
}

static const char *const acpi_prefix[] = { "PNP", "INT", "ACPI", "MSFT", "AMDI", "LNXV" };

/* Aliases for one module of a given kind, shaped like a distribution
 * kernel's; a matching device modalias goes to the lookup set for some. */
static void gen_module(struct modinfo *mi, unsigned i)
{
        char a[MODALIAS_MAX], dev[MODALIAS_MAX];
        unsigned kind = rnd(100), n, vendor;

        if (kind < 38) { /* pci: 1-24 device IDs of one vendor */
                vendor = 0x1000 + rnd(0x800);
                n = 1 + rnd(rnd(3) ? 6 : 24);
                for (unsigned k = 0; k < n; k++) {
                        unsigned d = rnd(0x10000);

                        snprintf(a, sizeof(a), "pci:v%08Xd%08Xsv*sd*bc*sc*i*", vendor, d);
                        modinfo_add(mi, "alias", a);
                        if (k == 0 && rnd(4) == 0) {
                                snprintf(dev, sizeof(dev),
                                         "pci:v%08Xd%08Xsv%08Xsd%08Xbc02sc00i00", vendor, d,
                                         vendor, rnd(0x10000));
                                add_lookup(dev);
                        }
                }
        } else if (kind < 68) { /* usb: 1-40 vendor/product pairs */
                n = 1 + rnd(rnd(3) ? 4 : 40);
                for (unsigned k = 0; k < n; k++) {
                        unsigned v = rnd(0x10000), p = rnd(0x10000);

                        snprintf(a, sizeof(a), "usb:v%04Xp%04Xd*dc*dsc*dp*ic*isc*ip*in*", v, p);
                        modinfo_add(mi, "alias", a);
                        if (k == 0 && rnd(4) == 0) {
                                snprintf(dev, sizeof(dev),
                                         "usb:v%04Xp%04Xd0100dc00dsc00dp00icFFiscFFipFFin00",
                                         v, p);
                                add_lookup(dev);
                        }
                }
        } else if (kind < 78) { /* acpi */
                n = 1 + rnd(3);
                for (unsigned k = 0; k < n; k++) {
                        snprintf(a, sizeof(a), "acpi*:%s%04X:*", acpi_prefix[rnd(6)],
                                 rnd(0x10000));
                        modinfo_add(mi, "alias", a);
                }
        } else if (kind < 88) { /* device tree */
                n = 1 + rnd(5);
                for (unsigned k = 0; k < n; k++) {
                        snprintf(a, sizeof(a), "of:N*T*Cvendor%u,chip%u", rnd(400), rnd(10000));
                        modinfo_add(mi, "alias", a);
                        modinfo_add(mi, "alias", strcat(a, "C*"));
                }
        } else if (kind < 94) { /* hid */
                n = 1 + rnd(12);
                vendor = rnd(0x10000);
                for (unsigned k = 0; k < n; k++) {
                        snprintf(a, sizeof(a), "hid:b0003g*v%08Xp%08X", vendor, rnd(0x10000));
                        modinfo_add(mi, "alias", a);
                }
        } else { /* platform drivers */
                snprintf(a, sizeof(a), "platform:bench-drv%u", i);
                modinfo_add(mi, "alias", a);
        }
}

/* The broad class globs every distribution kernel has (xhci, usbhid, ahci,
 * evdev-like input handlers, ...): they make the alias search branch. */
static const char *const class_globs[] = {
        "pci:v*d*sv*sd*bc0Csc03i30*", "pci:v*d*sv*sd*bc0Csc03i20*", "pci:v*d*sv*sd*bc0Csc03i10*",
        "pci:v*d*sv*sd*bc01sc06i01*", "pci:v*d*sv*sd*bc01sc08i02*", "pci:v*d*sv*sd*bc0Csc05i00*",
        "usb:v*p*d*dc*dsc*dp*ic03isc*ip*in*", "usb:v*p*d*dc*dsc*dp*ic08isc06ip50in*",
        "usb:v*p*d*dc*dsc*dp*ic02isc02ip*in*", "usb:v*p*d*dc09dsc*dp*ic*isc*ip*in*",
        "usb:v*p*d*dc*dsc*dp*ic0Eisc01ip00in*", "usb:v*p*d*dcE0dsc01dp01ic*isc*ip*in*",
        "input:b*v*p*e*-e*1,*k*110,*r*a*m*l*s*f*w*", "input:b*v*p*e*-e*3,*k*r*a*0,1,*m*l*s*f*w*",
        "hid:b*g0001v*p*", "hid:b0003g*v*p*", "acpi*:PNP0C0A:*", "acpi*:PNP0A08:*",
        "virtio:d00000001v*", "virtio:d00000002v*", "serio:ty01pr*id*ex*", "scsi:t-0x00*",
};

static const char *const real_like[] = {
        "pci:v00008086d0000A0EDsv000017AAsd000022D5bc0Csc03i30",
        "pci:v00008086d000043D3sv00001028sd00000A99bc01sc06i01",
        "pci:v00001AF4d00001041sv00001AF4sd00001100bc02sc00i00",
        "pci:v000010DEd00001F82sv00001462sd00008C96bc03sc00i00",
        "usb:v1D6Bp0003d0601dc09dsc00dp03ic09isc00ip00in00",
        "usb:v046DpC52Bd2411dc00dsc00dp00ic03isc01ip02in02",
        "usb:v0BDAp8153d3100dc00dsc00dp00icFFiscFFip00in00",
        "input:b0019v0000p0001e0000-e0,1,k74,ramlsfw",
        "input:b0003v046Dp4082e0111-e0,1,2,4,k110,111,112,113,114,r0,1,6,8,B,C,am4,lsfw",
        "hid:b0003g0001v0000046Dp00004082", "acpi:PNP0C0A:", "acpi:PNP0A08:PNP0A03:",
        "acpi:LNXSYSTM:", "virtio:d00000001v00001AF4", "serio:ty06pr00id00ex00",
        "scsi:t-0x00", "platform:serial8250", "cpu:type:x86,ven0000fam0006mod008E:feature:,0000",
};

static int run_depmod(const char *root)
{
        static const char *const paths[] = { "/usr/sbin/depmod", "/sbin/depmod" };
        const char *path = NULL;
        char *argv[] = { (char *)"depmod", (char *)"-b", (char *)root, (char *)BENCH_VERSION,
                         NULL };
        pid_t pid;
        int status, r;

        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
                if (access(paths[i], X_OK) == 0)
                        path = paths[i];
        if (!path) {
                fprintf(stderr, "bench-kmod: depmod not found (package kmod)\n");
                return -ENOENT;
        }
        r = posix_spawn(&pid, path, NULL, NULL, argv, environ);
        if (r != 0)
                return -r;
        if (waitpid(pid, &status, 0) < 0)
                return -errno;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "bench-kmod: depmod failed\n");
                return -EIO;
        }
        return 0;
}

static int mkdir_p(char *path)
{
        for (char *p = path + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(path, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *p = '/';
        }
        return mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/* Builds root/lib/modules/BENCH_VERSION; returns its path in out. */
static int build_index(const char *root, unsigned modules, unsigned *n_aliases, char *out,
                       size_t outsz)
{
        char drv[PATH_MAX], path[PATH_MAX];
        struct modinfo *mi;
        unsigned matching;
        FILE *order;
        int r;

        if (fmt_path(out, outsz, "%s/lib/modules/%s", root, BENCH_VERSION) < 0 ||
            fmt_path(drv, sizeof(drv), "%s/kernel/drivers/bench", out) < 0 ||
            fmt_path(path, sizeof(path), "%s/modules.order", out) < 0)
                return -ENAMETOOLONG;
        r = mkdir_p(drv);
        if (r < 0)
                return r;
        order = fopen(path, "we");
        if (!order)
                return -errno;
        mi = malloc(sizeof(*mi));
        if (!mi) {
                fclose(order);
                return -ENOMEM;
        }
        *n_aliases = 0;
        for (unsigned i = 0; i < modules; i++) {
                mi->len = 0;
                if (i < sizeof(class_globs) / sizeof(class_globs[0]))
                        modinfo_add(mi, "alias", class_globs[i]);
                else
                        gen_module(mi, i);
                for (size_t k = 0; k < mi->len; k += strlen(mi->buf + k) + 1)
                        (*n_aliases)++;
                modinfo_add(mi, "license", "GPL");
                r = fmt_path(path, sizeof(path), "%s/bench%05u.ko", drv, i);
                if (r == 0)
                        r = write_elf(path, mi);
                if (r < 0)
                        break;
                fprintf(order, "kernel/drivers/bench/bench%05u.ko\n", i);
        }
        free(mi);
        if (fclose(order) != 0 && r == 0)
                r = -EIO;
        if (r < 0)
                return r;
        for (unsigned k = 0; k < 2; k++) { /* empty: no built-in modules */
                if (fmt_path(path, sizeof(path), "%s/%s", out,
                             k ? "modules.builtin.modinfo" : "modules.builtin") < 0)
                        return -ENAMETOOLONG;
                r = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (r < 0)
                        return -errno;
                close(r);
        }
        if (getenv("BENCH_KMOD_KEEP"))
                fprintf(stderr, "keeping %s\n", root);
        for (size_t i = 0; i < sizeof(real_like) / sizeof(real_like[0]); i++)
                add_lookup(real_like[i]);
        matching = n_lookup;
        while (n_lookup < 2 * matching) { /* as many devices of the same shapes, unmatched */
                char dev[MODALIAS_MAX];

                if (rnd(2))
                        snprintf(dev, sizeof(dev), "pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc00i00",
                                 0x1000 + rnd(0x800), rnd(0x10000), rnd(0x10000),
                                 rnd(0x10000), rnd(0x13));
                else
                        snprintf(dev, sizeof(dev),
                                 "usb:v%04Xp%04Xd0100dc00dsc00dp00ic%02Xisc00ip00in00",
                                 rnd(0x10000), rnd(0x10000), rnd(0x100));
                add_lookup(dev);
        }
        return run_depmod(root);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st, (void)flag, (void)ftw;
        remove(path);
        return 0;
}

/* ------------------------------------------------------------ host devices */

static void collect_sys(const char *dir, int depth)
{
        char path[PATH_MAX], line[MODALIAS_MAX + 2];
        struct dirent *de;
        DIR *d;

        if (depth > SYS_DEPTH_MAX || n_lookup >= LOOKUP_SET_MAX)
                return;
        d = opendir(dir);
        if (!d)
                return;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                if (fmt_path(path, sizeof(path), "%s/%s", dir, de->d_name) < 0)
                        continue;
                if (de->d_type == DT_DIR) {
                        collect_sys(path, depth + 1);
                } else if (de->d_type == DT_REG && strcmp(de->d_name, "modalias") == 0) {
                        FILE *f = fopen(path, "re");

                        if (f && fgets(line, sizeof(line), f))
                                add_lookup(line);
                        if (f)
                                fclose(f);
                }
        }
        closedir(d);
}

/* ------------------------------------------------------------ the work */

static struct kmod_ctx *ctx_new(void)
{
        struct kmod_ctx *ctx = kmod_new(moddir, NULL);

        if (ctx && kmod_load_resources(ctx) < 0) {
                kmod_unref(ctx);
                return NULL;
        }
        return ctx;
}

/* The builtin's load_module() minus the insertion; lock may be NULL. */
static unsigned lookup_one(struct kmod_ctx *ctx, pthread_mutex_t *lock, const char *alias)
{
        struct kmod_list *list = NULL, *itr;
        unsigned found = 0;

        if (lock)
                pthread_mutex_lock(lock);
        if (kmod_module_new_from_lookup(ctx, alias, &list) >= 0) {
                kmod_list_foreach(itr, list) {
                        struct kmod_module *mod = kmod_module_get_module(itr);

                        if (kmod_module_get_initstate(mod) != KMOD_MODULE_LIVE)
                                found++;
                        kmod_module_unref(mod);
                }
                kmod_module_unref_list(list);
        }
        if (lock)
                pthread_mutex_unlock(lock);
        return found;
}

struct run {
        pthread_barrier_t start;
        pthread_mutex_t lock;
        struct kmod_ctx *shared; /* NULL: each thread creates its own */
        unsigned threads;
};

struct worker {
        struct run *run;
        unsigned index;
        unsigned long long found;
        int error;
};

static void *worker_main(void *arg)
{
        struct worker *w = arg;
        struct run *run = w->run;
        struct kmod_ctx *ctx = run->shared ? run->shared : ctx_new();
        unsigned pos = w->index * 7919u;

        if (!ctx)
                w->error = 1;
        pthread_barrier_wait(&run->start);
        for (unsigned long long i = 0; ctx && i < lookups_per_thread; i++)
                w->found += lookup_one(ctx, run->shared ? &run->lock : NULL,
                                       lookup_set[pos++ % n_lookup]);
        pthread_barrier_wait(&run->start);
        if (!run->shared && ctx)
                kmod_unref(ctx);
        return NULL;
}

struct result {
        double wall, cpu;
};

static int run_once(bool shared, unsigned threads, struct result *res)
{
        struct worker w[THREADS_MAX];
        pthread_t tid[THREADS_MAX];
        struct run run = { .threads = threads };
        double t0, c0;
        int err = 0;

        pthread_barrier_init(&run.start, NULL, threads + 1);
        pthread_mutex_init(&run.lock, NULL);
        if (shared) {
                run.shared = ctx_new();
                if (!run.shared)
                        return -EIO;
        }
        for (unsigned i = 0; i < threads; i++) {
                w[i] = (struct worker){ .run = &run, .index = i };
                if (pthread_create(&tid[i], NULL, worker_main, &w[i]) != 0) {
                        fprintf(stderr, "bench-kmod: pthread_create failed\n");
                        exit(1);
                }
        }
        pthread_barrier_wait(&run.start); /* contexts created */
        t0 = now_s();
        c0 = cpu_s();
        pthread_barrier_wait(&run.start); /* lookups done */
        res->wall = now_s() - t0;
        res->cpu = cpu_s() - c0;
        for (unsigned i = 0; i < threads; i++) {
                pthread_join(tid[i], NULL);
                err |= w[i].error;
        }
        if (run.shared)
                kmod_unref(run.shared);
        pthread_mutex_destroy(&run.lock);
        pthread_barrier_destroy(&run.start);
        return err ? -EIO : 0;
}

struct mem {
        long rss, pss, anon; /* KiB */
};

static void read_mem(struct mem *m)
{
        char line[256];
        FILE *f = fopen("/proc/self/smaps_rollup", "re");

        *m = (struct mem){ 0 };
        if (!f)
                return;
        while (fgets(line, sizeof(line), f)) {
                sscanf(line, "Rss: %ld", &m->rss);
                sscanf(line, "Pss: %ld", &m->pss);
                sscanf(line, "Anonymous: %ld", &m->anon);
        }
        fclose(f);
}

static void context_costs(void)
{
        double t[CREATE_SAMPLES];
        struct kmod_ctx *ctx[MEM_CONTEXTS];
        struct mem before, after;

        for (unsigned i = 0; i < CREATE_SAMPLES; i++) {
                double t0 = now_s();
                struct kmod_ctx *c = ctx_new();

                t[i] = now_s() - t0;
                kmod_unref(c);
        }
        printf("context: kmod_new+kmod_load_resources %.0f us (median of %u)\n",
               median(t, CREATE_SAMPLES) * 1e6, CREATE_SAMPLES);

        /* the first context's one-time costs (libkmod's own pages) outside the delta */
        ctx[0] = ctx_new();
        for (unsigned k = 0; k < n_lookup; k++)
                lookup_one(ctx[0], NULL, lookup_set[k]);
        read_mem(&before);
        for (unsigned i = 1; i < MEM_CONTEXTS; i++) {
                ctx[i] = ctx_new();
                for (unsigned k = 0; k < n_lookup; k++)
                        lookup_one(ctx[i], NULL, lookup_set[k]);
        }
        read_mem(&after);
        printf("context: per added context (%u contexts, each warmed by %u lookups): "
               "RSS %+.0f KiB, PSS %+.0f KiB, anonymous %+.0f KiB\n",
               MEM_CONTEXTS, n_lookup, (after.rss - before.rss) / (double)(MEM_CONTEXTS - 1),
               (after.pss - before.pss) / (double)(MEM_CONTEXTS - 1),
               (after.anon - before.anon) / (double)(MEM_CONTEXTS - 1));
        for (unsigned i = 0; i < MEM_CONTEXTS; i++)
                kmod_unref(ctx[i]);
}

static unsigned parse_list(const char *s, unsigned *out, unsigned max)
{
        unsigned n = 0;

        while (*s && n < max) {
                char *end;
                unsigned long v = strtoul(s, &end, 10);

                if (end == s || v == 0 || v > THREADS_MAX)
                        return 0;
                out[n++] = (unsigned)v;
                s = *end == ',' ? end + 1 : end;
                if (*end && *end != ',')
                        return 0;
        }
        return n;
}

static void usage(void)
{
        fprintf(stderr, "usage: bench-kmod [--moddir DIR] [--modules N] [--threads 1,2,8,16] "
                        "[--lookups M] [--runs R]\n");
        exit(1);
}

int main(int argc, char *argv[])
{
        unsigned threads[THREADS_MAX] = { 1, 2, 8, 16 }, n_threads = 4, modules = 4000, runs = 5;
        unsigned n_aliases = 0;
        char tmp[] = "/tmp/bench-kmod.XXXXXX", built[PATH_MAX], host[PATH_MAX];
        bool synthetic = false;
        struct utsname u;

        for (int i = 1; i < argc; i += 2) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

                if (!v)
                        usage();
                if (strcmp(a, "--moddir") == 0)
                        moddir = v;
                else if (strcmp(a, "--modules") == 0)
                        modules = (unsigned)strtoul(v, NULL, 10);
                else if (strcmp(a, "--threads") == 0)
                        n_threads = parse_list(v, threads, THREADS_MAX);
                else if (strcmp(a, "--lookups") == 0)
                        lookups_per_thread = strtoull(v, NULL, 10);
                else if (strcmp(a, "--runs") == 0)
                        runs = (unsigned)strtoul(v, NULL, 10);
                else
                        usage();
        }
        if (n_threads == 0 || runs == 0 || runs > RUNS_MAX || modules == 0 ||
            lookups_per_thread == 0)
                usage();

        uname(&u);
        if (!moddir && fmt_path(host, sizeof(host), "/lib/modules/%s", u.release) == 0 &&
            access(host, R_OK) == 0)
                moddir = host;
        if (moddir) {
                collect_sys("/sys/devices", 0);
                if (n_lookup == 0)
                        for (size_t i = 0; i < sizeof(real_like) / sizeof(real_like[0]); i++)
                                add_lookup(real_like[i]);
                printf("index: %s; %u modaliases from %s\n", moddir, n_lookup,
                       n_lookup > sizeof(real_like) / sizeof(real_like[0]) ? "/sys/devices"
                                                                          : "built-in samples");
        } else {
                double t0 = now_s();
                int r;

                if (!mkdtemp(tmp)) {
                        perror("bench-kmod: mkdtemp");
                        return 1;
                }
                synthetic = true;
                r = build_index(tmp, modules, &n_aliases, built, sizeof(built));
                if (r < 0) {
                        fprintf(stderr, "bench-kmod: building the index failed: %s\n",
                                strerror(-r));
                        nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
                        return 1;
                }
                moddir = built;
                printf("index: synthetic, %u modules, %u aliases (built in %.1f s); "
                       "%u modaliases looked up in turn\n",
                       modules, n_aliases, now_s() - t0, n_lookup);
        }
        {
                struct kmod_ctx *probe = ctx_new();
                unsigned found = 0;

                if (!probe) {
                        fprintf(stderr, "bench-kmod: cannot load the index in %s\n", moddir);
                        return 1;
                }
                for (unsigned k = 0; k < n_lookup; k++)
                        found += lookup_one(probe, NULL, lookup_set[k]) > 0;
                kmod_unref(probe);
                printf("index: %u of %u modaliases resolve to at least one module\n", found,
                       n_lookup);
        }
        printf("cpus online: %ld; %llu lookups per thread, median of %u runs\n\n",
               sysconf(_SC_NPROCESSORS_ONLN), lookups_per_thread, runs);
        printf("%-10s %7s %9s %9s %10s %11s %8s\n", "mode", "threads", "wall s", "CPU s",
               "lookups/s", "CPU/lookup", "CPU/wall");
        for (unsigned t = 0; t < n_threads; t++) {
                for (int shared = 0; shared <= 1; shared++) {
                        double wall[RUNS_MAX], cpu[RUNS_MAX], mw, mc;
                        unsigned long long total = lookups_per_thread * threads[t];

                        for (unsigned r = 0; r < runs; r++) {
                                struct result res;

                                if (run_once(shared, threads[t], &res) < 0) {
                                        fprintf(stderr, "bench-kmod: context creation failed\n");
                                        return 1;
                                }
                                wall[r] = res.wall;
                                cpu[r] = res.cpu;
                        }
                        mw = median(wall, runs);
                        mc = median(cpu, runs);
                        printf("%-10s %7u %9.3f %9.3f %10.0f %8.1f us %8.2f\n",
                               shared ? "shared" : "percontext", threads[t], mw, mc, total / mw,
                               mc / total * 1e6, mc / mw);
                        fflush(stdout);
                }
        }
        printf("\n");
        context_costs();
        if (synthetic && !getenv("BENCH_KMOD_KEEP"))
                nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        return 0;
}
