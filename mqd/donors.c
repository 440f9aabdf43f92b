/* SPDX-License-Identifier: MIT */
/* Installed Open MPI type donors (donors.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "corelib/image.h"
#include "base/text.h"
#include "plugin/self_path.h"
#include "corelib/types.h"
#include "input/file.h"
#include "donors.h"

/* A manifest is a page of JSON; anything much larger is not one of ours. */
#define MAX_MANIFEST (256 * 1024)
/* Donor directories looked at per search directory: a bound for a crafted tree. */
#define MAX_DONORS 256

const char *const cq_ompi_dll_types[] = {
	"opal_list_item_t", "opal_list_t", "opal_free_list_item_t", "opal_free_list_t",
	"opal_hash_table_t", "opal_pointer_array_t", "opal_datatype_t", "ompi_datatype_t",
	"ompi_group_t", "ompi_communicator_t", "ompi_request_t", "ompi_status_public_t",
	"mca_pml_base_request_t", "mca_pml_base_send_request_t", "mca_pml_base_recv_request_t",
	"mca_topo_base_module_t", "mca_topo_base_comm_cart_2_2_0_t", "mca_topo_base_comm_graph_2_2_0_t",
	"mca_topo_base_comm_dist_graph_2_2_0_t", NULL};

char *cq_mqd_donor_dirs(void)
{
	char *user = NULL, *out = NULL;
	const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
	if (xdg && *xdg == '/') {
		if (asprintf(&user, "%s/coreq/donors", xdg) < 0)
			user = NULL;
	} else if (home && *home == '/') {
		if (asprintf(&user, "%s/.local/share/coreq/donors", home) < 0)
			user = NULL;
	}
	char *installed = cq_self_relative("../share/coreq/donors");
	if (asprintf(&out, "%s%s%s", user ? user : "", user && installed ? ":" : "",
		     installed ? installed : "") < 0)
		out = NULL;
	free(user);
	free(installed);
	return out;
}

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * n] = 0;
}

/* The core's libmpi: its name and build-id (from the core's memory, else its file's). */
static struct cq_image *libmpi_of(struct cq_core *core, char *bid_hex)
{
	bid_hex[0] = 0;
	for (size_t i = 0; i < core->nimages; i++) {
		struct cq_image *img = &core->images[i];
		const char *b = strrchr(img->name, '/') ? strrchr(img->name, '/') + 1 : img->name;
		if (strncmp(b, "libmpi.so", 9) != 0)
			continue;
		if (img->build_id_len && img->build_id_len <= 64)
			hex(img->build_id, img->build_id_len, bid_hex);
		else if (img->elf && img->elf->build_id_len && img->elf->build_id_len <= 64)
			hex(img->elf->build_id, img->elf->build_id_len, bid_hex);
		return img;
	}
	return NULL;
}

/* Open MPI's version string as the core's libopen-pal holds it ("4.1.4"), or NULL. */
static char *ompi_version_of(struct cq_core *core)
{
	struct cq_symref ref;
	struct cq_error *err = cq_core_lookup(core, "opal_version_string", NULL, &ref);
	if (err) {
		cq_error_destroy(err);
		return NULL;
	}
	char *s = NULL;
	if ((err = cq_core_read_string(core, ref.address, 64, &s))) {
		cq_error_destroy(err);
		return NULL;
	}
	/* a version is digits and dots (and a suffix like "rc1"): anything else is not one */
	for (const char *p = s; *p; p++)
		if (!(*p >= '0' && *p <= '9') && *p != '.' && !(*p >= 'a' && *p <= 'z')) {
			free(s);
			return NULL;
		}
	if (!*s) {
		free(s);
		return NULL;
	}
	return s;
}

/* The manifest of donor directory @p dir, or NULL (missing, too large, not JSON). */
static json_t *manifest(const char *dir)
{
	char *path;
	if (asprintf(&path, "%s/types.json", dir) < 0)
		return NULL;
	/* a regular file only, checked before it is opened for reading: a FIFO planted as a
	 * manifest blocked fopen() forever */
	int fd;
	struct cq_error *err = cq_open_regular(path, "donor manifest", &fd);
	free(path);
	if (err) {
		cq_error_destroy(err);
		return NULL;
	}
	FILE *f = fdopen(fd, "re");
	if (!f) {
		close(fd);
		return NULL;
	}
	struct stat st;
	json_t *m = NULL;
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= MAX_MANIFEST)
		m = json_loadf(f, JSON_REJECT_DUPLICATES, NULL);
	fclose(f);
	if (m && !json_is_object(m)) {
		json_decref(m);
		m = NULL;
	}
	return m;
}

/* @p dir/@p base(.gz), whichever exists, or NULL. */
static char *donor_file(const char *dir, const char *base)
{
	static const char *const ext[] = {"", ".gz"};
	for (size_t i = 0; i < 2; i++) {
		char *p;
		if (asprintf(&p, "%s/%s%s", dir, base, ext[i]) < 0)
			return NULL;
		struct stat st;
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			return p;
		free(p);
	}
	return NULL;
}

static bool has_build_id(json_t *m, const char *bid)
{
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(m, "libmpi"), i, e) {
		const char *b = json_string_value(json_object_get(e, "build_id"));
		if (b && *bid && strcasecmp(b, bid) == 0)
			return true;
	}
	return false;
}

