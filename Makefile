# tudev top-level Makefile (hand-written, fed by ./configure through config.mk).
#
#   make                    build into $(O) (default: build/)
#   make O=build-asan SANITIZE=address,undefined     a sanitizer build beside it
#   make check              unit + integration tests, then the same under
#                           ASan/UBSan and TSan builds (see tests/README)
#   make install DESTDIR=... prefix=...
#   make distcheck          tarball -> configure -> build -> unit tests -> install

ifeq ($(wildcard config.mk),)
$(error config.mk missing: run ./autogen.sh && ./configure first)
endif
include config.mk

O ?= build
V ?= 0
Q := $(if $(filter 1,$(V)),,@)

WARNFLAGS = -Wall -Wextra $(WERROR) -Wshadow -Wformat=2 -Wmissing-prototypes \
            -Wstrict-prototypes -Wno-unused-parameter -Wvla -Wdate-time
SANFLAGS  = $(if $(SANITIZE),-fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all,)
BASEFLAGS = -std=gnu11 -D_GNU_SOURCE -DVERSION='"$(PACKAGE_VERSION)"' -Isrc \
            -DTUDEV_RULES_DIR='"$(prefix)/lib/udev/rules.d"' \
            -fstack-protector-strong -fno-strict-aliasing -g
ALL_CFLAGS  = $(BASEFLAGS) $(WARNFLAGS) $(SANFLAGS) $(PTHREAD_CFLAGS) \
              $(LIBUDEV_CFLAGS) $(LIBKMOD_CFLAGS) $(CPPFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)
LIBS        = $(LIBUDEV_LIBS) $(LIBKMOD_LIBS) $(BLKID_LIBS) $(PTHREAD_LIBS)

