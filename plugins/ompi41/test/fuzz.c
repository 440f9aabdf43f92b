/* SPDX-License-Identifier: MIT */
/* Robustness check of the Open MPI 4.1 DLL (not part of it): drive every entry point
 * against random "target memory" with plausible layouts (words that are small numbers or
 * pointers back into the memory, so lists form chains and cycles) and fetches that fail
 * at random. It must neither crash nor hang. Build and run (ASan/UBSan advised):
 *   cc -std=gnu11 -g -fsanitize=address,undefined -I. -o fuzz plugins/ompi41/test/fuzz.c -ldl
 *   ./fuzz build/plugins/libcoreq_ompi41_msgq.so [ITERATIONS]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mqd/mqs_abi.h"

#define BASE 0x10000u
#define SIZE 0x10000u
static unsigned char mem[SIZE];
static unsigned seed;
static int psize = 8;

static unsigned rnd(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

static unsigned hash(const char *s)
{
	unsigned h = 5381;
	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

static void fill(void)
{
	for (unsigned i = 0; i < SIZE; i += 8) {
		unsigned long long w;
		unsigned k = rnd() % 20;
		if (k < 8)
			w = BASE + (rnd() % 256) * 256; /* few distinct pointers: class and comm checks pass */
		else if (k < 14)
			w = rnd() % 8;
		else if (k < 17)
			w = (unsigned long long)rnd() << 32 | rnd();
		else
			w = (unsigned long long)-1 - rnd() % 4;
		memcpy(mem + i, &w, 8);
	}
}

static void *cb_malloc(size_t n) { return n > (64u << 20) ? NULL : malloc(n ? n : 1); }
static void cb_free(void *p) { free(p); }
static void cb_dprints(const char *t) { (void)t; }
static char *cb_err(int c) { (void)c; return (char *)"?"; }
static void *iinfo, *pinfo;
static void put_ii(cq_mqs_image *i, cq_mqs_image_info *v) { (void)i; iinfo = v; }
static cq_mqs_image_info *get_ii(cq_mqs_image *i) { (void)i; return iinfo; }
static void put_pi(cq_mqs_process *p, cq_mqs_process_info *v) { (void)p; pinfo = v; }
static cq_mqs_process_info *get_pi(cq_mqs_process *p) { (void)p; return pinfo; }

static void sizes(cq_mqs_process *p, cq_mqs_target_type_sizes *s)
{
	(void)p;
	*s = (cq_mqs_target_type_sizes){2, 4, psize, 8, psize};
}
static int find_fn(cq_mqs_image *i, char *n, int l, uint64_t *a)
{
	(void)i; (void)l;
	if (!strcmp(n, "MPIR_Ignore_queues"))
		return CQ_MQS_NO_INFORMATION;
	if (a)
		*a = BASE + (hash(n) % 256) * 256;
	return CQ_MQS_OK;
}
static int find_sym(cq_mqs_image *i, char *n, uint64_t *a) { return find_fn(i, n, 'c', a); }
static cq_mqs_type *find_type(cq_mqs_image *i, char *n, int l) { (void)i; (void)l; return (cq_mqs_type *)n; }
static int field_off(cq_mqs_type *t, char *f)
{
	if (!strcmp(f, "opal_list_next")) return 0;
	if (!strcmp(f, "opal_list_prev")) return psize;
	if (!strcmp(f, "hdr_padding")) return -1;
	return (int)((hash((char *)t) ^ hash(f)) % 96) & ~3;
}
static int size_of(cq_mqs_type *t) { (void)t; return 32; }
static int grank(cq_mqs_process *p) { (void)p; return 0; }
static cq_mqs_image *get_image(cq_mqs_process *p) { (void)p; return (cq_mqs_image *)1; }
static int fetch(cq_mqs_process *p, uint64_t a, int n, void *buf)
{
	(void)p;
	if (n < 0 || n > (int)SIZE || a < BASE || a - BASE > SIZE - (uint64_t)n || rnd() % 400 == 0)
		return CQ_MQS_NO_INFORMATION;
	memcpy(buf, mem + (a - BASE), (size_t)n);
	return CQ_MQS_OK;
}
static void t2h(cq_mqs_process *p, const void *in, void *out, int n) { (void)p; memmove(out, in, (size_t)n); }

int main(int argc, char **argv)
{
	void *dl = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
	if (!dl) {
		fprintf(stderr, "usage: fuzz DLL [N] (%s)\n", dlerror());
		return 2;
	}
	struct cq_mqs_api api;
#define LOAD(name, ret, args) if (!(api.name = (ret(*) args)dlsym(dl, #name))) { fprintf(stderr, "no %s\n", #name); return 2; }
	CQ_MQS_FUNCTIONS(LOAD)
	static const cq_mqs_basic_callbacks bcb = {cb_malloc, cb_free, cb_dprints, cb_err, put_ii, get_ii, put_pi, get_pi};
	static const cq_mqs_image_callbacks8 icb = {sizes, find_fn, find_sym, find_type, field_off, size_of};
	static const cq_mqs_process_callbacks8 pcb = {grank, get_image, fetch, t2h};
	int n = argc > 2 ? atoi(argv[2]) : 2000;
	long comms = 0, ops = 0;
	clock_t t0 = clock();
	api.mqs_setup_basic_callbacks(&bcb);
	for (int it = 0; it < n; it++) {
		seed = (unsigned)it * 2654435761u;
		psize = it % 3 == 0 ? 4 : 8;
		fill();
		char *msg;
		cq_mqs_image *img = (cq_mqs_image *)1;
		cq_mqs_process *proc = (cq_mqs_process *)2;
		if (api.mqs_setup_image(img, &icb) || api.mqs_image_has_queues(img, &msg))
			return fprintf(stderr, "image setup failed\n"), 1;
		if (!api.mqs_setup_process(proc, &pcb) && !api.mqs_process_has_queues(proc, &msg) &&
		    !api.mqs_update_communicator_list(proc)) {
			for (int rc = api.mqs_setup_communicator_iterator(proc); rc == CQ_MQS_OK; rc = api.mqs_next_communicator(proc)) {
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
					if (api.mqs_setup_operation_iterator(proc, cls))
						continue;
					cq_mqs_pending_operation8 o;
					for (int k = 0; k < 200000 && api.mqs_next_operation(proc, &o) == CQ_MQS_OK; k++)
						ops++;
				}
			}
		}
		api.mqs_destroy_process_info(pinfo);
		api.mqs_destroy_image_info(iinfo);
		pinfo = iinfo = NULL;
	}
	printf("fuzz: %d runs, %ld communicators, %ld operations, %.1f s, no crash\n", n, comms, ops,
	       (double)(clock() - t0) / CLOCKS_PER_SEC);
	return 0;
}
