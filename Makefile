# Makefile - builds ./ember and its tests from one non-recursive file.
#   make            build ./ember
#   make check      build, then run unit and end-to-end tests
#   make asan       the same suite under AddressSanitizer + UBSan
#   make deps       install build and test dependencies (Debian, as root)
#   make bench      run the benchmarks in bench/ (not tests)
#   WERROR=1        treat warnings as errors (CI does)

BUILD   ?= build
# As many compile jobs as CPUs unless -j says otherwise: CI runs plain
# `make check` and `make asan`, and each builds ember, its tests and
# workloads from nothing.
ifeq ($(filter -j%,$(MAKEFLAGS)),)
  MAKEFLAGS += -j$(shell nproc)
endif
CC      ?= cc
MODULES := common format pmc pmc/stat record symbols unwind replay screen views/hist views/top views/collapse views/script views/sched block block/btreplay live tools trace flamegraph export push net cmd

# pkg-config name -> Debian package that provides it.
PKGS    := libelf:libelf-dev libdw:libdw-dev libunwind:libunwind-dev libunwind-generic:libunwind-dev \
           numa:libnuma-dev zlib:zlib1g-dev libtraceevent:libtraceevent-dev \
           libzstd:libzstd-dev libprotobuf-c:libprotobuf-c-dev liburing:liburing-dev \
           blkid:libblkid-dev libcurl:libcurl4-openssl-dev capstone:libcapstone-dev
PKGNAMES := $(foreach p,$(PKGS),$(firstword $(subst :, ,$(p))))

ifeq ($(filter deps clean,$(MAKECMDGOALS)),)
  MISSING := $(foreach p,$(PKGS),$(if $(shell pkg-config --exists $(firstword $(subst :, ,$(p))) && echo y),,$(lastword $(subst :, ,$(p)))))
  # export/profile.proto is compiled at build time.
  MISSING += $(if $(shell command -v protoc-c 2>/dev/null),,protobuf-c-compiler)
  ifneq ($(strip $(MISSING)),)
    $(error missing libraries; install them with 'make deps' or 'apt-get install $(MISSING)')
  endif
  PKG_CFLAGS := $(shell pkg-config --cflags $(PKGNAMES))
  # libcurl is opened by push/curl.c when an upload needs it, not linked:
  # its dependencies' constructors cost every ember start about 20 ms.
  PKG_LIBS   := $(shell pkg-config --libs $(filter-out libcurl,$(PKGNAMES))) -ldl
endif

# C++ and Rust demangling through libiberty's cplus_demangle (a static
# library without a pkg-config file); without it names stay mangled.
ifneq ($(wildcard /usr/include/libiberty/demangle.h),)
  DEMANGLE_CFLAGS := -DHAVE_LIBIBERTY
  DEMANGLE_LIBS   := -liberty
endif

WARN    := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes
ifeq ($(WERROR),1)
  WARN  += -Werror
endif
OPT     ?= -O2 -g
CFLAGS_ALL := -std=gnu11 $(OPT) $(WARN) -I. $(PKG_CFLAGS) -D_GNU_SOURCE \
              $(DEMANGLE_CFLAGS) -MMD -MP $(EXTRA_CFLAGS)
LDLIBS_ALL := $(PKG_LIBS) $(DEMANGLE_LIBS) -lpthread -lm $(EXTRA_LDFLAGS)

