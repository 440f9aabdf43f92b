/* SPDX-License-Identifier: MIT */
/* The model written as a Linux ELF core file (core_write.h). */
#include "core_write.h"

#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/bytebuf.h"
#include "base/decode.h"
#include "elfcore.h"
#include "image.h"
#include "output/output.h"


CQ_DEFINE_STRUCT(cq_prstatus_w, CQ_PRSTATUS_FIELDS);

void cq_elf_note(struct cq_buf *b, const struct cq_target *t, const char *name, size_t namesz, uint32_t type,
		 const void *desc, size_t descsz)
{
	cq_buf_uint(b, t, 4, namesz);
	cq_buf_uint(b, t, 4, descsz);
	cq_buf_uint(b, t, 4, type);
	cq_buf_put(b, name, namesz);
	cq_buf_align(b, 4);
	cq_buf_put(b, desc, descsz);
	cq_buf_align(b, 4);
}

/* A "CORE" note of descriptor @p d (freed here); @p d's failure is @p n's. */
static void core_note(struct cq_buf *n, const struct cq_target *t, uint32_t type, struct cq_buf *d)
{
	if (d->failed)
		n->failed = true;
	cq_elf_note(n, t, "CORE", 5, type, d->p, d->len);
	free(d->p);
}

static void put_prpsinfo(struct cq_buf *n, const struct cq_core *core)
{
	const struct cq_target *t = core->target;
	unsigned w = cq_target_ptr_size(t), uid = t->prpsinfo_uid_size ? t->prpsinfo_uid_size : 4;
	struct cq_buf d = {0};
	/* pr_state, pr_sname, pr_zomb, pr_nice; pr_flag (a long, aligned); uid, gid; pid, ppid,
	 * pgrp, sid; fname[16]; psargs[80] (what notes.c reads from the end) */
	/* pr_state: the letter's place in the kernel's list; pr_sname: the letter */
	static const char letters[] = "RSDTtXZP";
	char sname = core->state ? core->state : 'R';
	const char *at = strchr(letters, sname);
	uint8_t head[4] = {(uint8_t)(at ? at - letters : 0), (uint8_t)sname, 0, 0};
	cq_buf_put(&d, head, 4);
	cq_buf_align(&d, w);
	cq_buf_uint(&d, t, w, 0);
	cq_buf_uint(&d, t, uid, core->uid);
	cq_buf_uint(&d, t, uid, core->gid);
	cq_buf_uint(&d, t, 4, (uint64_t)core->pid);
	cq_buf_uint(&d, t, 4, (uint64_t)core->ppid);
	cq_buf_uint(&d, t, 4, (uint64_t)core->pid);
	cq_buf_uint(&d, t, 4, (uint64_t)core->pid);
	uint8_t *f = cq_buf_grow(&d, 16);
	if (f)
		memcpy(f, core->fname, strnlen(core->fname, 16));
	uint8_t *a = cq_buf_grow(&d, 80);
	if (a)
		memcpy(a, core->psargs, strnlen(core->psargs, 80));
	cq_buf_align(&d, w);
	core_note(n, t, NT_PRPSINFO, &d);
}

static void put_auxv(struct cq_buf *n, const struct cq_core *core)
{
	const struct cq_target *t = core->target;
	unsigned w = cq_target_ptr_size(t);
	struct cq_buf d = {0};
	for (size_t i = 0; i < core->nauxv; i++) {
		cq_buf_uint(&d, t, w, core->auxv[i][0]);
		cq_buf_uint(&d, t, w, core->auxv[i][1]);
	}
	cq_buf_uint(&d, t, w, AT_NULL);
	cq_buf_uint(&d, t, w, 0);
	core_note(n, t, NT_AUXV, &d);
}

