/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (one libkmod context per thread, _Thread_local; reload baseline under a mutex) */
/* The kmod builtin, as systemd 252's
 * udev-builtin-kmod.c and module_load_and_warn():
 *
 *   kmod load [MODULE|ALIAS...]
 *
 * Without names the event's MODALIAS is used. Each name is resolved through
 * the module index (aliases, modalias globs, built-in modules); modules that
 * are built in or already live are skipped, the others are inserted with
 * their dependencies by kmod.module_probe_insert_module() with
 * KMOD_PROBE_APPLY_BLACKLIST, so modprobe.d "blacklist" lines (and
 * install/remove commands) are honoured as by modprobe. Failures are logged
 * at debug level and never fail the builtin (only a malformed command line
 * or a missing MODALIAS does).
 *
 * libkmod contexts are not thread-safe: each thread creates its own on first
 * use, kmod.new(NULL, NULL) + kmod.load_resources(), and recreates it after
 * builtins_reload(), or by itself when kmod.validate_resources() on it (at
 * most every KMOD_VALIDATE_USEC) says the index or configuration changed.
 * builtins_should_reload() asks a baseline context (kept under a mutex).
 *
 * libkmod itself is loaded with dlopen(LIBKMOD_SONAME) the first time a
 * thread needs a context, not linked: a udevd that never runs this builtin,
 * the exec helper (udevd's binary re-executed) and the helper programs do
 * not map libkmod and the libraries it pulls in (libcrypto, about 0.7 MiB of
 * relocated, private pages per process). If the library cannot be loaded,
 * one warning says so and the builtin does nothing, as when the module
 * index is missing. Until it has been loaded, builtin_kmod_should_reload()
 * answers false without loading it: there is no index in use to go stale.
 *
 * Testing: $TUDEV_TEST_KMOD_DIR (a module directory, as kmod.new()'s dirname:
 * the directory holding modules.dep.bin etc.) and $TUDEV_TEST_KMOD_CONFIG (a
 * directory or file replacing the default modprobe.d search path) are read
 * when a context is created. They are meant for the test suite only. */
#include <dlfcn.h>
#include <errno.h>
#include <libkmod.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtins/builtins-internal.h"
#include "device/device.h"
#include "event/udev-event.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"

#define KMOD_TEST_DIR_ENV "TUDEV_TEST_KMOD_DIR"
#define KMOD_TEST_CONFIG_ENV "TUDEV_TEST_KMOD_CONFIG"
#define KMOD_VALIDATE_USEC (3 * USEC_PER_SEC) /* as often as systemd's manager checks */
#ifndef LIBKMOD_SONAME
#define LIBKMOD_SONAME "libkmod.so.2"
#endif

/* The libkmod functions used here, resolved once by load_libkmod(). */
#define KMOD_FN(name) __typeof__(kmod_##name) *name
static struct {
        KMOD_FN(new);
        KMOD_FN(unref);
        KMOD_FN(set_log_fn);
        KMOD_FN(load_resources);
        KMOD_FN(validate_resources);
        KMOD_FN(list_next);
        KMOD_FN(module_new_from_lookup);
        KMOD_FN(module_get_module);
        KMOD_FN(module_get_name);
        KMOD_FN(module_get_initstate);
        KMOD_FN(module_probe_insert_module);
        KMOD_FN(module_unref);
        KMOD_FN(module_unref_list);
} kmod;
#undef KMOD_FN
static pthread_once_t kmod_once = PTHREAD_ONCE_INIT;
static atomic_bool kmod_loaded; /* set once, after every pointer above */

