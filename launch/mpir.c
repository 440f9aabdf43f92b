/* SPDX-License-Identifier: MIT */
/* A launcher's MPIR process table, read from its memory without stopping it (mpir.h). */
#include "mpir.h"
#include "live/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "elf/elf_file.h"

/* The longest host or executable name read: a path's PATH_MAX; what is longer is cut there
 * (and said so by the "..." the caller sees: the name is a label, not a path coreq opens). */
#define NAME_MAX_READ 4096

struct where {
	uint64_t proctable, size, state; /* run-time addresses, 0: absent */
	unsigned ptr;                     /* the image's pointer size */
	char *image;
};

/* Read @p len bytes at @p addr of the launcher's memory (fd of /proc/PID/mem). */
static bool mem_read(int fd, uint64_t addr, void *buf, size_t len)
{
	errno = 0;
	ssize_t got = pread(fd, buf, len, (off_t)addr);
	if (got >= 0 && got != (ssize_t)len)
		errno = EIO; /* what a read across a mapping's end gives: the bytes that were not there */
	return got == (ssize_t)len;
}

static uint64_t ptr_value(const uint8_t *b, unsigned ptr)
{
	if (ptr == 8) {
		uint64_t v;
		memcpy(&v, b, 8);
		return v;
	}
	uint32_t v;
	memcpy(&v, b, 4);
	return v;
}

/* A NUL-terminated string at @p addr, at most NAME_MAX_READ bytes, read in small pieces (a
 * name ends within its page's neighbour; a read past a mapping's end fails). */
static char *mem_string(int fd, uint64_t addr)
{
	char *s = malloc(NAME_MAX_READ + 1);
	size_t n = 0;
	if (!s)
		return NULL;
	while (n < NAME_MAX_READ) {
		char piece[64];
		size_t want = sizeof(piece);
		/* never across a page boundary in one read: the next page may be unmapped */
		uint64_t to_page = 4096 - ((addr + n) & 4095);
		if (want > to_page)
			want = to_page;
		ssize_t got = pread(fd, piece, want, (off_t)(addr + n));
		if (got <= 0)
			break;
		void *nul = memchr(piece, 0, (size_t)got);
		size_t take = nul ? (size_t)((char *)nul - piece) : (size_t)got;
		if (take > NAME_MAX_READ - n)
			take = NAME_MAX_READ - n;
		memcpy(s + n, piece, take);
		n += take;
		if (nul)
			break;
	}
	s[n] = 0;
	return s;
}

/* In the ELF file @p path mapped with load bias @p bias: the MPIR symbols' addresses. */
static bool symbols_in(const char *path, uint64_t map_start, struct where *w)
{
	struct cq_elf *e;
	struct cq_error *err = cq_elf_open(path, &e);
	if (err) {
		cq_error_destroy(err);
		return false;
	}
	bool found = false;
	if (!(err = cq_elf_load_symbols(e))) {
		const struct cq_symbol *t = cq_elf_find_symbol(e, "MPIR_proctable");
		const struct cq_symbol *z = cq_elf_find_symbol(e, "MPIR_proctable_size");
		const struct cq_symbol *d = cq_elf_find_symbol(e, "MPIR_debug_state");
		/* the bias: where the mapping of file offset 0 starts, less the page of the
		 * first PT_LOAD (which maps offset 0) */
		uint64_t first = e->nloads ? e->loads[0].vaddr & ~(uint64_t)4095 : 0;
		uint64_t bias = e->e_type == 3 /* ET_DYN */ ? map_start - first : 0;
		if (t && z) {
			w->proctable = bias + t->value;
			w->size = bias + z->value;
			w->state = d ? bias + d->value : 0;
			w->ptr = e->elf_class == 2 ? 8 : 4;
			w->image = strdup(path);
			found = w->image != NULL;
		}
	}
	cq_error_destroy(err);
	cq_elf_close(e);
	return found;
}