static void put_file(struct cq_buf *n, const struct cq_core *core)
{
	const struct cq_target *t = core->target;
	unsigned w = cq_target_ptr_size(t);
	uint64_t page = core->page_size ? core->page_size : 4096;
	struct cq_buf d = {0};
	cq_buf_uint(&d, t, w, core->nfile_maps);
	cq_buf_uint(&d, t, w, page);
	for (size_t i = 0; i < core->nfile_maps; i++) {
		cq_buf_uint(&d, t, w, core->file_maps[i].start);
		cq_buf_uint(&d, t, w, core->file_maps[i].end);
		cq_buf_uint(&d, t, w, core->file_maps[i].offset / page);
	}
	for (size_t i = 0; i < core->nfile_maps; i++)
		cq_buf_put(&d, core->file_maps[i].path, strlen(core->file_maps[i].path) + 1);
	core_note(n, t, NT_FILE, &d);
}

static void put_prstatus(struct cq_buf *n, const struct cq_core *core, const struct cq_thread *th)
{
	const struct cq_target *t = core->target;
	size_t head = cq_struct_size(t, &cq_prstatus_w_desc);
	unsigned w = cq_target_ptr_size(t);
	struct cq_buf d = {0};
	uint8_t *p = cq_buf_grow(&d, head);
	if (p) {
		cq_store_uint(t, p + cq_struct_offset(t, &cq_prstatus_w_desc, CQ_PRSTATUS_CURSIG), 2, (uint64_t)th->signal);
		cq_store_uint(t, p + cq_struct_offset(t, &cq_prstatus_w_desc, CQ_PRSTATUS_PID), 4, (uint64_t)th->tid);
		cq_store_uint(t, p + cq_struct_offset(t, &cq_prstatus_w_desc, CQ_PRSTATUS_PPID), 4, (uint64_t)core->ppid);
		cq_store_uint(t, p + cq_struct_offset(t, &cq_prstatus_w_desc, CQ_PRSTATUS_SIGPEND), w, th->sigpend);
		cq_store_uint(t, p + cq_struct_offset(t, &cq_prstatus_w_desc, CQ_PRSTATUS_SIGHOLD), w, th->sighold);
		/* the CPU times as timevals: what tells a rank spinning from one blocked */
		uint64_t tv[4] = {th->utime_us / 1000000, th->utime_us % 1000000, th->stime_us / 1000000,
				  th->stime_us % 1000000};
		for (int i = 0; i < 4; i++)
			cq_store_uint(t, p + cq_struct_offset(t, &cq_prstatus_w_desc, CQ_PRSTATUS_UTIME + i), w, tv[i]);
	}
	cq_buf_put(&d, th->regs, t->reg_block_size);
	cq_buf_uint(&d, t, 4, 0); /* pr_fpvalid */
	cq_buf_align(&d, w);
	core_note(n, t, NT_PRSTATUS, &d);
	/* its floating-point registers, then its TLS note, in the kernel's order */
	if (th->fpregs)
		cq_elf_note(n, t, "CORE", 5, NT_FPREGSET, th->fpregs, th->fpregs_size);
	if (th->tls_note)
		cq_elf_note(n, t, "LINUX", 6, th->tls_note_type, th->tls_note, th->tls_note_size);
}

/* A PT_LOAD to be written: [vaddr, vaddr + memsz), its first filesz bytes in the file. */
struct load {
	uint64_t vaddr, memsz, filesz, offset;
	uint32_t flags;
};

static bool add_load(struct load **l, size_t *n, size_t *cap, struct load v)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct load *nl = realloc(*l, c * sizeof(*nl));
		if (!nl)
			return false;
		*l = nl;
		*cap = c;
	}
	(*l)[(*n)++] = v;
	return true;
}

/* The model's segments cut by @p ranges: the pieces inside with their bytes, the rest
 * without. */
static bool plan(const struct cq_core *core, const struct cq_mem_range *r, size_t nr, struct load **ret, size_t *nret)
{
	struct load *l = NULL;
	size_t n = 0, cap = 0, k = 0;
	for (size_t i = 0; i < core->nsegments; i++) {
		const struct cq_segment *s = &core->segments[i];
		uint64_t at = s->vaddr, end = s->vaddr + s->memsz;
		while (k < nr && r[k].end <= at)
			k++;
		for (size_t j = k; at < end; j++) {
			uint64_t in_from = j < nr && r[j].start < end ? (r[j].start > at ? r[j].start : at) : end;
			uint64_t in_to = j < nr && r[j].start < end ? (r[j].end < end ? r[j].end : end) : end;
			if (in_from > at && !add_load(&l, &n, &cap, (struct load){at, in_from - at, 0, 0, s->flags}))
				goto nomem;
			if (in_to > in_from &&
			    !add_load(&l, &n, &cap, (struct load){in_from, in_to - in_from, in_to - in_from, 0, s->flags}))
				goto nomem;
			at = in_to > at ? in_to : end;
		}
	}
	*ret = l;
	*nret = n;
	return true;
nomem:
	free(l);
	return false;
}

