/* SPDX-License-Identifier: MIT */
/**
 * @file output.h
 * Files coreq writes (bundles, --dot, --svg). An output is written to a temporary file
 * created exclusively (O_CREAT|O_EXCL: a symlink planted at the name is never followed) in
 * the output's own directory, and renamed onto the output only when complete, so a
 * half-written file is never left and nothing but the named output is ever replaced. An
 * output that is the same file as an input (also through a symlink or another name) is
 * refused before anything is written.
 */
#ifndef COREQ_OUTPUT_H
#define COREQ_OUTPUT_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/error.h"

/** An output being written. */
struct cq_output {
	char *path; /**< the output as named */
	char *tmp;  /**< the temporary file, in the same directory */
	int fd;     /**< open for writing on @c tmp */
};

/** Whether @p a and @p b name the same existing file (device and inode). */
bool cq_same_file(const char *a, const char *b);

/**
 * Refuse @p path if it is the same file as one of the @p ninputs paths in @p inputs (NULL
 * entries skipped; @p what names the output in the message, "--dot"), then create the
 * temporary file. Release with cq_output_commit() or cq_output_abort().
 */
struct cq_error *cq_output_begin(const char *path, const char *what, const char *const *inputs,
				 size_t ninputs, struct cq_output *ret);

/** cq_output_begin() for an output no wider than @p mode (then the umask): a snapshot of a
 * process's memory is 0600, as the kernel's core of it; a bundle no wider than its core.
 * The temporary file has that mode from its creation on. */
struct cq_error *cq_output_begin_mode(const char *path, const char *what, const char *const *inputs,
				      size_t ninputs, mode_t mode, struct cq_output *ret);

/** Write all @p n bytes at @p p to the temporary file (retrying short writes and
 * interruptions); an error names the output. */
struct cq_error *cq_output_write(struct cq_output *o, const void *p, size_t n);

/** Close the temporary file and rename it onto the output; on failure it is removed.
 * @p o is released either way. */
struct cq_error *cq_output_commit(struct cq_output *o);

/** Close and remove the temporary file; release @p o. Safe after a failed begin. */
void cq_output_abort(struct cq_output *o);

#endif
