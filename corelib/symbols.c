/* SPDX-License-Identifier: MIT */
/* Symbol lookup across the images of a core, in the dynamic linker's order. */
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "internal.h"

/* Names of images whose symbols could not be searched, for the error message. */
static char *unsearched(struct cq_core *core)
{
	char *list = NULL;
	for (size_t i = 0; i < core->nimages; i++) {
		struct cq_image *img = &core->images[i];
		if (img->elf || img->status == CQ_IMAGE_VIRTUAL)
			continue;
		char *n;
		if (asprintf(&n, "%s%s%s", list ? list : "", list ? ", " : "", img->name) < 0)
			break;
		free(list);
		list = n;
	}
	return list;
}

/* One pass over the images in the dynamic linker's order: by exact name, or by plain name
 * (mangled symbols, elf_file.h). 1 when found (*ret set), 0 when not, -1 with *err_ret. */
static int lookup_pass(struct cq_core *core, const char *name, struct cq_image *scope, bool plain,
		       struct cq_symref *ret, struct cq_error **err_ret)
{
	for (size_t i = 0; i < core->nimages; i++) {
		struct cq_image *img = &core->images[i];
		if (scope && img != scope)
			continue;
		struct cq_elf *e = cq_image_symbol_file(img);
		if (!e)
			continue;
		const struct cq_symbol *s = plain ? cq_elf_find_symbol_plain(e, name) : cq_elf_find_symbol(e, name);
		if (!s)
			continue;
		bool tls = s->type == STT_TLS;
		if (!tls && !img->bias_known) {
			*err_ret = cq_error_create(CQ_ERR_MISSING,
						   "%s is in %s, but that image's load address is unknown",
						   name, img->name);
			return -1;
		}
		ret->image = img;
		ret->sym = s;
		ret->is_tls = tls;
		ret->address = tls ? s->value : img->bias + s->value;
		return 1;
	}
	return 0;
}

static struct cq_error *lookup(struct cq_core *core, const char *name, struct cq_image *scope,
			       bool plain_too, struct cq_symref *ret)
{
	struct cq_error *err = cq_core_load_images(core);
	if (err)
		return err;
	/* every image by exact name first: a plain-name match must not shadow a real one */
	int found = lookup_pass(core, name, scope, false, ret, &err);
	if (!found && plain_too)
		found = lookup_pass(core, name, scope, true, ret, &err);
	if (found)
		return found > 0 ? NULL : err;
	char *miss = unsearched(core);
	if (scope)
		err = cq_error_create(CQ_ERR_NOT_FOUND, "symbol %s not found in %s%s", name,
				      scope->name, scope->elf ? "" : " (its file is missing)");
	else
		err = cq_error_create(CQ_ERR_NOT_FOUND, "symbol %s not found in %zu images%s%s%s",
				      name, core->nimages, miss ? " (not searched, files missing: " : "",
				      miss ? miss : "", miss ? ")" : "");
	free(miss);
	return err;
}

struct cq_error *cq_core_lookup(struct cq_core *core, const char *name,
				struct cq_image *scope, struct cq_symref *ret)
{
	return lookup(core, name, scope, false, ret);
}

struct cq_error *cq_core_lookup_user(struct cq_core *core, const char *name,
				     struct cq_image *scope, struct cq_symref *ret)
{
	return lookup(core, name, scope, true, ret);
}

struct cq_error *cq_core_symbolize(struct cq_core *core, uint64_t addr, struct cq_symref *ret)
{
	struct cq_error *err = cq_core_load_images(core);
	if (err)
		return err;
	memset(ret, 0, sizeof(*ret));
	ret->address = addr;
	struct cq_image *img = cq_core_image_at(core, addr);
	if (!img)
		return NULL;
	ret->image = img;
	struct cq_elf *e = cq_image_symbol_file(img);
	if (e && img->bias_known)
		ret->sym = cq_elf_symbol_at(e, addr - img->bias);
	return NULL;
}

struct cq_error *cq_core_symbolize_many(struct cq_core *core, const uint64_t *addrs, size_t n,
				       struct cq_symref *ret)
{
	struct cq_error *err = cq_core_load_images(core);
	if (err)
		return err;
	uint64_t *vaddrs = malloc(n * sizeof(*vaddrs));
	size_t *which = malloc(n * sizeof(*which));
	const struct cq_symbol **syms = malloc(n * sizeof(*syms));
	bool *looked = calloc(n, sizeof(*looked));
	if (!vaddrs || !which || !syms || !looked) {
		err = &cq_error_nomem;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		ret[i] = (struct cq_symref){.address = addrs[i], .image = cq_core_image_at(core, addrs[i])};
	/* the addresses in one image together, image by image */
	for (size_t i = 0; i < n; i++) {
		struct cq_image *img = ret[i].image;
		struct cq_elf *e = !looked[i] && img && img->bias_known ? cq_image_symbol_file(img) : NULL;
		if (!e)
			continue;
		size_t k = 0;
		for (size_t j = i; j < n; j++)
			if (!looked[j] && ret[j].image == img) {
				looked[j] = true;
				which[k] = j;
				vaddrs[k++] = addrs[j] - img->bias;
			}
		cq_elf_symbols_at(e, vaddrs, k, syms);
		for (size_t m = 0; m < k; m++)
			ret[which[m]].sym = syms[m];
	}
out:
	free(looked);
	free(vaddrs);
	free(which);
	free(syms);
	return err;
}

char *cq_core_symbol_name(struct cq_core *core, uint64_t addr, bool image_fallback)
{
	struct cq_symref ref;
	struct cq_error *err = cq_core_symbolize(core, addr, &ref);
	if (err) {
		cq_error_destroy(err);
		return NULL;
	}
	char *s;
	if (!ref.sym) {
		/* No symbol: the image and link-time address still serve triage. */
		if (!image_fallback || !ref.image || !ref.image->bias_known)
			return NULL;
		const char *base = strrchr(ref.image->name, '/');
		return asprintf(&s, "%s+0x%" PRIx64, base ? base + 1 : ref.image->name,
				addr - ref.image->bias) < 0 ? NULL : s;
	}
	uint64_t off = addr - ref.image->bias - ref.sym->value;
	int n = off ? asprintf(&s, "%s+0x%" PRIx64, ref.sym->name, off) :
		      asprintf(&s, "%s", ref.sym->name);
	return n < 0 ? NULL : s;
}
