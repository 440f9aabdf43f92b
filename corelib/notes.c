/* SPDX-License-Identifier: MIT */
/* Core notes: threads (NT_PRSTATUS and the per-thread notes after it), process info,
 * auxv, siginfo and NT_FILE. libelf walks the note headers; descriptors are decoded here
 * with the target's layout. */
#include <elf.h>
#include <gelf.h>
#include <stdio.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/decode.h"
#include "elfcore.h"
#include "internal.h"
#include "source.h"

CQ_DEFINE_STRUCT(cq_prstatus_head, CQ_PRSTATUS_FIELDS);

static struct cq_error *note_prstatus(struct cq_core *core, const uint8_t *desc, size_t size)
{
	const struct cq_target *t = core->target;
	struct cq_prstatus_head h;
	size_t reg_off = cq_struct_size(t, &cq_prstatus_head_desc);
	/* Accept a short register block as long as pc, sp and tp are in it (gdb 13 writes
	 * riscv64 notes in the host's size); the missing registers are reported. */
	const struct cq_reg *need[3] = {&t->regs[t->pc_reg], &t->regs[t->sp_reg],
					t->tp_reg >= 0 ? &t->regs[t->tp_reg] : NULL};
	size_t min = 0;
	for (int i = 0; i < 3; i++)
		if (need[i] && (size_t)need[i]->offset + need[i]->size > min)
			min = (size_t)need[i]->offset + need[i]->size;
	if (size < reg_off + min)
		return cq_error_create(CQ_ERR_MALFORMED,
				       "%s: NT_PRSTATUS note #%zu has %zu bytes, %s needs %zu",
				       core->name, core->nthreads + 1, size, t->name,
				       reg_off + t->reg_block_size);
	struct cq_error *err = cq_struct_decode(t, &cq_prstatus_head_desc, desc, size, &h);
	if (err)
		return err;
	if (core->nthreads >= CQ_MAX_THREADS)
		return cq_error_create(CQ_ERR_MALFORMED, "%s: more than %d NT_PRSTATUS notes",
				       core->name, CQ_MAX_THREADS);
	struct cq_thread *th;
	if ((err = cq_core_add_thread(core, (int32_t)h.pid, (int32_t)h.cursig, desc + reg_off, size - reg_off,
				      core->name, &th)))
		return err;
	/* timevals: a negative or out-of-range field (a crafted core) counts as unknown */
	int64_t tv[4] = {(int64_t)h.utime_sec, (int64_t)h.utime_usec, (int64_t)h.stime_sec, (int64_t)h.stime_usec};
	bool sane = true;
	for (int i = 0; i < 4; i++)
		sane &= tv[i] >= 0 && tv[i] < (i & 1 ? 1000000 : (int64_t)1 << 40);
	if (sane) {
		th->utime_us = (uint64_t)tv[0] * 1000000 + (uint64_t)tv[1];
		th->stime_us = (uint64_t)tv[2] * 1000000 + (uint64_t)tv[3];
	}
	th->sigpend = (uint64_t)h.sigpend;
	th->sighold = (uint64_t)h.sighold;
	return NULL;
}

/* NT_386_TLS / NT_ARM_TLS belong to the thread of the preceding NT_PRSTATUS. */
static struct cq_error *note_tls(struct cq_core *core, uint32_t type, const uint8_t *desc,
				 size_t size)
{
	if (core->nthreads == 0)
		return NULL; /* no thread to attach to: ignore, like gdb */
	return cq_core_set_thread_tls(core, &core->threads[core->nthreads - 1], type, desc, size);
}

/* prpsinfo: pr_fname[16] and pr_psargs[80] end the struct and pid..sid precede them, so
 * they are located from the end; this is right whatever width the producer gave uid_t
 * (qemu and the kernel disagree on some 32-bit targets). */
