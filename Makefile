# flexsc: a plain non-recursive Makefile.
#   make            build the library, tools and tests
#   make test       build and run every test (SANITIZE=address|undefined|thread)
#   make demo       install what is missing (as root), build, run the headline comparison
#   make bench      every benchmark, JSON and plots under results/
#   make fuzz       libFuzzer over the public API (clang)
#   make check-programs  real Debian programs under flexsc-run against NPTL (also in make test)
#   make install    PREFIX=/usr/local DESTDIR= (LIBDIR, INCDIR, BINDIR, MANDIR)
#   make deb        Debian packages libflexsc0, libflexsc-dev, flexsc-run in build/deb/
#   make check-deb  make deb, then install them into a fresh Debian 12 root and try them

VERSION   := 0.1.0
SONAME    := libflexsc.so.0
PREFIX    ?= /usr/local
LIBDIR    ?= $(PREFIX)/lib
INCDIR    ?= $(PREFIX)/include
BINDIR    ?= $(PREFIX)/bin
MANDIR    ?= $(PREFIX)/share/man
# flexsc-run looks for its preload in ../lib/flexsc from its own directory,
# so this one follows BINDIR, not LIBDIR (a multiarch LIBDIR included).
RUNDIR    := $(patsubst %/,%,$(dir $(BINDIR)))/lib/flexsc
CC        ?= cc

SANITIZE  ?=
B         := build$(if $(SANITIZE),-$(SANITIZE))

CFLAGS    ?= -O2 -g
CFLAGS    += -std=c11 -Wall -Wextra -Werror=implicit-function-declaration -fvisibility=hidden
# The runtime defines libc's entry points, the fortified ones (__read_chk,
# __longjmp_chk) among them, which _FORTIFY_SOURCE's headers would rename
# under it: a distribution's default CPPFLAGS (dpkg-buildflags) set it.
CPPFLAGS  += -Iinclude -Isrc -U_FORTIFY_SOURCE
DEPFLAGS   = -MMD -MP
ifneq ($(SANITIZE),)
CFLAGS    += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS   += -fsanitize=$(SANITIZE)
endif
LIBS      := -luring -lpthread -ldl

