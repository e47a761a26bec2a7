/* SPDX-License-Identifier: GPL-2.0-or-later */
/* threads: any (each value is computed once under pthread_once, then read-only) */
/* CONST{arch} and CONST{virt} match keys: the names systemd uses for
 * ConditionArchitecture= and systemd-detect-virt.
 *
 * Virtualization is detected cheaply, once per process, from files only
 * (plus CPUID on x86), in systemd's order:
 *   containers: /proc/vz (openvz), WSL in /proc/sys/kernel/osrelease,
 *     /run/host/container-manager, /run/systemd/container, $container of PID 1
 *     (/proc/1/environ, needs privileges), /run/.containerenv (podman),
 *     /.dockerenv (docker), otherwise a PID namespace ("container-other");
 *   VMs: DMI vendor strings in /sys/class/dmi/id (oracle/xen/amazon/parallels
 *     win first), the CPUID hypervisor vendor, the other DMI vendors,
 *     /sys/hypervisor/type, and finally the "hypervisor" CPU flag in
 *     /proc/cpuinfo ("vm-other"); else "none".
 * Not detected (rare, need more probing): UML, device-tree hypervisors, z/VM,
 * proot. */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__i386__) || defined(__x86_64__)
#include <cpuid.h>
#endif

#include "rules/rules-exec.h"
#include "shared/macro.h"

#define CONST_LINE_MAX 256

static char arch_name[sizeof(((struct utsname *)0)->machine) + 8];
static char virt_name[64];
static pthread_once_t arch_once = PTHREAD_ONCE_INIT;
static pthread_once_t virt_once = PTHREAD_ONCE_INIT;

static const struct {
        const char *machine;
        const char *arch;
} arch_map[] = {
        { "x86_64", "x86-64" },   { "i686", "x86" },        { "i586", "x86" },
        { "i486", "x86" },        { "i386", "x86" },        { "aarch64", "arm64" },
        { "aarch64_be", "arm64-be" }, { "ppc64le", "ppc64-le" }, { "ppc64", "ppc64" },
        { "ppcle", "ppc-le" },    { "ppc", "ppc" },         { "riscv64", "riscv64" },
        { "riscv32", "riscv32" }, { "s390x", "s390x" },     { "s390", "s390" },
        { "mips64", "mips64" },   { "mips", "mips" },       { "loongarch64", "loongarch64" },
        { "sparc64", "sparc64" }, { "sparc", "sparc" },     { "alpha", "alpha" },
        { "ia64", "ia64" },       { "m68k", "m68k" },       { "parisc64", "parisc64" },
        { "parisc", "parisc" },   { "sh4", "sh" },          { "sh4a", "sh" },
};

static void arch_init(void)
{
        struct utsname u;

        if (uname(&u) < 0) {
                snprintf(arch_name, sizeof(arch_name), "unknown");
                return;
        }
        for (size_t i = 0; i < ARRAY_SIZE(arch_map); i++)
                if (streq(arch_map[i].machine, u.machine)) {
                        snprintf(arch_name, sizeof(arch_name), "%s", arch_map[i].arch);
                        return;
                }
        /* 32-bit ARM: armv*l little endian, armv*b big endian */
        if (strncmp(u.machine, "arm", 3) == 0) {
                size_t n = strlen(u.machine);
                snprintf(arch_name, sizeof(arch_name), "%s",
                         n > 0 && u.machine[n - 1] == 'b' ? "arm-be" : "arm");
                return;
        }
        snprintf(arch_name, sizeof(arch_name), "%s", u.machine);
}

const char *rules_const_arch(void)
{
        pthread_once(&arch_once, arch_init);
        return arch_name;
}

/* First line of a file without the newline; false if unreadable/empty. */
static bool read_line(const char *path, char *buf, size_t size)
{
        FILE *f = fopen(path, "re");
        bool ok;

        if (!f)
                return false;
        ok = fgets(buf, (int)size, f) != NULL;
        fclose(f);
        if (!ok)
                return false;
        buf[strcspn(buf, "\n")] = '\0';
        return buf[0] != '\0';
}

static const char *container_from_name(const char *name)
{
        static const char *const known[] = { "lxc", "lxc-libvirt", "systemd-nspawn", "docker",
                                             "podman", "rkt", "wsl", "proot", "pouch" };

        for (size_t i = 0; i < ARRAY_SIZE(known); i++)
                if (streq(known[i], name))
                        return known[i];
        return "container-other";
}

/* $container of PID 1 from /proc/1/environ (needs privileges). */
static bool pid1_container_env(char *buf, size_t size)
{
        char env[8192];
        FILE *f = fopen("/proc/1/environ", "re");
        size_t n;

        if (!f)
                return false;
        n = fread(env, 1, sizeof(env) - 1, f);
        fclose(f);
        env[n] = '\0';
        for (size_t i = 0; i < n; i += strlen(env + i) + 1)
                if (strncmp(env + i, "container=", 10) == 0 && env[i + 10]) {
                        snprintf(buf, size, "%s", env + i + 10);
                        return true;
                }
        return false;
}

/* PID 1 of our namespace is not the host's PID 1: /proc/1/sched shows the
 * host's PID in its first line "comm (PID, #threads: N)". */
