/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: manager (rules_load); any (ref/unref/stats/should_reload) */
/* Rules files -> snapshot: the directory search path, override
 * by basename, ordering by basename, masking, permission warnings, and the
 * (path, dev, inode, mtime, size) record behind rules_should_reload().
 *
 * Deliberate difference from systemd 252: masked and empty files are
 * recorded too, so that their mere presence does not make every check ask
 * for a reload (systemd records them only when listing, not when loading). */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rules/rules-arena.h"
#include "rules/rules-compile.h"
#include "rules/rules-internal.h"
#include "shared/log.h"
#include "shared/macro.h"

#define RULES_FILE_MAX (32u * 1024u * 1024u) /* larger files are refused */
#define RULES_FILES_MAX 65536u                /* directory entries considered in all */
#define RULES_SUFFIX ".rules"

size_t rules_default_dirs(const char *dirs[RULES_DIRS_MAX + 1])
{
        static const char *const fixed[] = {
                "/etc/udev/rules.d",
                "/run/udev/rules.d",
                "/usr/local/lib/udev/rules.d",
                "/usr/lib/udev/rules.d",
        };
        struct stat a, b;
        size_t n = 0;

        for (size_t i = 0; i < ARRAY_SIZE(fixed); i++)
                dirs[n++] = fixed[i];
        if (stat("/lib/udev/rules.d", &a) < 0 || stat("/usr/lib/udev/rules.d", &b) < 0 ||
            a.st_dev != b.st_dev || a.st_ino != b.st_ino)
                dirs[n++] = "/lib/udev/rules.d";
#ifdef TUDEV_RULES_DIR
        bool dup = false;
        for (size_t i = 0; i < n; i++)
                dup = dup || streq(dirs[i], TUDEV_RULES_DIR);
        if (!dup)
                dirs[n++] = TUDEV_RULES_DIR;
#endif
        dirs[n] = NULL;
        return n;
}

/* ---------------------------------------------------------------- listing */

struct file_entry {
        char *path;         /* owned */
        const char *name;   /* basename inside path */
        size_t prio;        /* index of the directory */
};

struct file_list {
        struct file_entry *items;
        size_t n, cap;
};

static void file_list_done(struct file_list *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->items[i].path);
        free(l->items);
        *l = (struct file_list){ 0 };
}

static bool is_rules_name(const char *name)
{
        size_t n = strlen(name);

        return name[0] != '.' && n > STRLEN(RULES_SUFFIX) &&
               streq(name + n - STRLEN(RULES_SUFFIX), RULES_SUFFIX);
}

static int file_list_add(struct file_list *l, const char *dir, const char *name, size_t prio)
{
        size_t dl = strlen(dir), nl = strlen(name);

        if (l->n == l->cap) {
                size_t cap = l->cap ? 2 * l->cap : 64;
                struct file_entry *items = realloc(l->items, cap * sizeof(*items));

                if (!items)
                        return -ENOMEM;
                l->items = items;
                l->cap = cap;
        }
        char *path = malloc(dl + 1 + nl + 1);
        if (!path)
                return -ENOMEM;
        memcpy(path, dir, dl);
        path[dl] = '/';
        memcpy(path + dl + 1, name, nl + 1);
        l->items[l->n++] = (struct file_entry){ .path = path, .name = path + dl + 1,
                                                .prio = prio };
        return 0;
}

static int scan_dir(struct file_list *l, const char *dir, size_t prio)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        int r = 0;

        if (!d) {
                if (errno != ENOENT && errno != ENOTDIR)
                        log_warning_errno(errno, "Failed to open rules directory %s, ignoring: %m",
                                          dir);
                return 0;
        }
        while ((de = readdir(d))) {
                if (de->d_type != DT_REG && de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
                        continue;
                if (!is_rules_name(de->d_name))
                        continue;
                if (l->n >= RULES_FILES_MAX) {
                        log_warning("Too many rules files (more than %u), ignoring the rest.",
                                    RULES_FILES_MAX);
                        break;
                }
                r = file_list_add(l, dir, de->d_name, prio);
                if (r < 0)
                        break;
        }
        closedir(d);
        return r;
}

