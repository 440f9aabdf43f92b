# fuzz/fuzz.mk — libFuzzer targets (fuzz/README.md). Included by the Makefile, which
# provides WARN and LIBS; works as `make -f Makefile -f fuzz/fuzz.mk ...` too.
#
#   make fuzz-build     build-fuzz/<target> (clang-14, -fsanitize=fuzzer,address,undefined),
#                       the base inputs (build-fuzz/data) and build-fuzz/mkseeds
#   make fuzz           every target FUZZ_SECONDS (60) each, seeds from fuzz/seeds.sh,
#                       findings into build-fuzz/findings/<target>/
#   make fuzz-smoke     every target FUZZ_SMOKE_SECONDS (30) each; non-zero exit on a finding (CI)
#   make fuzz-regress   replay fuzz/regressions/<target>/* through each target
#   FUZZ_TARGETS="fuzz_tls" narrows any of them; FUZZ_PARALLEL=2 runs two targets at a time.

FUZZ_DIR ?= build-fuzz
FUZZ_CC ?= clang-14
FUZZ_TARGETS ?= fuzz_core fuzz_linkmap fuzz_tls fuzz_bundle fuzz_callbacks fuzz_image fuzz_jobjson fuzz_stack fuzz_tree fuzz_progress
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 30
FUZZ_PARALLEL ?= 1
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_OPT = -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN)
# The library sources are compiled by the Makefile's own rules into $(FUZZ_DIR), with
# coverage instrumentation for libFuzzer (fuzzer-no-link) on top of the sanitizers.
FUZZ_LIB_OPT = $(FUZZ_OPT) -fsanitize=fuzzer-no-link
FUZZ_LIBA = $(FUZZ_DIR)/libcoreq-ompd.a $(FUZZ_DIR)/libcoreq-mqd.a $(FUZZ_DIR)/libcoreq-stack.a $(FUZZ_DIR)/libcoreq-job.a $(FUZZ_DIR)/libcoreq.a $(FUZZ_DIR)/libcoreq-elf.a \
	$(FUZZ_DIR)/libcoreq-output.a $(FUZZ_DIR)/libcoreq-plugin.a $(FUZZ_DIR)/libcoreq-input.a $(FUZZ_DIR)/libcoreq-base.a \
	$(FUZZ_DIR)/libcoreq-targets.a
FUZZ_DATA = $(abspath $(FUZZ_DIR))/data
FUZZ_CFLAGS = -std=gnu11 $(FUZZ_OPT) $(WARN) -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I. \
	-I$(FUZZ_DIR)/include -DFUZZ_DATA_DIR='"$(FUZZ_DATA)"'
FUZZ_HDRS = fuzz/fuzz_common.h fuzz/fuzz_base.h
FUZZ_BINS = $(addprefix $(FUZZ_DIR)/,$(FUZZ_TARGETS))
FUZZ_RUN = FUZZ_DIR=$(FUZZ_DIR) FUZZ_PARALLEL=$(FUZZ_PARALLEL) fuzz/run.sh

.PHONY: fuzz-build fuzz fuzz-smoke fuzz-regress fuzz-clean

fuzz-build: $(FUZZ_BINS) $(FUZZ_DIR)/mkseeds $(FUZZ_DATA)/.ready

# The library archives and mkcore, through the Makefile's rules with BUILD=$(FUZZ_DIR); the
# stamp stands for them (make cannot see into the recursive build).
$(FUZZ_DIR)/.libs: $(wildcard targets/*.[ch] base/*.[ch] input/*.[ch] plugin/*.[ch] output/*.[ch] corelib/*.[ch] ompd/*.[ch] mqd/*.[ch] stack/*.[ch] job/*.[ch] elf/*.[ch]) tests/tools/mkcore.c
	$(MAKE) BUILD=$(FUZZ_DIR) CC=$(FUZZ_CC) OPT="$(FUZZ_LIB_OPT)" $(FUZZ_LIBA) $(FUZZ_DIR)/mkcore
	touch $@

$(FUZZ_DIR)/fuzz_%: fuzz/fuzz_%.c $(FUZZ_HDRS) $(FUZZ_DIR)/.libs
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIBA) $(LIBS)

$(FUZZ_DIR)/mkseeds: fuzz/mkseeds.c fuzz/fuzz_common.h
	$(FUZZ_CC) -std=gnu11 -O1 -g $(WARN) -D_GNU_SOURCE -o $@ $< -lz

# The base inputs the targets and mkseeds read: mkcore's synthetic cores and the fixture
# bundles (build-fuzz/data; see fuzz/seeds.sh).
$(FUZZ_DATA)/.ready: fuzz/seeds.sh tests/tools/mkcore.c tools/fixtures/packages.lock | $(FUZZ_DIR)/.libs
	FUZZ_DIR=$(FUZZ_DIR) fuzz/seeds.sh data

fuzz: fuzz-build
	FUZZ_DIR=$(FUZZ_DIR) fuzz/seeds.sh corpus $(FUZZ_TARGETS)
	$(FUZZ_RUN) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-smoke: fuzz-build
	FUZZ_DIR=$(FUZZ_DIR) fuzz/seeds.sh corpus $(FUZZ_TARGETS)
	$(FUZZ_RUN) $(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)

fuzz-regress: fuzz-build
	$(FUZZ_RUN) --regress $(FUZZ_TARGETS)

fuzz-clean:
	rm -rf $(FUZZ_DIR)
