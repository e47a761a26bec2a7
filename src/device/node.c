/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (a flock on <stack dir>/.lock serialises the updates of one link) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "device/node.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/siphash.h"
#include "shared/time-util.h"

#define STACK_ENTRY_MAX (NODE_PATH_MAX + 32) /* "<prio>:<devnode>" */
#define SYMLINK_RETRIES 3

static void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

/* ---- logical paths ---- */

/* Map a logical "/dev/..." path into the dev root. */
static int dev_path(const struct device_roots *roots, const char *logical, char *out, size_t size)
{
        const char *rel;
        int w;

        if (strncmp(logical, "/dev/", 5) != 0)
                return -EINVAL;
        rel = logical + 5;
        w = snprintf(out, size, "%s/%s", roots->dev, rel);
        if (w < 0 || (size_t)w >= size)
                return -ENAMETOOLONG;
        return 0;
}

int node_link_normalize(const char *link, char *out, size_t size)
{
        const char *p = link;
        size_t o;

        if (!link || !*link)
                return -EINVAL;
        if (link[0] == '/') {
                if (strncmp(link, "/dev/", 5) != 0)
                        return -EINVAL;
                p = link + 5;
        }
        if (size < 6)
                return -ENAMETOOLONG;
        memcpy(out, "/dev", 4);
        o = 4;
        /* Walk the components: drop empty and ".", refuse "..". */
        while (*p) {
                size_t n;

                while (*p == '/')
                        p++;
                n = strcspn(p, "/");
                if (n == 0)
                        break;
                if (n == 1 && p[0] == '.') {
                        p += n;
                        continue;
                }
                if (n == 2 && p[0] == '.' && p[1] == '.')
                        return -EINVAL;
                if (o + 1 + n + 1 > size)
                        return -ENAMETOOLONG;
                out[o++] = '/';
                memcpy(out + o, p, n);
                o += n;
                p += n;
        }
        out[o] = '\0';
        if (o == 4) /* "/dev" itself */
                return -EINVAL;
        if (o >= NODE_PATH_MAX)
                return -ENAMETOOLONG;
        return 0;
}

/* Split a normalised absolute path into components (offsets, lengths). */
static size_t path_components(const char *p, size_t *off, size_t *len, size_t max)
{
        size_t n = 0, i = 0;

        while (p[i]) {
                while (p[i] == '/')
                        i++;
                if (!p[i])
                        break;
                size_t l = strcspn(p + i, "/");
                if (n == max)
                        return SIZE_MAX;
                off[n] = i;
                len[n] = l;
                n++;
                i += l;
        }
        return n;
}

/* Relative symlink target from the directory of `link` to `target` (both
 * normalised logical paths): "/dev/disk/by-id/x" -> "/dev/sda" = "../../sda". */
static int relative_target(const char *link, const char *target, char *out, size_t size)
{
        size_t loff[NODE_PATH_MAX / 2], llen[NODE_PATH_MAX / 2];
        size_t toff[NODE_PATH_MAX / 2], tlen[NODE_PATH_MAX / 2];
        size_t nl = path_components(link, loff, llen, ARRAY_SIZE(loff));
        size_t nt = path_components(target, toff, tlen, ARRAY_SIZE(toff));
        size_t c = 0, o = 0;

        if (nl == SIZE_MAX || nt == SIZE_MAX || nl == 0 || nt == 0)
                return -EINVAL;
        nl--; /* the directory of the link */
        while (c < nl && c + 1 < nt && llen[c] == tlen[c] &&
               memcmp(link + loff[c], target + toff[c], llen[c]) == 0)
                c++;
        for (size_t k = c; k < nl; k++) {
                if (o + 3 >= size)
                        return -ENAMETOOLONG;
                memcpy(out + o, "../", 3);
                o += 3;
        }
        for (size_t k = c; k < nt; k++) {
                if (o + tlen[k] + 2 > size)
                        return -ENAMETOOLONG;
                memcpy(out + o, target + toff[k], tlen[k]);
                o += tlen[k];
                if (k + 1 < nt)
                        out[o++] = '/';
        }
        out[o] = '\0';
        return 0;
}

/* ---- stack directory names: escaping and SipHash-2-4 (shared/siphash.h) ---- */

static const uint8_t stack_hash_key[16] = { 0xb9, 0x6a, 0xf1, 0xce, 0x40, 0x31, 0x44, 0x1a,
                                            0x9e, 0x19, 0xec, 0x8b, 0xae, 0xf3, 0xe3, 0x2f };

static char urlsafe_base64_char(unsigned x)
{
        static const char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        return table[x & 63];
}

