# ringd: ring-agent, ring-coordinator, ringctl.
#   make            build everything into build/
#   make check      deps, ASan/UBSan build, unit + fuzz smoke + integration tests,
#                   RDMA tests on soft-RoCE in a qemu VM (tests/rdma)
#   make demo       4-node emulated ring in network namespaces (root)
#   make bench      ring-agent vs iperf3/sockperf/perftest, survey wall time (root)
#   make install    PREFIX=/usr/local DESTDIR=
VERSION := 0.1.0
BUILD ?= build
SANITIZE ?=
FUZZ ?=
CC ?= cc
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
UNITDIR ?= /lib/systemd/system
DESTDIR ?=
PYTHON ?= /usr/bin/python3

PKGS := libevent libevent_openssl libprotobuf-c libsystemd openssl libibverbs
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wmissing-prototypes \
	-g -fstack-protector-strong -fPIE -DRING_VERSION='"$(VERSION)"' \
	-iquote proto -iquote common -iquote agent -iquote coordinator \
	-iquote $(BUILD)/gen $(PKG_CFLAGS)
LDFLAGS := -pie -Wl,-z,relro,-z,now
ifeq ($(SANITIZE),1)
CFLAGS += -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
else ifeq ($(FUZZ),1)
CFLAGS += -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined
LDFLAGS += -fsanitize=address,undefined
else
CFLAGS += -O2 -D_FORTIFY_SOURCE=2
endif
EXTRA_CFLAGS ?=
CFLAGS += $(EXTRA_CFLAGS)