LIB_SRC   := $(wildcard src/core/*.c src/engine/*.c src/batch/*.c src/api/*.c)
LIB_ASM   := $(wildcard src/core/*.S)
LIB_OBJ   := $(LIB_SRC:%.c=$(B)/%.o) $(LIB_ASM:%.S=$(B)/%.o)
LIB_SO    := $(B)/libflexsc.so.$(VERSION)

# FlexSC-Threads: the library, the M-on-N runtime and the interposers in
# one preloadable object that exports only what it interposes.
RUN_SRC   := $(LIB_SRC) $(wildcard src/threads/*.c src/preload/*.c)
RUN_ASM   := $(LIB_ASM) $(wildcard src/threads/*.S)
RUN_OBJ   := $(RUN_SRC:%.c=$(B)/%.o) $(RUN_ASM:%.S=$(B)/%.o)
RUN_SO    := $(B)/libflexsc-run.so

TEST_SRC  := $(filter-out tests/unit/helpers.c,$(wildcard tests/unit/*.c))
TEST_BIN  := $(TEST_SRC:tests/unit/%.c=$(B)/tests/%)
TEST_HELP := $(B)/tests/unit/helpers.o
TOOL_SRC  := $(wildcard tools/*.c)
TOOL_BIN  := $(TOOL_SRC:tools/%.c=$(B)/%)

.PHONY: all lib test demo bench fuzz install deb check-deb deps deps-build deps-test deps-deb clean check-programs
# The preload is not built under a sanitizer: a sanitizer's runtime must be
# the first object of a process, and user-level context switches would
# confuse it; the tests that need the preload skip there.
all: lib $(if $(SANITIZE),no-preload,$(RUN_SO)) $(TOOL_BIN) $(TEST_BIN)
lib: $(LIB_SO)

# One left in a sanitizer's build directory by an older version would be
# taken for this build's by the tests that need it.
.PHONY: no-preload
no-preload:
	@rm -f $(RUN_SO)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) -fPIC -c $< -o $@

$(B)/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(DEPFLAGS) -fPIC -c $< -o $@

# What each library exports: generated from the sources' FX_EXPORT definitions.
$(B)/libflexsc.map: scripts/exports.sh $(LIB_SRC)
	@mkdir -p $(B)
	scripts/exports.sh lib > $@.tmp && mv $@.tmp $@

$(B)/preload.map: scripts/exports.sh $(RUN_SRC)
	@mkdir -p $(B)
	scripts/exports.sh run > $@.tmp && mv $@.tmp $@

$(LIB_SO): $(LIB_OBJ) $(B)/libflexsc.map
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=$(B)/libflexsc.map \
		-Wl,-z,defs $(LDFLAGS) $(LIB_OBJ) -o $@ $(LIBS)
	ln -sf libflexsc.so.$(VERSION) $(B)/$(SONAME)
	ln -sf $(SONAME) $(B)/libflexsc.so

$(RUN_SO): $(RUN_OBJ) $(B)/preload.map
	$(CC) -shared -Wl,-soname,libflexsc-run.so -Wl,--version-script=$(B)/preload.map \
		-Wl,-z,defs -Wl,-z,nodelete $(LDFLAGS) $(RUN_OBJ) -o $@ $(LIBS)

# Tests and tools link the shared library, as users do; white-box tests
# that need internals include the sources they test. Every unit test links
# tests/unit/helpers.c, compiled once (helpers.h says what it offers).
$(B)/tests/%: tests/unit/%.c $(TEST_HELP) $(LIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(DEPFLAGS) $< $(TEST_HELP) -o $@ $(LDFLAGS) \
		-L$(B) -Wl,-rpath,$(abspath $(B)) -lflexsc $(LIBS)

# flexsc-run only starts the program with the preload: it links libc alone.
# The tools' link lines are in this file: a change to them relinks.
$(B)/flexsc-run: tools/flexsc-run.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(DEPFLAGS) $< -o $@ $(LDFLAGS)

# flexsc-bench is tools/flexsc-bench.c plus these benchmarks under bench/.
# The copy make install installs ($(B)/dist/) has no run path into $(B);
# it has LIBDIR as one when that is not where the dynamic linker looks.
BENCH_SRC := $(addprefix bench/,common.c batch.c wsc.c ros.c pollution.c uring_overhead.c order.c)
SYS_LIBDIRS := /lib /usr/lib /lib/% /usr/lib/%
$(B)/flexsc-bench $(B)/dist/flexsc-bench: tools/flexsc-bench.c $(BENCH_SRC) bench/bench.h $(LIB_SO) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Ibench $(CFLAGS) tools/flexsc-bench.c $(BENCH_SRC) -o $@ $(LDFLAGS) -L$(B) \
		$(if $(findstring /dist/,$@),$(if $(filter $(SYS_LIBDIRS),$(LIBDIR)),,-Wl,-rpath,$(LIBDIR)),-Wl,-rpath,$(abspath $(B))) \
		-lflexsc $(LIBS) -lm

# As root these install what is missing; otherwise they say what to install.
deps:
	@scripts/deps.sh

deps-build:
	@scripts/deps.sh build

deps-test:
	@scripts/deps.sh build test programs

deps-deb:
	@scripts/deps.sh build deb

test: deps-test
	@$(MAKE) --no-print-directory all
	@tests/run.sh $(B)

# demo: the library's table, then the FlexSC-Threads HTTP server on NPTL
# against flexsc-run (bench/http/run.sh --demo, about 40 s), which needs the
# preload that SANITIZE builds leave out.
demo: deps
	@$(MAKE) --no-print-directory all
	@$(B)/flexsc-bench demo
	@$(if $(SANITIZE),echo "make demo: no preload under SANITIZE; skipping the FlexSC-Threads part",bench/http/run.sh $(B) --demo)

# soak: tests/soak/run.sh, SECONDS (default 60) per configuration:
# flexsc-run default, --cores 0, --engine threads, then plain NPTL. SOAK_CONFIGS,
# SOAK_PARALLEL=1 and SOAK_FLAGS as that script says.
SECONDS ?= 60
.PHONY: soak
soak: deps-test
	@$(MAKE) --no-print-directory all
	@tests/soak/run.sh $(B) $(SECONDS)

# Real Debian programs (xz, zstd, sqlite3, python3, sort, make, git,
# memcached) on NPTL and under flexsc-run, compared: tests/shell/programs.sh,
# which make test runs too. FLEXSC_PROGRAMS_ONLY="redis" (or any case names)
# picks cases.
check-programs: deps-test
	@$(MAKE) --no-print-directory all
	@tests/run.sh $(B) programs

bench: deps
	@$(MAKE) --no-print-directory all
	@bench/run.sh $(B)

deb: deps-deb
	@scripts/deb.sh

# make deb, then the packages installed into a fresh Debian 12 root and a
# program run under the installed flexsc-run (tests/deb/run.sh, as root).
check-deb:
	@[ "$$(id -u)" = 0 ] || { echo "make check-deb needs root (it installs into a chroot)"; exit 1; }
	@$(MAKE) --no-print-directory deb
	@tests/deb/run.sh build/deb

fuzz: deps-test
	@tests/fuzz/run.sh

install: lib $(RUN_SO) $(B)/flexsc-run $(B)/dist/flexsc-bench
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(RUNDIR)
	install -m 755 $(B)/flexsc-run $(B)/dist/flexsc-bench $(DESTDIR)$(BINDIR)/
	install -m 644 $(RUN_SO) $(DESTDIR)$(RUNDIR)/
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR)/flexsc $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf libflexsc.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libflexsc.so
	install -m 644 include/flexsc/*.h $(DESTDIR)$(INCDIR)/flexsc/
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCDIR@|$(INCDIR)|; s|@VERSION@|$(VERSION)|' \
		flexsc.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/flexsc.pc
	install -m 644 docs/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 docs/man/*.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 644 docs/man/*.7 $(DESTDIR)$(MANDIR)/man7/

clean:
	rm -rf build build-* results

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# Real Debian servers (Apache, MariaDB, BIND, nginx), unmodified, on NPTL and
# under flexsc-run side by side: bench/servers/run.sh, results/servers-*.jsonl.
# Every point runs SERVERS_REPEAT times (default 5) under each runtime,
# alternating which goes first; the table gives medians and spreads.
# Options for the scripts: FLEXSC_SERVERS_FLAGS (e.g. "--seconds 30", or
# for bench-servers "--sweep" or "-- --seconds 30").
SERVERS_REPEAT ?= 5
.PHONY: deps-servers bench-servers bench-apache bench-mariadb bench-bind bench-nginx
deps-servers:
	@scripts/deps.sh build servers

bench-servers: deps-servers
	@$(MAKE) --no-print-directory all
	@bench/servers/run.sh $(B) --repeat $(SERVERS_REPEAT) $(FLEXSC_SERVERS_FLAGS)

bench-apache bench-mariadb bench-bind bench-nginx: bench-%: deps-servers
	@$(MAKE) --no-print-directory all
	@bench/servers/$*.sh $(B) --repeat $(SERVERS_REPEAT) $(FLEXSC_SERVERS_FLAGS)

# Correctness of the real servers under flexsc-run: bench/servers/check.sh
# (Apache privileges, restarts and stop; MariaDB writes, clean shutdown and
# CHECK TABLE; BIND queries and rndc). PASS/FAIL lines, status 1 on any FAIL.
# FLEXSC_CHECK_FLAGS: e.g. "apache" or '--runtimes "nptl flexsc"'.
.PHONY: check-servers
check-servers: deps-servers
	@$(MAKE) --no-print-directory all
	@bench/servers/check.sh $(B) $(FLEXSC_CHECK_FLAGS)