static void load_libkmod_once(void)
{
        void *h = dlopen(LIBKMOD_SONAME, RTLD_NOW | RTLD_LOCAL);
        bool ok = true;

        if (!h) {
                log_warning("Failed to load %s, kernel modules will not be loaded: %s",
                            LIBKMOD_SONAME, dlerror());
                return;
        }
#define KMOD_SYM(name)                                                              \
        do {                                                                        \
                *(void **)&kmod.name = dlsym(h, "kmod_" #name);                     \
                if (!kmod.name) {                                                   \
                        log_warning("%s: no symbol kmod_%s", LIBKMOD_SONAME, #name); \
                        ok = false;                                                 \
                }                                                                   \
        } while (0)
        KMOD_SYM(new);
        KMOD_SYM(unref);
        KMOD_SYM(set_log_fn);
        KMOD_SYM(load_resources);
        KMOD_SYM(validate_resources);
        KMOD_SYM(list_next);
        KMOD_SYM(module_new_from_lookup);
        KMOD_SYM(module_get_module);
        KMOD_SYM(module_get_name);
        KMOD_SYM(module_get_initstate);
        KMOD_SYM(module_probe_insert_module);
        KMOD_SYM(module_unref);
        KMOD_SYM(module_unref_list);
#undef KMOD_SYM
        if (!ok) {
                dlclose(h);
                return;
        }
        /* The handle stays open for the life of the process. */
        atomic_store(&kmod_loaded, true);
}

/* Load libkmod on first call; true once every function is resolved. */
static bool load_libkmod(void)
{
        pthread_once(&kmod_once, load_libkmod_once);
        return atomic_load(&kmod_loaded);
}

static pthread_mutex_t base_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kmod_ctx *base_ctx; /* baseline for should_reload; under base_lock */
static atomic_uint generation = 1;

static _Thread_local struct {
        struct kmod_ctx *ctx;
        unsigned generation;     /* 0 = none created yet in this thread */
        uint64_t validated_usec; /* last kmod.validate_resources() */
} tls;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static void kmod_log(void *data, int priority, const char *file, int line, const char *fn,
                     const char *format, va_list args)
{
        char buf[LOG_LINE_MAX];
        size_t n;

        (void)data, (void)fn;
        if (priority > log_get_max_level())
                return;
        vsnprintf(buf, sizeof(buf), format, args);
        n = strlen(buf);
        while (n > 0 && buf[n - 1] == '\n')
                buf[--n] = '\0';
        log_internal(priority, 0, file, line, "%s", buf);
}
#pragma GCC diagnostic pop

/* A new context with its index loaded; NULL on ENOMEM (logged). */
static struct kmod_ctx *context_new(void)
{
        const char *dir = getenv(KMOD_TEST_DIR_ENV);
        const char *config = getenv(KMOD_TEST_CONFIG_ENV);
        const char *const config_paths[] = { config, NULL };
        struct kmod_ctx *ctx;
        int r;

        ctx = kmod.new(dir && *dir ? dir : NULL, config && *config ? config_paths : NULL);
        if (!ctx) {
                log_debug("Failed to create kmod context.");
                return NULL;
        }
        log_debug("Loading kernel module index.");
        kmod.set_log_fn(ctx, kmod_log, NULL);
        r = kmod.load_resources(ctx);
        if (r < 0)
                log_debug_errno(r, "Failed to load kernel module index, ignoring: %m");
        return ctx;
}

/* True if this thread's context is current: same generation, and the index
 * it loaded has not changed (checked at most every KMOD_VALIDATE_USEC). */
static bool thread_ctx_valid(unsigned gen)
{
        uint64_t now;

        if (tls.generation != gen || !tls.ctx)
                return false;
        now = now_usec(CLOCK_MONOTONIC);
        if (now < tls.validated_usec + KMOD_VALIDATE_USEC)
                return true;
        tls.validated_usec = now;
        if (kmod.validate_resources(tls.ctx) == KMOD_RESOURCES_OK)
                return true;
        log_debug("Kernel module index needs reloading.");
        return false;
}

static struct kmod_ctx *thread_ctx(void)
{
        unsigned gen = atomic_load(&generation);

        if (thread_ctx_valid(gen))
                return tls.ctx;
        if (!load_libkmod())
                return NULL;
        if (tls.ctx) {
                log_debug("Unload kernel module index.");
                tls.ctx = kmod.unref(tls.ctx);
        }
        tls.ctx = context_new();
        tls.generation = gen;
        tls.validated_usec = now_usec(CLOCK_MONOTONIC);
        return tls.ctx;
}

void builtin_kmod_thread_exit(void)
{
        if (tls.ctx) {
                log_debug("Unload kernel module index.");
                tls.ctx = kmod.unref(tls.ctx);
        }
        tls.generation = 0;
}

bool builtin_kmod_should_reload(void)
{
        bool reload = false;

        if (!atomic_load(&kmod_loaded))
                return false; /* no index in use yet: nothing to go stale */
        pthread_mutex_lock(&base_lock);
        if (!base_ctx)
                base_ctx = context_new();
        else if (kmod.validate_resources(base_ctx) != KMOD_RESOURCES_OK)
                reload = true;
        pthread_mutex_unlock(&base_lock);
        if (reload)
                log_debug("Kernel module index needs reloading.");
        return reload;
}

void builtin_kmod_reload(void)
{
        if (atomic_load(&kmod_loaded)) {
                pthread_mutex_lock(&base_lock);
                kmod.unref(base_ctx);
                base_ctx = context_new();
                pthread_mutex_unlock(&base_lock);
        }
        atomic_fetch_add(&generation, 1);
}

static void insert_one(struct kmod_module *mod)
{
        const char *name = kmod.module_get_name(mod);
        int r;

        switch (kmod.module_get_initstate(mod)) {
        case KMOD_MODULE_BUILTIN:
                log_debug("Module '%s' is built in", name);
                return;
        case KMOD_MODULE_LIVE:
                log_debug("Module '%s' is already loaded", name);
                return;
        default:
                break;
        }
        r = kmod.module_probe_insert_module(mod, KMOD_PROBE_APPLY_BLACKLIST, NULL, NULL, NULL,
                                            NULL);
        if (r == 0)
                log_debug("Inserted module '%s'", name);
        else if (r == KMOD_PROBE_APPLY_BLACKLIST)
                log_debug("Module '%s' is deny-listed", name);
        else
                log_debug_errno(r < 0 ? r : -EINVAL, "Failed to insert module '%s': %m", name);
}

/* module_load_and_warn(ctx, name, verbose=false): never fails the caller. */
static void load_module(struct kmod_ctx *ctx, const char *name)
{
        struct kmod_list *list = NULL, *itr;
        int r;

        log_debug("Loading module: %s", name);
        r = kmod.module_new_from_lookup(ctx, name, &list);
        if (r < 0) {
                log_debug_errno(r, "Failed to look up module alias '%s': %m", name);
                return;
        }
        if (!list) {
                log_debug("Failed to find module '%s'", name);
                return;
        }
        for (itr = list; itr; itr = kmod.list_next(list, itr)) {
                struct kmod_module *mod = kmod.module_get_module(itr);

                insert_one(mod);
                kmod.module_unref(mod);
        }
        kmod.module_unref_list(list);
}

int builtin_kmod(struct udev_event *ev, int argc, char *argv[], bool test)
{
        const char *sysname = device_sysname(ev->dev);
        struct kmod_ctx *ctx;

        (void)test;
        ctx = thread_ctx();
        if (!ctx)
                return 0;
        if (argc < 2 || !streq(argv[1], "load"))
                return log_error_errno(-EINVAL, "%s: %s: expected: load [module…]", sysname,
                                       argv[0]);
        if (argc == 2) {
                const char *modalias = proplist_get(&ev->props, "MODALIAS");

                if (!modalias)
                        return log_warning_errno(-ENOENT,
                                                 "%s: Failed to read property \"MODALIAS\".",
                                                 sysname);
                load_module(ctx, modalias);
                return 0;
        }
        for (int i = 2; i < argc; i++)
                load_module(ctx, argv[i]);
        return 0;
}