/* The MPIR symbols in the images of @p pid: the executable first, then each library. */
static bool find_symbols(int pid, struct where *w)
{
	char path[64], exe[4096];
	size_t len;
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	ssize_t el = readlink(path, exe, sizeof(exe) - 1);
	exe[el > 0 ? el : 0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	char *text = cq_live_slurp(path, 64u << 20, &len);
	if (!text)
		return false;
	bool found = false;
	/* two passes: the executable's mapping, then the others */
	for (int pass = 0; pass < 2 && !found; pass++) {
		const char *last = NULL;
		for (char *line = text; line && *line && !found; ) {
			char *nl = strchr(line, '\n');
			unsigned long long start, end, off, ino;
			int name_at = 0;
			if (sscanf(line, "%llx-%llx %*s %llx %*s %llu %n", &start, &end, &off, &ino, &name_at) >= 4 &&
			    name_at && line[name_at] == '/' && off == 0) {
				char *name = line + name_at;
				size_t nlen = nl ? (size_t)(nl - name) : strlen(name);
				bool is_exe = *exe && strlen(exe) == nlen && !strncmp(name, exe, nlen);
				if (is_exe == (pass == 0) && !(last && !strncmp(last, name, nlen) && last[nlen] == '\n')) {
					last = name;
					/* the file mapped, whatever its path now names (an upgrade, a
					 * deletion): the kernel's link to it */
					char mf[96];
					snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", pid, start, end);
					char named[4096];
					snprintf(named, sizeof(named), "%.*s", (int)nlen, name);
					struct stat st;
					const char *open_at = stat(named, &st) == 0 && st.st_ino == ino ? named : mf;
					found = symbols_in(open_at, start, w);
					if (found && open_at == mf) {
						free(w->image);
						w->image = strdup(named);
						found = w->image != NULL;
					}
				}
			}
			line = nl ? nl + 1 : NULL;
		}
	}
	free(text);
	return found;
}

void cq_mpir_free(struct cq_mpir_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->procs[i].host);
		free(t->procs[i].exe);
	}
	free(t->procs);
	free(t->image);
	free(t);
}

struct cq_error *cq_mpir_read(int pid, struct cq_mpir_table **ret)
{
	*ret = NULL;
	struct where w = {0};
	if (!find_symbols(pid, &w))
		return NULL;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		struct cq_error *err = cq_live_why_not(pid, pid, errno);
		free(w.image);
		return err;
	}
	struct cq_error *err = NULL;
	struct cq_mpir_table *t = calloc(1, sizeof(*t));
	uint8_t b[8];
	int32_t size = 0, state = -1;
	if (!t)
		err = &cq_error_nomem;
	else if (!mem_read(fd, w.size, &size, 4) || (w.state && !mem_read(fd, w.state, &state, 4)) ||
		 !mem_read(fd, w.proctable, b, w.ptr))
		err = cq_error_create(CQ_ERR_PROCESS, "launcher %d: MPIR_proctable_size at 0x%llx (%s) cannot be read: %s",
				      pid, (unsigned long long)w.size, w.image, strerror(errno));
	else if (size < 0 || (uint32_t)size > CQ_MPIR_MAX_PROCS)
		err = cq_error_create(CQ_ERR_PROCESS, "launcher %d: MPIR_proctable_size at 0x%llx (%s) is %d: no process "
				      "table (at most %u entries are read)", pid, (unsigned long long)w.size, w.image,
				      (int)size, CQ_MPIR_MAX_PROCS);
	uint64_t table = err ? 0 : ptr_value(b, w.ptr);
	if (!err && size > 0 && table) {
		t->launcher = pid;
		t->debug_state = state;
		t->image = w.image;
		w.image = NULL;
		t->procs = calloc((size_t)size, sizeof(*t->procs));
		if (!t->procs)
			err = &cq_error_nomem;
		unsigned es = w.ptr == 8 ? 24 : 12; /* two pointers and an int, padded to a pointer */
		for (int32_t i = 0; !err && i < size; i++) {
			uint8_t e[24];
			uint64_t at = table + (uint64_t)i * es;
			if (!mem_read(fd, at, e, es)) {
				err = cq_error_create(CQ_ERR_PROCESS, "launcher %d: MPIR_proctable[%d] at 0x%llx (%s) cannot be "
						      "read: %s", pid, (int)i, (unsigned long long)at, t->image,
						      strerror(errno));
				break;
			}
			int32_t p;
			memcpy(&p, e + 2 * w.ptr, 4);
			if (p <= 0) {
				err = cq_error_create(CQ_ERR_PROCESS, "launcher %d: MPIR_proctable[%d] at 0x%llx (%s) has pid %d: "
						      "not a process table (not filled yet?)", pid, (int)i,
						      (unsigned long long)at, t->image, (int)p);
				break;
			}
			t->procs[i].pid = p;
			t->procs[i].host = mem_string(fd, ptr_value(e, w.ptr));
			t->procs[i].exe = mem_string(fd, ptr_value(e + w.ptr, w.ptr));
			t->n = (size_t)i + 1;
			if (!t->procs[i].host || !t->procs[i].exe)
				err = &cq_error_nomem;
		}
	}
	close(fd);
	free(w.image);
	if (err || !t || !t->n) {
		cq_mpir_free(t);
		return err;
	}
	*ret = t;
	return NULL;
}

bool cq_mpir_host_is_here(const char *host)
{
	struct utsname u;
	if (!strcmp(host, "localhost") || uname(&u))
		return !strcmp(host, "localhost");
	size_t a = strcspn(host, "."), b = strcspn(u.nodename, ".");
	return !strcmp(host, u.nodename) || (a == b && !strncmp(host, u.nodename, a) &&
					     (!host[a] || !u.nodename[b]));
}
