/* SPDX-License-Identifier: MIT */
/* Identification of the core by the multi-architecture libbfd: its target name and
 * architecture are reported next to ours, and a disagreement is a problem worth showing
 * (it is how a host-only libbfd silently misreads foreign cores).
 *
 * Loading libbfd and its identification pass cost more than everything else `coreq info`
 * does on a big core, and neither needs anything but the core file: they run on a thread
 * of their own while the images are found and the threads symbolized, and their results
 * (names and problems, in the place the problems would have had) are taken in when asked
 * for (cq_core_identified). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bfd_lib.h"
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

/* An identification under way: it works on a core of its own that shares only what does
 * not change after cq_core_open (file, target, thread count) and gathers the results. */
struct cq_bfd_pending {
	pthread_t thread;
	struct cq_core own;
	size_t at; /* where its problems go among the core's */
	struct cq_error *err;
};

static void *identify_thread(void *arg)
{
	struct cq_bfd_pending *p = arg;
	p->err = cq__core_bfd_identify(&p->own);
	return NULL;
}

struct cq_error *cq__core_bfd_identify_start(struct cq_core *core)
{
	struct cq_bfd_pending *p = calloc(1, sizeof(*p));
	if (!p)
		return &cq_error_nomem;
	p->own.file = core->file;
	p->own.target = core->target;
	p->own.nthreads = core->nthreads;
	p->at = core->nproblems;
	if (pthread_create(&p->thread, NULL, identify_thread, p) != 0) {
		free(p); /* no thread: here and now */
		return cq__core_bfd_identify(core);
	}
	core->bfd_pending = p;
	return NULL;
}

struct cq_error *cq_core_identified(struct cq_core *core)
{
	struct cq_bfd_pending *p = core->bfd_pending;
	if (!p)
		return NULL;
	core->bfd_pending = NULL;
	pthread_join(p->thread, NULL);
	core->bfd_target = p->own.bfd_target;
	core->bfd_arch = p->own.bfd_arch;
	size_t m = p->own.nproblems;
	struct cq_problem *all = m ? realloc(core->problems, (core->nproblems + m) * sizeof(*all)) : NULL;
	if (all) {
		memmove(all + p->at + m, all + p->at, (core->nproblems - p->at) * sizeof(*all));
		memcpy(all + p->at, p->own.problems, m * sizeof(*all));
		core->problems = all;
		core->nproblems += m;
	} else {
		/* none, or no memory for them (problems are best effort) */
		for (size_t i = 0; i < m; i++) {
			free(p->own.problems[i].item);
			free(p->own.problems[i].message);
		}
	}
	free(p->own.problems);
	struct cq_error *err = p->err;
	free(p);
	return err;
}