/* Whether @p m maps (part of) an image whose file the model read at a path of its own
 * (cq_file_map.mapped): one a reader will not find at the mapping's path. */
static bool mapped_image(const struct cq_core *core, const struct cq_file_map *m)
{
	if (!m->mapped)
		return false;
	for (size_t i = 0; i < core->nimages; i++) {
		const struct cq_image *img = &core->images[i];
		if (img->elf && img->elf->file && cq_image_has_path(img, m->path))
			return true;
	}
	return false;
}

static int range_cmp(const void *a, const void *b)
{
	const struct cq_mem_range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

size_t cq_mem_ranges_merge(struct cq_mem_range *r, size_t n)
{
	qsort(r, n, sizeof(*r), range_cmp);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && r[i].start <= r[m - 1].end) {
			if (r[i].end > r[m - 1].end)
				r[m - 1].end = r[i].end;
		} else {
			r[m++] = r[i];
		}
	}
	return m;
}

/* @p ranges and the whole of each mapping of a mapped_image(), sorted and merged, into a
 * new list; what that adds is counted in @p st. */
static struct cq_mem_range *with_mapped_images(struct cq_core *core, const struct cq_mem_range *ranges, size_t n,
					       size_t *nret, struct cq_core_write_stats *st)
{
	struct cq_error *err = cq_core_load_images(core); /* loaded already where stacks were read */
	cq_error_destroy(err);
	size_t extra = 0;
	for (size_t i = 0; i < core->nfile_maps; i++)
		extra += mapped_image(core, &core->file_maps[i]);
	struct cq_mem_range *all = malloc((n + extra + 1) * sizeof(*all));
	if (!all)
		return NULL;
	memcpy(all, ranges, n * sizeof(*all));
	size_t k = n;
	const char *last = NULL;
	for (size_t i = 0; i < core->nfile_maps; i++) {
		const struct cq_file_map *m = &core->file_maps[i];
		if (!mapped_image(core, m))
			continue;
		all[k++] = (struct cq_mem_range){m->start, m->end};
		st->mapped_bytes += m->end - m->start;
		if (!last || strcmp(last, m->path))
			st->mapped_images++;
		last = m->path;
	}
	*nret = cq_mem_ranges_merge(all, k);
	return all;
}

/* A page that holds what its mapped file holds there is left out: a reader takes it from
 * the file, as from a kernel core's left-out pages. The first page of a mapping at file
 * offset 0 is always kept: it has the ELF headers and the build-id note, by which readers
 * check they have the right file. A file the path no longer leads to (cq_file_map.mapped)
 * is not compared: the path has another or none.
 *
 * comparable(): the mapping whose file the page at @p addr is compared with, else NULL:
 * the page is kept, and not read before it is written (the process is held meanwhile). */
static const struct cq_file_map *comparable(const struct cq_core *core, uint64_t addr, size_t len)
{
	const struct cq_file_map *m = NULL;
	for (size_t i = 0; i < core->nfile_maps && !m; i++)
		if (addr >= core->file_maps[i].start && addr + len <= core->file_maps[i].end)
			m = &core->file_maps[i];
	return !m || (addr == m->start && m->offset == 0) || m->mapped ? NULL : m;
}

/* Whether @p page (@p len bytes at @p addr, in comparable() mapping @p m) is the file's. */
static bool same_as_file(const struct cq_file_map *m, uint64_t addr, const uint8_t *page, size_t len, int *fd,
			 const char **fd_path)
{
	if (*fd_path != m->path) {
		if (*fd >= 0)
			close(*fd);
		*fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		*fd_path = m->path;
	}
	uint8_t buf[4096];
	return *fd >= 0 && len <= sizeof(buf) &&
	       pread(*fd, buf, len, (off_t)(m->offset + (addr - m->start))) == (ssize_t)len && !memcmp(buf, page, len);
}

