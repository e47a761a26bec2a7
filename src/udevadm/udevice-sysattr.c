/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (no shared state) */
/* Device attributes as sd-device lists and reads them (`udevadm info
 * --attribute-walk`, `udevadm trigger --attr-match`), and sysfs file reads. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "udevadm/udevice.h"

#define VIRTUAL_READ_TRIES 3

static inline void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

/* One read() of size+1 bytes; 1 if it all fit (n <= size), 0 if the file
 * is larger than size, -errno. */
static int read_once(int fd, size_t size, char **ret, size_t *ret_len)
{
        char *buf = malloc(size + 1);
        ssize_t n;

        if (!buf)
                return -ENOMEM;
        do
                n = read(fd, buf, size + 1);
        while (n < 0 && errno == EINTR);
        if (n < 0) {
                int r = negative_errno();

                free(buf);
                return r;
        }
        if ((size_t)n > size) {
                free(buf);
                return 0;
        }
        buf[n] = '\0';
        *ret = buf;
        *ret_len = (size_t)n;
        return 1;
}

/* Sysfs files must be read with one read(): a second read of a "raw"
 * attribute may return new data instead of EOF. The size comes from
 * st_size (4096 for most attributes); files that report 0 (procfs style)
 * get a page, then the maximum. */
static int read_virtual_fd(int fd, char **ret, size_t *ret_len)
{
        size_t page = (size_t)sysconf(_SC_PAGESIZE);

        for (int tries = VIRTUAL_READ_TRIES; tries > 0;) {
                struct stat st;
                size_t size;
                int r;

                if (fstat(fd, &st) < 0)
                        return negative_errno();
                if (!S_ISREG(st.st_mode))
                        return -EBADF;
                if (st.st_size > 0 && tries > 1) {
                        if ((uint64_t)st.st_size > UDEVICE_VIRTUAL_FILE_MAX)
                                return -EFBIG;
                        size = (size_t)st.st_size;
                        tries--;
                } else if (tries > 1) {
                        size = MIN(page - 1, (size_t)UDEVICE_VIRTUAL_FILE_MAX);
                        tries = 1;
                } else {
                        size = UDEVICE_VIRTUAL_FILE_MAX;
                        tries = 0;
                }
                r = read_once(fd, size, ret, ret_len);
                if (r != 0)
                        return r < 0 ? r : 0;
                if (tries == 0)
                        return -EFBIG;
                if (lseek(fd, 0, SEEK_SET) < 0)
                        return negative_errno();
        }
        return -EFBIG;
}

int read_virtual_file(const char *path, char **ret, size_t *ret_len)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

        if (fd < 0)
                return negative_errno();
        return read_virtual_fd(fd, ret, ret_len);
}

/* ---------------------------------------------------------------- listing */

struct name_list {
        char **items;
        size_t n, cap;
};

static void name_list_done(struct name_list *l)
{
        udevice_strv_free(l->items, l->n);
        *l = (struct name_list){};
}

/* Takes ownership of s (freed on error). */
static int name_list_push(struct name_list *l, char *s)
{
        if (!s)
                return -ENOMEM;
        if (l->n == l->cap) {
                size_t cap = l->cap ? l->cap * 2 : 32;
                char **n = realloc(l->items, cap * sizeof(*n));

                if (!n) {
                        free(s);
                        return -ENOMEM;
                }
                l->items = n;
                l->cap = cap;
        }
        l->items[l->n++] = s;
        return 0;
}

static char *join_rel(const char *subdir, const char *name)
{
        char *s;

        if (!subdir)
                return strdup(name);
        if (asprintf(&s, "%s/%s", subdir, name) < 0)
                return NULL;
        return s;
}

static DIR *open_subdir(const struct udevice *d, const char *subdir, int *ret_err)
{
        char path[PATH_MAX];
        int n = snprintf(path, sizeof(path), "%s%s%s", d->syspath, subdir ? "/" : "",
                         subdir ?: "");
        DIR *dir;

        if (n < 0 || (size_t)n >= sizeof(path)) {
                *ret_err = -ENAMETOOLONG;
                return NULL;
        }
        dir = opendir(path);
        *ret_err = dir ? 0 : negative_errno();
        return dir;
}

