/* SPDX-License-Identifier: MIT */
/**
 * @file mqs_abi.h
 * The MPI Message Queue Dumping interface 1.0 (../shared/specs/mqd-1.0.md) as coreq hosts
 * it. Internal to mqd/; the names carry a cq_ prefix so that nothing here is mistaken for
 * (or clashes with) an MPI implementation's own header.
 *
 * mqs_taddr_t and mqs_tword_t are the DLL's: Open MPI's DLL uses unsigned long and long,
 * so the DLL reports their width (mqs_dll_taddr_width) and the layouts of the
 * communicator and operation structs and of three callbacks follow it. A host of one
 * bitness may meet both widths (a 32-bit host: Open MPI's i386 DLL with 4, a DLL built
 * with 64-bit addresses with 8), so every width-dependent type exists twice, suffixed 4
 * and 8, made by CQ_MQS_WIDTH_TYPES.
 */
#ifndef COREQ_MQS_ABI_H
#define COREQ_MQS_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Opaque objects of the debugger, passed by pointer (spec 5.3). */
typedef struct cq_mqs_image_s cq_mqs_image;
typedef struct cq_mqs_process_s cq_mqs_process;
typedef struct cq_mqs_type_s cq_mqs_type;
typedef struct cq_mqs_image_info_s cq_mqs_image_info;
typedef struct cq_mqs_process_info_s cq_mqs_process_info;

/** spec 5.4.1 */
enum { CQ_MQS_LANG_C = 'c', CQ_MQS_LANG_CPLUS = 'C', CQ_MQS_LANG_F77 = 'f', CQ_MQS_LANG_F90 = 'F' };
/** spec 5.4.2 */
enum { CQ_MQS_PENDING_SENDS, CQ_MQS_PENDING_RECEIVES, CQ_MQS_UNEXPECTED_MESSAGES, CQ_MQS_NCLASSES };
/** spec 5.4.3: the interface levels a DLL may report (3: FOR_MPI2 builds). */
enum { CQ_MQS_COMPAT_MIN = 2, CQ_MQS_COMPAT_MAX = 3 };
/** spec 5.4.4 */
enum { CQ_MQS_ST_PENDING, CQ_MQS_ST_MATCHED, CQ_MQS_ST_COMPLETE };
/** spec 5.4.5 */
enum { CQ_MQS_OK = 0, CQ_MQS_NO_INFORMATION = 1, CQ_MQS_END_OF_LIST = 2, CQ_MQS_FIRST_USER_CODE = 100 };
/** spec 5.4.6 */
enum { CQ_MQS_INVALID_PROCESS = -1 };

/** spec 5.2.3 */
typedef struct {
	int short_size, int_size, long_size, long_long_size, pointer_size;
} cq_mqs_target_type_sizes;

/* spec 5.6.1: basic callbacks (no width-dependent types). */
typedef void *(*cq_mqs_malloc_ft)(size_t size);
typedef void (*cq_mqs_free_ft)(void *buf);
typedef void (*cq_mqs_dprints_ft)(const char *text);
typedef char *(*cq_mqs_errorstring_ft)(int code);
typedef void (*cq_mqs_put_image_info_ft)(cq_mqs_image *image, cq_mqs_image_info *info);
typedef cq_mqs_image_info *(*cq_mqs_get_image_info_ft)(cq_mqs_image *image);
typedef void (*cq_mqs_put_process_info_ft)(cq_mqs_process *process, cq_mqs_process_info *info);
typedef cq_mqs_process_info *(*cq_mqs_get_process_info_ft)(cq_mqs_process *process);

typedef struct {
	cq_mqs_malloc_ft mqs_malloc_fp;
	cq_mqs_free_ft mqs_free_fp;
	cq_mqs_dprints_ft mqs_dprints_fp;
	cq_mqs_errorstring_ft mqs_errorstring_fp;
	cq_mqs_put_image_info_ft mqs_put_image_info_fp;
	cq_mqs_get_image_info_ft mqs_get_image_info_fp;
	cq_mqs_put_process_info_ft mqs_put_process_info_fp;
	cq_mqs_get_process_info_ft mqs_get_process_info_fp;
} cq_mqs_basic_callbacks;

/* Width-independent image and process callbacks. */
typedef void (*cq_mqs_get_type_sizes_ft)(cq_mqs_process *process, cq_mqs_target_type_sizes *sizes);
typedef cq_mqs_type *(*cq_mqs_find_type_ft)(cq_mqs_image *image, char *name, int lang);
typedef int (*cq_mqs_field_offset_ft)(cq_mqs_type *type, char *field);
typedef int (*cq_mqs_sizeof_ft)(cq_mqs_type *type);
typedef int (*cq_mqs_get_global_rank_ft)(cq_mqs_process *process);
typedef cq_mqs_image *(*cq_mqs_get_image_ft)(cq_mqs_process *process);
typedef void (*cq_mqs_target_to_host_ft)(cq_mqs_process *process, const void *in, void *out,
					 int size);