GEN_C := $(BUILD)/gen/ring.pb-c.c
GEN_H := $(BUILD)/gen/ring.pb-c.h
COMMON_SRC := $(wildcard proto/*.c common/*.c)
AGENT_SRC := $(filter-out agent/main.c,$(wildcard agent/*.c))
COORD_SRC := $(filter-out coordinator/main.c coordinator/ringctl_main.c,$(wildcard coordinator/*.c))
UNIT_SRC := $(wildcard tests/unit/test_*.c)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
LIBCOMMON := $(BUILD)/libcommon.a
LIBAGENT := $(BUILD)/libagent.a
LIBCOORD := $(BUILD)/libcoord.a
BINS := $(BUILD)/bin/ring-agent $(BUILD)/bin/ring-coordinator $(BUILD)/bin/ringctl
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))
LIBS := $(PKG_LIBS)

.PHONY: all clean check unit integration fuzz fuzz-smoke deps demo demo-down rdma-check \
	install format format-check bench bench-deps
.DELETE_ON_ERROR:

all: $(BINS)

$(GEN_C) $(GEN_H): proto/ring.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen -Iproto $<

# Generated code is not ours to warn about.
$(BUILD)/obj/gen/ring.pb-c.o: $(GEN_C)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -Werror -Wmissing-prototypes,$(CFLAGS)) -c -o $@ $<

$(BUILD)/obj/%.o: %.c $(GEN_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(LIBCOMMON): $(call obj,$(COMMON_SRC)) $(BUILD)/obj/gen/ring.pb-c.o
	$(AR) rcs $@ $^
$(LIBAGENT): $(call obj,$(AGENT_SRC)) | $(LIBCOMMON)
	$(AR) rcs $@ $^
$(LIBCOORD): $(call obj,$(COORD_SRC)) | $(LIBCOMMON)
	$(AR) rcs $@ $^

$(BUILD)/bin/ring-agent: $(call obj,agent/main.c) $(LIBAGENT) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)
$(BUILD)/bin/ring-coordinator: $(call obj,coordinator/main.c) $(LIBCOORD) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)
$(BUILD)/bin/ringctl: $(call obj,coordinator/ringctl_main.c) $(LIBCOORD) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIBAGENT) $(LIBCOORD) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-missing-prototypes $(LDFLAGS) -o $@ $^ $(LIBS) -lcmocka

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do \
		echo "== $$t"; RING_FIXTURES=$(CURDIR)/tests/fixtures $$t; done

# libFuzzer targets: a separate clang build of the same modules.
fuzz:
	$(MAKE) BUILD=build/fuzz FUZZ=1 CC=clang fuzz-bins
fuzz-bins: $(FUZZ_BINS)
$(BUILD)/fuzz/%: tests/fuzz/%.c $(LIBAGENT) $(LIBCOORD) $(LIBCOMMON)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-missing-prototypes -fsanitize=fuzzer $(LDFLAGS) -o $@ $^ $(LIBS)
# Each target briefly, on its seed corpus (copied: libFuzzer writes into it).
fuzz-smoke: fuzz
	@set -e; for f in build/fuzz/fuzz/fuzz_*; do \
		n=$$(basename $$f); c=build/fuzz/corpus/$$n; rm -rf $$c; mkdir -p $$c; \
		cp tests/fuzz/corpus/$$n/* $$c/ 2>/dev/null || true; \
		echo "== $$n"; \
		if ! $$f -max_total_time=15 -max_len=65536 -print_final_stats=1 $$c \
			tests/fuzz/corpus/$$n > build/fuzz/$$n.log 2>&1; then \
			tail -n 40 build/fuzz/$$n.log; echo "$$n: FAILED"; exit 1; fi; \
		grep -E 'stat::number_of_executed_units|stat::new_units_added' build/fuzz/$$n.log; \
	done

integration: deps
	$(MAKE) BUILD=build/asan SANITIZE=1 all
	$(MAKE) BUILD=build all
	RINGD_BIN=$(CURDIR)/build/asan/bin RINGD_PLAIN_BIN=$(CURDIR)/build/bin \
		$(PYTHON) -m pytest -v tests/integration

# The plain build is what valgrind checks (it cannot run ASan binaries).
check: deps format-check
	$(MAKE) BUILD=build/asan SANITIZE=1 all unit
	$(MAKE) BUILD=build all
	$(MAKE) fuzz-smoke
	RINGD_BIN=$(CURDIR)/build/asan/bin RINGD_PLAIN_BIN=$(CURDIR)/build/bin \
		$(PYTHON) -m pytest -v tests/integration
	$(MAKE) rdma-check

# The verbs engine against a real kernel RDMA stack: Debian's kernel with
# soft-RoCE in a qemu VM, the ASan/UBSan daemons inside (tests/rdma/README.md).
# Exit 77 from vm.sh means qemu cannot run here at all: say so, do not fail.
rdma-check: deps
	$(MAKE) BUILD=build/asan SANITIZE=1 all
	@rc=0; bash tests/rdma/vm.sh --bin $(CURDIR)/build/asan/bin --timeout 900 ringd || rc=$$?; \
	if [ $$rc -eq 77 ]; then echo "rdma-check: SKIPPED (reason above)"; \
	elif [ $$rc -ne 0 ]; then echo "rdma-check: FAILED (rc $$rc), console in build/rdma-vm/console.log" >&2; exit $$rc; \
	else echo "rdma-check: passed"; fi

DEB_PKGS := gcc make pkg-config libibverbs-dev ibverbs-providers libevent-dev \
	libprotobuf-c-dev protobuf-c-compiler libsystemd-dev libssl-dev openssl \
	libcmocka-dev iproute2 python3 python3-pytest clang libclang-rt-14-dev \
	clang-format util-linux procps valgrind \
	qemu-system-x86 ibverbs-utils cpio xz-utils zstd
deps:
	@missing=$$(for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then \
			echo "missing Debian packages:" $$missing "- run 'sudo make deps'" >&2; exit 1; fi; \
		echo "installing:" $$missing; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	fi

FORMAT_SRC = $(wildcard proto/*.[ch] common/*.[ch] agent/*.[ch] coordinator/*.[ch] tests/unit/*.[ch] tests/fuzz/*.[ch] tests/rdma/*.[ch] bench/*.[ch])
format:
	clang-format -i $(FORMAT_SRC)
format-check:
	clang-format --dry-run -Werror $(FORMAT_SRC)

# Benchmark: not part of `make check` (unshaped veth figures vary by host).
BENCH_PKGS := iperf3 sockperf perftest
bench-deps: deps
	@missing=$$(for p in $(BENCH_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then \
			echo "missing Debian packages:" $$missing "- run 'sudo make bench-deps'" >&2; exit 1; fi; \
		echo "installing:" $$missing; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y $$missing; \
	fi
bench: bench-deps
	$(MAKE) BUILD=build all
	$(PYTHON) bench/bench.py --bin $(CURDIR)/build/bin

demo: deps all
	$(PYTHON) tests/integration/demo.py up --bin $(CURDIR)/$(BUILD)/bin
demo-down:
	$(PYTHON) tests/integration/demo.py down

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin
	install -m 0755 $(BUILD)/bin/ringctl $(DESTDIR)$(PREFIX)/bin/ringctl
	install -m 0755 $(BUILD)/bin/ring-agent $(BUILD)/bin/ring-coordinator $(DESTDIR)$(PREFIX)/sbin/
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(PREFIX)/lib/sysusers.d $(DESTDIR)$(PREFIX)/lib/tmpfiles.d
	sed 's|@SBINDIR@|$(PREFIX)/sbin|g' systemd/ring-agent.service.in > $(DESTDIR)$(UNITDIR)/ring-agent.service
	sed 's|@SBINDIR@|$(PREFIX)/sbin|g' systemd/ring-coordinator.service.in > $(DESTDIR)$(UNITDIR)/ring-coordinator.service
	install -m 0644 systemd/ringd.sysusers $(DESTDIR)$(PREFIX)/lib/sysusers.d/ringd.conf
	install -m 0644 systemd/ringd.tmpfiles $(DESTDIR)$(PREFIX)/lib/tmpfiles.d/ringd.conf
	install -d $(DESTDIR)$(SYSCONFDIR)/ringd $(DESTDIR)$(PREFIX)/share/doc/ringd/examples
	install -m 0644 docs/examples/*.conf $(DESTDIR)$(PREFIX)/share/doc/ringd/examples/
	@if ls docs/man/*.[0-9] >/dev/null 2>&1; then \
		for m in docs/man/*.[0-9]; do s=$${m##*.}; \
		install -d $(DESTDIR)$(PREFIX)/share/man/man$$s; \
		install -m 0644 $$m $(DESTDIR)$(PREFIX)/share/man/man$$s/; done; fi

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
