/* SPDX-License-Identifier: MIT */
/* The communicator a collective's argument names (commarg.h). */
#include <inttypes.h>
#include <stdio.h>

#include "commarg.h"
#include "mpich.h"
#include "corelib/image.h"
#include "base/text.h"
#include "corelib/types.h"
#include "callbacks.h"

json_t *cq_mqd_call_communicator(struct cq_core *core, uint64_t value, const char *from, const char *no_types)
{
	static const struct {
		const char *symbol, *name;
	} predefined[] = {{"ompi_mpi_comm_world", "MPI_COMM_WORLD"}, {"ompi_mpi_comm_self", "MPI_COMM_SELF"}};
	char addr[24];
	snprintf(addr, sizeof(addr), "0x%" PRIx64, value);
	json_t *c = json_pack("{s:s, s:s}", "address", addr, "from", from);
	if (!c)
		return NULL;
	for (size_t i = 0; i < sizeof(predefined) / sizeof(predefined[0]); i++) {
		struct cq_symref ref;
		struct cq_error *err = cq_core_lookup(core, predefined[i].symbol, NULL, &ref);
		cq_error_destroy(err);
		if (!err && ref.address == value) {
			json_object_set_new(c, "name", json_string(predefined[i].name));
			return c;
		}
	}
	/* the rest needs the library's types: without a source for them, their search (every
	 * image's DWARF, libc's debug file too) finds nothing */
	if (no_types) {
		json_object_set_new(c, "id_unknown", cq_json_str(no_types));
		return c;
	}
	/* MPICH: the argument is a handle (an int), its MPIR_Comm found from it (mpich.h) */
	uint64_t at, ctx;
	const char *mname;
	if (cq_mpich_comm_handle(core, value, &at, &mname)) {
		if (mname)
			json_object_set_new(c, "name", json_string(mname));
		else if (cq_mpich_comm_context(core, at, &ctx))
			json_object_set_new(c, "id", json_integer((json_int_t)ctx));
		else
			json_object_set_new(c, "id_unknown", cq_json_str("MPICH's MPIR_Comm of this handle could not be read"));
		return c;
	}
	/* another one: its context id, where a type donor says where the field is */
	const struct cq_type *t;
	struct cq_error *err = cq__mqd_find_type(core, "ompi_communicator_t", &t);
	int64_t off = err ? -1 : cq_type_field_offset(t, "c_contextid");
	uint64_t id;
	if (!err && off >= 0 && !(err = cq_core_read_uint(core, value + (uint64_t)off, 4, &id))) {
		json_object_set_new(c, "id", json_integer((json_int_t)id));
		return c;
	}
	json_object_set_new(c, "id_unknown",
			    cq_json_str(err ? err->message : "ompi_communicator_t has no c_contextid in the type donor"));
	cq_error_destroy(err);
	return c;
}