static int entry_cmp(const void *x, const void *y)
{
        const struct file_entry *a = x, *b = y;
        int c = strcmp(a->name, b->name);

        if (c != 0)
                return c;
        return a->prio < b->prio ? -1 : a->prio > b->prio;
}

/* Union by basename (lowest prio index wins), sorted by basename. */
static int list_files(const char *const *dirs, struct file_list *ret)
{
        struct file_list l = { 0 };
        int r;

        for (size_t i = 0; dirs[i]; i++) {
                r = scan_dir(&l, dirs[i], i);
                if (r < 0) {
                        file_list_done(&l);
                        return r;
                }
        }
        if (l.n > 0)
                qsort(l.items, l.n, sizeof(*l.items), entry_cmp);
        size_t k = 0;
        for (size_t i = 0; i < l.n; i++) {
                if (k > 0 && streq(l.items[k - 1].name, l.items[i].name)) {
                        free(l.items[i].path); /* overridden by a higher-priority dir */
                        continue;
                }
                l.items[k++] = l.items[i];
        }
        l.n = k;
        *ret = l;
        return 0;
}

int rules_list_files(const char *const *dirs, char ***ret)
{
        const char *defaults[RULES_DIRS_MAX + 1];
        struct file_list l;
        int r;

        if (!dirs) {
                rules_default_dirs(defaults);
                dirs = defaults;
        }
        r = list_files(dirs, &l);
        if (r < 0)
                return r;
        char **out = calloc(l.n + 1, sizeof(char *));
        if (!out) {
                file_list_done(&l);
                return -ENOMEM;
        }
        for (size_t i = 0; i < l.n; i++)
                out[i] = TAKE_PTR(l.items[i].path);
        file_list_done(&l);
        *ret = out;
        return 0;
}

void rules_file_list_free(char **list)
{
        if (!list)
                return;
        for (size_t i = 0; list[i]; i++)
                free(list[i]);
        free(list);
}

/* ---------------------------------------------------------------- reading */

struct load_ctx {
        struct rules *rules;
        struct rules_compiler *compiler;
        struct rules_file_stat *files; /* heap while loading */
        size_t n_files, cap_files;
        unsigned files_read;
};

static int record_stat(struct load_ctx *ctx, const char *path, const struct stat *st)
{
        if (ctx->n_files == ctx->cap_files) {
                size_t cap = ctx->cap_files ? 2 * ctx->cap_files : 64;
                struct rules_file_stat *f = realloc(ctx->files, cap * sizeof(*f));

                if (!f)
                        return -ENOMEM;
                ctx->files = f;
                ctx->cap_files = cap;
        }
        ctx->files[ctx->n_files++] = (struct rules_file_stat){
                .path = path, .dev = st->st_dev, .ino = st->st_ino,
                .mtime = st->st_mtim, .size = st->st_size,
        };
        return 0;
}

static void warn_permissions(const char *path, const struct stat *st)
{
        if (st->st_mode & 0111)
                log_warning("Configuration file %s is marked executable. Please remove "
                            "executable permission bits. Proceeding anyway.", path);
        if (st->st_mode & 0002)
                log_warning("Configuration file %s is marked world-writable. Please remove "
                            "world writability permission bits. Proceeding anyway.", path);
}

/* Whole file into *ret (malloc'ed, NUL-terminated). */
static int read_all(int fd, const char *path, size_t hint, char **ret, size_t *ret_len)
{
        size_t cap = hint + 1, n = 0;
        _cleanup_free_ char *buf = NULL;

        if (cap < 4096)
                cap = 4096;
        if (cap > RULES_FILE_MAX + 1)
                cap = RULES_FILE_MAX + 1;
        buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                if (n == cap - 1) {
                        if (cap > RULES_FILE_MAX)
                                return -EFBIG;
                        size_t ncap = MIN(2 * cap, (size_t)RULES_FILE_MAX + 1);
                        char *b = realloc(buf, ncap);

                        if (!b)
                                return -ENOMEM;
                        buf = b;
                        cap = ncap;
                }
                ssize_t k = read(fd, buf + n, cap - 1 - n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return log_warning_errno(errno, "Failed to read %s, ignoring: %m", path);
                }
                if (k == 0)
                        break;
                n += (size_t)k;
        }
        buf[n] = '\0';
        *ret = TAKE_PTR(buf);
        *ret_len = n;
        return 0;
}

