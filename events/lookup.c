/* SPDX-License-Identifier: MIT */
/* Symbols and strings of a recording's events, once per address (lookup.h). Open
 * addressing that only grows (nothing is evicted, so what a lookup returned stays valid
 * while the event is decoded); past its bounds a lookup is made each time and freed at
 * the next event. */
#include <stdlib.h>
#include <string.h>

#include "corelib/image.h"
#include "lookup.h"

void cq__lookup_init(struct cq_lookup *lk, struct cq_core *core)
{
	memset(lk, 0, sizeof(*lk));
	lk->core = core;
}

void cq__lookup_next(struct cq_lookup *lk)
{
	for (unsigned i = 0; i < lk->nuncached; i++)
		free(lk->uncached[i]);
	lk->nuncached = 0;
}

void cq__lookup_deinit(struct cq_lookup *lk)
{
	cq__lookup_next(lk);
	for (int k = 0; k < CQ_LOOKUP_KINDS; k++) {
		for (size_t i = 0; i < lk->t[k].cap; i++)
			free(lk->t[k].e[i].value);
		free(lk->t[k].e);
	}
	memset(lk, 0, sizeof(*lk));
}

static size_t hash(uint64_t key, size_t cap)
{
	return (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 17) & (cap - 1);
}

static struct cq_lookup_entry *find(struct cq_lookup_table *t, uint64_t key)
{
	if (!t->cap)
		return NULL;
	for (size_t i = hash(key, t->cap);; i = (i + 1) & (t->cap - 1))
		if (t->e[i].key == key || !t->e[i].key)
			return &t->e[i];
}

/* Room for one more entry (load at most 1/2), or false past the bounds or out of memory. */
static bool grow(struct cq_lookup_table *t)
{
	if (t->n + 1 <= t->cap / 2)
		return true;
	if (t->n + 1 > CQ_LOOKUP_MAX_ENTRIES)
		return false;
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct cq_lookup_entry *e = calloc(cap, sizeof(*e));
	if (!e)
		return false;
	struct cq_lookup_table nt = {e, cap, t->n};
	for (size_t i = 0; i < t->cap; i++)
		if (t->e[i].key)
			*find(&nt, t->e[i].key) = t->e[i];
	free(t->e);
	*t = nt;
	return true;
}

static char *look_up(struct cq_lookup *lk, enum cq_lookup_what what, uint64_t addr)
{
	if (what != CQ_LOOKUP_STRING)
		return cq_core_symbol_name(lk->core, addr, what == CQ_LOOKUP_SYMBOL_IMG);
	char *s = NULL;
	struct cq_error *err = cq_core_read_string(lk->core, addr, CQ_LOOKUP_MAX_STRING, &s);
	lk->reads++;
	if (err) {
		cq_error_destroy(err);
		return NULL;
	}
	lk->read_bytes += s ? strlen(s) + 1 : 0;
	return s;
}

const char *cq__lookup(struct cq_lookup *lk, enum cq_lookup_what what, uint64_t addr)
{
	struct cq_lookup_table *t = &lk->t[what];
	uint64_t key = addr + 1; /* 0 for the last address: looked up, not kept */
	struct cq_lookup_entry *e = key ? find(t, key) : NULL;
	if (e && e->key)
		return e->value;
	char *v = look_up(lk, what, addr);
	size_t len = v ? strlen(v) + 1 : 0;
	if (key && lk->bytes + len <= CQ_LOOKUP_MAX_BYTES && grow(t)) {
		e = find(t, key);
		*e = (struct cq_lookup_entry){key, v};
		t->n++;
		lk->bytes += len;
		return v;
	}
	if (v && lk->nuncached < sizeof(lk->uncached) / sizeof(lk->uncached[0]))
		return lk->uncached[lk->nuncached++] = v;
	free(v); /* cannot happen: an event makes fewer lookups than uncached[] holds */
	return NULL;
}