/* spec 5.5 and the callbacks that carry mqs_taddr_t, for one width W. */
#define CQ_MQS_WIDTH_TYPES(W, taddr, tword)                                                  \
	typedef struct {                                                                     \
		taddr unique_id;                                                             \
		tword local_rank;                                                            \
		tword size;                                                                  \
		char name[64];                                                               \
	} cq_mqs_communicator##W;                                                            \
	typedef struct {                                                                     \
		int status;                                                                  \
		tword desired_local_rank;                                                    \
		tword desired_global_rank;                                                   \
		int tag_wild;                                                                \
		tword desired_tag;                                                           \
		tword desired_length;                                                        \
		int system_buffer;                                                           \
		taddr buffer;                                                                \
		tword actual_local_rank;                                                     \
		tword actual_global_rank;                                                    \
		tword actual_tag;                                                            \
		tword actual_length;                                                         \
		char extra_text[5][64];                                                      \
	} cq_mqs_pending_operation##W;                                                       \
	typedef int (*cq_mqs_find_function_ft##W)(cq_mqs_image *image, char *name, int lang, \
						  taddr *addr);                              \
	typedef int (*cq_mqs_find_symbol_ft##W)(cq_mqs_image *image, char *name, taddr *addr); \
	typedef int (*cq_mqs_fetch_data_ft##W)(cq_mqs_process *process, taddr addr, int size, \
					       void *buf);                                   \
	typedef struct {                                                                     \
		cq_mqs_get_type_sizes_ft mqs_get_type_sizes_fp;                              \
		cq_mqs_find_function_ft##W mqs_find_function_fp;                             \
		cq_mqs_find_symbol_ft##W mqs_find_symbol_fp;                                 \
		cq_mqs_find_type_ft mqs_find_type_fp;                                        \
		cq_mqs_field_offset_ft mqs_field_offset_fp;                                  \
		cq_mqs_sizeof_ft mqs_sizeof_fp;                                              \
	} cq_mqs_image_callbacks##W;                                                         \
	typedef struct {                                                                     \
		cq_mqs_get_global_rank_ft mqs_get_global_rank_fp;                            \
		cq_mqs_get_image_ft mqs_get_image_fp;                                        \
		cq_mqs_fetch_data_ft##W mqs_fetch_data_fp;                                   \
		cq_mqs_target_to_host_ft mqs_target_to_host_fp;                              \
	} cq_mqs_process_callbacks##W;

CQ_MQS_WIDTH_TYPES(4, uint32_t, int32_t)
CQ_MQS_WIDTH_TYPES(8, uint64_t, int64_t)

/**
 * The DLL's entry points (spec 5.7-5.10), by name and type. Structs whose layout follows
 * the width travel as void *; the host gives the layout mqs_dll_taddr_width() names.
 */
#define CQ_MQS_FUNCTIONS(X)                                                                  \
	X(mqs_setup_basic_callbacks, void, (const cq_mqs_basic_callbacks *cb))               \
	X(mqs_version_string, char *, (void))                                                \
	X(mqs_version_compatibility, int, (void))                                            \
	X(mqs_dll_taddr_width, int, (void))                                                  \
	X(mqs_dll_error_string, char *, (int code))                                          \
	X(mqs_setup_image, int, (cq_mqs_image *image, const void *image_callbacks))          \
	X(mqs_image_has_queues, int, (cq_mqs_image *image, char **message))                  \
	X(mqs_destroy_image_info, void, (cq_mqs_image_info *info))                           \
	X(mqs_setup_process, int, (cq_mqs_process *process, const void *process_callbacks))  \
	X(mqs_process_has_queues, int, (cq_mqs_process *process, char **message))            \
	X(mqs_destroy_process_info, void, (cq_mqs_process_info *info))                       \
	X(mqs_update_communicator_list, int, (cq_mqs_process *process))                      \
	X(mqs_setup_communicator_iterator, int, (cq_mqs_process *process))                   \
	X(mqs_get_communicator, int, (cq_mqs_process *process, void *communicator))          \
	X(mqs_get_comm_group, int, (cq_mqs_process *process, int *ranks))                    \
	X(mqs_next_communicator, int, (cq_mqs_process *process))                             \
	X(mqs_setup_operation_iterator, int, (cq_mqs_process *process, int op_class))        \
	X(mqs_next_operation, int, (cq_mqs_process *process, void *operation))

struct cq_mqs_api {
#define CQ_MQS_FIELD(name, ret, args) ret(*name) args;
	CQ_MQS_FUNCTIONS(CQ_MQS_FIELD)
#undef CQ_MQS_FIELD
};

#endif