srcs_of = $(sort $(filter-out src/$(1)/test-%.c,$(wildcard src/$(1)/*.c)))
SHARED_SRC = $(call srcs_of,shared)
PROTO_SRC  = $(call srcs_of,proto)
DEVICE_SRC = $(call srcs_of,device)
EXEC_SRC   = $(call srcs_of,exec)
RULES_SRC  = $(call srcs_of,rules)
BUILTINS_SRC = $(call srcs_of,builtins)
UDEVD_SRC  = $(call srcs_of,udevd)
UDEVADM_SRC= $(call srcs_of,udevadm)
UNIT_SRC   = $(sort $(wildcard src/*/test-*.c))
CLIENT_SRC = $(sort $(wildcard tests/clients/*.c))

obj = $(patsubst %.c,$(O)/%.o,$(1))
LIBCORE    = $(O)/libtudev-core.a
CORE_OBJ   = $(call obj,$(SHARED_SRC) $(PROTO_SRC) $(DEVICE_SRC) $(EXEC_SRC) $(RULES_SRC) \
                      $(BUILTINS_SRC))
# udevd objects except main.c go into a library so unit tests can link them.
UDEVD_LIB  = $(O)/libtudev-udevd.a
UDEVD_LOBJ = $(call obj,$(filter-out src/udevd/main.c,$(UDEVD_SRC)))
UNIT_BIN   = $(patsubst src/%.c,$(O)/unit/%,$(UNIT_SRC))
CLIENT_BIN = $(patsubst tests/clients/%.c,$(O)/clients/%,$(CLIENT_SRC))

UDEVD   = $(O)/udevd
UDEVADM = $(O)/udevadm

all: $(UDEVD) $(UDEVADM) $(UNIT_BIN) $(CLIENT_BIN)

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

$(LIBCORE): $(CORE_OBJ)
	$(Q)rm -f $@ && $(AR) rcs $@ $^
$(UDEVD_LIB): $(UDEVD_LOBJ)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(UDEVD): $(O)/src/udevd/main.o $(UDEVD_LIB) $(LIBCORE)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)
$(UDEVADM): $(call obj,$(UDEVADM_SRC)) $(LIBCORE)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(O)/unit/%: $(O)/src/%.o $(UDEVD_LIB) $(LIBCORE)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# Test clients link only the system's libudev: they play the part of libinput & co.
$(O)/clients/%: tests/clients/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(BASEFLAGS) $(WARNFLAGS) $(SANFLAGS) $(LIBUDEV_CFLAGS) $(CFLAGS) \
	    $(ALL_LDFLAGS) -o $@ $< $(LIBUDEV_LIBS)

-include $(shell find $(O) -name '*.d' 2>/dev/null)

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

# Build every configuration first (parallel-friendly), then test them in turn.
check-build-all:
	$(MAKE) all
	$(MAKE) O=build-asan SANITIZE=address,undefined all
	$(MAKE) O=build-tsan SANITIZE=thread all

# Short bounded libFuzzer runs (clang); longer runs: FUZZ_TIME=600 make check-fuzz.
FUZZ_TIME ?= 20
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
              -std=gnu11 -D_GNU_SOURCE -Isrc
FUZZ_RULES_SRC = tests/fuzz/fuzz-rules.c src/rules/rules-load.c src/rules/rules-parse.c \
                 src/rules/rules-compile.c src/rules/rules-arena.c src/shared/log.c \
                 src/shared/hashmap.c src/shared/time-util.c
$(O)/fuzz/fuzz-rules: $(FUZZ_RULES_SRC)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -o $@ $(FUZZ_RULES_SRC)
check-fuzz: $(O)/fuzz/fuzz-rules
	rm -rf $(O)/fuzz/corpus-rules && mkdir -p $(O)/fuzz/corpus-rules
	$(O)/fuzz/fuzz-rules -max_total_time=$(FUZZ_TIME) -max_len=65536 -timeout=10 \
	    -print_final_stats=1 -artifact_prefix=$(O)/fuzz/ $(O)/fuzz/corpus-rules tests/fuzz/corpus-rules

check: check-one check-asan check-tsan check-fuzz
	@echo "all test configurations passed"

# ---------------------------------------------------------------- install
DESTDIR ?=
MAN8 = $(wildcard man/*.8)
install: $(UDEVD) $(UDEVADM)
	$(MKDIR_P) '$(DESTDIR)$(sbindir)' '$(DESTDIR)$(bindir)' '$(DESTDIR)$(mandir)/man8' \
	    '$(DESTDIR)$(prefix)/lib/udev/rules.d'
	$(INSTALL) -m 0755 $(UDEVD) '$(DESTDIR)$(sbindir)/udevd'
	$(INSTALL) -m 0755 $(UDEVADM) '$(DESTDIR)$(bindir)/udevadm'
	$(if $(MAN8),$(INSTALL) -m 0644 $(MAN8) '$(DESTDIR)$(mandir)/man8/')
	$(if $(wildcard rules.d/*.rules),$(INSTALL) -m 0644 $(wildcard rules.d/*.rules) '$(DESTDIR)$(prefix)/lib/udev/rules.d/')

uninstall:
	rm -f '$(DESTDIR)$(sbindir)/udevd' '$(DESTDIR)$(bindir)/udevadm'
	rm -f $(addprefix '$(DESTDIR)$(mandir)/man8/',$(notdir $(MAN8)))
	rm -f $(addprefix '$(DESTDIR)$(prefix)/lib/udev/rules.d/',$(notdir $(wildcard rules.d/*.rules)))

# Boot integration (init/) and section 7 pages. Every init system's files go
# to $(initexampledir) for packagers to pick from; the init systems named in
# INIT (any of: systemd sysvinit openrc runit s6) also get theirs installed
# where that init system reads them, e.g. make install INIT=openrc. @sbindir@
# and @bindir@ in the files become the install paths.
INIT ?=
initexampledir ?= $(datarootdir)/tudev/init
systemdunitdir ?= $(prefix)/lib/systemd/system
initddir ?= $(sysconfdir)/init.d
runitsvdir ?= $(sysconfdir)/sv
s6svdir ?= $(sysconfdir)/s6/sv
MAN7 = $(wildcard man/*.7)
# shell: "init_dirs": pairs of source directory and destination for INIT
init_dirs = set -e; pairs="init $(initexampledir)"; for i in $(INIT); do case $$i in \
	  systemd) pairs="$$pairs init/$$i $(systemdunitdir)";; \
	  sysvinit|openrc) pairs="$$pairs init/$$i $(initddir)";; \
	  runit) pairs="$$pairs init/$$i $(runitsvdir)";; \
	  s6) pairs="$$pairs init/$$i $(s6svdir)";; \
	  *) echo "INIT: unknown init system '$$i'" >&2; exit 1;; esac; done; set -- $$pairs
install: install-init
uninstall: uninstall-init
install-init:
	$(init_dirs); while [ $$# -gt 0 ]; do \
	  for f in $$(cd "$$1" && find . -type f | sort); do \
	    d="$(DESTDIR)$$2/$${f#./}"; $(MKDIR_P) "$${d%/*}"; \
	    sed -e 's|@sbindir@|$(sbindir)|g' -e 's|@bindir@|$(bindir)|g' "$$1/$$f" > "$$d"; \
	    if [ -x "$$1/$$f" ]; then chmod 0755 "$$d"; else chmod 0644 "$$d"; fi; \
	  done; shift 2; done
	$(if $(MAN7),$(MKDIR_P) '$(DESTDIR)$(mandir)/man7' && \
	  $(INSTALL) -m 0644 $(MAN7) '$(DESTDIR)$(mandir)/man7/')
uninstall-init:
	$(init_dirs); while [ $$# -gt 0 ]; do \
	  for f in $$(cd "$$1" && find . -type f); do rm -f "$(DESTDIR)$$2/$${f#./}"; done; \
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
	  && $(MAKE) uninstall DESTDIR=$$PWD/_inst \
	  && test -z "$$(find _inst -type f)"
	cd $(DISTNAME) && $(MAKE) CC=clang O=build-clang all
	rm -rf $(DISTNAME)
	@echo "$(DISTNAME).tar.gz is ready for distribution"

clean:
	rm -rf $(O) build-asan build-tsan build-clang

.PHONY: all check check-unit check-integration check-one check-asan check-tsan \
        install uninstall dist distcheck clean check-build-all install-init uninstall-init check-fuzz
.SUFFIXES:
.DELETE_ON_ERROR:
