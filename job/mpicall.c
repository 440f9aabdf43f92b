/* SPDX-License-Identifier: MIT */
/* The MPI call of each thread from its stack (mpicall.h). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "mpicall.h"

/* The blocking calls by what they wait on (C names without "MPI_", sorted for bsearch).
 * Every other MPI function waits on nothing: it returns without another process. */
static const struct call {
	const char *name;
	enum cq_mpi_wait waits;
} calls[] = {
	{"Allgather", CQ_MPI_WAITS_COLLECTIVE},
	{"Allgatherv", CQ_MPI_WAITS_COLLECTIVE},
	{"Allreduce", CQ_MPI_WAITS_COLLECTIVE},
	{"Alltoall", CQ_MPI_WAITS_COLLECTIVE},
	{"Alltoallv", CQ_MPI_WAITS_COLLECTIVE},
	{"Alltoallw", CQ_MPI_WAITS_COLLECTIVE},
	{"Barrier", CQ_MPI_WAITS_COLLECTIVE},
	{"Bcast", CQ_MPI_WAITS_COLLECTIVE},
	{"Bsend", CQ_MPI_WAITS_SEND},
	{"Cart_create", CQ_MPI_WAITS_COLLECTIVE},
	{"Comm_accept", CQ_MPI_WAITS_COLLECTIVE},
	{"Comm_connect", CQ_MPI_WAITS_COLLECTIVE},
	{"Comm_create", CQ_MPI_WAITS_COLLECTIVE},
	{"Comm_create_group", CQ_MPI_WAITS_COLLECTIVE},
	{"Comm_dup", CQ_MPI_WAITS_COLLECTIVE},
	{"Comm_spawn", CQ_MPI_WAITS_COLLECTIVE},
	{"Comm_split", CQ_MPI_WAITS_COLLECTIVE},
	{"Comm_split_type", CQ_MPI_WAITS_COLLECTIVE},
	{"Exscan", CQ_MPI_WAITS_COLLECTIVE},
	{"File_close", CQ_MPI_WAITS_COLLECTIVE},
	{"File_open", CQ_MPI_WAITS_COLLECTIVE},
	{"Finalize", CQ_MPI_WAITS_COLLECTIVE},
	{"Gather", CQ_MPI_WAITS_COLLECTIVE},
	{"Gatherv", CQ_MPI_WAITS_COLLECTIVE},
	{"Graph_create", CQ_MPI_WAITS_COLLECTIVE},
	{"Intercomm_create", CQ_MPI_WAITS_COLLECTIVE},
	{"Intercomm_merge", CQ_MPI_WAITS_COLLECTIVE},
	{"Mprobe", CQ_MPI_WAITS_MESSAGE},
	{"Mrecv", CQ_MPI_WAITS_RECV},
	{"Neighbor_allgather", CQ_MPI_WAITS_COLLECTIVE},
	{"Neighbor_allgatherv", CQ_MPI_WAITS_COLLECTIVE},
	{"Neighbor_alltoall", CQ_MPI_WAITS_COLLECTIVE},
	{"Neighbor_alltoallv", CQ_MPI_WAITS_COLLECTIVE},
	{"Neighbor_alltoallw", CQ_MPI_WAITS_COLLECTIVE},
	{"Probe", CQ_MPI_WAITS_MESSAGE},
	{"Recv", CQ_MPI_WAITS_RECV},
	{"Reduce", CQ_MPI_WAITS_COLLECTIVE},
	{"Reduce_scatter", CQ_MPI_WAITS_COLLECTIVE},
	{"Reduce_scatter_block", CQ_MPI_WAITS_COLLECTIVE},
	{"Request_get_status", CQ_MPI_WAITS_REQUESTS},
	{"Rsend", CQ_MPI_WAITS_SEND},
	{"Scan", CQ_MPI_WAITS_COLLECTIVE},
	{"Scatter", CQ_MPI_WAITS_COLLECTIVE},
	{"Scatterv", CQ_MPI_WAITS_COLLECTIVE},
	{"Send", CQ_MPI_WAITS_SEND},
	{"Sendrecv", CQ_MPI_WAITS_BOTH},
	{"Sendrecv_replace", CQ_MPI_WAITS_BOTH},
	{"Ssend", CQ_MPI_WAITS_SEND},
	{"Test", CQ_MPI_WAITS_REQUESTS},
	{"Testall", CQ_MPI_WAITS_REQUESTS},
	{"Testany", CQ_MPI_WAITS_REQUESTS},
	{"Testsome", CQ_MPI_WAITS_REQUESTS},
	{"Wait", CQ_MPI_WAITS_REQUESTS},
	{"Waitall", CQ_MPI_WAITS_REQUESTS},
	{"Waitany", CQ_MPI_WAITS_REQUESTS},
	{"Waitsome", CQ_MPI_WAITS_REQUESTS},
	{"Win_fence", CQ_MPI_WAITS_COLLECTIVE},
};

static int cmp_call(const void *key, const void *elem)
{
	return strcmp(key, ((const struct call *)elem)->name);
}

/* The longest C name of an MPI function is well under this; longer symbols are not one. */
#define NAME_MAX_LEN 64

