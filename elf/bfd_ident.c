/* SPDX-License-Identifier: MIT */
/* A core file identified by the multi-architecture libbfd (bfd_ident.h). */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bfd_ident.h"
#include "bfd_lib.h"

static struct cq_error *identify(const struct cq_bfd_query *q, const struct cq_bfd *b, struct cq_bfd_ident *out);

/* One problem, formatted (best effort: dropped when out of memory). */
__attribute__((format(printf, 2, 3))) static void problem(struct cq_bfd_ident *id, const char *fmt, ...)
{
	char **p = realloc(id->problems, (id->nproblems + 1) * sizeof(*p));
	if (!p)
		return;
	id->problems = p;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&p[id->nproblems], fmt, ap) >= 0)
		id->nproblems++;
	va_end(ap);
}

void cq_bfd_ident_deinit(struct cq_bfd_ident *id)
{
	free(id->target);
	free(id->arch);
	for (size_t i = 0; i < id->nproblems; i++)
		free(id->problems[i]);
	free(id->problems);
	memset(id, 0, sizeof(*id));
}

/* libbfd writes its warnings ("BFD: warning: X has a segment extending past end of file")
 * to stderr itself: bfd_check_format caches them and prints them with fprintf, whatever
 * error handler is set (binutils 2.40). coreq's stderr carries only its own one-line
 * errors, so stderr is pointed at a temporary file while libbfd runs and what it wrote
 * becomes problems of the core. */
struct cq_error *cq_bfd_identify(const struct cq_bfd_query *q, struct cq_bfd_ident *out)
{
	const char *why;
	memset(out, 0, sizeof(*out));
	const struct cq_bfd *b = cq__bfd(&why);
	if (!b) {
		problem(out, "%s", why);
		return NULL;
	}
	FILE *tf = tmpfile();
	int saved = -1;
	fflush(stderr);
	if (tf && (saved = dup(STDERR_FILENO)) >= 0 && dup2(fileno(tf), STDERR_FILENO) < 0) {
		close(saved);
		saved = -1;
	}
	struct cq_error *err = identify(q, b, out);
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
				problem(out, "libbfd: %s", msg);
		}
	}
	if (tf)
		fclose(tf);
	return err;
}

static struct cq_error *identify(const struct cq_bfd_query *q, const struct cq_bfd *b, struct cq_bfd_ident *out)
{
	/* BFD reads from its descriptor's offset and assumes a fresh one (an inflated copy is
	 * at its end): a descriptor of its own, so that no offset is shared with coreq's */
	char proc[64];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", q->fd);
	int fd = open(proc, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cq_error_errno(errno, "%s: open %s", q->path, proc);
	bfd *abfd = b->fdopenr(q->path, NULL, fd);
	if (!abfd) {
		close(fd);
		problem(out, "libbfd cannot open %s: %s", q->path, b->errmsg(b->get_error()));
		return NULL;
	}
	if (!b->check_format(abfd, bfd_core)) {
		problem(out, "libbfd does not recognize %s as a %s core: %s", q->path, q->target_name,
			b->errmsg(b->get_error()));
	} else {
		out->target = strdup(bfd_get_target(abfd));
		out->arch = strdup(b->printable_name(abfd));
		if (!out->target || !out->arch) {
			b->close(abfd);
			return &cq_error_nomem;
		}
		if (strncmp(out->arch, q->bfd_arch, strlen(q->bfd_arch)) != 0)
			problem(out, "libbfd identifies %s as %s (%s), expected %s: is coreq linked with the "
				"multi-architecture libbfd?", q->path, out->arch, out->target, q->bfd_arch);
		/* BFD makes a ".reg/TID" section per NT_PRSTATUS it understood: a different
		 * count means one of us misreads the notes. None at all only means BFD does not
		 * know this note size (gdb 13's short riscv64 notes: the i386 and the amd64
		 * builds of libbfd even disagree there), which the register problem says. */
		size_t nreg = 0;
		for (asection *sec = abfd->sections; sec; sec = sec->next)
			if (strncmp(bfd_section_name(sec), ".reg/", 5) == 0)
				nreg++;
		if (nreg && nreg != q->nthreads)
			problem(out, "libbfd finds %zu thread register sets in %s, coreq %zu threads", nreg, q->path,
				q->nthreads);
	}
	b->close(abfd);
	return NULL;
}
