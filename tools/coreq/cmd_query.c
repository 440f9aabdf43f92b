/* SPDX-License-Identifier: MIT */
/* `coreq sym`, `coreq addr`, `coreq read`, `coreq tls`, `coreq type`: one question each. */
#include <ctype.h>
#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "cli.h"
#include "base/decode.h"
#include "corelib/types.h"

/* Open CORE (args[0]) and check the argument count of a query command. */
static int open_query(struct cq_cli *cli, int nargs, const char *usage, struct cq_core **ret)
{
	if (cli->nargs != nargs) {
		fprintf(stderr, "coreq: usage: %s\n", usage);
		return CQ_EXIT_USAGE;
	}
	return cq_open_core(cli, false, ret);
}

static struct cq_image *scope_image(struct cq_cli *cli, struct cq_core *core, int *rc)
{
	*rc = 0;
	if (!cli->module)
		return NULL;
	struct cq_error *err = cq_core_load_images(core);
	if (err) {
		*rc = cq_fail(err);
		return NULL;
	}
	struct cq_image *img = cq_core_image_named(core, cli->module);
	if (!img) {
		fprintf(stderr, "coreq: no image named %s in %s\n", cli->module, core->name);
		*rc = CQ_EXIT_QUERY;
	}
	return img;
}

/* Read an integer value of a sized symbol (1/2/4/8 bytes) for display. */
static json_t *value_json(struct cq_core *core, uint64_t addr, uint64_t size)
{
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return json_null();
	uint64_t v;
	struct cq_error *err = cq_core_read_uint(core, addr, (unsigned)size, &v);
	if (err) {
		cq_error_destroy(err);
		return json_null();
	}
	return cq_json_addr(v);
}

static int finish(struct cq_cli *cli, struct cq_core *core, json_t *doc, void (*text)(json_t *))
{
	int rc = CQ_EXIT_OK;
	if (cli->json)
		cq_emit_json(doc);
	else {
		text(doc);
		json_decref(doc);
	}
	cq_core_close(core);
	return rc;
}

static void sym_text(json_t *d)
{
	json_t *v = json_object_get(d, "value");
	json_t *real = json_object_get(d, "symbol");
	json_t *desc = json_object_get(d, "descriptor");
	printf("%s%s%s%s = %s in %s (size %lld, %s%s%s)%s%s\n", cq_esc(json_string_value(json_object_get(d, "name"))),
	       real ? " (" : "", real ? cq_esc(json_string_value(real)) : "", real ? ")" : "",
	       cq_esc(json_string_value(json_object_get(d, "address"))),
	       cq_esc(json_string_value(json_object_get(d, "image"))),
	       (long long)json_integer_value(json_object_get(d, "size")),
	       cq_esc(json_string_value(json_object_get(d, "type"))), desc ? ", descriptor " : "",
	       desc ? cq_esc(json_string_value(desc)) : "", json_is_string(v) ? ", value " : "",
	       json_is_string(v) ? cq_esc(json_string_value(v)) : "");
}

static const char *sym_type(uint8_t t)
{
	switch (t) {
	case STT_FUNC: return "function";
	case STT_OBJECT: return "object";
	case STT_TLS: return "tls";
	case STT_GNU_IFUNC: return "ifunc";
	case STT_NOTYPE: return "notype";
	}
	return "other";
}