const char *cq_mpi_call_name(const char *function)
{
	static __thread char out[NAME_MAX_LEN + 8];
	if (!function)
		return NULL;
	const char *s = function;
	bool fortran = false;
	size_t flen = strlen(function);
	if (!strncmp(s, "ompi_", 5) && flen > 7 && flen < NAME_MAX_LEN && !strcmp(s + flen - 2, "_f")) {
		/* Open MPI's Fortran bindings (mpif.h, `use mpi`, mpi_f08 all call them): the
		 * function under mpi_barrier_, MPI_BARRIER, ... and the name a frame gets from
		 * .dynsym or DWARF; only for a call the tables below know (ompi_ has internal
		 * functions too) */
		char buf[NAME_MAX_LEN + 8] = "mpi_";
		memcpy(buf + 4, s + 5, flen - 7);
		buf[4 + flen - 7] = 0;
		const char *name = cq_mpi_call_name(buf);
		return name && (cq_mpi_call_waits(name) != CQ_MPI_WAITS_NOTHING || cq_mpi_call_comm_arg(name) >= 0) ? name
														     : NULL;
	}
	if (!strncmp(s, "PMPI_", 5) || !strncmp(s, "pmpi_", 5))
		s++;
	if (!strncmp(s, "MPI_", 4)) {
		/* C: "MPI_" and a capital, then lower case (the standard's spelling); all capitals
		 * is a Fortran name ("MPI_SEND") */
		fortran = true;
		for (const char *p = s + 4; *p; p++)
			if (islower((unsigned char)*p))
				fortran = false;
	} else if (!strncmp(s, "mpi_", 4)) {
		fortran = true;
	} else {
		return NULL;
	}
	s += 4;
	size_t n = strlen(s);
	if (fortran)
		while (n && s[n - 1] == '_') /* mpi_send_, mpi_send__ */
			n--;
	if (!n || n > NAME_MAX_LEN || !isalpha((unsigned char)s[0]))
		return NULL;
	memcpy(out, "MPI_", 4);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!isalnum(c) && c != '_')
			return NULL; /* "MPI_Send@@..." or a C++ name: not an entry point as such */
		out[4 + i] = (char)(fortran ? (i ? tolower(c) : toupper(c)) : c);
	}
	out[4 + n] = 0;
	if (!fortran && !isupper((unsigned char)out[4]))
		return NULL;
	return out;
}

enum cq_mpi_wait cq_mpi_call_waits(const char *name)
{
	if (!name || strncmp(name, "MPI_", 4))
		return CQ_MPI_WAITS_NOTHING;
	const struct call *c = bsearch(name + 4, calls, sizeof(calls) / sizeof(calls[0]), sizeof(calls[0]), cmp_call);
	return c ? c->waits : CQ_MPI_WAITS_NOTHING;
}

/* The communicator's place among the C binding's arguments (MPI 3.1/4.0 chapters 5 and 6),
 * sorted by name without the "MPI_" prefix. */
static const struct comm_arg {
	const char *name;
	int arg;
} comm_args[] = {
	{"Allgather", 6}, {"Allgatherv", 7}, {"Allreduce", 5}, {"Alltoall", 6}, {"Alltoallv", 8},
	{"Alltoallw", 8}, {"Barrier", 0}, {"Bcast", 4}, {"Comm_create", 0}, {"Comm_dup", 0},
	{"Comm_split", 0}, {"Comm_split_type", 0}, {"Exscan", 5}, {"Gather", 7}, {"Gatherv", 8},
	{"Reduce", 6}, {"Reduce_scatter", 5}, {"Reduce_scatter_block", 5}, {"Scan", 5}, {"Scatter", 7},
	{"Scatterv", 8},
};

static int cmp_comm_arg(const void *key, const void *elem)
{
	return strcmp(key, ((const struct comm_arg *)elem)->name);
}

int cq_mpi_call_comm_arg(const char *name)
{
	if (!name || strncmp(name, "MPI_", 4))
		return -1;
	const struct comm_arg *c = bsearch(name + 4, comm_args, sizeof(comm_args) / sizeof(comm_args[0]),
					   sizeof(comm_args[0]), cmp_comm_arg);
	return c ? c->arg : -1;
}

const char *cq_mpi_wait_word(enum cq_mpi_wait w)
{
	static const char *const words[] = {"nothing", "send", "receive", "send+receive", "message", "requests",
					    "collective"};
	return (unsigned)w < sizeof(words) / sizeof(words[0]) ? words[w] : "nothing";
}

json_t *cq_mpi_calls(const json_t *bt)
{
	const json_t *threads = json_object_get(bt, "threads"), *t;
	if (!json_is_array(threads))
		return NULL;
	json_t *out = json_array();
	size_t i;
	json_array_foreach(threads, i, t) {
		const json_t *frames = json_object_get(t, "frames");
		/* the outermost MPI frame: the call the program made (an MPI function may call
		 * another inside the library, and a wait inside a collective is the collective's) */
		for (size_t k = json_array_size(frames); k-- > 0;) {
			const json_t *f = json_array_get(frames, k);
			const char *fn = json_string_value(json_object_get(f, "function"));
			const char *call = cq_mpi_call_name(fn);
			if (!call)
				continue;
			json_array_append_new(out, json_pack("{s:O, s:s, s:s, s:I, s:s}", "tid", json_object_get(t, "tid"),
							     "call", call, "waits", cq_mpi_wait_word(cq_mpi_call_waits(call)),
							     "frame", (json_int_t)k, "function", fn));
			break;
		}
	}
	return out;
}