static bool in_pid_namespace(void)
{
        char line[CONST_LINE_MAX];
        const char *p;

        if (!read_line("/proc/1/sched", line, sizeof(line)))
                return false;
        p = strrchr(line, '(');
        if (!p)
                return false;
        return strtoul(p + 1, NULL, 10) != 1;
}

static const char *detect_container(void)
{
        char buf[CONST_LINE_MAX];

        if (access("/proc/vz", F_OK) == 0 && access("/proc/bc", F_OK) < 0)
                return "openvz";
        if (read_line("/proc/sys/kernel/osrelease", buf, sizeof(buf)) &&
            (strstr(buf, "Microsoft") || strstr(buf, "WSL")))
                return "wsl";
        if (read_line("/run/host/container-manager", buf, sizeof(buf)) ||
            read_line("/run/systemd/container", buf, sizeof(buf)) ||
            pid1_container_env(buf, sizeof(buf)))
                return container_from_name(buf);
        if (access("/run/.containerenv", F_OK) == 0)
                return "podman";
        if (access("/.dockerenv", F_OK) == 0)
                return "docker";
        if (in_pid_namespace())
                return "container-other";
        return NULL;
}

static const char *vm_from_dmi(void)
{
        static const char *const files[] = {
                "/sys/class/dmi/id/product_name", "/sys/class/dmi/id/sys_vendor",
                "/sys/class/dmi/id/board_vendor", "/sys/class/dmi/id/bios_vendor",
                "/sys/class/dmi/id/product_version",
        };
        static const struct {
                const char *prefix;
                const char *vm;
        } vendors[] = {
                { "KVM", "kvm" },           { "OpenStack", "kvm" },   { "KubeVirt", "kvm" },
                { "Amazon EC2", "amazon" }, { "QEMU", "qemu" },       { "VMware", "vmware" },
                { "VMW", "vmware" },        { "innotek GmbH", "oracle" }, { "VirtualBox", "oracle" },
                { "Xen", "xen" },           { "Bochs", "bochs" },     { "Parallels", "parallels" },
                { "BHYVE", "bhyve" },       { "Hyper-V", "microsoft" },
                { "Apple Virtualization", "apple" },
        };
        char buf[CONST_LINE_MAX];

        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                if (!read_line(files[i], buf, sizeof(buf)))
                        continue;
                for (size_t j = 0; j < ARRAY_SIZE(vendors); j++)
                        if (strncmp(buf, vendors[j].prefix, strlen(vendors[j].prefix)) == 0)
                                return vendors[j].vm;
        }
        return NULL;
}

static const char *vm_from_cpuid(void)
{
#if defined(__i386__) || defined(__x86_64__)
        static const struct {
                const char *sig;
                const char *vm;
        } sigs[] = {
                { "XenVMMXenVMM", "xen" },   { "KVMKVMKVM", "kvm" },    { "Linux KVM Hv", "kvm" },
                { "TCGTCGTCGTCG", "qemu" },  { "VMwareVMware", "vmware" },
                { "Microsoft Hv", "microsoft" }, { "bhyve bhyve ", "bhyve" },
                { "QNXQVMBSQG", "qnx" },     { "ACRNACRNACRN", "acrn" },
                { "SRESRESRESRE", "sre" },   { "Apple VZ", "apple" },
        };
        unsigned eax, ebx, ecx, edx;
        char sig[13];

        if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & 0x80000000U))
                return NULL;
        __cpuid(0x40000000U, eax, ebx, ecx, edx);
        memcpy(sig, &ebx, 4);
        memcpy(sig + 4, &ecx, 4);
        memcpy(sig + 8, &edx, 4);
        sig[12] = '\0';
        for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
                if (streq(sig, sigs[i].sig))
                        return sigs[i].vm;
        return "vm-other";
#else
        return NULL;
#endif
}

static bool cpuinfo_has_hypervisor_flag(void)
{
        char line[4096];
        FILE *f = fopen("/proc/cpuinfo", "re");
        bool found = false;

        if (!f)
                return false;
        while (!found && fgets(line, sizeof(line), f))
                if (strncmp(line, "flags", 5) == 0 && strstr(line, " hypervisor"))
                        found = true;
        fclose(f);
        return found;
}

static void virt_init(void)
{
        const char *v = detect_container(), *dmi;
        char buf[CONST_LINE_MAX];

        if (v)
                goto done;
        dmi = vm_from_dmi();
        if (dmi && (streq(dmi, "oracle") || streq(dmi, "xen") || streq(dmi, "amazon") ||
                    streq(dmi, "parallels"))) {
                v = dmi;
                goto done;
        }
        v = vm_from_cpuid();
        if (v && !streq(v, "vm-other"))
                goto done;
        if (dmi) {
                v = dmi;
                goto done;
        }
        if (read_line("/sys/hypervisor/type", buf, sizeof(buf)) && streq(buf, "xen")) {
                v = "xen";
                goto done;
        }
        if (!v && cpuinfo_has_hypervisor_flag())
                v = "vm-other";
        if (!v)
                v = "none";
done:
        snprintf(virt_name, sizeof(virt_name), "%s", v);
}

const char *rules_const_virt(void)
{
        pthread_once(&virt_once, virt_init);
        return virt_name;
}