/* @p ranges less the pages that hold what their mapped files hold (same_as_file), into a
 * new list. */
static struct cq_mem_range *drop_file_pages(struct cq_core *core, const struct cq_mem_range *ranges, size_t n,
					    size_t *nret)
{
	size_t cap = n + 16, m = 0;
	struct cq_mem_range *out = malloc(cap * sizeof(*out));
	uint8_t page[4096];
	int fd = -1;
	const char *fd_path = NULL;
	for (size_t i = 0; out && i < n; i++) {
		for (uint64_t a = ranges[i].start; a < ranges[i].end; a += sizeof(page)) {
			size_t len = ranges[i].end - a < sizeof(page) ? (size_t)(ranges[i].end - a) : sizeof(page);
			const struct cq_file_map *fm = comparable(core, a, len);
			struct cq_error *err = fm ? cq_core_read(core, a, page, len) : NULL;
			bool drop = fm && !err && same_as_file(fm, a, page, len, &fd, &fd_path);
			cq_error_destroy(err);
			if (drop)
				continue;
			if (m && out[m - 1].end == a) {
				out[m - 1].end = a + len;
				continue;
			}
			if (m == cap) {
				cap *= 2;
				struct cq_mem_range *o = realloc(out, cap * sizeof(*o));
				if (!o) {
					free(out);
					out = NULL;
					break;
				}
				out = o;
			}
			out[m++] = (struct cq_mem_range){a, a + len};
		}
	}
	if (fd >= 0)
		close(fd);
	*nret = m;
	return out;
}

