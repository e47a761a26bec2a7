# SPDX-License-Identifier: GPL-2.0-or-later
# tudev top-level Makefile (hand-written, fed by ./configure through config.mk).
#
#   make                    build into $(O) (default: build/)
#   make O=build-asan SANITIZE=address,undefined     a sanitizer build beside it
#   make check              unit + integration tests, then the same under
#                           ASan/UBSan and TSan builds (see tests/README)
#   make install DESTDIR=... prefix=...
#   make distcheck          tarball -> configure -> build -> unit tests -> install
#   make check-musl         the same sources built with musl (build-musl/)

# CONFIG_MK: configure's results; check-musl uses those of a musl configure.
CONFIG_MK ?= config.mk
ifeq ($(wildcard $(CONFIG_MK)),)
$(error $(CONFIG_MK) missing: run ./autogen.sh && ./configure first)
endif
include $(CONFIG_MK)
ifeq ($(origin LIBC_DEFS),undefined)
$(error $(CONFIG_MK) predates configure's C library checks: run ./configure again)
endif
# configure --with-systemd-compat (config.mk from an older configure lacks it)
SYSTEMD_COMPAT ?= 252
# configure --with-rootprefix / --with-udevdir (likewise): rules.d and the
# helpers under udevdir, where udevd also looks the helpers up at run time
rootprefix ?= $(prefix)
udevdir ?= $(rootprefix)/lib/udev

O ?= build
V ?= 0
Q := $(if $(filter 1,$(V)),,@)

WARNFLAGS = -Wall -Wextra $(WERROR) -Wshadow -Wformat=2 -Wmissing-prototypes \
            -Wstrict-prototypes -Wno-unused-parameter -Wvla -Wdate-time
SANFLAGS  = $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all,)
BASEFLAGS = -std=gnu11 -D_GNU_SOURCE $(LIBC_DEFS) -DVERSION='"$(PACKAGE_VERSION)"' -Isrc \
            -DTUDEV_RULES_DIR='"$(udevdir)/rules.d"' -DTUDEV_UDEV_DIR='"$(udevdir)"' \
            -DTUDEV_PROBE_PATH='"$(probedir)/tudev-probe"' \
            -DLIBKMOD_SONAME='"$(LIBKMOD_SONAME)"' \
            $(if $(DEFAULT_NET_NAMING_SCHEME),-DDEFAULT_NET_NAMING_SCHEME='"$(DEFAULT_NET_NAMING_SCHEME)"') \
            -fstack-protector-strong -fno-strict-aliasing -g
ALL_CFLAGS  = $(BASEFLAGS) $(WARNFLAGS) $(SANFLAGS) $(PTHREAD_CFLAGS) \
              $(LIBUDEV_CFLAGS) $(LIBKMOD_CFLAGS) $(CPPFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)
# libblkid is linked into tudev-probe only (see src/probe/), never into udevd.
# libkmod is loaded with dlopen() by the kmod builtin when a rule first runs
# it (src/builtins/kmod.c), so the exec helper, the helper programs and a
# udevd that never loads a module do not map it (nor the libcrypto it pulls
# in). libudev is linked only by the test clients (CLIENT_EXTRA).
LIBS        = $(PTHREAD_LIBS) $(DL_LIBS)

