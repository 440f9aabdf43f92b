# coreq — see README.md. `make` builds build/coreq; `make host32` builds the i386 binary
# build32/coreq; `make asan` builds build-asan/coreq; `make test` runs the whole suite.
CC ?= gcc
BUILD ?= build
OPT ?= -O2 -g
WARN = -Werror=implicit-function-declaration -Werror=int-conversion -Wall -Wextra -Wshadow -Wno-unused-parameter -Wformat=2 -Wno-format-nonliteral
CFLAGS_ALL = -std=gnu11 $(OPT) $(WARN) -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I. -I$(BUILD)/include $(EXTRA_CFLAGS)
# libbfd-multiarch is not linked: corelib loads it when its answer is needed (bfd_lib.h)
# from the file a link would use, found here once and fixed in $(BUILD)/include.
# The libraries every command needs are linked statically: loading and relocating eight
# shared objects was a third of `coreq --help` and a tenth of `coreq bt` (start-up is what a
# per-rank or CI use pays per core). libc stays shared (plugins are loaded into it).
# The 32-bit host build keeps its own LIBS (tools/host32/env.sh: shared, from the sysroot).
LIBS = -Wl,--as-needed -Wl,-Bstatic -ldw -lelf -ljansson -lz -lzstd -llzma -llz4 -lbz2 -Wl,-Bdynamic -lpthread -ldl
LIBBFD_LINK = -l:libbfd-multiarch.so