int cq_cmd_sym(struct cq_cli *cli)
{
	struct cq_core *core;
	int rc = open_query(cli, 2, "coreq sym CORE NAME [--exe EXE] [--module IMAGE]", &core);
	if (rc)
		return rc;
	struct cq_image *scope = scope_image(cli, core, &rc);
	struct cq_symref ref;
	struct cq_error *err = rc ? NULL : cq_core_lookup_user(core, cli->args[1], scope, &ref);
	if (rc || err) {
		cq_core_close(core);
		return rc ? rc : cq_fail(err);
	}
	json_t *doc = json_object();
	json_object_set_new(doc, "schema", cq_json_str("coreq-sym/1"));
	json_object_set_new(doc, "name", cq_json_str(cli->args[1]));
	/* the symbol's own name when a plain name found a mangled one */
	if (strcmp(ref.sym->name, cli->args[1]))
		json_object_set_new(doc, "symbol", cq_json_str(ref.sym->name));
	json_object_set_new(doc, "image", cq_json_str(ref.image->name));
	json_object_set_new(doc, ref.is_tls ? "tls_offset" : "address", cq_json_addr(ref.address));
	if (ref.is_tls)
		json_object_set_new(doc, "address", cq_json_str("thread-local: use coreq tls"));
	json_object_set_new(doc, "size", json_integer((json_int_t)ref.sym->size));
	json_object_set_new(doc, "type", cq_json_str(sym_type(ref.sym->type)));
	json_object_set_new(doc, "table", cq_json_str(ref.sym->dynamic ? ".dynsym" : ".symtab"));
	/* ppc64 ELFv1: address is the code entry, this the descriptor st_value named */
	struct cq_elf *e = cq_image_symbol_file(ref.image);
	uint64_t desc = e ? cq_elf_symbol_descriptor(e, ref.sym) : 0;
	if (desc)
		json_object_set_new(doc, "descriptor", cq_json_addr(ref.image->bias + desc));
	json_object_set_new(doc, "value", ref.is_tls || ref.sym->type == STT_FUNC ? json_null() :
				value_json(core, ref.address, ref.sym->size));
	return finish(cli, core, doc, sym_text);
}

static void addr_text(json_t *d)
{
	json_t *s = json_object_get(d, "symbol"), *i = json_object_get(d, "image");
	printf("%s: %s in %s (bytes from %s)\n", cq_esc(json_string_value(json_object_get(d, "address"))),
	       json_is_string(s) ? cq_esc(json_string_value(s)) : "??",
	       json_is_string(i) ? cq_esc(json_string_value(i)) : "no image",
	       cq_esc(json_string_value(json_object_get(d, "source"))));
}

int cq_cmd_addr(struct cq_cli *cli)
{
	struct cq_core *core;
	uint64_t addr;
	int rc = open_query(cli, 2, "coreq addr CORE ADDR [--exe EXE]", &core);
	if (rc)
		return rc;
	if (!cq_parse_u64(cli->args[1], &addr)) {
		cq_core_close(core);
		fprintf(stderr, "coreq: bad address %s\n", cli->args[1]);
		return CQ_EXIT_USAGE;
	}
	struct cq_symref ref;
	struct cq_error *err = cq_core_symbolize(core, addr, &ref);
	if (err) {
		cq_core_close(core);
		return cq_fail(err);
	}
	const char *path = NULL;
	enum cq_mem_source src = cq_core_mem_source(core, addr, &path);
	json_t *doc = json_object();
	json_object_set_new(doc, "schema", cq_json_str("coreq-addr/1"));
	json_object_set_new(doc, "address", cq_json_addr(addr));
	json_object_set_new(doc, "image", ref.image ? cq_json_str(ref.image->name) : json_null());
	char *s = cq_core_symbol_name(core, addr, true);
	json_object_set_new(doc, "symbol", s ? cq_json_str(s) : json_null());
	free(s);
	json_object_set_new(doc, "source", cq_json_str(src == CQ_MEM_CORE ? "core" :
						       src == CQ_MEM_FILE ? "file" : "unavailable"));
	json_object_set_new(doc, "file", path ? cq_json_str(path) : json_null());
	return finish(cli, core, doc, addr_text);
}

static void read_text(json_t *d)
{
	json_t *str = json_object_get(d, "string");
	if (json_is_string(str)) {
		printf("%s: \"%s\"\n", cq_esc(json_string_value(json_object_get(d, "address"))),
		       cq_esc(json_string_value(str)));
		return;
	}
	json_t *vals = json_object_get(d, "values");
	if (vals) {
		size_t i;
		json_t *v;
		json_array_foreach(vals, i, v)
			printf("%s%s", i % 4 ? " " : (i ? "\n" : ""), cq_esc(json_string_value(v)));
		printf("\n");
		return;
	}
	const char *hex = json_string_value(json_object_get(d, "bytes"));
	uint64_t base = 0;
	cq_parse_u64(json_string_value(json_object_get(d, "address")), &base);
	size_t n = strlen(hex) / 2;
	for (size_t off = 0; off < n; off += 16) {
		printf("%016" PRIx64 ": ", base + off);
		for (size_t k = 0; k < 16; k++)
			printf(k < n - off ? "%.2s " : "   ", hex + 2 * (off + k));
		printf(" |");
		for (size_t k = 0; k < 16 && off + k < n; k++) {
			unsigned c;
			sscanf(hex + 2 * (off + k), "%2x", &c);
			putchar(isprint((int)c) ? (int)c : '.');
		}
		printf("|\n");
	}
}