struct cq_error *cq_core_write(struct cq_core *core, const char *path, const struct cq_mem_range *ranges, size_t n,
			       struct cq_core_write_stats *st)
{
	const struct cq_target *t = core->target;
	bool is64 = t->elf_class == ELFCLASS64;
	memset(st, 0, sizeof(*st));
	struct load *loads = NULL;
	size_t nloads = 0;
	size_t nkept, nall;
	struct cq_mem_range *all = with_mapped_images(core, ranges, n, &nall, st);
	struct cq_mem_range *kept = all ? drop_file_pages(core, all, nall, &nkept) : NULL;
	free(all);
	if (!kept)
		return &cq_error_nomem;
	bool planned = plan(core, kept, nkept, &loads, &nloads);
	free(kept);
	if (!planned)
		return &cq_error_nomem;
	if (nloads + 1 >= PN_XNUM) {
		free(loads);
		return cq_error_create(CQ_ERR_UNSUPPORTED, "%s: %zu memory pieces: more than an ELF program header table "
				       "holds without extended numbering", core->name, nloads);
	}
	/* the pieces with bytes: read now (a piece the model cannot read goes without) */
	struct cq_buf data = {0};
	for (size_t i = 0; i < nloads; i++) {
		if (!loads[i].filesz)
			continue;
		cq_buf_align(&data, 4096);
		size_t at = data.len;
		uint8_t *p = cq_buf_grow(&data, loads[i].filesz);
		struct cq_error *err = p ? cq_core_read(core, loads[i].vaddr, p, loads[i].filesz) : &cq_error_nomem;
		if (err) {
			cq_error_destroy(err);
			data.len = at;
			loads[i].filesz = 0;
			continue;
		}
		loads[i].offset = at; /* relative to the data's start, for now */
		st->data_bytes += loads[i].filesz;
	}
	struct cq_buf notes = {0};
	put_prpsinfo(&notes, core);
	put_auxv(&notes, core);
	if (core->nfile_maps)
		put_file(&notes, core);
	for (size_t i = 0; i < core->nthreads; i++)
		put_prstatus(&notes, core, &core->threads[i]);
	if (core->taken_ns) {
		/* when it was taken: samples of one process are told apart and timed by it */
		uint8_t when[8];
		cq_store_uint(t, when, 8, core->taken_ns);
		cq_elf_note(&notes, t, "COREQ", 6, CQ_NT_SNAPSHOT, when, sizeof(when));
	}
	struct cq_error *err = NULL;
	if (notes.failed || data.failed) {
		err = &cq_error_nomem;
		goto out;
	}
	size_t ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t phsize = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	size_t notes_at = ehsize + (nloads + 1) * phsize;
	size_t data_at = (notes_at + notes.len + 4095) / 4096 * 4096;
	struct cq_buf head = {0};
	uint8_t *e = cq_buf_grow(&head, ehsize);
	if (e) {
		memcpy(e, ELFMAG, SELFMAG);
		e[EI_CLASS] = t->elf_class;
		e[EI_DATA] = t->little_endian ? ELFDATA2LSB : ELFDATA2MSB;
		e[EI_VERSION] = EV_CURRENT;
		cq_store_uint(t, e + 16, 2, ET_CORE);
		cq_store_uint(t, e + 18, 2, t->e_machine);
		cq_store_uint(t, e + 20, 4, EV_CURRENT);
		/* e_entry, e_phoff, e_shoff, e_flags, e_ehsize, e_phentsize, e_phnum, e_shentsize, ... */
		unsigned w = is64 ? 8 : 4;
		size_t o = 24 + w; /* past e_entry */
		cq_store_uint(t, e + o, w, ehsize);
		o += 2 * w + 4; /* e_phoff, e_shoff, e_flags */
		cq_store_uint(t, e + o, 2, ehsize);
		cq_store_uint(t, e + o + 2, 2, phsize);
		cq_store_uint(t, e + o + 4, 2, nloads + 1);
		cq_store_uint(t, e + o + 6, 2, is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr));
	}
	for (size_t i = 0; i <= nloads; i++) {
		bool is_note = i == 0;
		const struct load *ld = is_note ? NULL : &loads[i - 1];
		uint32_t type = is_note ? PT_NOTE : PT_LOAD, flags = is_note ? 0 : ld->flags;
		uint64_t off = is_note ? notes_at : ld->filesz ? data_at + ld->offset : data_at + data.len;
		uint64_t vaddr = is_note ? 0 : ld->vaddr, filesz = is_note ? notes.len : ld->filesz;
		uint64_t memsz = is_note ? 0 : ld->memsz, align = is_note ? 4 : 4096;
		if (is64) {
			cq_buf_uint(&head, t, 4, type);
			cq_buf_uint(&head, t, 4, flags);
			cq_buf_uint(&head, t, 8, off);
			cq_buf_uint(&head, t, 8, vaddr);
			cq_buf_uint(&head, t, 8, 0);
			cq_buf_uint(&head, t, 8, filesz);
			cq_buf_uint(&head, t, 8, memsz);
			cq_buf_uint(&head, t, 8, align);
		} else {
			cq_buf_uint(&head, t, 4, type);
			cq_buf_uint(&head, t, 4, off);
			cq_buf_uint(&head, t, 4, vaddr);
			cq_buf_uint(&head, t, 4, 0);
			cq_buf_uint(&head, t, 4, filesz);
			cq_buf_uint(&head, t, 4, memsz);
			cq_buf_uint(&head, t, 4, flags);
			cq_buf_uint(&head, t, 4, align);
		}
	}
	cq_buf_put(&head, notes.p, notes.len);
	cq_buf_grow(&head, data_at - head.len);
	if (head.failed) {
		free(head.p);
		err = &cq_error_nomem;
		goto out;
	}
	struct cq_output o;
	const char *inputs[] = {core->name};
	if (!(err = cq_output_begin_mode(path, "the snapshot", inputs, 1, 0600, &o))) {
		if ((err = cq_output_write(&o, head.p, head.len)) || (err = cq_output_write(&o, data.p, data.len)))
			cq_output_abort(&o);
		else
			err = cq_output_commit(&o);
	}
	st->loads = nloads;
	st->file_bytes = head.len + data.len;
	free(head.p);
out:
	free(notes.p);
	free(data.p);
	free(loads);
	return err;
}
