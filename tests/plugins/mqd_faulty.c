/* SPDX-License-Identifier: MIT */
/* A faulty MQD DLL (tests/fixture/mqd_faulty.py): it works like a tiny DLL of one
 * communicator with two pending sends, and misbehaves as $COREQ_MQD_FAULT says:
 *   none        behaves
 *   segv-op     SIGSEGV in mqs_next_operation, on the second send
 *   hang-comm   never returns from mqs_get_communicator
 *   exit-image  calls exit(3) in mqs_setup_image
 *   narrow      mqs_dll_taddr_width() says 4: too narrow for a 64-bit target
 *   compat      interface compatibility level 9
 *   spam        floods stdout and stderr from every entry point
 *   wild        asks the host for 2^40 bytes (SIZE_MAX on a 32-bit host), fetches NULL and with a negative size,
 *               looks up a type that does not exist; reports what the host answered in
 *               extra_text
 * The host must survive each, name the call, keep what came before, refuse by name. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mqd/mqs_abi.h"

#define EXPORT __attribute__((visibility("default")))

static const cq_mqs_basic_callbacks *basic;
static const cq_mqs_image_callbacks8 *icb;
static const cq_mqs_process_callbacks8 *pcb;
static int comm_pos, op_pos;
static char wild_report[64];

static const char *fault(void)
{
	const char *f = getenv("COREQ_MQD_FAULT");
	return f ? f : "none";
}

static bool is(const char *mode)
{
	return strcmp(fault(), mode) == 0;
}

static void spam(void)
{
	if (!is("spam"))
		return;
	for (int i = 0; i < 2000; i++) {
		printf("mqd_faulty: spam line %d xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n", i);
		fprintf(stderr, "mqd_faulty: stderr spam %d\n", i);
	}
	fflush(stdout);
}

EXPORT void mqs_setup_basic_callbacks(const cq_mqs_basic_callbacks *cb)
{
	basic = cb;
}

EXPORT char *mqs_version_string(void)
{
	spam();
	return (char *)"coreq faulty MQD test DLL";
}

EXPORT int mqs_version_compatibility(void)
{
	return is("compat") ? 9 : 2;
}

EXPORT int mqs_dll_taddr_width(void)
{
	return is("narrow") ? 4 : 8;
}

EXPORT char *mqs_dll_error_string(int code)
{
	return (char *)"mqd_faulty error";
}

EXPORT int mqs_setup_image(cq_mqs_image *image, const void *cb)
{
	spam();
	if (is("exit-image"))
		exit(3);
	icb = cb;
	return CQ_MQS_OK;
}

EXPORT int mqs_image_has_queues(cq_mqs_image *image, char **message)
{
	*message = (char *)"%s has queues (mqd_faulty)";
	return CQ_MQS_OK;
}

EXPORT void mqs_destroy_image_info(cq_mqs_image_info *info)
{
}

EXPORT int mqs_setup_process(cq_mqs_process *process, const void *cb)
{
	pcb = cb;
	if (is("wild")) {
		/* 2^40 bytes, or all a 32-bit size_t can say */
		size_t huge = sizeof(size_t) > 4 ? (size_t)(UINT64_C(1) << 40) : SIZE_MAX;
		void *p = basic->mqs_malloc_fp(huge);
		char buf[16];
		int null_fetch = pcb->mqs_fetch_data_fp(process, 0, 8, buf);
		int neg_fetch = pcb->mqs_fetch_data_fp(process, 0x1000, -5, buf);
		cq_mqs_type *t = icb->mqs_find_type_fp(pcb->mqs_get_image_fp(process), (char *)"no_such_type_t", 'c');
		snprintf(wild_report, sizeof wild_report, "malloc %s, fetch(0) %d, fetch(-5) %d, type %s",
			 p ? "GRANTED" : "refused", null_fetch, neg_fetch, t ? "FOUND" : "none");
		if (p)
			basic->mqs_free_fp(p);
	}
	return CQ_MQS_OK;
}

EXPORT int mqs_process_has_queues(cq_mqs_process *process, char **message)
{
	*message = NULL;
	return CQ_MQS_OK;
}

EXPORT void mqs_destroy_process_info(cq_mqs_process_info *info)
{
}

EXPORT int mqs_update_communicator_list(cq_mqs_process *process)
{
	return CQ_MQS_OK;
}

EXPORT int mqs_setup_communicator_iterator(cq_mqs_process *process)
{
	comm_pos = 0;
	return CQ_MQS_OK;
}

EXPORT int mqs_get_communicator(cq_mqs_process *process, void *out)
{
	if (is("hang-comm"))
		for (;;)
			pause();
	if (comm_pos > 0)
		return CQ_MQS_END_OF_LIST;
	cq_mqs_communicator8 *c = out;
	memset(c, 0, sizeof(*c));
	c->unique_id = 0;
	c->local_rank = 0;
	c->size = 1;
	strcpy(c->name, "MPI_COMM_WORLD");
	return CQ_MQS_OK;
}

EXPORT int mqs_get_comm_group(cq_mqs_process *process, int *ranks)
{
	ranks[0] = 0;
	return CQ_MQS_OK;
}

EXPORT int mqs_next_communicator(cq_mqs_process *process)
{
	comm_pos++;
	return CQ_MQS_END_OF_LIST;
}

EXPORT int mqs_setup_operation_iterator(cq_mqs_process *process, int op_class)
{
	op_pos = 0;
	return op_class == CQ_MQS_PENDING_SENDS ? CQ_MQS_OK : CQ_MQS_NO_INFORMATION;
}

EXPORT int mqs_next_operation(cq_mqs_process *process, void *out)
{
	if (op_pos >= 2)
		return CQ_MQS_END_OF_LIST;
	if (op_pos == 1 && is("segv-op"))
		*(volatile int *)(uintptr_t)strtoul("16", NULL, 0) = 1; /* a real fault, not raise() */
	cq_mqs_pending_operation8 *o = out;
	memset(o, 0, sizeof(*o));
	o->status = CQ_MQS_ST_PENDING;
	o->desired_local_rank = o->desired_global_rank = 0;
	o->desired_tag = 10 + op_pos;
	o->desired_length = 100;
	snprintf(o->extra_text[0], sizeof(o->extra_text[0]), "%s", wild_report[0] ? wild_report : "faulty op");
	op_pos++;
	return CQ_MQS_OK;
}