#define MAX_READ (UINT64_C(16) << 20)

int cq_cmd_read(struct cq_cli *cli)
{
	struct cq_core *core;
	uint64_t addr, len;
	int rc = open_query(cli, 3, "coreq read CORE ADDR LEN [--as u8|u16|u32|u64|ptr|str]", &core);
	if (rc)
		return rc;
	if (!cq_parse_u64(cli->args[1], &addr) || !cq_parse_u64(cli->args[2], &len) ||
	    len == 0 || len > MAX_READ) {
		cq_core_close(core);
		fprintf(stderr, "coreq: bad ADDR or LEN (LEN must be 1..%llu)\n",
			(unsigned long long)MAX_READ);
		return CQ_EXIT_USAGE;
	}
	const char *as = cli->as ? cli->as : "hex";
	unsigned unit = !strcmp(as, "u8") ? 1 : !strcmp(as, "u16") ? 2 : !strcmp(as, "u32") ? 4 :
			!strcmp(as, "u64") ? 8 : !strcmp(as, "ptr") ? cq_target_ptr_size(core->target) : 0;
	if (!unit && strcmp(as, "hex") && strcmp(as, "str")) {
		cq_core_close(core);
		fprintf(stderr, "coreq: --as must be one of u8 u16 u32 u64 ptr str hex\n");
		return CQ_EXIT_USAGE;
	}
	json_t *doc = json_object();
	json_object_set_new(doc, "schema", cq_json_str("coreq-read/1"));
	json_object_set_new(doc, "address", cq_json_addr(addr));
	struct cq_error *err = NULL;
	if (!strcmp(as, "str")) {
		char *s;
		if (!(err = cq_core_read_string(core, addr, (size_t)len, &s))) {
			json_object_set_new(doc, "string", json_stringn(s, strlen(s)));
			free(s);
		}
	} else {
		if (unit && len % unit) {
			json_decref(doc);
			cq_core_close(core);
			fprintf(stderr, "coreq: LEN must be a multiple of %u for --as %s\n", unit, as);
			return CQ_EXIT_USAGE;
		}
		uint8_t *buf = malloc((size_t)len);
		if (!buf)
			err = &cq_error_nomem;
		else if (!(err = cq_core_read(core, addr, buf, (size_t)len))) {
			json_object_set_new(doc, "length", json_integer((json_int_t)len));
			if (unit) {
				json_t *vals = json_array();
				for (uint64_t off = 0; off < len; off += unit)
					json_array_append_new(vals, cq_json_addr(cq_load_uint(core->target, buf + off, unit)));
				json_object_set_new(doc, "unit", json_integer(unit));
				json_object_set_new(doc, "values", vals);
			} else {
				char *hex = malloc((size_t)len * 2 + 1);
				if (!hex)
					err = &cq_error_nomem;
				else {
					for (uint64_t k = 0; k < len; k++)
						sprintf(hex + 2 * k, "%02x", buf[k]);
					json_object_set_new(doc, "bytes", cq_json_str(hex));
					free(hex);
				}
			}
		}
		free(buf);
	}
	if (err) {
		json_decref(doc);
		cq_core_close(core);
		return cq_fail(err);
	}
	return finish(cli, core, doc, read_text);
}

static void tls_text(json_t *d)
{
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(d, "threads"), i, t) {
		json_t *a = json_object_get(t, "address"), *v = json_object_get(t, "value");
		json_t *e = json_object_get(t, "error");
		printf("thread %lld: %s%s%s%s%s%s\n", (long long)json_integer_value(json_object_get(t, "tid")),
		       json_is_string(a) ? cq_esc(json_string_value(a)) : "unavailable",
		       json_is_string(v) ? " = " : "", json_is_string(v) ? cq_esc(json_string_value(v)) : "",
		       json_is_string(e) ? " (" : "", json_is_string(e) ? cq_esc(json_string_value(e)) : "",
		       json_is_string(e) ? ")" : "");
	}
}