/* One rules file. Only -ENOMEM is fatal. `path` lives in the arena. */
static int load_file(struct load_ctx *ctx, const char *path)
{
        struct rules_diag *diag = rules_compiler_diag(ctx->compiler);
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *text = NULL;
        struct stat st;
        size_t len = 0;
        int r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                if (errno == ENOENT)
                        return 0;
                r = errno;
                if (stat(path, &st) == 0 && record_stat(ctx, path, &st) < 0)
                        return -ENOMEM;
                log_warning_errno(r, "Failed to open %s, ignoring: %m", path);
                return 0;
        }
        if (fstat(fd, &st) < 0) {
                log_warning_errno(errno, "Failed to stat %s, ignoring: %m", path);
                return 0;
        }
        if (record_stat(ctx, path, &st) < 0)
                return -ENOMEM;
        if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ||
            (S_ISREG(st.st_mode) && st.st_size <= 0)) {
                log_debug("Skipping empty file: %s", path);
                return 0;
        }
        if (!S_ISREG(st.st_mode)) {
                log_warning("%s is not a regular file, ignoring.", path);
                return 0;
        }
        warn_permissions(path, &st);
        log_debug("Reading rules file: %s", path);

        r = read_all(fd, path, (size_t)st.st_size, &text, &len);
        if (r == -ENOMEM)
                return r;
        if (r == -EFBIG) {
                diag->file = path;
                rules_diag_log(diag, LOG_ERR, 0, 0, "File is too large (more than %u bytes), "
                               "ignoring.", RULES_FILE_MAX);
                return 0;
        }
        if (r < 0)
                return 0;
        ctx->files_read++;
        return rules_compiler_add_text(ctx->compiler, path, text, len);
}

/* ---------------------------------------------------------------- snapshot */

static int rules_new(const struct rules_load_options *opts, struct rules **ret)
{
        struct arena *a = arena_new();
        struct rules *r;

        if (!a)
                return -ENOMEM;
        r = arena_alloc(a, sizeof(*r));
        if (!r) {
                arena_free(a);
                return -ENOMEM;
        }
        atomic_init(&r->refcount, 1);
        r->arena = a;
        r->resolve_names = opts ? opts->resolve_names : RESOLVE_NAMES_EARLY;
        *ret = r;
        return 0;
}

static void rules_free(struct rules *r)
{
        if (r)
                arena_free(r->arena); /* r itself lives in the arena */
}

static const char *const *copy_strv(struct arena *a, const char *const *v)
{
        size_t n = 0;

        while (v[n])
                n++;
        const char **out = arena_alloc_array(a, n + 1, sizeof(char *));
        if (!out)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                out[i] = arena_strdup(a, v[i]);
                if (!out[i])
                        return NULL;
        }
        return out;
}

static int load_all(struct load_ctx *ctx, const struct rules_load_options *opts)
{
        struct rules *r = ctx->rules;
        struct arena *a = r->arena;
        const char *defaults[RULES_DIRS_MAX + 1];
        int k;

        if (opts && opts->files) {
                for (size_t i = 0; opts->files[i]; i++) {
                        const char *path = arena_strdup(a, opts->files[i]);

                        if (!path)
                                return -ENOMEM;
                        k = load_file(ctx, path);
                        if (k < 0)
                                return k;
                }
                return 0;
        }

        const char *const *dirs = opts ? opts->dirs : NULL;
        if (!dirs) {
                rules_default_dirs(defaults);
                dirs = defaults;
        }
        r->dirs = copy_strv(a, dirs);
        if (!r->dirs)
                return -ENOMEM;

        struct file_list l;
        k = list_files(r->dirs, &l);
        if (k < 0)
                return k;
        for (size_t i = 0; i < l.n && k >= 0; i++) {
                const char *path = arena_strdup(a, l.items[i].path);

                k = path ? load_file(ctx, path) : -ENOMEM;
        }
        file_list_done(&l);
        return k < 0 ? k : 0;
}