int node_stack_dir_name(const char *link, char *out, size_t size)
{
        char norm[NODE_PATH_MAX];
        const char *rel;
        size_t j = 0;
        bool toolong = false;
        int r;

        if (size < NODE_STACK_NAME_MAX + 1)
                return -ENOBUFS;
        r = node_link_normalize(link, norm, sizeof(norm));
        if (r < 0)
                return r;
        rel = norm + 5;
        /* Escape '/' and '\'; keep at most 244 bytes when it does not fit in
         * 255 - the hash suffix takes the last 11. */
        for (size_t i = 0; rel[i] && !toolong; i++) {
                const char *piece = rel[i] == '/' ? "\\x2f" : rel[i] == '\\' ? "\\x5c" : NULL;
                size_t n = piece ? 4 : 1;

                if (j + n > NODE_STACK_NAME_MAX - 11) {
                        toolong = true;
                        /* fill up to 244 with the part of the escape that fits */
                        for (size_t k = 0; j < NODE_STACK_NAME_MAX - 11 && k < n; k++)
                                out[j++] = piece ? piece[k] : rel[i];
                        break;
                }
                if (piece)
                        memcpy(out + j, piece, 4);
                else
                        out[j] = rel[i];
                j += n;
        }
        if (!toolong) {
                out[j] = '\0';
                return 0;
        }
        uint64_t h = siphash24(rel, strlen(rel) + 1, stack_hash_key); /* NUL included */
        for (unsigned k = 0; k <= 10; k++)
                out[NODE_STACK_NAME_MAX - 1 - k] = urlsafe_base64_char((unsigned)(h >> (k * 6)));
        out[NODE_STACK_NAME_MAX] = '\0';
        return 0;
}

/* ---- directories ---- */

/* mkdir -p of the parents of `path` (a rooted path below `top`, which must
 * exist). */
static int mkdir_parents_under(const char *path, const char *top, mode_t mode)
{
        char buf[PATH_MAX];
        size_t toplen = strlen(top);

        if (strlen(path) >= sizeof(buf) || strncmp(path, top, toplen) != 0 || path[toplen] != '/')
                return -EINVAL;
        strcpy(buf, path);
        for (char *s = strchr(buf + toplen + 1, '/'); s; s = strchr(s + 1, '/')) {
                *s = '\0';
                if (mkdir(buf, mode) < 0 && errno != EEXIST) {
                        int r = -errno;
                        *s = '/';
                        return r;
                }
                *s = '/';
        }
        return 0;
}

/* Remove empty parent directories of `path` up to (not including) `top`. */
static void rmdir_parents_under(const char *path, const char *top)
{
        char buf[PATH_MAX];
        size_t toplen = strlen(top);

        if (strlen(path) >= sizeof(buf) || strncmp(path, top, toplen) != 0)
                return;
        strcpy(buf, path);
        for (;;) {
                char *p = strrchr(buf, '/');
                if (!p || (size_t)(p - buf) <= toplen)
                        return;
                *p = '\0';
                if (rmdir(buf) < 0)
                        return;
        }
}

/* ---- symlinks ---- */

/* Point the logical `link` at the logical `devnode` with a relative symlink,
 * atomically (temporary name + rename). Refuses to replace anything that is
 * not a symlink. */
static int node_symlink(const struct device_roots *roots, const char *link, const char *devnode)
{
        char path[PATH_MAX], tmp[PATH_MAX], target[NODE_PATH_MAX];
        struct stat st;
        int r;

        r = dev_path(roots, link, path, sizeof(path));
        if (r < 0)
                return r;
        r = relative_target(link, devnode, target, sizeof(target));
        if (r < 0)
                return r;
        if (lstat(path, &st) >= 0) {
                char cur[NODE_PATH_MAX];
                ssize_t n;

                if (!S_ISLNK(st.st_mode))
                        return log_debug_errno(-EEXIST, "Conflicting inode '%s' found, symlink to "
                                               "'%s' will not be created.", link, devnode);
                /* already right (a "change" event, a second coldplug): as
                 * systemd, leave it; no temporary link and rename */
                n = readlink(path, cur, sizeof(cur));
                if (n >= 0 && (size_t)n < sizeof(cur) && (size_t)n == strlen(target) &&
                    memcmp(cur, target, (size_t)n) == 0) {
                        log_debug("Preserve already existing symlink '%s' to '%s'", link,
                                  devnode);
                        return 0;
                }
        } else if (errno != ENOENT) {
                return log_debug_errno(errno, "Failed to lstat() '%s': %m", link);
        } else if (symlink(target, path) >= 0) {
                /* Nothing there: creating the link is atomic already. EEXIST
                 * (made meanwhile) or ENOENT (no parent) take the way below. */
                log_debug("Successfully created symlink '%s' to '%s'", link, devnode);
                return 0;
        }

        const char *base = strrchr(path, '/') + 1;
        int w = snprintf(tmp, sizeof(tmp), "%.*s.#%s%016" PRIx64, (int)(base - path), path, base,
                         random_name_u64());
        if (w < 0 || (size_t)w >= sizeof(tmp))
                return -ENAMETOOLONG;
        for (int attempt = 0;; attempt++) {
                if (symlink(target, tmp) >= 0)
                        break;
                /* The parent is missing: the first link there, or a concurrent
                 * release removed it while empty. Made only then, not per link. */
                if (errno != ENOENT || attempt + 1 >= SYMLINK_RETRIES)
                        return log_debug_errno(errno, "Failed to create symlink '%s': %m", link);
                r = mkdir_parents_under(path, roots->dev, 0755);
                if (r < 0 && attempt + 2 >= SYMLINK_RETRIES)
                        return log_debug_errno(r, "Failed to create parent directory of '%s': %m",
                                               link);
        }
        if (rename(tmp, path) < 0) {
                r = -errno;
                (void)unlink(tmp);
                return log_debug_errno(r, "Failed to create symlink '%s' to '%s': %m", link,
                                       devnode);
        }
        log_debug("Successfully created symlink '%s' to '%s'", link, devnode);
        return 0;
}