int cq_cmd_tls(struct cq_cli *cli)
{
	struct cq_core *core;
	int rc = open_query(cli, 2, "coreq tls CORE NAME [--thread TID] [--exe EXE] [--module IMAGE]", &core);
	if (rc)
		return rc;
	struct cq_image *scope = scope_image(cli, core, &rc);
	if (rc) {
		cq_core_close(core);
		return rc;
	}
	struct cq_symref ref;
	struct cq_error *err = cq_core_lookup(core, cli->args[1], scope, &ref);
	if (!err && !ref.is_tls)
		err = cq_error_create(CQ_ERR_USAGE, "%s is not a thread-local variable", cli->args[1]);
	if (err) {
		cq_core_close(core);
		return cq_fail(err);
	}
	if (cli->has_thread && !cq_core_thread(core, cli->thread)) {
		fprintf(stderr, "coreq: no thread %d in %s\n", cli->thread, core->name);
		cq_core_close(core);
		return CQ_EXIT_QUERY;
	}
	json_t *doc = json_object(), *threads = json_array();
	json_object_set_new(doc, "schema", cq_json_str("coreq-tls/1"));
	json_object_set_new(doc, "name", cq_json_str(cli->args[1]));
	/* the symbol's own name when a plain name found a mangled one */
	if (strcmp(ref.sym->name, cli->args[1]))
		json_object_set_new(doc, "symbol", cq_json_str(ref.sym->name));
	json_object_set_new(doc, "image", cq_json_str(ref.image->name));
	json_object_set_new(doc, "size", json_integer((json_int_t)ref.sym->size));
	int failed = 0;
	for (size_t i = 0; i < core->nthreads; i++) {
		struct cq_thread *th = &core->threads[i];
		if (cli->has_thread && th->tid != cli->thread)
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "tid", json_integer(th->tid));
		uint64_t addr;
		err = cq_core_tls_address(core, th, cli->args[1], ref.image, &addr);
		if (err) {
			json_object_set_new(o, "address", json_null());
			json_object_set_new(o, "value", json_null());
			json_object_set_new(o, "error", cq_json_str(err->message));
			cq_error_destroy(err);
			failed++;
		} else {
			json_object_set_new(o, "address", cq_json_addr(addr));
			json_object_set_new(o, "value", value_json(core, addr, ref.sym->size));
		}
		json_array_append_new(threads, o);
	}
	json_object_set_new(doc, "threads", threads);
	finish(cli, core, doc, tls_text);
	if (failed)
		fprintf(stderr, "coreq: TLS address unavailable for %d thread(s), see output\n", failed);
	return failed ? CQ_EXIT_PARTIAL : CQ_EXIT_OK;
}

static void type_text(json_t *d)
{
	printf("%s: %lld bytes, from %s\n", cq_esc(json_string_value(json_object_get(d, "name"))),
	       (long long)json_integer_value(json_object_get(d, "size")),
	       cq_esc(json_string_value(json_object_get(d, "file"))));
	const char *k;
	json_t *v;
	json_object_foreach(json_object_get(d, "fields"), k, v) {
		if (json_is_integer(v))
			printf("  %-32s offset %lld\n", k, (long long)json_integer_value(v));
		else
			printf("  %-32s (no such field)\n", k);
	}
}

int cq_cmd_type(struct cq_cli *cli)
{
	if (cli->nargs < 2) {
		fprintf(stderr, "coreq: usage: coreq type CORE NAME [FIELD...] [--types DONOR]\n");
		return CQ_EXIT_USAGE;
	}
	struct cq_core *core;
	int rc = cq_open_core(cli, false, &core);
	if (rc)
		return rc;
	const struct cq_type *t;
	struct cq_error *err = cq_core_find_type(core, cli->args[1], &t);
	if (err) {
		cq_core_close(core);
		return cq_fail(err);
	}
	json_t *doc = json_object();
	json_object_set_new(doc, "schema", cq_json_str("coreq-type/1"));
	json_object_set_new(doc, "name", cq_json_str(cli->args[1]));
	json_object_set_new(doc, "file", cq_json_str(cq_type_file(t)));
	int64_t size = cq_type_size(t);
	json_object_set_new(doc, "size", size >= 0 ? json_integer(size) : json_null());
	json_t *fields = json_object();
	for (int i = 2; i < cli->nargs; i++) {
		int64_t off = cq_type_field_offset(t, cli->args[i]);
		json_object_set_new(fields, cli->args[i], off >= 0 ? json_integer(off) : json_null());
		if (off < 0)
			rc = CQ_EXIT_QUERY;
	}
	json_object_set_new(doc, "fields", fields);
	finish(cli, core, doc, type_text);
	return rc;
}
