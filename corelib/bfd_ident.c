/* SPDX-License-Identifier: MIT */
/* Identification of the core by the multi-architecture libbfd: its target name and
 * architecture are reported next to ours, and a disagreement is a problem worth showing
 * (it is how a host-only libbfd silently misreads foreign cores). */
#define PACKAGE "coreq"
#define PACKAGE_VERSION "0"
#include <bfd.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static struct cq_error *identify(struct cq_core *core);

/* libbfd writes its warnings ("BFD: warning: X has a segment extending past end of file")
 * to stderr itself: bfd_check_format caches them and prints them with fprintf, whatever
 * error handler is set (binutils 2.40). coreq's stderr carries only its own one-line
 * errors, so stderr is pointed at a temporary file while libbfd runs and what it wrote
 * becomes problems of the core. */
struct cq_error *cq__core_bfd_identify(struct cq_core *core)
{
	FILE *tf = tmpfile();
	int saved = -1;
	fflush(stderr);
	if (tf && (saved = dup(STDERR_FILENO)) >= 0 && dup2(fileno(tf), STDERR_FILENO) < 0) {
		close(saved);
		saved = -1;
	}
	struct cq_error *err = identify(core);
	if (saved >= 0) {
		fflush(stderr);
		dup2(saved, STDERR_FILENO);
		close(saved);
		rewind(tf);
		char line[512];
		while (fgets(line, sizeof(line), tf)) {
			line[strcspn(line, "\n")] = 0;
			const char *msg = strncmp(line, "BFD: ", 5) == 0 ? line + 5 : line;
			if (*msg)
				cq_core_problem(core, "identification", "libbfd: %s", msg);
		}
	}
	if (tf)
		fclose(tf);
	return err;
}

static struct cq_error *identify(struct cq_core *core)
{
	static int initialized;
	if (!initialized) {
		bfd_init();
		initialized = 1;
	}
	/* BFD assumes a fresh descriptor is at offset 0; an inflated copy is at its end. */
	int fd = dup(core->file->fd);
	if (fd >= 0 && lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		return cq_error_errno(errno, "%s: dup", core->file->path);
	bfd *abfd = bfd_fdopenr(core->file->path, NULL, fd);
	if (!abfd) {
		close(fd);
		cq_core_problem(core, "identification", "libbfd cannot open %s: %s",
				core->file->path, bfd_errmsg(bfd_get_error()));
		return NULL;
	}
	if (!bfd_check_format(abfd, bfd_core)) {
		cq_core_problem(core, "identification",
				"libbfd does not recognize %s as a %s core: %s", core->file->path,
				core->target->name, bfd_errmsg(bfd_get_error()));
	} else {
		core->bfd_target = strdup(bfd_get_target(abfd));
		core->bfd_arch = strdup(bfd_printable_name(abfd));
		if (!core->bfd_target || !core->bfd_arch) {
			bfd_close(abfd);
			return &cq_error_nomem;
		}
		if (strncmp(core->bfd_arch, core->target->bfd_arch, strlen(core->target->bfd_arch)) != 0)
			cq_core_problem(core, "identification",
					"libbfd identifies %s as %s (%s), expected %s: is coreq linked with the multi-architecture libbfd?",
					core->file->path, core->bfd_arch, core->bfd_target,
					core->target->bfd_arch);
		/* BFD makes a ".reg/TID" section per NT_PRSTATUS it understood: a different
		 * count means one of us misreads the notes. None at all only means BFD does not
		 * know this note size (gdb 13's short riscv64 notes: the i386 and the amd64
		 * builds of libbfd even disagree there), which the register problem says. */
		size_t nreg = 0;
		for (asection *sec = abfd->sections; sec; sec = sec->next)
			if (strncmp(bfd_section_name(sec), ".reg/", 5) == 0)
				nreg++;
		if (nreg && nreg != core->nthreads)
			cq_core_problem(core, "identification",
					"libbfd finds %zu thread register sets in %s, coreq %zu threads",
					nreg, core->file->path, core->nthreads);
	}
	bfd_close(abfd);
	return NULL;
}