/* One candidate seen while searching, for the message when none fits. */
static void seen(FILE *f, size_t *n, const char *name, const char *arch, const char *version)
{
	if (*n < 8)
		fprintf(f, "%s%s (%s, Open MPI %s)", *n ? ", " : "", name, arch ? arch : "?", version ? version : "?");
	(*n)++;
}

struct cq_error *cq_mqd_pick_donor(struct cq_core *core, struct cq_mqd_donor *ret)
{
	memset(ret, 0, sizeof(*ret));
	struct cq_error *err = cq_core_load_images(core);
	cq_error_destroy(err);
	char bid[129];
	struct cq_image *mpi = libmpi_of(core, bid);
	char *version = ompi_version_of(core);
	const char *arch = core->target->name;
	char *dirs = cq_mqd_donor_dirs();
	char *seen_buf = NULL;
	size_t seen_len = 0, nseen = 0;
	FILE *sf = open_memstream(&seen_buf, &seen_len);
	/* two passes: a build-id match anywhere beats a version match anywhere; the first
	 * pass that runs lists what is installed, for the message when nothing fits */
	int listing = -1;
	for (int pass = 0; pass < 2 && !(ret->dir && ret->files[1]); pass++) {
		if ((pass == 0 && !*bid) || (pass == 1 && !version))
			continue;
		if (listing < 0)
			listing = pass;
		for (char *d = dirs, *end; d && *d && !(ret->dir && ret->files[1]); d = *end ? end + 1 : end) {
			end = d + strcspn(d, ":");
			char top[4096];
			snprintf(top, sizeof(top), "%.*s", (int)(end - d), d);
			struct dirent **list = NULL;
			int n = scandir(top, &list, NULL, alphasort);
			for (int i = 0; i < n; i++) {
				const char *name = list[i]->d_name;
				char sub[4096 + 260];
				snprintf(sub, sizeof(sub), "%s/%s", top, name);
				json_t *m = name[0] != '.' && i < MAX_DONORS && !(ret->dir && ret->files[1]) ? manifest(sub) : NULL;
				const char *a = json_string_value(json_object_get(m, "arch"));
				const char *v = json_string_value(json_object_get(m, "ompi_version"));
				if (m && pass == listing && sf)
					seen(sf, &nseen, sub, a, v);
				bool fits = m && a && !strcmp(a, arch) &&
					    (pass == 0 ? has_build_id(m, bid) : v && !strcmp(v, version));
				char *types = fits && !ret->dir ? donor_file(sub, "ompi-types.so") : NULL;
				if (types) {
					ret->dir = strdup(sub);
					ret->files[0] = types;
					ret->files[1] = donor_file(sub, "ompi-ob1-types.so");
					ret->version = v ? strdup(v) : NULL;
					if (pass == 0) {
						if (asprintf(&ret->matched, "build-id %s of %s", bid, mpi->name) < 0)
							ret->matched = NULL;
					} else if (asprintf(&ret->matched, "Open MPI version %s (opal_version_string in the core)%s",
							    version, *bid ? "; no donor lists the build-id of the core's libmpi" : "") < 0) {
						ret->matched = NULL;
					}
				} else if (fits && !ret->files[1]) {
					/* a donor `coreq donor` made has no ob1 types (no installed
					 * header has them): another that fits the same way may */
					ret->files[1] = donor_file(sub, "ompi-ob1-types.so");
				}
				json_decref(m);
			}
			for (int i = 0; i < n; i++)
				free(list[i]);
			free(list);
		}
	}
	if (sf)
		fclose(sf);
	if (!ret->dir) {
		if (asprintf(&ret->why_none,
			     "no installed type donor fits: the core is %s, libmpi %s (build-id %s), Open MPI %s; searched %s: %s; build one with `coreq donor` (from this version's headers) or give --types FILE",
			     arch, mpi ? mpi->name : "not found", *bid ? bid : "unknown", version ? version : "unknown",
			     dirs && *dirs ? dirs : "(no donor directory)",
			     nseen ? seen_buf : listing >= 0 ? "none installed" : "nothing to match (no build-id, no version)") < 0)
			ret->why_none = NULL;
	} else {
		for (size_t i = 0; i < 2; i++)
			if (ret->files[i] && (err = cq_core_add_type_donor(core, ret->files[i], NULL))) {
				free(seen_buf);
				free(dirs);
				free(version);
				return err;
			}
	}
	free(seen_buf);
	free(dirs);
	free(version);
	return NULL;
}

json_t *cq_mqd_donor_json(const struct cq_mqd_donor *d)
{
	if (!d->dir)
		return json_pack("{s:o}", "none", cq_json_str(d->why_none ? d->why_none : "?"));
	json_t *files = json_array();
	for (size_t i = 0; i < 2; i++)
		if (d->files[i])
			json_array_append_new(files, cq_json_str(d->files[i]));
	return json_pack("{s:o, s:o, s:o, s:o}", "dir", cq_json_str(d->dir), "files", files, "ompi_version",
			 d->version ? cq_json_str(d->version) : json_null(), "matched_by",
			 cq_json_str(d->matched ? d->matched : "?"));
}

void cq_mqd_donor_deinit(struct cq_mqd_donor *d)
{
	free(d->dir);
	free(d->files[0]);
	free(d->files[1]);
	free(d->version);
	free(d->matched);
	free(d->why_none);
	memset(d, 0, sizeof(*d));
}