static int finish(struct load_ctx *ctx)
{
        struct rules *r = ctx->rules;
        int k;

        k = rules_compiler_finish(ctx->compiler, r);
        if (k < 0)
                return k;
        if (ctx->n_files > 0) {
                r->files = arena_memdup(r->arena, ctx->files,
                                        ctx->n_files * sizeof(struct rules_file_stat));
                if (!r->files)
                        return -ENOMEM;
        }
        r->n_files = ctx->n_files;
        r->stats.files = ctx->files_read;
        return 0;
}

static int load_common(const struct rules_load_options *opts, const char *name,
                       const char *text, size_t len, struct rules **ret)
{
        struct load_ctx ctx = { 0 };
        struct rules *r = NULL;
        int k;

        k = rules_new(opts, &r);
        if (k < 0)
                return k;
        ctx.rules = r;
        k = rules_compiler_new(r->arena, r->resolve_names, opts && opts->verify, &ctx.compiler);
        if (k < 0)
                goto fail;
        if (text) {
                const char *file = arena_strdup(r->arena, name ? name : "(string)");

                k = file ? rules_compiler_add_text(ctx.compiler, file, text, len) : -ENOMEM;
                ctx.files_read = 1;
        } else
                k = load_all(&ctx, opts);
        if (k >= 0)
                k = finish(&ctx);
        if (k < 0)
                goto fail;
        rules_compiler_free(ctx.compiler);
        free(ctx.files);
        log_debug("Rules loaded: %u files, %u lines, %u tokens, %u errors, %u warnings",
                  r->stats.files, r->stats.lines, r->stats.tokens, r->stats.errors,
                  r->stats.warnings);
        *ret = r;
        return 0;
fail:
        rules_compiler_free(ctx.compiler);
        free(ctx.files);
        rules_free(r);
        return log_error_errno(k, "Failed to load rules: %m");
}

int rules_load(const struct rules_load_options *opts, struct rules **ret)
{
        return load_common(opts, NULL, NULL, 0, ret);
}

int rules_load_string(const char *name, const char *text, size_t len,
                      const struct rules_load_options *opts, struct rules **ret)
{
        return load_common(opts, name, text ? text : "", text ? len : 0, ret);
}

struct rules *rules_ref(struct rules *r)
{
        if (r)
                atomic_fetch_add_explicit(&r->refcount, 1, memory_order_relaxed);
        return r;
}

void rules_unref(struct rules *r)
{
        if (r && atomic_fetch_sub_explicit(&r->refcount, 1, memory_order_acq_rel) == 1)
                rules_free(r);
}

void rules_get_stats(const struct rules *r, struct rules_stats *ret)
{
        *ret = r->stats;
}

static bool stat_same(const struct rules_file_stat *f, const char *path, const struct stat *st)
{
        return streq(f->path, path) && f->dev == st->st_dev && f->ino == st->st_ino &&
               f->mtime.tv_sec == st->st_mtim.tv_sec &&
               f->mtime.tv_nsec == st->st_mtim.tv_nsec && f->size == st->st_size;
}

bool rules_should_reload(const struct rules *r)
{
        struct file_list l;
        struct stat st;
        size_t k = 0;
        bool changed = false;

        if (!r->dirs) {
                /* explicit file list (or a string): re-check what was recorded */
                for (size_t i = 0; i < r->n_files; i++)
                        if (stat(r->files[i].path, &st) < 0 ||
                            !stat_same(&r->files[i], r->files[i].path, &st))
                                return true;
                return false;
        }
        if (list_files(r->dirs, &l) < 0)
                return true;
        for (size_t i = 0; i < l.n && !changed; i++) {
                if (stat(l.items[i].path, &st) < 0)
                        continue; /* not recorded at load either */
                changed = k >= r->n_files || !stat_same(&r->files[k], l.items[i].path, &st);
                k++;
        }
        file_list_done(&l);
        if (!changed && k != r->n_files)
                changed = true;
        if (changed)
                log_debug("Rules need reloading");
        return changed;
}
