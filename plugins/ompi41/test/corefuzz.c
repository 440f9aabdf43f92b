/* SPDX-License-Identifier: MIT */
/* Robustness check of the Open MPI 4.1 DLL (not part of it): a real core read through
 * coreq's own callbacks, with target memory corrupted at random (each byte, per seed, flipped
 * with probability 1/RATE, the same at every read) and some reads failing. Every entry point
 * is driven as coreq does; the DLL must neither crash nor hang. Build (links coreq's
 * libraries, after `make`), run with ASan/UBSan:
 *   cc -std=gnu11 -g -fsanitize=address,undefined -I. -Ibuild/include -o corefuzz \
 *     plugins/ompi41/test/corefuzz.c build/libcoreq-mqd.a build/libcoreq.a \
 *     -l:libbfd-multiarch.so -ldw -lelf -ljansson -lz -lpthread -ldl
 *   ./corefuzz DLL CORE EXE TYPES [RUNS] [RATE]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "corelib/image.h"
#include "mqd/callbacks.h"

static const cq_mqs_process_callbacks8 *real;
static uint64_t seed, rate;
static unsigned long reads;

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static int fetch(cq_mqs_process *p, uint64_t a, int n, void *buf)
{
	reads++;
	if (mix(seed ^ a ^ (uint64_t)n << 56) % (rate * 8) == 0)
		return CQ_MQS_NO_INFORMATION;
	int rc = real->mqs_fetch_data_fp(p, a, n, buf);
	if (rc == CQ_MQS_OK)
		for (int i = 0; i < n; i++) {
			uint64_t h = mix(seed * 0x9e3779b97f4a7c15ULL ^ (a + (uint64_t)i));
			if (h % rate == 0)
				((unsigned char *)buf)[i] ^= (unsigned char)(h >> 40 | 1);
		}
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: corefuzz DLL CORE EXE TYPES [RUNS] [RATE]\n");
		return 2;
	}
	void *dl = dlopen(argv[1], RTLD_NOW);
	if (!dl)
		return fprintf(stderr, "%s\n", dlerror()), 2;
	struct cq_mqs_api api;
#define LOAD(name, ret, args) if (!(api.name = (ret(*) args)dlsym(dl, #name))) return 2;
	CQ_MQS_FUNCTIONS(LOAD)
	struct cq_core_options o = {.exe = argv[3], .type_donors = argv[4]};
	struct cq_core *core;
	if (cq_core_open(argv[2], &o, &core) || cq_core_load_images(core))
		return fprintf(stderr, "cannot open %s\n", argv[2]), 2;
	int runs = argc > 5 ? atoi(argv[5]) : 500;
	rate = argc > 6 ? strtoull(argv[6], NULL, 0) : 200;
	long comms = 0, ops = 0;
	double worst = 0;
	for (int r = 0; r < runs; r++) {
		seed = mix((uint64_t)r + 1);
		struct cq_mqd_stats st = {0};
		cq_mqs_image *img;
		cq_mqs_process *proc;
		struct cq_mqd_tables t = cq__mqd_callbacks(core, 8, &st, &img, &proc);
		real = t.process;
		cq_mqs_process_callbacks8 pcb = *real;
		pcb.mqs_fetch_data_fp = fetch;
		clock_t t0 = clock();
		char *msg;
		api.mqs_setup_basic_callbacks(t.basic);
		if (api.mqs_setup_image(img, t.image) || api.mqs_image_has_queues(img, &msg))
			return fprintf(stderr, "image: no queues (types?)\n"), 1;
		unsigned long r0 = reads, rq[4] = {0};
		int upd = 1;
		if (!api.mqs_setup_process(proc, &pcb) && !api.mqs_process_has_queues(proc, &msg) &&
		    !(upd = api.mqs_update_communicator_list(proc))) {
			rq[3] = reads - r0;
			for (int rc = api.mqs_setup_communicator_iterator(proc); rc == CQ_MQS_OK;
			     rc = api.mqs_next_communicator(proc)) {
				cq_mqs_communicator8 c;
				if (api.mqs_get_communicator(proc, &c))
					break;
				comms++;
				if (c.size > 0 && c.size < (1 << 22)) {
					int *g = malloc((size_t)c.size * sizeof(int));
					api.mqs_get_comm_group(proc, g);
					free(g);
				}
				for (int cls = 0; cls < 3; cls++) {
					unsigned long r1 = reads;
					if (api.mqs_setup_operation_iterator(proc, cls))
						continue;
					cq_mqs_pending_operation8 op;
					for (int k = 0; k < 100000 && api.mqs_next_operation(proc, &op) == CQ_MQS_OK; k++)
						ops++;
					rq[cls] += reads - r1;
				}
			}
		}
		api.mqs_destroy_process_info(proc->info);
		api.mqs_destroy_image_info(img->info);
		double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
		if (s > worst)
			worst = s;
		if (getenv("COREFUZZ_VERBOSE") && reads - r0 > 100000)
			printf("run %d: %lu reads: comm list %lu, sends %lu, receives %lu, unexpected %lu\n", r,
			       reads - r0, rq[3], rq[0], rq[1], rq[2]);
	}
	printf("corefuzz: %d runs (1 byte in %llu corrupted), %ld communicators, %ld operations, %lu reads, slowest run %.3f s, no crash\n",
	       runs, (unsigned long long)rate, comms, ops, reads, worst);
	cq_core_close(core);
	return 0;
}
