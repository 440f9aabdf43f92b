# The flight recorder (recorder/): libcoreq_rec.so, the OMPT tool and GASP tool library
# whose rings `coreq events` reads from cores, and libcoreq_rec_preload.so, the same with
# malloc/realloc/free interposed for LD_PRELOAD. Plain C, no host assumptions: builds
# with $(CC) of any target (host32: i686-linux-gnu-gcc-12, cross compilers). The OMPT
# side needs omp-tools.h ($(BUILD)/include, copied by the main Makefile); without it the
# library is the GASP side only.
#
# Included by the main Makefile; keeps whatever default goal that Makefile has.
REC_SAVED_DEFAULT_GOAL := $(.DEFAULT_GOAL)

REC_SRC = $(wildcard recorder/*.c)
REC_HDR = $(wildcard recorder/*.h)
REC_SO = $(BUILD)/recorder/libcoreq_rec.so
REC_PRELOAD_SO = $(BUILD)/recorder/libcoreq_rec_preload.so
REC_CFLAGS = $(CFLAGS_ALL) -Irecorder -fPIC -shared -fvisibility=hidden -ftls-model=initial-exec
REC_LIBS = -lpthread

.PHONY: recorder
recorder: $(REC_SO) $(REC_PRELOAD_SO)

$(REC_SO): $(REC_SRC) $(REC_HDR) recorder/recorder.mk $(BUILD)/include/omp-tools.h
	@mkdir -p $(dir $@)
	$(CC) $(REC_CFLAGS) $(LDFLAGS) -Wl,-soname,libcoreq_rec.so -o $@ $(REC_SRC) $(REC_LIBS)

$(REC_PRELOAD_SO): $(REC_SRC) $(REC_HDR) recorder/recorder.mk $(BUILD)/include/omp-tools.h
	@mkdir -p $(dir $@)
	$(CC) $(REC_CFLAGS) -DCQ_REC_PRELOAD $(LDFLAGS) -Wl,-soname,libcoreq_rec_preload.so -o $@ $(REC_SRC) $(REC_LIBS)

.DEFAULT_GOAL := $(REC_SAVED_DEFAULT_GOAL)