srcs_of = $(sort $(filter-out src/$(1)/test-%.c,$(wildcard src/$(1)/*.c)))
SHARED_SRC = $(call srcs_of,shared)
PROTO_SRC  = $(call srcs_of,proto)
DEVICE_SRC = $(call srcs_of,device)
EVENT_SRC  = $(call srcs_of,event)
EXEC_SRC   = $(call srcs_of,exec)
RULES_SRC  = $(call srcs_of,rules)
BUILTINS_SRC = $(call srcs_of,builtins)
UDEVD_SRC  = $(call srcs_of,udevd)
UDEVADM_SRC= $(call srcs_of,udevadm)
PROBE_SRC  = $(call srcs_of,probe)
# src/helpers/: the programs udev rules run by name from the udev helper
# directory (ata_id, scsi_id, cdrom_id, ...). src/helpers/main-NAME.c is the
# main() of program NAME; every other non-test file there is library code
# (libtudev-helpers.a) that the programs and the unit tests link.
HELPER_MAIN = $(sort $(wildcard src/helpers/main-*.c))
HELPER_SRC  = $(filter-out $(HELPER_MAIN),$(call srcs_of,helpers))
HELPER_NAMES = $(patsubst src/helpers/main-%.c,%,$(HELPER_MAIN))
UNIT_SRC   = $(sort $(wildcard src/*/test-*.c))
CLIENT_SRC = $(sort $(wildcard tests/clients/*.c))

obj = $(patsubst %.c,$(O)/%.o,$(1))
LIBCORE    = $(O)/libtudev-core.a
CORE_OBJ   = $(call obj,$(SHARED_SRC) $(PROTO_SRC) $(DEVICE_SRC) $(EVENT_SRC) $(EXEC_SRC) \
                      $(RULES_SRC) $(BUILTINS_SRC))
# udevd objects except main.c go into a library so unit tests can link them.
UDEVD_LIB  = $(O)/libtudev-udevd.a
UDEVD_LOBJ = $(call obj,$(filter-out src/udevd/main.c,$(UDEVD_SRC)))
HELPERS_LIB = $(O)/libtudev-helpers.a
HELPER_BIN = $(addprefix $(O)/helpers/,$(HELPER_NAMES))
UNIT_BIN   = $(patsubst src/%.c,$(O)/unit/%,$(UNIT_SRC))
CLIENT_BIN = $(patsubst tests/clients/%.c,$(O)/clients/%,$(CLIENT_SRC))

UDEVD   = $(O)/udevd
UDEVADM = $(O)/udevadm
# The prober (libblkid) beside udevd/udevadm: in the build directory they find
# it there, installed in $(probedir).
PROBE   = $(O)/tudev-probe
probedir ?= $(libexecdir)/tudev

all: $(UDEVD) $(UDEVADM) $(PROBE) $(HELPER_BIN) $(UNIT_BIN) $(CLIENT_BIN)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(LIBCORE): $(CORE_OBJ)
	$(Q)rm -f $@ && $(AR) rcs $@ $^
$(UDEVD_LIB): $(UDEVD_LOBJ)
	$(Q)rm -f $@ && $(AR) rcs $@ $^
# an empty archive is valid, so the unit-test rule can always name it
$(HELPERS_LIB): $(call obj,$(HELPER_SRC))
	$(Q)rm -f $@ && $(AR) rcs $@ $^
helpers: $(HELPER_BIN)
$(O)/helpers/%: $(O)/src/helpers/main-%.o $(HELPERS_LIB) $(LIBCORE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(UDEVD): $(O)/src/udevd/main.o $(UDEVD_LIB) $(LIBCORE)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)
$(UDEVADM): $(call obj,$(UDEVADM_SRC)) $(LIBCORE)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)
$(call obj,$(PROBE_SRC)): ALL_CFLAGS += $(BLKID_CFLAGS)
# compat.o: the C library fallbacks tudev-probe's messages may need (musl)
$(PROBE): $(call obj,$(PROBE_SRC)) $(O)/src/shared/compat.o
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(BLKID_LIBS)

$(O)/unit/%: $(O)/src/%.o $(UDEVD_LIB) $(HELPERS_LIB) $(LIBCORE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# Test clients link only the system's libudev: they play the part of libinput & co.
# (bench-kmod, the libkmod benchmark, also libkmod and pthread.)
$(O)/clients/bench-kmod: CLIENT_EXTRA = $(LIBKMOD_CFLAGS) $(PTHREAD_CFLAGS) $(LIBKMOD_LIBS) \
                                        $(PTHREAD_LIBS)
$(O)/clients/%: tests/clients/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(BASEFLAGS) $(WARNFLAGS) $(SANFLAGS) $(LIBUDEV_CFLAGS) $(CFLAGS) \
	    $(ALL_LDFLAGS) -o $@ $< $(LIBUDEV_LIBS) $(CLIENT_EXTRA)

-include $(shell find $(O)/src $(O)/tests $(O)/fuzz -name '*.d' -type f 2>/dev/null)

# ---------------------------------------------------------------- tests
PYTEST ?= /usr/bin/python3 -m pytest
export TUDEV_BUILD = $(abspath $(O))

check-unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "  UNIT    $$t"; $$t; done

check-integration: all
	tests/sandbox $(PYTEST) -q -p no:cacheprovider tests/integration

# The whole suite for one configuration.
check-one: check-unit check-integration

check-asan:
	$(MAKE) O=build-asan SANITIZE=address,undefined check-one
check-tsan:
	$(MAKE) O=build-tsan SANITIZE=thread check-one
# valgrind memcheck: unit tests and udevadm (see tools/check-valgrind).
check-valgrind: all $(UNIT_BIN)
	tools/check-valgrind $(O)

# Build every configuration first (parallel-friendly), then test them in turn.
check-build-all:
	$(MAKE) all
	$(MAKE) O=build-asan SANITIZE=address,undefined all
	$(MAKE) O=build-tsan SANITIZE=thread all

# ---------------------------------------------------------------- fuzzing
# libFuzzer targets (clang): tests/fuzz/fuzz-<name>.c -> $(O)/fuzz/fuzz-<name>,
# seed corpus tests/fuzz/corpus-<name>/, optional dictionary
# tests/fuzz/fuzz-<name>.dict and libFuzzer options FUZZ_OPTS_<name>. The core
# sources are compiled once more with coverage instrumentation, ASan and UBSan
# into $(O)/fuzz/libtudev-fuzz.a. check-fuzz runs every target for FUZZ_TIME
# seconds on a fresh copy of its corpus in $(O)/fuzz/ (the repository stays
# clean; crash/leak/timeout inputs land in $(O)/fuzz/<name>-crash-* etc.).
# Longer runs: FUZZ_TIME=600 make check-fuzz; one target: FUZZ_TARGETS=uevent.
FUZZ_CC   ?= clang
FUZZ_TIME ?= 15
FUZZ_SAN   = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS = -O1 $(FUZZ_SAN) $(BASEFLAGS) $(WARNFLAGS) $(PTHREAD_CFLAGS) $(LIBUDEV_CFLAGS) \
              $(LIBKMOD_CFLAGS) $(BLKID_CFLAGS)
FUZZ_TARGETS ?= $(patsubst tests/fuzz/fuzz-%.c,%,$(sort $(wildcard tests/fuzz/fuzz-*.c)))
FUZZ_BIN   = $(addprefix $(O)/fuzz/fuzz-,$(FUZZ_TARGETS))
FUZZ_LIB   = $(O)/fuzz/libtudev-fuzz.a
# (builtin-util.c: systemd's number parsers, which the rules' MODE/OWNER
# parser uses too; the rest of the builtins stays out of the fuzzers)
FUZZ_OBJ   = $(patsubst %.c,$(O)/fuzz/obj/%.o,$(SHARED_SRC) $(PROTO_SRC) $(DEVICE_SRC) \
                        $(EVENT_SRC) $(RULES_SRC) src/builtins/builtin-util.c)
FUZZ_OPTS_rules      = -max_len=65536
FUZZ_OPTS_uevent     = -max_len=8300
FUZZ_OPTS_monitor-msg = -max_len=65600
FUZZ_OPTS_ctrl-msg   = -max_len=600
FUZZ_OPTS_db         = -max_len=16384
FUZZ_OPTS_format     = -max_len=4096

$(O)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<
$(FUZZ_LIB): $(FUZZ_OBJ)
	$(Q)rm -f $@ && $(AR) rcs $@ $^
$(O)/fuzz/fuzz-%: $(O)/fuzz/obj/tests/fuzz/fuzz-%.o $(FUZZ_LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(LIBS)
# One target: fresh corpus copy, bounded run; the log goes to $(O)/fuzz/<name>.log
# (shown in full when the run fails, else its final "DONE" line).
define fuzz_run
@echo "  FUZZ    $(1) ($(FUZZ_TIME) s)"
@rm -rf $(O)/fuzz/corpus-$(1) && cp -r tests/fuzz/corpus-$(1) $(O)/fuzz/corpus-$(1)
@if $(O)/fuzz/fuzz-$(1) -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 \
    -close_fd_mask=2 -print_final_stats=1 $(FUZZ_OPTS_$(1)) \
    $(if $(wildcard tests/fuzz/fuzz-$(1).dict),-dict=tests/fuzz/fuzz-$(1).dict) \
    -artifact_prefix=$(O)/fuzz/$(1)- $(O)/fuzz/corpus-$(1) >$(O)/fuzz/$(1).log 2>&1; then \
  grep -a 'DONE' $(O)/fuzz/$(1).log | tail -n 1; \
else \
  tail -n 80 $(O)/fuzz/$(1).log; echo "fuzz-$(1) failed, see $(O)/fuzz/$(1).log"; exit 1; \
fi

endef
fuzz-build: $(FUZZ_BIN)
.SECONDARY: $(patsubst %,$(O)/fuzz/obj/tests/fuzz/fuzz-%.o,$(FUZZ_TARGETS))
check-fuzz: $(FUZZ_BIN)
	$(foreach t,$(FUZZ_TARGETS),$(call fuzz_run,$(t)))

# The benchmark's smoke run (issue 8): 20 devices, empty and Debian's rules,
# tudev, systemd-udevd and the floor; fails on a failed trial, a lost event
# or an error in tudev's log. Keeps tools/bench working; no figures kept.
check-bench-smoke: all
	tools/bench --smoke --build $(O)

# ---------------------------------------------------------------- musl
# check-musl: tudev builds with musl (Alpine, Void), and its unit tests that
# need only the C library pass there (docs/portability.md). Nothing is
# installed; needs musl-gcc (Debian: musl-tools, in tools/install-deps).
# ./configure runs once more with CC=$(MUSL_CC) in $(MUSL_O), so that its
# config.mk says what musl lacks (LIBC_DEFS: src/shared/compat.h's fallbacks);
# the sub-make builds with it. musl's include path has neither the kernel's
# headers nor libudev's, libkmod's and libblkid's: $(MUSL_O)/include links to
# this system's (what linux-headers, eudev-dev or systemd-dev, kmod-dev and
# util-linux-dev give a musl distribution), searched after musl's own.
# Every translation unit of src/ and tests/clients/ is compiled with the
# usual warnings and -Werror. The helper programs (src/helpers/) and the unit
# tests, udevd and udevadm are linked against musl (none of them links
# libudev or libkmod: the kmod builtin loads libkmod with dlopen(), which
# here finds only glibc's and so fails, as on a system without libkmod), and
# the unit tests run, all but MUSL_UNIT_SKIP: test-builtin-getopt, whose
# reference is glibc's getopt_long() (musl's differs on bad options; tudev's
# own parser behaves the same on both). tudev-probe needs libblkid, which
# this system has only for glibc.
MUSL_CC ?= musl-gcc
MUSL_O ?= build-musl
MUSL_SYSINCLUDE = linux asm-generic mtd libudev.h libkmod.h blkid
MUSL_UNIT_SKIP = builtins/test-builtin-getopt
MUSL_UNIT = $(filter-out $(addprefix $(O)/unit/,$(MUSL_UNIT_SKIP)),$(UNIT_BIN))
MUSL_OBJ = $(call obj,$(wildcard src/*/*.c) $(CLIENT_SRC))

check-musl:
	@command -v $(MUSL_CC) >/dev/null || \
	  { echo "check-musl: $(MUSL_CC) missing (Debian: apt-get install musl-tools)"; exit 1; }
	$(Q)mkdir -p $(MUSL_O)/include
	$(Q)asm=/usr/include/$$(gcc -print-multiarch 2>/dev/null)/asm; \
	  [ -d "$$asm" ] || asm=/usr/include/asm; ln -sfn "$$asm" $(MUSL_O)/include/asm
	$(Q)for h in $(MUSL_SYSINCLUDE); do ln -sfn /usr/include/$$h $(MUSL_O)/include/$$h; done
	$(Q)if [ ! -f $(MUSL_O)/config.mk ] || [ configure -nt $(MUSL_O)/config.mk ] || \
	     [ config.mk.in -nt $(MUSL_O)/config.mk ]; then \
	  echo "  CONFIGURE $(MUSL_O) (CC=$(MUSL_CC))"; \
	  cd $(MUSL_O) && $(CURDIR)/configure -q CC=$(MUSL_CC) \
	    CPPFLAGS="-idirafter $(abspath $(MUSL_O))/include" >/dev/null; fi
	$(Q)d=$$(sed -n 's/^LIBC_DEFS = *//p' $(MUSL_O)/config.mk); \
	  echo "  LIBC_DEFS (musl): $${d:-none, compat.c's fallbacks throughout}"
	$(MAKE) CONFIG_MK=$(MUSL_O)/config.mk O=$(MUSL_O) SANITIZE= \
	    LIBUDEV_LIBS= LIBKMOD_LIBS= BLKID_LIBS= check-musl-run
check-musl-run: $(MUSL_OBJ) $(HELPER_BIN) $(UDEVD) $(UDEVADM) $(MUSL_UNIT)
	@set -e; for t in $(MUSL_UNIT); do echo "  UNIT    $$t (musl)"; $$t; done

# Every tracked source file carries its SPDX licence line (tools/check-spdx).
check-spdx:
	tools/check-spdx

# No tracked file points at reference notes outside the repository
# (tools/check-docs-refs).
check-docs-refs:
	tools/check-docs-refs

# Every #include in src/ points down the layers (tools/check-layers):
# shared <- proto <- device <- event <- builtins, exec <- rules <- udevd, udevadm.
check-layers:
	tools/check-layers

# Man pages: groff lints each (any warning fails) and every long option of
# udevd's and udevadm's option tables is in its page (tools/check-man-options).
check-man:
	@command -v groff >/dev/null || \
	  { echo "check-man: groff missing (Debian: groff-base, tools/install-deps)"; exit 1; }
	$(Q)set -e; for m in $(sort $(wildcard man/*.[1-8])); do \
	  echo "  MAN     $$m"; \
	  w=$$(LC_ALL=C.UTF-8 groff -ww -z -man -Tutf8 "$$m" 2>&1); \
	  if [ -n "$$w" ]; then echo "$$w"; exit 1; fi; done
	tools/check-man-options

# The boot test (tools/boot-test): a Debian 12 guest under QEMU booted with
# Debian's udev and with tudev as its only udev, compared device by device;
# then once more with tudev installed from its Debian package (make deb,
# apt install: udev removed, the package's maintainer scripts and units).
# Needs root, mmdebstrap, QEMU and Debian's archive (the first run builds
# and caches the root, about 2 minutes). BOOT_TEST_ARGS=--all: every init.
BOOT_TEST_ARGS ?=
check-boot:
	tools/boot-test --build $(O) $(BOOT_TEST_ARGS)
	tools/boot-test --build $(O) --deb --no-faults

check: check-spdx check-docs-refs check-layers check-man check-musl check-one check-boot check-bench-smoke check-asan check-tsan check-valgrind check-fuzz
	@echo "all test configurations passed"

# ---------------------------------------------------------------- install
DESTDIR ?=
MAN8 = $(wildcard man/*.8)
MAN5 = $(wildcard man/*.5)
# udevlibexecdir: where rules find programs named without a '/': udevdir,
# where udevd looks them up (compiled in as TUDEV_UDEV_DIR).
udevlibexecdir ?= $(udevdir)
# udev.pc (pkg-config udev --variable=udevdir): where packages drop rules,
# hwdb files and helpers; its Version is the systemd release tudev follows.
pkgconfigdir ?= $(datarootdir)/pkgconfig
# network/*.link: the default interface naming policy (net_setup_link)
networkdir ?= $(prefix)/lib/systemd/network
LINK_FILES = $(wildcard network/*.link)
# rules.d/*.rules: a line written "#@257 RULE" is a rule of systemd 257's
# behaviour; it stays a comment unless tudev is built for that release or a
# later one (./configure --with-systemd-compat=257, or SYSTEMD_COMPAT=257),
# when install strips the prefix. COMPAT_RELEASES lists the prefixes in use.
COMPAT_RELEASES = 257
rules_compat_sed = $(foreach v,$(COMPAT_RELEASES),$(if $(shell [ $(v) -le $(SYSTEMD_COMPAT) ] && echo y),-e 's/^\#@$(v) //'))
install: $(UDEVD) $(UDEVADM) $(PROBE) $(HELPER_BIN)
	$(MKDIR_P) '$(DESTDIR)$(sbindir)' '$(DESTDIR)$(bindir)' '$(DESTDIR)$(mandir)/man8' \
	    '$(DESTDIR)$(udevdir)/rules.d' '$(DESTDIR)$(probedir)' '$(DESTDIR)$(udevlibexecdir)'
	$(if $(HELPER_BIN),$(INSTALL) -m 0755 $(HELPER_BIN) '$(DESTDIR)$(udevlibexecdir)/')
	$(MKDIR_P) '$(DESTDIR)$(networkdir)'
	$(INSTALL) -m 0644 $(LINK_FILES) '$(DESTDIR)$(networkdir)/'
	$(INSTALL) -m 0755 $(UDEVD) '$(DESTDIR)$(sbindir)/udevd'
	$(INSTALL) -m 0755 $(UDEVADM) '$(DESTDIR)$(bindir)/udevadm'
	$(INSTALL) -m 0755 $(PROBE) '$(DESTDIR)$(probedir)/tudev-probe'
	$(if $(MAN8),$(INSTALL) -m 0644 $(MAN8) '$(DESTDIR)$(mandir)/man8/')
	$(if $(MAN5),$(MKDIR_P) '$(DESTDIR)$(mandir)/man5' && \
	  $(INSTALL) -m 0644 $(MAN5) '$(DESTDIR)$(mandir)/man5/')
	$(MKDIR_P) '$(DESTDIR)$(pkgconfigdir)'
	sed -e '/^#/d' -e 's|@prefix@|$(prefix)|' -e 's|@udevdir@|$(udevdir)|' \
	    -e 's|@compat@|$(SYSTEMD_COMPAT)|g' src/udev.pc.in > '$(DESTDIR)$(pkgconfigdir)/udev.pc'
	chmod 0644 '$(DESTDIR)$(pkgconfigdir)/udev.pc'
	$(Q)for f in $(wildcard rules.d/*.rules); do \
	  sed -e '' $(rules_compat_sed) "$$f" > '$(DESTDIR)$(udevdir)/rules.d/'"$${f##*/}" && \
	  chmod 0644 '$(DESTDIR)$(udevdir)/rules.d/'"$${f##*/}" || exit 1; done

uninstall:
	rm -f '$(DESTDIR)$(sbindir)/udevd' '$(DESTDIR)$(bindir)/udevadm' \
	    '$(DESTDIR)$(probedir)/tudev-probe'
	rm -f $(addprefix '$(DESTDIR)$(udevlibexecdir)/',$(HELPER_NAMES))
	rm -f $(addprefix '$(DESTDIR)$(networkdir)/',$(notdir $(LINK_FILES)))
	rmdir '$(DESTDIR)$(probedir)' 2>/dev/null || true
	rm -f $(addprefix '$(DESTDIR)$(mandir)/man8/',$(notdir $(MAN8)))
	rm -f $(addprefix '$(DESTDIR)$(mandir)/man5/',$(notdir $(MAN5)))
	rm -f $(addprefix '$(DESTDIR)$(udevdir)/rules.d/',$(notdir $(wildcard rules.d/*.rules)))
	rm -f '$(DESTDIR)$(pkgconfigdir)/udev.pc'

# Boot integration (init/) and section 7 pages. Every init system's files go
# to $(initexampledir) for packagers to pick from; the init systems named in
# INIT (any of: systemd sysvinit openrc runit s6 initramfs-tools) also get theirs installed
# where that init system reads them, e.g. make install INIT=openrc. @sbindir@
# and @bindir@ in the files become the install paths.
INIT ?=
initexampledir ?= $(datarootdir)/tudev/init
systemdunitdir ?= $(prefix)/lib/systemd/system
initddir ?= $(sysconfdir)/init.d
confddir ?= $(sysconfdir)/conf.d
runitsvdir ?= $(sysconfdir)/sv
s6svdir ?= $(sysconfdir)/s6/sv
initramfstoolsdir ?= $(datarootdir)/initramfs-tools
MAN7 = $(wildcard man/*.7)
# shell: "init_dirs": pairs of source directory and destination for INIT
init_dirs = set -e; pairs="init $(initexampledir)"; for i in $(INIT); do case $$i in \
	  systemd) pairs="$$pairs init/$$i $(systemdunitdir)";; \
	  sysvinit) pairs="$$pairs init/$$i $(initddir)";; \
	  openrc) pairs="$$pairs init/$$i $(initddir) init/$$i/conf.d $(confddir)";; \
	  runit) pairs="$$pairs init/$$i $(runitsvdir)";; \
	  s6) pairs="$$pairs init/$$i $(s6svdir)";; \
	  initramfs-tools) pairs="$$pairs init/$$i $(initramfstoolsdir)";; \
	  *) echo "INIT: unknown init system '$$i'" >&2; exit 1;; esac; done; set -- $$pairs
install: install-init
uninstall: uninstall-init
install-init:
	$(init_dirs); while [ $$# -gt 0 ]; do \
	  for f in $$(cd "$$1" && find . -path ./conf.d -prune -o -type f -print | sort); do \
	    d="$(DESTDIR)$$2/$${f#./}"; $(MKDIR_P) "$${d%/*}"; \
	    if [ "$$2" = '$(confddir)' ] && [ -e "$$d" ]; then \
	      cmp -s "$$1/$$f" "$$d" || echo "kept existing $$d"; continue; fi; \
	    sed -e 's|@sbindir@|$(sbindir)|g' -e 's|@bindir@|$(bindir)|g' \
	        -e 's|@probedir@|$(probedir)|g' -e 's|@udevlibexecdir@|$(udevlibexecdir)|g' \
	        -e 's|@rulesdir@|$(udevdir)/rules.d|g' \
	        -e 's|@libkmod_soname@|$(LIBKMOD_SONAME)|g' "$$1/$$f" > "$$d"; \
	    if [ -x "$$1/$$f" ]; then chmod 0755 "$$d"; else chmod 0644 "$$d"; fi; \
	  done; shift 2; done
	$(if $(MAN7),$(MKDIR_P) '$(DESTDIR)$(mandir)/man7' && \
	  $(INSTALL) -m 0644 $(MAN7) '$(DESTDIR)$(mandir)/man7/')
uninstall-init:
	$(init_dirs); while [ $$# -gt 0 ]; do \
	  for f in $$(cd "$$1" && find . -path ./conf.d -prune -o -type f -print); do \
	    d="$(DESTDIR)$$2/$${f#./}"; \
	    if [ "$$2" = '$(confddir)' ] && ! cmp -s "$$1/$$f" "$$d"; then continue; fi; \
	    rm -f "$$d"; done; \
	  for f in $$(cd "$$1" && find . -mindepth 1 -type d | sort -r); do \
	    rmdir "$(DESTDIR)$$2/$${f#./}" 2>/dev/null || true; done; \
	  shift 2; done
	rmdir '$(DESTDIR)$(initexampledir)' 2>/dev/null || true
	rm -f $(addprefix '$(DESTDIR)$(mandir)/man7/',$(notdir $(MAN7)))

MKDIR_P ?= mkdir -p

# ---------------------------------------------------------------- dist
DISTNAME = tudev-$(PACKAGE_VERSION)
dist:
	rm -rf $(DISTNAME) $(DISTNAME).tar.gz
	mkdir $(DISTNAME)
	git ls-files -z | xargs -0 cp --parents -t $(DISTNAME)
	cd $(DISTNAME) && autoreconf -fi >/dev/null 2>&1 && rm -rf autom4te.cache
	tar czf $(DISTNAME).tar.gz $(DISTNAME)
	rm -rf $(DISTNAME)
	@echo "wrote $(DISTNAME).tar.gz"

distcheck: dist
	rm -rf $(DISTNAME) && tar xzf $(DISTNAME).tar.gz
	cd $(DISTNAME) && ./configure --prefix=/usr >/dev/null && $(MAKE) && $(MAKE) check-unit \
	  && $(MAKE) install DESTDIR=$$PWD/_inst \
	  && test -x _inst/usr/sbin/udevd && test -x _inst/usr/bin/udevadm \
	  && test -x _inst/usr/libexec/tudev/tudev-probe \
	  && $(MAKE) uninstall DESTDIR=$$PWD/_inst \
	  && test -z "$$(find _inst -type f)"
	cd $(DISTNAME) && $(MAKE) CC=clang O=build-clang all
	rm -rf $(DISTNAME)
	@echo "$(DISTNAME).tar.gz is ready for distribution"

# ---------------------------------------------------------------- deb
# make deb: the Debian binary package "tudev" (Provides, Conflicts with and
# Replaces udev) built with dpkg-deb alone, no network: programs built for
# prefix=/usr in $(O)/deb-build, the package tree in $(O)/deb-root, the
# package itself $(O)/tudev_VERSION_ARCH.deb (tools/make-deb,
# docs/packaging.md).
deb:
	+MAKE='$(MAKE)' SYSTEMD_COMPAT='$(SYSTEMD_COMPAT)' tools/make-deb '$(O)'
.PHONY: deb

clean:
	rm -rf $(O) build-asan build-tsan build-clang build-musl

.PHONY: all helpers check check-boot check-spdx check-docs-refs check-layers check-musl check-musl-run check-unit check-integration check-one check-asan check-tsan check-valgrind \
        check-bench-smoke \
        install uninstall dist distcheck clean check-build-all install-init uninstall-init check-fuzz \
        fuzz-build
.SUFFIXES:
.DELETE_ON_ERROR:
