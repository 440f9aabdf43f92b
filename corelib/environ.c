/* SPDX-License-Identifier: MIT */
/* The process's initial environment, from its stack (environ.h). */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "base/decode.h"
#include "environ.h"

/* The address of the auxiliary vector on the stack: the note's first two entries, in the
 * target's layout, found word-aligned below @p top; 0 when not within CQ_ENVIRON_MAX_SCAN. */
static struct cq_error *find_auxv(struct cq_core *core, uint64_t top, uint64_t *ret)
{
	unsigned ws = cq_target_ptr_size(core->target);
	uint8_t pat[32];
	size_t plen = 4 * ws;
	for (size_t i = 0; i < 4; i++)
		cq_store_uint(core->target, pat + i * ws, ws, core->auxv[i / 2][i % 2]);
	const struct cq_segment *seg = cq_core_segment_at(core, top);
	if (!seg)
		return cq_error_create(CQ_ERR_FAULT, "AT_EXECFN 0x%llx is in no segment of the core: no environment",
				       (unsigned long long)top);
	uint64_t lo = top - seg->vaddr > CQ_ENVIRON_MAX_SCAN ? top - CQ_ENVIRON_MAX_SCAN : seg->vaddr;
	/* a page at a time: the vector is a few KB below AT_EXECFN (the argument and
	 * environment strings lie between), and only what is needed is read */
	enum { CHUNK = 4 << 10 };
	uint8_t *buf = malloc(CHUNK + sizeof(pat));
	if (!buf)
		return &cq_error_nomem;
	*ret = 0;
	/* chunks downwards from top; a chunk is read up to the pattern's length past its end,
	 * so that a match starting in it is seen whole. Nearest the top first. */
	for (uint64_t end = top; end > lo && !*ret;) {
		uint64_t start = end - lo > CHUNK ? end - CHUNK : lo;
		uint64_t rend = top - end < plen ? top : end + plen;
		struct cq_error *err = cq_core_read(core, start, buf, (size_t)(rend - start));
		if (err) {
			free(buf);
			return err;
		}
		uint64_t a = (end - 1) / ws * ws;
		for (; a >= start && !*ret; a -= ws) {
			if (a + plen <= rend && !memcmp(buf + (a - start), pat, plen))
				*ret = a;
			if (a < ws)
				break;
		}
		end = start;
	}
	free(buf);
	return NULL;
}

struct cq_error *cq_core_getenv(struct cq_core *core, const char *const *names, size_t nnames, size_t *which,
				char **value_ret)
{
	*value_ret = NULL;
	uint64_t top;
	if (core->nauxv < 2 || !cq_core_auxv(core, AT_EXECFN, &top))
		return cq_error_create(CQ_ERR_MISSING, "%s: no auxiliary vector with AT_EXECFN: the environment "
				       "cannot be found", core->name);
	uint64_t auxv = 0;
	struct cq_error *err = find_auxv(core, top, &auxv);
	if (err)
		return err;
	if (!auxv)
		return cq_error_create(CQ_ERR_MISSING, "%s: the auxiliary vector is not on the stack below "
				       "AT_EXECFN 0x%llx: no environment", core->name, (unsigned long long)top);
	unsigned ws = cq_target_ptr_size(core->target);
	/* envp[] ends with the NULL word just below the vector; it begins after argv's NULL */
	uint64_t at = auxv - ws, p;
	if ((err = cq_core_read_ptr(core, at, &p)))
		return err;
	if (p != 0)
		return cq_error_create(CQ_ERR_MALFORMED, "%s: no NULL before the auxiliary vector at 0x%llx: "
				       "not the initial stack", core->name, (unsigned long long)auxv);
	size_t best = nnames;
	for (unsigned n = 0; n < CQ_ENVIRON_MAX_VARS && at >= ws; n++) {
		at -= ws;
		if ((err = cq_core_read_ptr(core, at, &p)))
			break;
		/* a pointer outside the strings above the vector: argv[]'s NULL or argc */
		if (p <= auxv || p > top)
			break;
		char *s = NULL;
		if ((err = cq_core_read_string(core, p, CQ_ENVIRON_MAX_STRING, &s))) {
			cq_error_destroy(err);
			err = NULL;
			continue;
		}
		for (size_t k = 0; k < best; k++) {
			size_t l = strlen(names[k]);
			if (!strncmp(s, names[k], l) && s[l] == '=') {
				char *v = strdup(s + l + 1);
				if (!v) {
					free(s);
					free(*value_ret);
					*value_ret = NULL;
					return &cq_error_nomem;
				}
				free(*value_ret);
				*value_ret = v;
				best = k;
				break;
			}
		}
		free(s);
	}
	if (err) {
		free(*value_ret);
		*value_ret = NULL;
		return err;
	}
	if (which)
		*which = best;
	return NULL;
}