static struct cq_error *note_prpsinfo(struct cq_core *core, const uint8_t *desc, size_t size)
{
	const struct cq_target *t = core->target;
	size_t ids = 4 * 4, tail = 16 + 80;
	size_t head = 4 + cq_target_ptr_size(t);
	if (size < head + ids + tail)
		return cq_error_create(CQ_ERR_MALFORMED, "%s: NT_PRPSINFO note has only %zu bytes",
				       core->name, size);
	const uint8_t *ids_at = desc + size - tail - ids;
	core->pid = (int32_t)cq_load_uint(t, ids_at, 4);
	core->ppid = (int32_t)cq_load_uint(t, ids_at + 4, 4);
	size_t uid_size = (size_t)(ids_at - desc) - head >= 8 ? 4 : 2;
	core->uid = (uint32_t)cq_load_uint(t, ids_at - 2 * uid_size, (unsigned)uid_size);
	core->gid = (uint32_t)cq_load_uint(t, ids_at - uid_size, (unsigned)uid_size);
	memcpy(core->fname, desc + size - tail, 16);
	core->fname[16] = 0;
	memcpy(core->psargs, desc + size - 80, 80);
	core->psargs[80] = 0;
	/* psargs has NULs between arguments in some producers; the kernel uses spaces */
	size_t len = strnlen(core->psargs, 80);
	while (len > 0 && core->psargs[len - 1] == ' ')
		core->psargs[--len] = 0;
	/* pr_state, then pr_sname: the first two bytes in every layout */
	core->state = desc[1] >= 'A' && desc[1] <= 'z' ? (char)desc[1] : 0;
	core->has_psinfo = true;
	return NULL;
}

static struct cq_error *note_auxv(struct cq_core *core, const uint8_t *desc, size_t size)
{
	return cq_core_set_auxv(core, desc, size);
}

static struct cq_error *note_siginfo(struct cq_core *core, const uint8_t *desc, size_t size)
{
	const struct cq_target *t = core->target;
	size_t addr_off = cq_target_ptr_size(t) == 8 ? 16 : 12;
	if (size < addr_off + cq_target_ptr_size(t))
		return NULL; /* too short to be useful; the prstatus signal still stands */
	if (core->nthreads == 0)
		return NULL; /* belongs to no thread */
	struct cq_thread *th = &core->threads[core->nthreads - 1];
	th->has_siginfo = true;
	th->si_signo = (int32_t)cq_load_uint(t, desc, 4);
	th->si_code = (int32_t)cq_load_uint(t, desc + (t->siginfo_code_first ? 4 : 8), 4);
	th->si_addr = cq_load_ptr(t, desc + addr_off);
	/* the union's kill member {pid_t si_pid; uid_t si_uid;} starts where si_addr does */
	if (size >= addr_off + 8) {
		th->si_pid = (uint32_t)cq_load_uint(t, desc + addr_off, 4);
		th->si_uid = (uint32_t)cq_load_uint(t, desc + addr_off + 4, 4);
	}
	return NULL;
}

static struct cq_error *note_file(struct cq_core *core, const uint8_t *desc, size_t size)
{
	const struct cq_target *t = core->target;
	struct cq_cursor c;
	cq_cursor_init(&c, t, desc, size);
	uint64_t count = cq_cursor_word(&c), page = cq_cursor_word(&c);
	size_t w = cq_target_ptr_size(t);
	if (c.overflow || count > cq_cursor_left(&c) / (3 * w))
		return cq_error_create(CQ_ERR_MALFORMED,
				       "%s: NT_FILE note claims %llu mappings but has %zu bytes",
				       core->name, (unsigned long long)count, size);
	if (core->file_maps)
		return NULL; /* only the first NT_FILE counts */
	uint64_t listed = count;
	if (count > CQ_MAX_FILE_MAPS) {
		/* more than a process can map: keep what is plausible, say what was cut */
		count = CQ_MAX_FILE_MAPS;
		cq_core_problem(core, "NT_FILE", "the note lists %llu file mappings, more than a process can have (vm.max_map_count is 65530 by default): the first %d are used",
				(unsigned long long)listed, CQ_MAX_FILE_MAPS);
	}
	struct cq_file_map *maps = calloc(count ? count : 1, sizeof(*maps));
	if (!maps)
		return &cq_error_nomem;
	struct cq_error *err = NULL;
	struct cq_cursor names = c;
	cq_cursor_skip(&names, listed * 3 * w);
	size_t n = 0;
	for (uint64_t i = 0; i < count && !err; i++) {
		struct cq_file_map *m = &maps[i];
		m->start = cq_cursor_word(&c);
		m->end = cq_cursor_word(&c);
		uint64_t pgoff = cq_cursor_word(&c);
		const char *name = cq_cursor_string(&names);
		if (!name || m->end < m->start || (page && pgoff > UINT64_MAX / page))
			err = cq_error_create(CQ_ERR_MALFORMED, "%s: NT_FILE entry %llu is malformed", core->name,
					      (unsigned long long)i);
		else if ((m->offset = pgoff * page), !(m->path = strdup(name)))
			err = &cq_error_nomem;
		else
			n++;
	}
	if (err) {
		for (size_t i = 0; i < n; i++)
			free(maps[i].path);
		free(maps);
		return err;
	}
	cq_core_set_file_maps(core, maps, n, page);
	return NULL;
}

