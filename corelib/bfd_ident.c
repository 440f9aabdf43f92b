/* SPDX-License-Identifier: MIT */
/* Identification of the core by the multi-architecture libbfd: its target name and
 * architecture are reported next to ours, and a disagreement is a problem worth showing
 * (it is how a host-only libbfd silently misreads foreign cores).
 *
 * Loading libbfd (bfd_lib.h: on first use, not at start) and its identification pass
 * cost more than opening a big core: only the commands that show the answer ask for it
 * (cq_core_options.identify). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/bfd_lib.h"
#include "internal.h"

static struct cq_error *identify(struct cq_core *core, const struct cq_bfd *b);

/* libbfd writes its warnings ("BFD: warning: X has a segment extending past end of file")
 * to stderr itself: bfd_check_format caches them and prints them with fprintf, whatever
 * error handler is set (binutils 2.40). coreq's stderr carries only its own one-line
 * errors, so stderr is pointed at a temporary file while libbfd runs and what it wrote
 * becomes problems of the core. */
struct cq_error *cq__core_bfd_identify(struct cq_core *core)
{
	const char *why;
	const struct cq_bfd *b = cq__bfd(&why);
	if (!b) {
		cq_core_problem(core, "identification", "%s", why);
		return NULL;
	}
	FILE *tf = tmpfile();
	int saved = -1;
	fflush(stderr);
	if (tf && (saved = dup(STDERR_FILENO)) >= 0 && dup2(fileno(tf), STDERR_FILENO) < 0) {
		close(saved);
		saved = -1;
	}
	struct cq_error *err = identify(core, b);
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

static struct cq_error *identify(struct cq_core *core, const struct cq_bfd *b)
{
	/* BFD reads from its descriptor's offset and assumes a fresh one (an inflated copy is
	 * at its end): a descriptor of its own, so that no offset is shared with coreq's */
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", core->file->fd);
	int fd = open(proc, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cq_error_errno(errno, "%s: open %s", core->file->path, proc);
	bfd *abfd = b->fdopenr(core->file->path, NULL, fd);
	if (!abfd) {
		close(fd);
		cq_core_problem(core, "identification", "libbfd cannot open %s: %s",
				core->file->path, b->errmsg(b->get_error()));
		return NULL;
	}
	if (!b->check_format(abfd, bfd_core)) {
		cq_core_problem(core, "identification",
				"libbfd does not recognize %s as a %s core: %s", core->file->path,
				core->target->name, b->errmsg(b->get_error()));
	} else {
		core->bfd_target = strdup(bfd_get_target(abfd));
		core->bfd_arch = strdup(b->printable_name(abfd));
		if (!core->bfd_target || !core->bfd_arch) {
			b->close(abfd);
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
	b->close(abfd);
	return NULL;
}
