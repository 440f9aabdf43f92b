/* SPDX-License-Identifier: MIT */
/* The MPI call of a thread from its stack (job/mpicall.h): which symbols are MPI entry
 * points, in C, profiling and Fortran spelling, and what each blocking call waits on. */
#include <stdlib.h>

#include "check.h"
#include "job/mpicall.h"

static void name_is(const char *sym, const char *want)
{
	const char *got = cq_mpi_call_name(sym);
	if (want)
		CHECK_STR(got, want);
	else if (got) {
		check_failed++;
		printf("not ok - %s taken as the MPI call %s\n", sym, got);
	} else {
		check_passed++;
	}
}

int main(void)
{
	/* C, the profiling name, Fortran's spellings */
	name_is("MPI_Send", "MPI_Send");
	name_is("PMPI_Send", "MPI_Send");
	name_is("mpi_send_", "MPI_Send");
	name_is("pmpi_send__", "MPI_Send");
	name_is("mpi_waitall", "MPI_Waitall");
	name_is("MPI_SENDRECV_REPLACE", "MPI_Sendrecv_replace");
	name_is("PMPI_Reduce_scatter_block", "MPI_Reduce_scatter_block");
	/* Open MPI's Fortran bindings under mpi_barrier_ and the rest, for calls it knows */
	name_is("ompi_barrier_f", "MPI_Barrier");
	name_is("ompi_sendrecv_replace_f", "MPI_Sendrecv_replace");
	name_is("ompi_comm_split_f", "MPI_Comm_split");
	name_is("ompi_type_size_f", NULL);
	name_is("ompi_f", NULL);
	name_is("ompi__f", NULL);
	/* not entry points: the library's own functions, lookalikes, versioned or C++ names */
	name_is("ompi_request_default_wait", NULL);
	name_is("mca_pml_ob1_send", NULL);
	name_is("MPIR_Barrier_impl", NULL);
	name_is("MPIC_Send", NULL);
	name_is("MPI_", NULL);
	name_is("MPI_send", NULL);
	name_is("MPI_Send@@OMPI_4", NULL);
	name_is("MPI::Comm::Send", NULL);
	name_is("PMPI_", NULL);
	name_is("mpi__", NULL);
	name_is(NULL, NULL);
	name_is("MPI_Aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", NULL);

	/* what a call waits on */
	CHECK(cq_mpi_call_waits("MPI_Send") == CQ_MPI_WAITS_SEND);
	CHECK(cq_mpi_call_waits("MPI_Ssend") == CQ_MPI_WAITS_SEND);
	CHECK(cq_mpi_call_waits("MPI_Recv") == CQ_MPI_WAITS_RECV);
	CHECK(cq_mpi_call_waits("MPI_Sendrecv") == CQ_MPI_WAITS_BOTH);
	CHECK(cq_mpi_call_waits("MPI_Probe") == CQ_MPI_WAITS_MESSAGE);
	CHECK(cq_mpi_call_waits("MPI_Waitall") == CQ_MPI_WAITS_REQUESTS);
	CHECK(cq_mpi_call_waits("MPI_Testsome") == CQ_MPI_WAITS_REQUESTS);
	CHECK(cq_mpi_call_waits("MPI_Barrier") == CQ_MPI_WAITS_COLLECTIVE);
	CHECK(cq_mpi_call_waits("MPI_Finalize") == CQ_MPI_WAITS_COLLECTIVE);
	CHECK(cq_mpi_call_waits("MPI_Isend") == CQ_MPI_WAITS_NOTHING);
	CHECK(cq_mpi_call_waits("MPI_Comm_rank") == CQ_MPI_WAITS_NOTHING);
	CHECK(cq_mpi_call_waits("Send") == CQ_MPI_WAITS_NOTHING);
	CHECK(cq_mpi_call_waits(NULL) == CQ_MPI_WAITS_NOTHING);
	CHECK_STR(cq_mpi_wait_word(CQ_MPI_WAITS_BOTH), "send+receive");

	/* from a stack document: the outermost MPI frame of each thread */
	json_t *bt = json_pack("{s:[{s:i, s:[{s:s}, {s:s}, {s:s}, {s:s}]}, {s:i, s:[{s:s}]}, {s:i, s:s}]}", "threads",
			       "tid", 7, "frames", "function", "ompi_request_default_wait", "function",
			       "ompi_coll_base_barrier_intra_recursivedoubling", "function", "PMPI_Barrier",
			       "function", "main", "tid", 8, "frames", "function", "poll", "tid", 9, "frames", "bad");
	json_t *calls = cq_mpi_calls(bt);
	CHECK(json_array_size(calls) == 1);
	json_t *c = json_array_get(calls, 0);
	CHECK(json_integer_value(json_object_get(c, "tid")) == 7);
	CHECK_STR(json_string_value(json_object_get(c, "call")), "MPI_Barrier");
	CHECK_STR(json_string_value(json_object_get(c, "waits")), "collective");
	CHECK(json_integer_value(json_object_get(c, "frame")) == 2);
	json_decref(calls);
	json_decref(bt);
	CHECK(cq_mpi_calls(NULL) == NULL);

	return check_report("test_mpicall");
}