/* The note at @p pos of [buf, buf + size) as gelf_getnote reads ELF_T_NHDR (4-byte
 * aligned name and descriptor, the header in the target's byte order): the next note's
 * offset, or 0 when this one does not fit. */
static size_t next_note(const struct cq_target *t, const uint8_t *buf, size_t size, size_t pos, GElf_Nhdr *nh,
			size_t *name_off, size_t *desc_off)
{
	if (pos > size || size - pos < 12)
		return 0;
	nh->n_namesz = (GElf_Word)cq_load_uint(t, buf + pos, 4);
	nh->n_descsz = (GElf_Word)cq_load_uint(t, buf + pos + 4, 4);
	nh->n_type = (GElf_Word)cq_load_uint(t, buf + pos + 8, 4);
	uint64_t at = pos + 12;
	*name_off = (size_t)at;
	if (nh->n_namesz > size - at)
		return 0;
	at = (at + nh->n_namesz + 3) & ~(uint64_t)3;
	uint64_t desc = ((uint64_t)nh->n_descsz + 3) & ~(uint64_t)3;
	if (at > size || size - at < desc)
		return 0;
	*desc_off = (size_t)at;
	return (size_t)(at + desc);
}

/* The bytes of the note segment at @p offset: mapped from the core's file (a 65-thread
 * core has 200 KB of notes: copying them into the heap cost a tenth of `coreq bt`), else
 * read through libelf. NULL with *@p err when neither works. */
static const uint8_t *note_bytes(struct cq_core *core, uint64_t offset, uint64_t size, struct cq_error **err)
{
	*err = NULL;
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t start = pg > 0 ? offset / (uint64_t)pg * (uint64_t)pg : offset;
	if (size && core->nnote_maps < sizeof(core->note_maps) / sizeof(core->note_maps[0])) {
		void *m = mmap(NULL, (size_t)(offset - start + size), PROT_READ, MAP_PRIVATE, core->file->fd,
			       (off_t)start);
		if (m != MAP_FAILED) {
			core->note_maps[core->nnote_maps].addr = m;
			core->note_maps[core->nnote_maps++].len = (size_t)(offset - start + size);
			return (const uint8_t *)m + (offset - start);
		}
	}
	Elf_Data *data = elf_getdata_rawchunk(core->elf, (int64_t)offset, (size_t)size, ELF_T_BYTE);
	if (!data || (size && !data->d_buf))
		*err = cq_error_create(CQ_ERR_MALFORMED,
				       "%s: note segment at offset 0x%llx size 0x%llx is unreadable: %s",
				       core->name, (unsigned long long)offset,
				       (unsigned long long)size, elf_errmsg(-1));
	return data ? data->d_buf : NULL;
}

static struct cq_error *parse_note_segment(struct cq_core *core, uint64_t offset, uint64_t size)
{
	struct cq_error *nerr;
	const uint8_t *buf = note_bytes(core, offset, size, &nerr);
	if (nerr)
		return nerr;
	size_t pos = 0, next, d_size = (size_t)size;
	GElf_Nhdr nh;
	size_t name_off, desc_off;
	while (pos < d_size && (next = next_note(core->target, buf, d_size, pos, &nh, &name_off, &desc_off)) > 0) {
		const char *name = nh.n_namesz ? (const char *)buf + name_off : "";
		const uint8_t *desc = buf + desc_off;
		size_t dsz = nh.n_descsz;
		bool core_note = nh.n_namesz == 5 && memcmp(name, "CORE", 5) == 0;
		bool linux_note = nh.n_namesz == 6 && memcmp(name, "LINUX", 6) == 0;
		struct cq_error *err = NULL;
		if (core_note) {
			switch (nh.n_type) {
			case NT_PRSTATUS: err = note_prstatus(core, desc, dsz); break;
			case NT_PRPSINFO: err = note_prpsinfo(core, desc, dsz); break;
			case NT_AUXV: err = note_auxv(core, desc, dsz); break;
			case NT_SIGINFO: err = note_siginfo(core, desc, dsz); break;
			case NT_FILE: err = note_file(core, desc, dsz); break;
			case NT_FPREGSET:
				/* the thread of the preceding NT_PRSTATUS; in the mapped notes, not copied */
				if (core->nthreads)
					err = cq_core_set_thread_fpregs(&core->threads[core->nthreads - 1], desc, dsz, false);
				break;
			}
		} else if (linux_note && (nh.n_type == NT_386_TLS || nh.n_type == NT_ARM_TLS)) {
			err = note_tls(core, nh.n_type, desc, dsz);
		} else if (nh.n_namesz == 6 && memcmp(name, "COREQ", 6) == 0 && nh.n_type == CQ_NT_SNAPSHOT) {
			if (dsz >= 8) /* shorter: not one this coreq wrote; the time stays unknown */
				core->taken_ns = cq_load_uint(core->target, desc, 8);
		} else if (nh.n_namesz == 6 && memcmp(name, "COREQ", 6) == 0) {
			err = cq__bundle_note(core, nh.n_type, desc, dsz);
		}
		if (err)
			return err;
		pos = next;
	}
	if (pos < d_size && d_size - pos >= sizeof(Elf32_Nhdr))
		return cq_error_create(CQ_ERR_MALFORMED,
				       "%s: note at offset 0x%llx has sizes past the end of its segment",
				       core->name, (unsigned long long)(offset + pos));
	return NULL;
}