/* One directory: attribute files go to `attrs`, subdirectories to `stack`. */
static int list_one_dir(const struct udevice *d, const char *subdir, struct name_list *attrs,
                        struct name_list *stack)
{
        _cleanup_(closedirp) DIR *dir = NULL;
        struct dirent *de;
        int r;

        dir = open_subdir(d, subdir, &r);
        if (!dir)
                return r == -ENOENT && subdir ? 0 : r; /* a child device may vanish */
        if (subdir) {
                /* A subdirectory with a uevent file is a child device. */
                if (faccessat(dirfd(dir), "uevent", F_OK, 0) >= 0 || errno != ENOENT)
                        return 0;
        }
        while ((errno = 0, de = readdir(dir))) {
                struct stat st;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (de->d_type == DT_DIR) {
                        r = name_list_push(stack, join_rel(subdir, de->d_name));
                        if (r < 0)
                                return r;
                        continue;
                }
                if (de->d_type != DT_LNK && de->d_type != DT_REG)
                        continue;
                if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if ((st.st_mode & (S_IRUSR | S_IWUSR)) == 0)
                        continue;
                r = name_list_push(attrs, join_rel(subdir, de->d_name));
                if (r < 0)
                        return r;
        }
        return errno != 0 ? negative_errno() : 0;
}

static int strcmp_ptr(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

int udevice_list_sysattrs(struct udevice *d, char ***ret, size_t *ret_n)
{
        struct name_list attrs = {}, stack = {};
        int r;

        r = list_one_dir(d, NULL, &attrs, &stack);
        while (r >= 0 && stack.n > 0) {
                _cleanup_free_ char *sub = stack.items[--stack.n];

                r = list_one_dir(d, sub, &attrs, &stack);
        }
        name_list_done(&stack);
        if (r < 0) {
                name_list_done(&attrs);
                return r;
        }
        /* Names are unique: each directory is listed once. */
        if (attrs.n > 0)
                qsort(attrs.items, attrs.n, sizeof(char *), strcmp_ptr);
        *ret = attrs.items;
        *ret_n = attrs.n;
        return 0;
}

void udevice_strv_free(char **l, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(l[i]);
        free(l);
}

/* ---------------------------------------------------------------- reading */

/* The last component of a symlink's target. */
static int read_link_name(const char *path, char **ret)
{
        char target[PATH_MAX];
        ssize_t n = readlink(path, target, sizeof(target) - 1);
        const char *name;

        if (n < 0)
                return negative_errno();
        target[n] = '\0';
        name = strrchr(target, '/');
        *ret = strdup(name ? name + 1 : target);
        return *ret ? 0 : -ENOMEM;
}

int udevice_read_sysattr(struct udevice *d, const char *name, char **ret)
{
        char path[PATH_MAX];
        struct stat st;
        size_t len;
        char *v;
        int r, n = snprintf(path, sizeof(path), "%s/%s", d->syspath, name);

        if (n < 0 || (size_t)n >= sizeof(path))
                return -ENAMETOOLONG;
        if (lstat(path, &st) < 0)
                return negative_errno();
        if (S_ISLNK(st.st_mode)) {
                /* Only these links are values; other paths are not exposed. */
                if (!streq(name, "driver") && !streq(name, "subsystem") && !streq(name, "module"))
                        return -EINVAL;
                return read_link_name(path, ret);
        }
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!(st.st_mode & S_IRUSR))
                return -EPERM;
        r = read_virtual_file(path, &v, &len);
        if (r < 0)
                return r;
        /* Trailing newlines go; so do trailing NUL bytes, as in sd-device. */
        while (len > 0 && (v[len - 1] == '\n' || v[len - 1] == '\r' || v[len - 1] == '\0'))
                v[--len] = '\0';
        *ret = v;
        return 0;
}