LIB_SRCS := $(wildcard $(addsuffix /*.c,$(MODULES)))
LIB_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS)) $(BUILD)/gen/export/profile.pb-c.o
UNIT_SRCS := $(wildcard tests/unit/test-*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS))
# Test programs that make inputs this machine cannot record (tests/tools).
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_BINS := $(patsubst tests/tools/%.c,$(BUILD)/tests/tools/%,$(TOOL_SRCS))
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
WORKLOAD_BINS := $(patsubst tests/workloads/%.c,$(BUILD)/workloads/%,$(WORKLOAD_SRCS))

# The top-level ./ember is the normal build; sanitizer builds stay in $(BUILD).
ifeq ($(BUILD),build)
  EMBER_BIN := ember
else
  EMBER_BIN := $(BUILD)/ember
endif

.PHONY: all check asan deps clean bench workloads unit demo fuzz man install uninstall
all: $(EMBER_BIN)

$(EMBER_BIN): $(BUILD)/ember.o $(BUILD)/libember.a
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/libember.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(BUILD)/tests/unit/%: tests/unit/%.c tests/unit/test.h tests/unit/processes.h $(BUILD)/libember.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libember.a $(LDLIBS_ALL)

$(BUILD)/tests/tools/%: tests/tools/%.c $(BUILD)/libember.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libember.a $(LDLIBS_ALL)

# syscount's names: the kernel's syscall table for this machine's arch,
# from the kernel headers Debian installs (linux-libc-dev), at build time.
SYSCALL_HDR := $(firstword $(wildcard /usr/include/$(shell $(CC) -dumpmachine)/asm/unistd_64.h \
                 /usr/include/asm/unistd_64.h))
$(BUILD)/gen/syscall-names.h: $(SYSCALL_HDR)
	@mkdir -p $(dir $@)
	sed -n 's/^#define __NR_\([a-z0-9_]*\)[[:space:]][[:space:]]*\([0-9][0-9]*\).*/[\2] = "\1",/p' $< >$@.tmp
	@test -s $@.tmp || { echo "no syscall numbers in $<"; exit 1; }
	mv $@.tmp $@
$(BUILD)/tools/syscalls.o: $(BUILD)/gen/syscall-names.h
$(BUILD)/tools/syscalls.o: CFLAGS_ALL += -I$(BUILD)/gen

# pprof's profile.proto (export/profile.proto) compiled by protoc-c into
# build/gen/export/; the generated C is built without -Werror (not ours).
$(BUILD)/gen/export/profile.pb-c.c $(BUILD)/gen/export/profile.pb-c.h &: export/profile.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --proto_path=. --c_out=$(BUILD)/gen export/profile.proto
$(BUILD)/gen/export/profile.pb-c.o: $(BUILD)/gen/export/profile.pb-c.c
	$(CC) -std=gnu11 $(OPT) -I$(BUILD)/gen $(PKG_CFLAGS) $(EXTRA_CFLAGS) -c -o $@ $<
$(BUILD)/export/pprof.o: $(BUILD)/gen/export/profile.pb-c.h
$(BUILD)/export/pprof.o: CFLAGS_ALL += -I$(BUILD)/gen
$(BUILD)/tests/unit/test-export: $(BUILD)/gen/export/profile.pb-c.h
$(BUILD)/tests/unit/test-export: CFLAGS_ALL += -I$(BUILD)/gen

# Workloads are the ground truth of the end-to-end tests: built with frame
# pointers and without inlining so their call structure is exactly the source's.
WORKLOAD_CFLAGS := -O1 -g -fno-omit-frame-pointer -fno-inline \
                   -fno-optimize-sibling-calls -Wall -Wextra
$(BUILD)/workloads/%: tests/workloads/%.c tests/workloads/workload.h
	@mkdir -p $(dir $@)
	$(CC) $(WORKLOAD_CFLAGS) -o $@ $< -lpthread -lm

# static-true runs no dynamic loader (execsnoop's stack-copy path) when
# the static libc (libc6-dev's libc.a) is there to link it.
ifneq ($(wildcard /usr/lib/$(shell $(CC) -dumpmachine)/libc.a),)
$(BUILD)/workloads/static-true: WORKLOAD_CFLAGS += -static
endif

workloads: $(WORKLOAD_BINS)
unit: $(UNIT_BINS) $(TOOL_BINS)

check: $(EMBER_BIN) $(UNIT_BINS) $(TOOL_BINS) $(WORKLOAD_BINS)
	@EMBER=$(abspath $(EMBER_BIN)) BUILD=$(abspath $(BUILD)) \
	  WORKLOADS=$(abspath $(BUILD)/workloads) tests/run.sh

asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -g -fno-omit-frame-pointer" \
	  EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined" \
	  EXTRA_LDFLAGS="-fsanitize=address,undefined" check

# Build and test dependencies. Idempotent: apt-get runs only when a package
# is missing.
DEB_DEPS := build-essential pkg-config linux-libc-dev libelf-dev libdw-dev libunwind-dev \
            libnuma-dev zlib1g-dev libzstd-dev libtraceevent-dev libiberty-dev \
            liburing-dev libblkid-dev libcapstone-dev \
            linux-perf chromium blktrace clang libclang-rt-14-dev \
            python3 python3-dbg libc6-dbg fio dwz bpftrace \
            util-linux procps protobuf-c-compiler libprotobuf-c-dev golang-go e2fsprogs \
            libcurl4-openssl-dev man-db groff-base
# bpftrace: the reference ember trace is checked against, side by side
# (tests/e2e/trace-list.sh).
# libc6-dbg: libc's DWARF, whose inline frames report shows (and
# tests/e2e/report-inline-alias.sh checks); man-db and groff-base:
# tests/e2e/man-render.sh renders every man page.
# npm (the export tests install speedscope's schema and ajv-cli with it)
# unless one came with Node.js: nodesource's nodejs conflicts with Debian's.
DEB_DEPS += $(if $(shell command -v npm 2>/dev/null),,npm)
deps:
	@missing=$$(for p in $(DEB_DEPS); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; \
	  done); \
	if [ -n "$$missing" ]; then \
	  echo "installing:" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "all dependencies present"; fi
	@dir=$${XDG_CACHE_HOME:-$$HOME/.cache}/ember/npm; \
	if command -v npm >/dev/null && [ ! -x "$$dir/node_modules/.bin/ajv" -o \
	     ! -f "$$dir/node_modules/speedscope/dist/release/file-format-schema.json" ]; then \
	  echo "installing speedscope and ajv-cli into $$dir (tests/e2e/export-speedscope.sh)"; \
	  mkdir -p "$$dir" && npm install --silent --no-audit --no-fund --prefix "$$dir" speedscope ajv-cli || \
	    echo "npm failed: export-speedscope.sh will skip its schema check"; fi

# The README's demo: a few seconds of a system-wide profile while the
# known-ratio workload runs (about 50/30/20% in leaf_a/leaf_b/leaf_c)
# beside Debian's own python3, built without frame pointers, whose stacks
# -g unwinds to main all the same.
demo: $(EMBER_BIN) $(WORKLOAD_BINS)
	./$(EMBER_BIN) record -F 999 -a -g -o demo.data -- sh -c \
	  '/usr/bin/python3 tests/workloads/pyloop.py 3 >/dev/null & $(BUILD)/workloads/ratio 3; wait'
	@./$(EMBER_BIN) collapse -i demo.data | awk '/^python3;/ { t += $$NF; if (/Py_BytesMain/) r += $$NF } \
	  END { if (t) printf "python3: %d of %d samples reach main (Py_BytesMain)\n", r, t }'
	./$(EMBER_BIN) report -i demo.data --stdio --no-children --percent-limit 1 --call-graph=none
	./$(EMBER_BIN) flame -i demo.data -o demo-flame.svg --title "ember demo: CPU flame graph"
	@echo "flame graph written to demo-flame.svg: open it in a browser"

# Each script prints ember beside perf measured in the same run.
BENCHES := record online report unwind stat offcpu bio top syscount replay serve
bench: $(EMBER_BIN) $(WORKLOAD_BINS)
	@for b in $(BENCHES); do echo "== bench/$$b.sh"; \
	  EMBER=$(abspath $(EMBER_BIN)) WORKLOADS=$(abspath $(BUILD)/workloads) bench/$$b.sh; done

# Fuzzing: one libFuzzer target per parser of outside input (tests/fuzz/),
# built with clang into build-fuzz/ against the library sources compiled
# with ASan+UBSan and coverage.  Each target runs FUZZ_SECONDS on its seed
# corpus (tests/fuzz/corpus/T, kept small and read-only here); what it
# learns goes to build-fuzz/corpus/T, crashers to build-fuzz/crash-T-*.
FUZZ_SECONDS ?= 60
FUZZ_CC      := clang
ifneq ($(filter fuzz,$(MAKECMDGOALS)),)
  ifeq ($(shell command -v $(FUZZ_CC)),)
    $(error make fuzz needs clang and its fuzzer runtime: apt-get install clang libclang-rt-14-dev)
  endif
endif
FUZZ_DIR     := build-fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -std=gnu11 -O1 -g -fno-omit-frame-pointer -Wall -Wextra \
                -Wno-unused-parameter -I. $(PKG_CFLAGS) -D_GNU_SOURCE \
                $(DEMANGLE_CFLAGS) -MMD -MP $(FUZZ_SAN)
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz-*.c))
# Only the modules that hold the parsers, and the bio library with the
# filter tests it shares with the replay, ember serve's connection parser,
# the block replay's plan files and push's spool loader: a half-written
# file elsewhere does not stop the fuzzers.  Targets link them as an archive, so each takes the
# files it calls (fuzz-blktrace none of bio's replay side, fuzz-plan none
# of the replayer's).
FUZZ_OBJS    := $(patsubst %.c,$(FUZZ_DIR)/%.o,$(wildcard $(addsuffix /*.c,common format symbols flamegraph block)) \
                $(wildcard net/*.c) replay/filter.c \
                block/btreplay/plan.c block/btreplay/planfile.c push/spool.c)
FUZZ_LIB     := $(FUZZ_DIR)/libfuzz.a

$(FUZZ_OBJS): $(FUZZ_DIR)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_LIB): $(FUZZ_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_DIR)/fuzz-%: tests/fuzz/fuzz-%.c $(wildcard tests/fuzz/*.h) $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) $(LDLIBS_ALL)

fuzz: $(addprefix $(FUZZ_DIR)/,$(FUZZ_TARGETS))
	@set -e; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$t tests/fuzz/corpus/$$t; \
	  echo "== $$t: $(FUZZ_SECONDS) s"; \
	  LSAN_OPTIONS=suppressions=$(abspath tests/fuzz/lsan.supp) \
	  $(FUZZ_DIR)/$$t -max_total_time=$(FUZZ_SECONDS) -timeout=20 -rss_limit_mb=2048 \
	    -max_len=65536 -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/crash-$$t- \
	    $(FUZZ_DIR)/corpus/$$t tests/fuzz/corpus/$$t > $(FUZZ_DIR)/$$t.log 2>&1 || \
	    { tail -60 $(FUZZ_DIR)/$$t.log; echo "$$t: FAILED (log: $(FUZZ_DIR)/$$t.log)"; exit 1; }; \
	  grep -E '^(stat::number_of_executed_runs|stat::peak_rss_mb)|^Done' $(FUZZ_DIR)/$$t.log | tr '\n' ' '; echo; \
	done

-include $(FUZZ_OBJS:.o=.d)

# Man pages: ember.1, ember-record.1 and ember-collapse.1 are written by
# hand; the others are generated from the commands' option tables
# ('ember CMD --man') and committed, so that install needs no build of
# them.  tests/e2e/options-docs.sh fails when one lags behind its table.
MAN_GENERATED := report top script flame export push stat list offcpu sched bio btrace verify archive serve \
                 execsnoop opensnoop statsnoop filelife syscount exitsnoop cpudist softirqs hardirqs funccount \
                 oomkill drsnoop writeback stackcount trace
man: $(EMBER_BIN)
	@for c in $(MAN_GENERATED); do \
	  ./$(EMBER_BIN) $$c --man > docs/man/ember-$$c.1 || exit 1; done

# make install PREFIX=/usr/local DESTDIR=...: ember, its man pages and the
# bash completion (which asks ember itself for commands and options).
# INSTALL_BIN names another binary to install (tests/e2e/install.sh
# passes the one under test, so nothing is rebuilt).
PREFIX      ?= /usr/local
INSTALL_BIN ?= $(EMBER_BIN)
BINDIR      := $(PREFIX)/bin
MAN1DIR     := $(PREFIX)/share/man/man1
COMPDIR     := $(PREFIX)/share/bash-completion/completions
MAN_PAGES   := $(wildcard docs/man/*.1)
INSTALLED   := $(BINDIR)/ember $(addprefix $(MAN1DIR)/,$(notdir $(MAN_PAGES))) $(COMPDIR)/ember
install: $(INSTALL_BIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MAN1DIR) $(DESTDIR)$(COMPDIR)
	install -m 755 $(INSTALL_BIN) $(DESTDIR)$(BINDIR)/ember
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(MAN1DIR)/
	install -m 644 docs/completion/ember.bash $(DESTDIR)$(COMPDIR)/ember
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))

clean:
	rm -rf build build-asan ember

-include $(LIB_OBJS:.o=.d) $(BUILD)/ember.d