struct cq_error *cq__core_parse_notes(struct cq_core *core)
{
	size_t phnum;
	if (elf_getphdrnum(core->elf, &phnum) != 0)
		return cq_error_create(CQ_ERR_MALFORMED, "%s: %s", core->name, elf_errmsg(-1));
	uint64_t total = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(core->elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		if (ph.p_offset > core->file->size || ph.p_filesz > core->file->size - ph.p_offset)
			return cq_error_create(CQ_ERR_MALFORMED,
					       "%s: note segment at offset 0x%llx size 0x%llx lies past the end of the file (0x%llx bytes): truncated core",
					       core->name, (unsigned long long)ph.p_offset,
					       (unsigned long long)ph.p_filesz,
					       (unsigned long long)core->file->size);
		total += ph.p_filesz;
		if (total > CQ_MAX_NOTES_BYTES)
			return cq_error_create(CQ_ERR_MALFORMED, "%s: more than %llu MiB of notes",
					       core->name,
					       (unsigned long long)(CQ_MAX_NOTES_BYTES >> 20));
		struct cq_error *err = parse_note_segment(core, ph.p_offset, ph.p_filesz);
		if (err)
			return err;
	}
	if (core->nthreads == 0)
		return cq_error_create(CQ_ERR_MALFORMED, "%s: core has no NT_PRSTATUS note (no threads)",
				       core->name);
	/* The crashing thread: the first with a signal (qemu sets it only there; the kernel
	 * writes the dumping thread first). */
	core->crash_thread = 0;
	for (size_t i = 0; i < core->nthreads; i++)
		if (core->threads[i].signal) {
			core->crash_thread = i;
			break;
		}
	/* A missing thread pointer is worth saying once: TLS then needs glibc's lists. */
	char tids[160] = "";
	size_t n = 0, len = 0;
	for (size_t i = 0; i < core->nthreads; i++)
		if (!core->threads[i].has_tp && n++ < 8 && len < sizeof(tids) - 16)
			len += (size_t)snprintf(tids + len, sizeof(tids) - len, "%s%d", n > 1 ? " " : "",
						core->threads[i].tid);
	/* Not said where the architecture's cores never carry one (MIPS). */
	if (n && core->target->tp_source != CQ_TP_NONE)
		cq_core_problem(core, "thread pointer",
				"not in the core for %zu thread(s) (%s%s); TLS is found through glibc's thread lists instead",
				n, tids, n > 8 ? " ..." : "");
	const struct cq_thread *crash = &core->threads[core->crash_thread];
	core->has_siginfo = crash->has_siginfo;
	core->signal = crash->has_siginfo ? crash->si_signo : crash->signal;
	core->si_code = crash->si_code;
	core->si_addr = crash->si_addr;
	core->si_pid = crash->si_pid;
	core->si_uid = crash->si_uid;
	/* no thread has a signal, and the siginfo (if any) is a stop: nothing crashed
	 * (SIGSTOP is 19, 23 on MIPS) */
	bool any = false;
	for (size_t i = 0; i < core->nthreads; i++)
		any |= core->threads[i].signal != 0;
	core->crashed = any || (core->has_siginfo && core->signal != cq_target_signal_number(core->target, "SIGSTOP"));
	return NULL;
}
