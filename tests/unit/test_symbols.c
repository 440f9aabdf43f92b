/* SPDX-License-Identifier: MIT */
/* Address lookups in an ELF's symbols: many addresses at once (cq_elf_symbols_at, one scan
 * of the tables in place) give what one at a time gives, whichever way the single lookups
 * are answered (a scan in place, of the loaded symbols, or the sorted index after 16).
 * The ELF is this test itself: its .symtab holds hundreds of symbols (libcoreq, libc's
 * start files) with aliases, sizes and gaps, on either host. */
#include <stdlib.h>

#include "check.h"
#include "elf/elf_file.h"

#define MAXN 40 /* above the 32 one scan answers: the rest go one by one */

static uint64_t next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* ret[k] for a[k] against one lookup each in @p one (a separate ELF: its own caches). */
static void compare(struct cq_elf *many, struct cq_elf *one, const uint64_t *a, size_t n)
{
	const struct cq_symbol *ret[MAXN];
	cq_elf_symbols_at(many, a, n, ret);
	for (size_t k = 0; k < n; k++) {
		const struct cq_symbol *s = cq_elf_symbol_at(one, a[k]);
		if ((s == NULL) != (ret[k] == NULL)) {
			check_failed++;
			printf("not ok - 0x%" PRIx64 ": one lookup gives %s, many give %s\n", a[k],
			       s ? s->name : "nothing", ret[k] ? ret[k]->name : "nothing");
			continue;
		}
		if (!s) {
			check_passed++;
			continue;
		}
		CHECK_STR(ret[k]->name, s->name);
		CHECK_U64(ret[k]->value, s->value);
		CHECK_U64(ret[k]->size, s->size);
	}
}

int main(void)
{
	struct cq_elf *many = NULL, *one = NULL, *list = NULL;
	struct cq_error *err = cq_elf_open("/proc/self/exe", &many);
	if (!err)
		err = cq_elf_open("/proc/self/exe", &one);
	if (!err)
		err = cq_elf_open("/proc/self/exe", &list);
	if (!err)
		err = cq_elf_load_symbols(list);
	CHECK(err == NULL);
	if (err) {
		printf("# %s\n", err->message);
		printf("%d passed, %d failed\n", check_passed, check_failed);
		return 1;
	}
	printf("# %zu symbols\n", list->nsyms);
	CHECK(list->nsyms > 100); /* about 1,000 in the 64-bit build (libdw linked in), 160 in the i386 one */

	/* edge addresses of some 150 symbols: each one's first byte, the byte before it, its end */
	uint64_t lo = UINT64_MAX, hi = 0, a[MAXN];
	size_t n = 0, batches = 0, step = list->nsyms / 150 ? list->nsyms / 150 : 1;
	for (size_t i = 0; i < list->nsyms; i += step) {
		const struct cq_symbol *s = &list->syms[i];
		if (!s->value)
			continue;
		lo = s->value < lo ? s->value : lo;
		hi = s->value + s->size > hi ? s->value + s->size : hi;
		uint64_t edge[3] = {s->value, s->value - 1, s->value + s->size};
		for (int j = 0; j < 3; j++) {
			a[n++] = edge[j];
			if (n == 32) {
				compare(many, one, a, n);
				if (++batches == 1) /* 32 addresses, one scan in place */
					CHECK(!many->syms_loaded && many->addr_lookups == 1);
				n = 0;
			}
		}
	}
	if (n)
		compare(many, one, a, n);
	/* random batches of 2..40 over the symbols' span, below and above it, with repeats */
	uint64_t seed = 0x9e3779b97f4a7c15u;
	for (int b = 0; b < 200; b++) {
		n = 2 + next_random(&seed) % (MAXN - 1);
		for (size_t k = 0; k < n; k++) {
			uint64_t r = next_random(&seed);
			a[k] = k && r % 7 == 0 ? a[k - 1] : lo - 64 + r % (hi - lo + 128);
		}
		compare(many, one, a, n);
	}
	a[0] = 0;
	a[1] = 1;
	a[2] = UINT64_MAX;
	compare(many, one, a, 3);
	/* past 16 lookups both go on to the loaded symbols' sorted index */
	CHECK(batches > 8);
	CHECK(many->by_addr_sorted);
	CHECK(one->by_addr_sorted);
	cq_elf_close(many);
	cq_elf_close(one);
	cq_elf_close(list);
	printf("%d passed, %d failed\n", check_passed, check_failed);
	return check_failed != 0;
}