/* Remove `path` if it is a symbolic link: only links are ever made at these
 * paths, and a file or node found there (where the link was refused as a
 * conflicting inode) is not ours to delete. 0 or -errno. */
static int unlink_symlink(const char *path, const char *what)
{
        struct stat st;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISLNK(st.st_mode)) {
                log_debug("'%s' is not a symbolic link, leaving it alone", what);
                return 0;
        }
        if (unlink(path) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

static void link_unlink(const struct device_roots *roots, const char *link)
{
        char path[PATH_MAX];
        int r;

        if (dev_path(roots, link, path, sizeof(path)) < 0)
                return;
        r = unlink_symlink(path, link);
        if (r < 0)
                log_debug_errno(r, "Failed to remove '%s', ignoring: %m", link);
        rmdir_parents_under(path, roots->dev);
}

/* ---- stack directory ---- */

struct stack_entry {
        int priority;
        char devnode[NODE_PATH_MAX];
};

/* Read one entry "<prio>:<devnode>" (symlink format); -EINVAL for an old
 * regular-file entry or garbage. Checks that the devnode exists. */
static int stack_entry_read(const struct device_roots *roots, int dirfd, const char *name,
                            struct stack_entry *ret)
{
        char buf[STACK_ENTRY_MAX], path[PATH_MAX];
        ssize_t n;
        char *colon, *end;
        long prio;

        n = readlinkat(dirfd, name, buf, sizeof(buf) - 1);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        colon = strchr(buf, ':');
        if (!colon || colon == buf)
                return -EINVAL;
        *colon = '\0';
        errno = 0;
        prio = strtol(buf, &end, 10);
        if (errno || *end || prio < INT_MIN || prio > INT_MAX)
                return -EINVAL;
        if (strlen(colon + 1) >= sizeof(ret->devnode) ||
            dev_path(roots, colon + 1, path, sizeof(path)) < 0)
                return -EINVAL;
        if (access(path, F_OK) < 0)
                return -errno;
        ret->priority = (int)prio;
        strcpy(ret->devnode, colon + 1);
        return 0;
}

/* Write (add) or delete our own entry. */
static int stack_entry_update(int dirfd, const struct node_device *d, bool add)
{
        char data[STACK_ENTRY_MAX], buf[STACK_ENTRY_MAX];
        ssize_t n;

        if (!add) {
                if (unlinkat(dirfd, d->id, 0) < 0 && errno != ENOENT)
                        return -errno;
                return 0;
        }
        int w = snprintf(data, sizeof(data), "%i:%s", d->priority, d->devnode);
        if (w < 0 || (size_t)w >= sizeof(data))
                return -ENAMETOOLONG;
        n = readlinkat(dirfd, d->id, buf, sizeof(buf) - 1);
        if (n >= 0) {
                buf[n] = '\0';
                if (streq(buf, data))
                        return 0;
        }
        (void)unlinkat(dirfd, d->id, 0);
        if (symlinkat(data, dirfd, d->id) < 0)
                return -errno;
        return 0;
}

/* Open (creating) the stack directory of `link` and take its lock. */
static int stack_dir_open(const struct device_roots *roots, const char *link, int *ret_dirfd,
                          int *ret_lockfd)
{
        char name[NODE_STACK_NAME_MAX + 1], path[PATH_MAX], links[PATH_MAX];
        _cleanup_close_ int dirfd = -1, lockfd = -1;
        int r, w;

        r = node_stack_dir_name(link, name, sizeof(name));
        if (r < 0)
                return r;
        w = snprintf(path, sizeof(path), "%s/links/%s", roots->run, name);
        if (w < 0 || (size_t)w >= sizeof(path))
                return -ENAMETOOLONG;
        w = snprintf(links, sizeof(links), "%s/links", roots->run);
        if (w < 0 || (size_t)w >= sizeof(links))
                return -ENAMETOOLONG;
        for (int attempt = 0;; attempt++) {
                r = mkdir(path, 0755) < 0 ? -errno : 0;
                if (r == -ENOENT) { /* /run/udev/links itself: made once, not per event */
                        r = mkdir_p(links, 0755);
                        if (r < 0)
                                return r;
                        r = mkdir(path, 0755) < 0 ? -errno : 0;
                }
                if (r < 0 && r != -EEXIST)
                        return r;
                dirfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (dirfd < 0)
                        return -errno;
                lockfd = openat(dirfd, ".lock", O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (lockfd >= 0)
                        break;
                /* The idle cleanup removed the directory under us: retry. */
                r = -errno;
                dirfd = safe_close(dirfd);
                if (r != -ENOENT || attempt + 1 >= SYMLINK_RETRIES)
                        return r;
        }
        if (flock(lockfd, LOCK_EX) < 0)
                return -errno;
        *ret_dirfd = TAKE_FD(dirfd);
        *ret_lockfd = TAKE_FD(lockfd);
        return 0;
}

/* The id and priority of the device the link currently points at, found by
 * matching the link's target against the stack entries. -ENOENT: the link
 * does not exist or points at nothing known. */
static int link_current_owner(const struct device_roots *roots, const char *link, int dirfd,
                              char *ret_id, size_t id_size, int *ret_prio)
{
        char path[PATH_MAX], target[NODE_PATH_MAX], resolved[NODE_PATH_MAX];
        _cleanup_(closedirp) DIR *dir = NULL;
        struct dirent *de;
        ssize_t n;
        int r, fd;

        r = dev_path(roots, link, path, sizeof(path));
        if (r < 0)
                return r;
        n = readlink(path, target, sizeof(target) - 1);
        if (n < 0)
                return -errno;
        target[n] = '\0';
        if (target[0] == '/') {
                snprintf(resolved, sizeof(resolved), "%s", target);
        } else {
                const char *slash = strrchr(link, '/');
                char joined[2 * NODE_PATH_MAX];
                snprintf(joined, sizeof(joined), "%.*s/%s", (int)(slash - link), link, target);
                /* resolve "../" against the logical directory */
                char *out = resolved;
                size_t o = 0;
                for (const char *p = joined; *p;) {
                        size_t len;
                        while (*p == '/')
                                p++;
                        len = strcspn(p, "/");
                        if (len == 0)
                                break;
                        if (len == 2 && p[0] == '.' && p[1] == '.') {
                                while (o > 0 && out[o - 1] != '/')
                                        o--;
                                if (o > 0)
                                        o--;
                        } else if (!(len == 1 && p[0] == '.')) {
                                if (o + 1 + len + 1 > sizeof(resolved))
                                        return -ENAMETOOLONG;
                                out[o++] = '/';
                                memcpy(out + o, p, len);
                                o += len;
                        }
                        p += len;
                }
                out[o] = '\0';
        }

        fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        dir = fdopendir(fd);
        if (!dir) {
                r = -errno;
                safe_close(fd);
                return r;
        }
        while ((de = readdir(dir))) {
                struct stack_entry e;
                if (de->d_name[0] == '.')
                        continue;
                if (stack_entry_read(roots, dirfd, de->d_name, &e) < 0)
                        continue;
                if (!streq(e.devnode, resolved))
                        continue;
                if (strlen(de->d_name) >= id_size)
                        continue;
                strcpy(ret_id, de->d_name);
                *ret_prio = e.priority;
                return 0;
        }
        return -ENOENT;
}

/* Change time of an entry (ns); newer entries win priority ties. */
static int64_t entry_ctime(int dirfd, const char *name)
{
        struct stat st;

        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return INT64_MIN;
        return (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
}

/* Full scan: the devnode with the highest priority; when claiming we are the
 * first candidate, so we keep ties; among other entries a tie goes to the
 * most recently written one. 1 found, 0 none, -errno. */
static int stack_find_best(const struct device_roots *roots, int dirfd, const struct node_device *d,
                           bool add, char *ret_devnode, size_t size)
{
        _cleanup_(closedirp) DIR *dir = NULL;
        struct dirent *de;
        bool found = false, own = false;
        int best_prio = 0, r;
        int64_t best_time = INT64_MIN;
        int fd;

        if (add) {
                if (strlen(d->devnode) >= size)
                        return -ENAMETOOLONG;
                strcpy(ret_devnode, d->devnode);
                best_prio = d->priority;
                found = own = true;
        }
        fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        dir = fdopendir(fd);
        if (!dir) {
                r = -errno;
                safe_close(fd);
                return r;
        }
        while ((de = readdir(dir))) {
                struct stack_entry e;
                int64_t t;

                if (de->d_name[0] == '.' || streq(de->d_name, d->id))
                        continue;
                r = stack_entry_read(roots, dirfd, de->d_name, &e);
                if (r < 0) {
                        log_debug_errno(r, "Failed to read stack entry '%s', ignoring: %m",
                                        de->d_name);
                        continue;
                }
                t = entry_ctime(dirfd, de->d_name);
                if (found && (e.priority < best_prio ||
                              (e.priority == best_prio && (own || t <= best_time))))
                        continue;
                if (strlen(e.devnode) >= size)
                        continue;
                strcpy(ret_devnode, e.devnode);
                best_prio = e.priority;
                best_time = t;
                found = true;
                own = false;
        }
        return found ? 1 : 0;
}

/* /dev/disk/by-diskseq/<n>[-part<k>] of a block device: no stack directory
 * (created when its number is the device's DISKSEQ, unlinked on release).
 * 1 handled, 0 not such a link. */
static int link_update_diskseq(const struct device_roots *roots, const struct node_device *d,
                               const char *link, bool add)
{
        static const char prefix[] = "/dev/disk/by-diskseq/";
        char num[NODE_PATH_MAX];
        const char *fname;
        size_t n;

        if (!d->subsystem || !streq(d->subsystem, "block"))
                return 0;
        if (strncmp(link, prefix, STRLEN(prefix)) != 0)
                return 0;
        fname = link + STRLEN(prefix);
        if (!*fname || strchr(fname, '/'))
                return 0;
        n = strlen(fname);
        if (d->devtype && streq(d->devtype, "partition")) {
                char suffix[64];
                if (!d->sysnum)
                        return 0;
                snprintf(suffix, sizeof(suffix), "-part%s", d->sysnum);
                size_t sl = strlen(suffix);
                if (n <= sl || !streq(fname + n - sl, suffix))
                        return 0;
                n -= sl;
        }
        memcpy(num, fname, n);
        num[n] = '\0';
        if (num[strspn(num, "0123456789")] != '\0')
                return 0;
        if (!add) {
                link_unlink(roots, link);
                return 1;
        }
        if (!d->diskseq || !streq(num, d->diskseq))
                return 0; /* unexpected: arbitrate as usual */
        int r = node_symlink(roots, link, d->devnode);
        return r < 0 ? r : 1;
}

int node_link_update(const struct device_roots *roots, const struct node_device *d,
                     const char *link_in, bool add)
{
        char link[NODE_PATH_MAX], owner[64], best[NODE_PATH_MAX];
        _cleanup_close_ int dirfd = -1, lockfd = -1;
        int r, owner_prio = 0;
        bool have_owner;

        r = node_link_normalize(link_in, link, sizeof(link));
        if (r < 0)
                return log_debug_errno(r, "Invalid device symlink '%s', ignoring: %m", link_in);
        if (!d->id || !d->devnode)
                return -EINVAL;

        r = link_update_diskseq(roots, d, link, add);
        if (r != 0)
                return r < 0 ? r : 0;

        r = stack_dir_open(roots, link, &dirfd, &lockfd);
        if (r < 0)
                return log_debug_errno(r, "Failed to open the stack directory of '%s': %m", link);

        have_owner = link_current_owner(roots, link, dirfd, owner, sizeof(owner), &owner_prio) >= 0;

        r = stack_entry_update(dirfd, d, add);
        if (r < 0)
                return log_debug_errno(r, "Failed to update the stack directory of '%s': %m", link);

        if (have_owner) {
                bool ours = streq(owner, d->id);
                if (add && ours && owner_prio <= d->priority)
                        return 0; /* ours already, priority not lowered */
                if (add && !ours) {
                        if (owner_prio > d->priority)
                                return 0; /* a better device owns it */
                        return node_symlink(roots, link, d->devnode); /* ties: last wins */
                }
                if (!add && !ours)
                        return 0; /* someone else's; our entry is gone */
        }

        r = stack_find_best(roots, dirfd, d, add, best, sizeof(best));
        if (r < 0)
                return log_debug_errno(r, "Failed to find the device with the highest priority "
                                       "for '%s': %m", link);
        if (r > 0)
                return node_symlink(roots, link, best);

        log_debug("No reference left for '%s', removing", link);
        link_unlink(roots, link);
        return 0;
}

static bool list_has_link(const struct strlist *l, const char *norm)
{
        char buf[NODE_PATH_MAX];

        for (size_t i = 0; l && i < l->n; i++)
                if (node_link_normalize(l->items[i], buf, sizeof(buf)) >= 0 && streq(buf, norm))
                        return true;
        return false;
}

static int devnum_link(const struct node_device *d, char *out, size_t size)
{
        bool block = d->subsystem && streq(d->subsystem, "block");
        int w = snprintf(out, size, "/dev/%s/%u:%u", block ? "block" : "char", d->major, d->minor);

        return w < 0 || (size_t)w >= size ? -ENAMETOOLONG : 0;
}

int node_update(const struct device_roots *roots, const struct node_device *d,
                const struct strlist *old_links, const struct strlist *new_links)
{
        char norm[NODE_PATH_MAX], mm[64];
        int r;

        for (size_t i = 0; old_links && i < old_links->n; i++) {
                if (node_link_normalize(old_links->items[i], norm, sizeof(norm)) < 0)
                        continue;
                if (list_has_link(new_links, norm))
                        continue;
                log_debug("Removing/updating old device symlink '%s', which is no longer "
                          "belonging to this device.", norm);
                r = node_link_update(roots, d, norm, false);
                if (r < 0)
                        log_warning_errno(r, "Failed to remove/update device symlink '%s', "
                                          "ignoring: %m", norm);
        }
        for (size_t i = 0; new_links && i < new_links->n; i++) {
                r = node_link_update(roots, d, new_links->items[i], true);
                if (r < 0)
                        log_warning_errno(r, "Failed to create/update device symlink '%s', "
                                          "ignoring: %m", new_links->items[i]);
        }
        if (d->major == 0)
                return 0;
        r = devnum_link(d, mm, sizeof(mm));
        if (r >= 0)
                r = node_symlink(roots, mm, d->devnode);
        if (r < 0)
                return log_warning_errno(r, "Failed to create device symlink '%s': %m", mm);
        return 0;
}

int node_remove(const struct device_roots *roots, const struct node_device *d,
                const struct strlist *links)
{
        char mm[64], path[PATH_MAX];
        int r;

        for (size_t i = 0; links && i < links->n; i++) {
                r = node_link_update(roots, d, links->items[i], false);
                if (r < 0)
                        log_warning_errno(r, "Failed to remove/update device symlink '%s', "
                                          "ignoring: %m", links->items[i]);
        }
        if (d->major == 0)
                return 0;
        r = devnum_link(d, mm, sizeof(mm));
        if (r >= 0)
                r = dev_path(roots, mm, path, sizeof(path));
        if (r < 0)
                return r;
        r = unlink_symlink(path, mm);
        if (r < 0)
                return log_debug_errno(r, "Failed to remove '%s': %m", mm);
        return 0;
}

int node_cleanup_stack_dirs(const struct device_roots *roots)
{
        char path[PATH_MAX];
        _cleanup_(closedirp) DIR *dir = NULL;
        struct dirent *de;
        int w;

        w = snprintf(path, sizeof(path), "%s/links", roots->run);
        if (w < 0 || (size_t)w >= sizeof(path))
                return -ENAMETOOLONG;
        dir = opendir(path);
        if (!dir)
                return errno == ENOENT ? 0 : log_debug_errno(errno, "Failed to open %s: %m", path);
        while ((de = readdir(dir))) {
                char lock[NODE_STACK_NAME_MAX + 8];

                if (de->d_name[0] == '.' || de->d_type != DT_DIR)
                        continue;
                snprintf(lock, sizeof(lock), "%s/.lock", de->d_name);
                if (unlinkat(dirfd(dir), lock, 0) < 0 && errno != ENOENT) {
                        log_debug_errno(errno, "Failed to remove %s/%s: %m", path, lock);
                        continue;
                }
                if (unlinkat(dirfd(dir), de->d_name, AT_REMOVEDIR) < 0 && errno != ENOTEMPTY &&
                    errno != EEXIST)
                        log_debug_errno(errno, "Failed to remove %s/%s: %m", path, de->d_name);
        }
        return 0;
}

/* ---- permissions ---- */

static bool node_is_block(const struct node_device *d)
{
        return d->subsystem && streq(d->subsystem, "block");
}

/* Whether `st` is the device's node: its type and devnum. */
static bool is_node_of(const struct node_device *d, const struct stat *st)
{
        if ((node_is_block(d) ? S_ISBLK(st->st_mode) : S_ISCHR(st->st_mode)) &&
            st->st_rdev == makedev(d->major, d->minor))
                return true;
        log_debug("Device node %s is not the node of %u:%u, skipping handling.", d->devnode,
                  d->major, d->minor);
        return false;
}

static bool errno_is_node_missing(int e)
{
        return e == ENOENT || e == ENXIO || e == ELOOP || e == ENOTDIR;
}

/* Open the device's node (path: mapped into the dev root) without following
 * symlinks and check that it is this device's. 1 + fd, 0 = missing/foreign
 * (skip), -errno. */
static int open_node(const char *path, const struct node_device *d, int *ret_fd,
                     struct stat *st)
{
        _cleanup_close_ int fd = -1;

        fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                if (errno_is_node_missing(errno)) {
                        log_debug("Device node %s is missing, skipping handling.", d->devnode);
                        return 0;
                }
                return log_debug_errno(errno, "Cannot open node %s: %m", d->devnode);
        }
        if (fstat(fd, st) < 0)
                return log_debug_errno(errno, "Cannot stat node %s: %m", d->devnode);
        if (!is_node_of(d, st))
                return 0;
        *ret_fd = TAKE_FD(fd);
        return 1;
}

/* Which of owner/group/mode differ from what the node has (a gid > 0 without
 * a mode means mode 0660). */
struct perm_changes {
        mode_t mode;
        bool mode_set, apply_mode, apply_uid, apply_gid;
};

static struct perm_changes perm_changes(const struct node_perms *p, const struct stat *st)
{
        struct perm_changes c = { .mode = p->mode, .mode_set = p->mode_set };

        if (!c.mode_set && p->gid_set && p->gid > 0) {
                c.mode = 0660;
                c.mode_set = true;
        }
        c.apply_mode = c.mode_set && (st->st_mode & 0777) != (c.mode & 0777);
        c.apply_uid = p->uid_set && st->st_uid != p->uid;
        c.apply_gid = p->gid_set && st->st_gid != p->gid;
        return c;
}

/* Nothing to apply (not an add, nothing differs): only the timestamps, by
 * path. 1 when done or the node is missing or foreign, 0 when there is
 * something to apply after all, -errno. Two system calls instead of the
 * four of the O_PATH way; the node is not pinned between the stat and the
 * touch, which at worst touches the timestamps of a node that replaced it. */
static int touch_unchanged(const char *path, const struct node_device *d,
                           const struct node_perms *p)
{
        struct perm_changes c;
        struct stat st;

        if (fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                if (errno_is_node_missing(errno)) {
                        log_debug("Device node %s is missing, skipping handling.", d->devnode);
                        return 1;
                }
                return log_debug_errno(errno, "Cannot stat node %s: %m", d->devnode);
        }
        if (!is_node_of(d, &st))
                return 1;
        c = perm_changes(p, &st);
        if (c.apply_mode || c.apply_uid || c.apply_gid)
                return 0;
        if (utimensat(AT_FDCWD, path, NULL, AT_SYMLINK_NOFOLLOW) < 0)
                log_debug_errno(errno, "Failed to adjust timestamp of node %s: %m", d->devnode);
        return 1;
}

/* ---- security labels ---- */

#define SELINUX_FS_MAGIC 0xf97cff8cU /* selinuxfs, as libselinux checks it */
#define XATTR_SELINUX "security.selinux"
#define XATTR_SMACK "security.SMACK64"

void node_mac_detect(const char *sys_root, struct node_mac *ret)
{
        char path[PATH_MAX];
        struct statfs sfs;

        *ret = (struct node_mac){};
        snprintf(path, sizeof(path), "%s/fs/selinux", sys_root);
        ret->selinux = statfs(path, &sfs) == 0 && (uint32_t)sfs.f_type == SELINUX_FS_MAGIC;
        snprintf(path, sizeof(path), "%s/fs/smackfs/", sys_root);
        ret->smack = access(path, F_OK) == 0;
}

/* Set (label != NULL) or remove one security attribute of the node behind
 * `proc` (/proc/self/fd/N of an O_PATH fd). The SELinux context is stored
 * with its NUL, as libselinux does; a SMACK label without. */
static void set_label(const char *proc, const char *devnode, const char *module,
                      const char *xattr, const char *label, bool with_nul)
{
        if (!label) {
                /* resetting to the default: failures are not errors */
                if (removexattr(proc, xattr) < 0 && errno != ENODATA)
                        log_debug_errno(errno, "%s: SECLABEL: cannot remove the %s label: %m",
                                        devnode, module);
                return;
        }
        if (setxattr(proc, xattr, label, strlen(label) + (with_nul ? 1 : 0), 0) < 0) {
                int r = -errno;

                log_full_errno(r == -ENOENT ? LOG_DEBUG : LOG_ERR, r,
                               "%s: SECLABEL: failed to set %s label '%s': %m", devnode, module,
                               label);
                return;
        }
        log_debug("%s: SECLABEL: set %s label '%s'", devnode, module, label);
}

/* SECLABEL{selinux}, SECLABEL{smack}, then the SMACK default; whenever
 * permissions are applied. */
static void apply_labels(const char *proc, const char *devnode, const struct strlist *labels,
                         const struct node_mac *mac)
{
        static const struct node_mac none;
        bool smack_given = false;

        if (!mac)
                mac = &none;
        for (size_t i = 0; labels && i < labels->n; i++) {
                const char *entry = labels->items[i], *label = strchr(entry, '=');
                size_t ml;

                if (!label)
                        continue; /* not made by the rules engine */
                ml = (size_t)(label - entry);
                label++;
                if (ml == 7 && strncmp(entry, "selinux", ml) == 0) {
                        if (mac->selinux)
                                set_label(proc, devnode, "SELinux", XATTR_SELINUX, label, true);
                        else
                                log_debug("%s: SECLABEL{selinux}='%s' ignored: SELinux is not "
                                          "enabled", devnode, label);
                } else if (ml == 5 && strncmp(entry, "smack", ml) == 0) {
                        smack_given = true;
                        if (mac->smack)
                                set_label(proc, devnode, "SMACK", XATTR_SMACK, label, false);
                        else
                                log_debug("%s: SECLABEL{smack}='%s' ignored: SMACK is not "
                                          "enabled", devnode, label);
                } else
                        log_error("%s: SECLABEL: unknown subsystem, ignoring '%.*s'='%s'",
                                  devnode, (int)ml, entry, label);
        }
        if (mac->smack && !smack_given)
                set_label(proc, devnode, "SMACK", XATTR_SMACK, NULL, false);
}

int node_apply_permissions(const struct device_roots *roots, const struct node_device *d,
                           const struct node_perms *p, bool apply_always)
{
        _cleanup_close_ int fd = -1;
        char path[PATH_MAX], proc[64];
        struct perm_changes c;
        struct stat st;
        int r;

        if (!d->devnode || d->major == 0)
                return 0;
        r = dev_path(roots, d->devnode, path, sizeof(path));
        if (r < 0)
                return r;
        if (!apply_always) {
                r = touch_unchanged(path, d, p);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        r = open_node(path, d, &fd, &st);
        if (r <= 0)
                return r;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);

        c = perm_changes(p, &st);
        uid_t uid = p->uid_set ? p->uid : st.st_uid;
        gid_t gid = p->gid_set ? p->gid : st.st_gid;
        mode_t show = c.mode_set ? c.mode & 07777 : st.st_mode & 07777;

        if (c.apply_mode || c.apply_uid || c.apply_gid) {
                log_debug("Setting permissions %s, uid=%u, gid=%u, mode=%#o", d->devnode,
                          (unsigned)uid, (unsigned)gid, (unsigned)show);
                r = 0;
                if ((c.apply_uid || c.apply_gid) &&
                    fchownat(fd, "", c.apply_uid ? uid : (uid_t)-1,
                             c.apply_gid ? gid : (gid_t)-1, AT_EMPTY_PATH) < 0)
                        r = -errno;
                /* chmod after chown: chown may clear set-id bits */
                if (r >= 0 && c.mode_set && chmod(proc, c.mode & 07777) < 0)
                        r = -errno;
                if (r < 0)
                        log_full_errno(r == -ENOENT ? LOG_DEBUG : LOG_ERR, r,
                                       "Failed to set owner/mode of %s to uid=%u, gid=%u, "
                                       "mode=%#o: %m", d->devnode, (unsigned)uid, (unsigned)gid,
                                       (unsigned)show);
        } else if (apply_always) {
                log_debug("Preserve permissions of %s, uid=%u, gid=%u, mode=%#o", d->devnode,
                          (unsigned)uid, (unsigned)gid, (unsigned)show);
        }
        if (c.apply_mode || c.apply_uid || c.apply_gid || apply_always)
                apply_labels(proc, d->devnode, p->seclabels, p->mac);

        /* always update the timestamps, like on media change events */
        if (utimensat(AT_FDCWD, proc, NULL, 0) < 0)
                log_debug_errno(errno, "Failed to adjust timestamp of node %s: %m", d->devnode);
        return 0;
}

/* ---- devtmpfs stand-in for udevadm test --apply ---- */

int node_create_devnode(const struct device_roots *roots, const struct node_device *d,
                        mode_t mode, uid_t uid, gid_t gid)
{
        char path[PATH_MAX];
        struct stat st;
        int r;

        if (!d->devnode || d->major == 0)
                return -EINVAL;
        r = dev_path(roots, d->devnode, path, sizeof(path));
        if (r < 0)
                return r;
        if (lstat(path, &st) >= 0)
                return 1;
        r = mkdir_parents_under(path, roots->dev, 0755);
        if (r < 0)
                return r;
        if (mknod(path, (node_is_block(d) ? S_IFBLK : S_IFCHR) | (mode & 07777),
                  makedev(d->major, d->minor)) < 0)
                return -errno;
        if (chown(path, uid, gid) < 0 || chmod(path, mode & 07777) < 0)
                return -errno; /* mknod applies the umask; devtmpfs does not */
        return 0;
}

int node_remove_devnode(const struct device_roots *roots, const struct node_device *d)
{
        char path[PATH_MAX];
        struct stat st;
        int r;

        if (!d->devnode || d->major == 0)
                return 0;
        r = dev_path(roots, d->devnode, path, sizeof(path));
        if (r < 0)
                return r;
        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if ((node_is_block(d) ? !S_ISBLK(st.st_mode) : !S_ISCHR(st.st_mode)) ||
            st.st_rdev != makedev(d->major, d->minor))
                return 0;
        if (unlink(path) < 0 && errno != ENOENT)
                return -errno;
        rmdir_parents_under(path, roots->dev);
        return 0;
}

/* ---- static nodes ---- */

static int xescape_name(const char *s, char *out, size_t size)
{
        size_t o = 0;

        for (; *s; s++) {
                unsigned char c = (unsigned char)*s;
                if (c == '/' || c == '.' || c == '\\' || c < ' ' || c >= 127) {
                        if (o + 5 > size)
                                return -ENAMETOOLONG;
                        o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
                } else {
                        if (o + 2 > size)
                                return -ENAMETOOLONG;
                        out[o++] = (char)c;
                }
        }
        out[o] = '\0';
        return 0;
}

int node_apply_static(const struct device_roots *roots, const char *name, const struct node_perms *p,
                      const char *const *tags, size_t n_tags)
{
        char logical[NODE_PATH_MAX], path[PATH_MAX], esc[NAME_MAX + 1], link[PATH_MAX];
        _cleanup_close_ int fd = -1;
        struct stat st;
        mode_t mode = p->mode;
        bool mode_set = p->mode_set;
        int r;

        if (!p->uid_set && !p->gid_set && !p->mode_set && n_tags == 0)
                return 0;
        if (snprintf(logical, sizeof(logical), "/dev/%s", name) >= (int)sizeof(logical) ||
            strstr(name, ".."))
                return -EINVAL;
        r = dev_path(roots, logical, path, sizeof(path));
        if (r < 0)
                return r;
        fd = open(path, O_PATH | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : log_error_errno(errno, "Failed to open %s: %m", logical);
        if (fstat(fd, &st) < 0)
                return log_error_errno(errno, "Failed to stat %s: %m", logical);
        if (!S_ISBLK(st.st_mode) && !S_ISCHR(st.st_mode)) {
                log_warning("%s is neither block nor character device, ignoring.", logical);
                return 0;
        }
        if (n_tags > 0) {
                r = xescape_name(name, esc, sizeof(esc));
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < n_tags; i++) {
                int w = snprintf(link, sizeof(link), "%s/static_node-tags/%s/%s", roots->run,
                                 tags[i], esc);
                if (w < 0 || (size_t)w >= sizeof(link) || strchr(tags[i], '/'))
                        continue;
                r = mkdir_parents(link, 0755);
                if (r < 0)
                        return log_error_errno(r, "Failed to create parent directory for %s: %m",
                                               link);
                if (symlink(logical, link) < 0 && errno != EEXIST)
                        return log_error_errno(errno, "Failed to create symlink %s -> %s: %m", link,
                                               logical);
        }
        if (!mode_set && p->gid_set && p->gid > 0) {
                mode = 0660;
                mode_set = true;
        }
        bool apply_mode = mode_set && (st.st_mode & 0777) != (mode & 0777);
        bool apply_uid = p->uid_set && st.st_uid != p->uid;
        bool apply_gid = p->gid_set && st.st_gid != p->gid;
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        if (apply_uid || apply_gid) {
                if (fchownat(fd, "", apply_uid ? p->uid : (uid_t)-1, apply_gid ? p->gid : (gid_t)-1,
                             AT_EMPTY_PATH) < 0)
                        log_error_errno(errno, "Failed to set owner of %s: %m", logical);
        }
        if (apply_mode && chmod(proc, mode & 07777) < 0)
                log_error_errno(errno, "Failed to set mode of %s: %m", logical);
        if (apply_mode || apply_uid || apply_gid)
                log_debug("Static node %s: uid=%u, gid=%u, mode=%#o", logical,
                          (unsigned)(p->uid_set ? p->uid : st.st_uid),
                          (unsigned)(p->gid_set ? p->gid : st.st_gid),
                          (unsigned)(mode_set ? mode : st.st_mode & 07777));
        (void)utimensat(AT_FDCWD, proc, NULL, 0);
        return 0;
}