TARGETS_SRC = $(wildcard targets/*.c)
CORELIB_SRC = $(wildcard corelib/*.c)
# the rooms below corelib (doc/architecture.md), one archive each
BASE_SRC = $(wildcard base/*.c)
INPUT_SRC = $(wildcard input/*.c)
PLUGROOM_SRC = $(wildcard plugin/*.c)
OUTPUT_SRC = $(wildcard output/*.c)
OMPD_SRC = $(wildcard ompd/*.c)
MQD_SRC = $(wildcard mqd/*.c)
EVENTS_SRC = $(wildcard events/*.c)
STACK_SRC = $(wildcard stack/*.c)
JOB_SRC = $(wildcard job/*.c)
ELF_SRC = $(wildcard elf/*.c)
LIVE_SRC = $(wildcard live/*.c)
LAUNCH_SRC = $(wildcard launch/*.c)
ANALYSIS_SRC = $(wildcard analysis/*.c)
# omp-tools.h comes from Debian's libomp-14-dev; only that header is copied (the directory
# it lives in is clang's resource directory, which must not shadow the C library's).
OMP_TOOLS_H ?= $(firstword $(wildcard /usr/lib/llvm-14/lib/clang/*/include/omp-tools.h /usr/lib/llvm-*/lib/clang/*/include/omp-tools.h))
TOOL_SRC = $(wildcard tools/coreq/*.c)
LIB_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(CORELIB_SRC))
TARGETS_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(TARGETS_SRC))
BASE_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(BASE_SRC))
INPUT_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(INPUT_SRC))
PLUGROOM_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(PLUGROOM_SRC))
OUTPUT_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(OUTPUT_SRC))
# corelib and the rooms below it, in link order: a room's archive comes before those of the
# rooms it uses (static archives are searched once, in order)
CORE_LIBS = $(addprefix $(BUILD)/,libcoreq.a libcoreq-elf.a libcoreq-output.a libcoreq-plugin.a \
	libcoreq-input.a libcoreq-base.a libcoreq-targets.a)
OMPD_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(OMPD_SRC))
MQD_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(MQD_SRC))
EVENTS_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(EVENTS_SRC))
STACK_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(STACK_SRC))
JOB_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(JOB_SRC))
ELF_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(ELF_SRC))
LIVE_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(LIVE_SRC))
LAUNCH_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(LAUNCH_SRC))
ANALYSIS_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(ANALYSIS_SRC))
TOOL_OBJ = $(patsubst %.c,$(BUILD)/%.o,$(TOOL_SRC))
UNIT_SRC = $(wildcard tests/unit/*.c)
UNIT_BIN = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
HEADERS = $(wildcard targets/*.h base/*.h input/*.h plugin/*.h output/*.h elf/*.h corelib/*.h live/*.h launch/*.h analysis/*.h stack/*.h job/*.h ompd/*.h mqd/*.h events/*.h recorder/*.h tools/coreq/*.h)

.PHONY: all clean test unit host32 asan deps demo check

DEMO_CASE = fixtures/core/x86_64-kernel
DEMO_BE = fixtures/core/s390x-qemu

PLUGIN_SRC = $(wildcard tests/plugins/*.c)
PLUGIN_SO = $(patsubst tests/plugins/%.c,$(BUILD)/tests/plugins/%.so,$(PLUGIN_SRC))

# coreq's own MQD DLL for Open MPI 4.1 (ob1): found by coreq next to itself (plugins/)
OWN_MQD_DLL = $(BUILD)/plugins/libcoreq_ompi41_msgq.so

all: $(BUILD)/coreq $(BUILD)/mkcore $(UNIT_BIN) $(PLUGIN_SO) $(OWN_MQD_DLL) recorder

$(TOOL_OBJ): $(BUILD)/include/omp-tools.h

# The libbfd file a link with $(LIBBFD_LINK) would take (the linker's own search, -L of
# LDFLAGS included), resolved to the real file: the only path coreq loads libbfd from.
$(BUILD)/include/cq_libbfd_path.h: Makefile $(HOST32_MK)
	@mkdir -p $(dir $@)
	@p=$$(echo 'int main(void) { return 0; }' | $(CC) $(CFLAGS_ALL) $(LDFLAGS) -x c - -o /dev/null \
		-Wl,--no-as-needed -Wl,--trace $(LIBBFD_LINK) 2>/dev/null | grep 'libbfd-multiarch\.so$$' | head -n1); \
	p=$$(readlink -f "$$p"); \
	if [ -z "$$p" ] || [ ! -f "$$p" ]; then \
		echo "libbfd-multiarch.so not found: apt-get install binutils-multiarch-dev (tools/install-deps.sh)" >&2; exit 1; fi; \
	echo "/* written by the Makefile: the libbfd coreq loads (elf/bfd_lib.c) */" >$@.tmp; \
	echo "#define CQ_LIBBFD_PATH \"$$p\"" >>$@.tmp; \
	mv -f $@.tmp $@

$(BUILD)/elf/bfd_lib.o: $(BUILD)/include/cq_libbfd_path.h

# libdebuginfod likewise (elf/debuginfod.c): loaded only when DEBUGINFOD_URLS is set and
# a file is missing, from the one file a link with -ldebuginfod would take.
$(BUILD)/include/cq_libdebuginfod_path.h: Makefile $(HOST32_MK)
	@mkdir -p $(dir $@)
	@p=$$(echo 'int main(void) { return 0; }' | $(CC) $(CFLAGS_ALL) $(LDFLAGS) -x c - -o /dev/null \
		-Wl,--no-as-needed -Wl,--trace -ldebuginfod 2>/dev/null | grep 'libdebuginfod[^/]*\.so[.0-9]*$$' | head -n1); \
	p=$$(readlink -f "$$p"); \
	if [ -z "$$p" ] || [ ! -f "$$p" ]; then \
		echo "libdebuginfod.so not found: apt-get install libdebuginfod-dev (tools/install-deps.sh)" >&2; exit 1; fi; \
	echo "/* written by the Makefile: the libdebuginfod coreq loads (elf/debuginfod.c) */" >$@.tmp; \
	echo "#define CQ_LIBDEBUGINFOD_PATH \"$$p\"" >>$@.tmp; \
	mv -f $@.tmp $@

$(BUILD)/elf/debuginfod.o: $(BUILD)/include/cq_libdebuginfod_path.h

$(BUILD)/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libcoreq.a: $(LIB_OBJ)
	ar rcs $@ $^

$(BUILD)/libcoreq-targets.a: $(TARGETS_OBJ)
	ar rcs $@ $^

$(BUILD)/libcoreq-base.a: $(BASE_OBJ)
	ar rcs $@ $^

$(BUILD)/libcoreq-input.a: $(INPUT_OBJ)
	ar rcs $@ $^

$(BUILD)/libcoreq-plugin.a: $(PLUGROOM_OBJ)
	ar rcs $@ $^

$(BUILD)/libcoreq-output.a: $(OUTPUT_OBJ)
	ar rcs $@ $^

$(BUILD)/include/omp-tools.h:
	@test -n "$(OMP_TOOLS_H)" || { echo "omp-tools.h not found: apt-get install libomp-14-dev (tools/install-deps.sh)"; exit 1; }
	@mkdir -p $(dir $@)
	cp $(OMP_TOOLS_H) $@

$(OMPD_OBJ): $(BUILD)/include/omp-tools.h

$(BUILD)/libcoreq-ompd.a: $(OMPD_OBJ)
	ar rcs $@ $^

$(BUILD)/libcoreq-mqd.a: $(MQD_OBJ)
	ar rcs $@ $^

$(BUILD)/libcoreq-events.a: $(EVENTS_OBJ)
	ar rcs $@ $^

$(BUILD)/libcoreq-stack.a: $(STACK_OBJ)
	ar rcs $@ $^

$(BUILD)/libcoreq-job.a: $(JOB_OBJ)
	ar rcs $@ $^

$(BUILD)/libcoreq-elf.a: $(ELF_OBJ)
	ar rcs $@ $^

$(BUILD)/libcoreq-live.a: $(LIVE_OBJ)
	ar rcs $@ $^

$(BUILD)/libcoreq-launch.a: $(LAUNCH_OBJ)
	ar rcs $@ $^

$(BUILD)/libcoreq-analysis.a: $(ANALYSIS_OBJ)
	ar rcs $@ $^

$(BUILD)/coreq: $(TOOL_OBJ) $(BUILD)/libcoreq-analysis.a $(BUILD)/libcoreq-ompd.a $(BUILD)/libcoreq-mqd.a $(BUILD)/libcoreq-events.a $(BUILD)/libcoreq-stack.a $(BUILD)/libcoreq-job.a $(BUILD)/libcoreq-launch.a $(BUILD)/libcoreq-live.a $(CORE_LIBS)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $(TOOL_OBJ) $(BUILD)/libcoreq-analysis.a $(BUILD)/libcoreq-ompd.a $(BUILD)/libcoreq-mqd.a $(BUILD)/libcoreq-events.a $(BUILD)/libcoreq-stack.a $(BUILD)/libcoreq-job.a $(BUILD)/libcoreq-launch.a $(BUILD)/libcoreq-live.a $(CORE_LIBS) $(LIBS)

$(BUILD)/mkcore: tests/tools/mkcore.c $(CORE_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< $(CORE_LIBS) $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libcoreq-job.a $(CORE_LIBS) tests/unit/check.h tests/unit/scratch.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS) -o $@ $< $(BUILD)/libcoreq-job.a $(CORE_LIBS) $(LIBS)

# the kinds table is checked against omp-tools.h's enums
$(BUILD)/tests/test_rec_kinds: $(BUILD)/include/omp-tools.h

# Test plugins of ours (OMPD conformance, faulty plugins): shared objects, no libraries.
$(BUILD)/tests/plugins/%.so: tests/plugins/%.c $(BUILD)/include/omp-tools.h $(wildcard tests/plugins/*.h) tests/plugins/ompd_conformance.c ompd/tr_abi.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fPIC -shared -o $@ $<

$(OWN_MQD_DLL): $(wildcard plugins/ompi41/*.c plugins/ompi41/*.h) mqd/mqs_abi.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fPIC -shared -o $@ $(wildcard plugins/ompi41/*.c)

# The flight recorder library (OMPT and GASP tool), whose rings `coreq events` reads.
include recorder/recorder.mk

# 32-bit (i386) host build against an extracted Debian i386 sysroot.
HOST32_SYSROOT ?= $(CURDIR)/build/sysroot-i386-host
host32:
	tools/host32/sysroot.sh $(HOST32_SYSROOT) >/dev/null
	@mkdir -p build
	bash tools/host32/env.sh $(HOST32_SYSROOT) --make > build/host32.mk
	$(MAKE) BUILD=build32 HOST32_MK=build/host32.mk

# The i386 toolchain and sysroot flags (CC, CFLAGS, LDFLAGS) come from tools/host32/env.sh.
ifdef HOST32_MK
include $(HOST32_MK)
EXTRA_CFLAGS := $(CFLAGS)
endif

asan:
	$(MAKE) BUILD=build-asan CC=clang-14 OPT="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"

test: all
	tests/run.sh

deps:
	tools/install-deps.sh

# The main job on a stored fixture: an x86_64 kernel core and a big-endian s390x qemu core.
demo:
	tools/install-deps.sh --build
	$(MAKE) $(BUILD)/coreq
	tools/fixtures/sysroot.sh x86_64 build/sysroot/x86_64 >/dev/null
	tools/fixtures/sysroot.sh s390x build/sysroot/s390x >/dev/null
	$(BUILD)/coreq info --sysroot build/sysroot/x86_64 $(DEMO_CASE)/core.gz $(DEMO_CASE)/exe.gz
	@echo
	$(BUILD)/coreq tls --sysroot build/sysroot/s390x --exe $(DEMO_BE)/exe.gz $(DEMO_BE)/core.gz fx_t_name

# Everything CI runs: 64-bit, ASan/UBSan and 32-bit (i386) builds, the whole suite with each.
check: deps
	$(MAKE) all
	$(MAKE) asan
	$(MAKE) host32
	tools/check-all.sh
	$(MAKE) fuzz-regress
	# two targets at a time: the suite is done, both CPUs are free (half the wall time); 10 s
	# each (make fuzz-smoke alone: 30), for make check within 30 minutes
	$(MAKE) fuzz-smoke FUZZ_PARALLEL=2 FUZZ_SMOKE_SECONDS=10

clean:
	rm -rf build build32 build-asan

# Installing (make first; BUILD=build32 installs the i386 build): coreq, its MQD DLL,
# the flight recorder's libraries and headers, the man page, the JSON schema, and the Open
# MPI type donors the project builds (fixtures/mpi/donors: per architecture, with their
# manifests) with the donor sources `coreq donor` compiles. coreq finds its DLL and donors
# relative to itself (plugin/self_path.h), so DESTDIR staging and moved prefixes work.
PREFIX ?= /usr/local
DESTDIR ?=
P = $(DESTDIR)$(PREFIX)
DONOR_ARCHS = $(notdir $(wildcard fixtures/mpi/donors/*))
DONOR_FILES = ompi-types.so.gz ompi-ob1-types.so.gz types.json ob1-types.json
DONOR_SRC = tools/fixtures/mpi/src
INSTALLED = bin/coreq lib/coreq/libcoreq_ompi41_msgq.so lib/libcoreq_rec.so lib/libcoreq_rec_preload.so \
	include/coreq/coreq_rec_format.h include/coreq/gasp.h share/man/man1/coreq.1 \
	share/doc/coreq/json-schema.md share/doc/coreq/README.md share/doc/coreq/recorder.md \
	share/coreq/donor-src/donor.c share/coreq/donor-src/donor_ob1.c \
	share/coreq/donor-src/donor-include/ompi/peruse/peruse.h \
	$(foreach a,$(DONOR_ARCHS),$(addprefix share/coreq/donors/$(a)/,$(DONOR_FILES)))

.PHONY: install uninstall
install:
	@for f in $(BUILD)/coreq $(OWN_MQD_DLL) $(REC_SO) $(REC_PRELOAD_SO); do \
		test -f $$f || { echo "make install: $$f is missing: run make$(if $(filter build,$(BUILD)),, BUILD=$(BUILD)) first" >&2; exit 1; }; done
	install -D -m 755 $(BUILD)/coreq $(P)/bin/coreq
	install -D -m 644 $(OWN_MQD_DLL) $(P)/lib/coreq/libcoreq_ompi41_msgq.so
	install -D -m 755 $(REC_SO) $(P)/lib/libcoreq_rec.so
	install -D -m 755 $(REC_PRELOAD_SO) $(P)/lib/libcoreq_rec_preload.so
	install -D -m 644 recorder/coreq_rec_format.h $(P)/include/coreq/coreq_rec_format.h
	install -D -m 644 recorder/gasp.h $(P)/include/coreq/gasp.h
	install -D -m 644 doc/coreq.1 $(P)/share/man/man1/coreq.1
	install -D -m 644 doc/json-schema.md $(P)/share/doc/coreq/json-schema.md
	install -D -m 644 README.md $(P)/share/doc/coreq/README.md
	install -D -m 644 recorder/README.md $(P)/share/doc/coreq/recorder.md
	install -D -m 644 $(DONOR_SRC)/donor.c $(P)/share/coreq/donor-src/donor.c
	install -D -m 644 $(DONOR_SRC)/donor_ob1.c $(P)/share/coreq/donor-src/donor_ob1.c
	install -D -m 644 $(DONOR_SRC)/donor-include/ompi/peruse/peruse.h $(P)/share/coreq/donor-src/donor-include/ompi/peruse/peruse.h
	@for a in $(DONOR_ARCHS); do for f in $(DONOR_FILES); do \
		echo "install -D -m 644 fixtures/mpi/donors/$$a/$$f $(P)/share/coreq/donors/$$a/$$f"; \
		install -D -m 644 fixtures/mpi/donors/$$a/$$f $(P)/share/coreq/donors/$$a/$$f || exit 1; done; done

# Removes exactly what install wrote, then the directories of coreq's own left empty.
uninstall:
	rm -f $(addprefix $(P)/,$(INSTALLED))
	-rmdir $(foreach a,$(DONOR_ARCHS),$(P)/share/coreq/donors/$(a)) $(P)/share/coreq/donors \
		$(P)/share/coreq/donor-src/donor-include/ompi/peruse $(P)/share/coreq/donor-src/donor-include/ompi \
		$(P)/share/coreq/donor-src/donor-include $(P)/share/coreq/donor-src $(P)/share/coreq \
		$(P)/share/doc/coreq $(P)/include/coreq $(P)/lib/coreq 2>/dev/null

# libFuzzer targets (fuzz/README.md); last: fuzz.mk uses the variables above.
include fuzz/fuzz.mk
