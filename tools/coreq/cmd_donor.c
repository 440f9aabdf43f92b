/* SPDX-License-Identifier: MIT */
/* `coreq donor`: build an Open MPI type donor (mqd/donors.h) from the MPI headers installed
 * here, or a target's (--arch, --sysroot), for versions the installed donors do not cover.
 * The compiler does the work: a donor is donor.c (shipped with coreq) compiled with -g
 * against the headers, so its DWARF has the layouts the target's libmpi was built with.
 * Then every type the DLL asks for is checked in the result's DWARF, and the manifest coreq
 * picks donors by is written beside it. */
#include "cli.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "output/output.h"
#include "plugin/self_path.h"
#include "mqd/donors.h"
#include "targets/target.h"

extern char **environ;

/* The directory with donor.c and donor-include/: installed, or the source tree's when
 * coreq runs from build/. */
static char *donor_src(void)
{
	static const char *const where[] = {"../share/coreq/donor-src", "../tools/fixtures/mpi/src"};
	for (size_t i = 0; i < 2; i++) {
		char *d = cq_self_relative(where[i]), *c = NULL;
		if (d && asprintf(&c, "%s/donor.c", d) >= 0 && access(c, R_OK) == 0) {
			free(c);
			return d;
		}
		free(c);
		free(d);
	}
	return NULL;
}

/* OMPI_MAJOR/MINOR/RELEASE_VERSION of an Open MPI mpi.h as "4.1.4", or NULL. */
static char *ompi_version(const char *mpi_h)
{
	FILE *f = fopen(mpi_h, "re");
	if (!f)
		return NULL;
	long v[3] = {-1, -1, -1};
	static const char *const key[] = {"OMPI_MAJOR_VERSION", "OMPI_MINOR_VERSION", "OMPI_RELEASE_VERSION"};
	char line[512];
	while (fgets(line, sizeof(line), f))
		for (int k = 0; k < 3; k++) {
			char name[64];
			long n;
			if (sscanf(line, "#define %63s %ld", name, &n) == 2 && !strcmp(name, key[k]) && n >= 0 && n < 1000)
				v[k] = n;
		}
	fclose(f);
	char *s = NULL;
	if (v[0] < 0 || v[1] < 0 || v[2] < 0 || asprintf(&s, "%ld.%ld.%ld", v[0], v[1], v[2]) < 0)
		return NULL;
	return s;
}

/* Whether @p prog is found on PATH (or is a path that exists). */
static bool on_path(const char *prog)
{
	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	const char *path = getenv("PATH");
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t len = strcspn(p, ":");
		char *c;
		if (asprintf(&c, "%.*s/%s", (int)len, p, prog) >= 0) {
			bool ok = access(c, X_OK) == 0;
			free(c);
			if (ok)
				return true;
		}
		p += len + (p[len] == ':');
	}
	return false;
}

static int mkdirs(const char *dir)
{
	char *d = strdup(dir);
	if (!d)
		return -1;
	for (char *p = d + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(d, 0755) && errno != EEXIST) {
				free(d);
				return -1;
			}
			*p = '/';
		}
	int r = mkdir(d, 0755) && errno != EEXIST ? -1 : 0;
	free(d);
	return r;
}

/* Run argv (the compiler), its output on our stderr; 0 when it exited 0. */
static int run(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, 2, 1);
	pid_t pid;
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc)
		return -1;
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Run the compiler @p argv with its output, argv[@p at], going to a temporary file beside
 * @p path that is renamed onto @p path once it succeeded (output/output.h: a symlink
 * planted at @p path is replaced, never followed; a failed compile leaves nothing). */
static int run_into(char **argv, int at, const char *path)
{
	struct cq_output o;
	struct cq_error *err = cq_output_begin(path, "coreq donor's output", NULL, 0, &o);
	if (err) {
		fprintf(stderr, "coreq donor: %s\n", cq_esc(err->message));
		cq_error_destroy(err);
		return -1;
	}
	char *named = argv[at];
	argv[at] = o.tmp;
	int rc = run(argv);
	argv[at] = named;
	if (rc) {
		cq_output_abort(&o);
		return -1;
	}
	if ((err = cq_output_commit(&o))) {
		fprintf(stderr, "coreq donor: %s\n", cq_esc(err->message));
		cq_error_destroy(err);
		return -1;
	}
	return 0;
}

/* @p text into @p path the same way. */
static int write_into(const char *text, const char *path)
{
	struct cq_output o;
	struct cq_error *err = cq_output_begin(path, "coreq donor's output", NULL, 0, &o);
	if (!err && (err = cq_output_write(&o, text, strlen(text))))
		cq_output_abort(&o);
	else if (!err)
		err = cq_output_commit(&o);
	if (err) {
		fprintf(stderr, "coreq donor: %s\n", cq_esc(err->message));
		cq_error_destroy(err);
		return -1;
	}
	return 0;
}

/* The ob1 PML's types coreq's own DLL reads (plugins/ompi41/ob1.c): what donor_ob1.c
 * describes. */
static const char *const ob1_types[] = {
	"mca_pml_ob1_comm_t", "mca_pml_ob1_comm_proc_t", "mca_pml_ob1_recv_frag_t", "mca_pml_ob1_buffer_t",
	"mca_pml_ob1_hdr_t", "mca_pml_ob1_common_hdr_t", "mca_pml_ob1_match_hdr_t", "mca_pml_ob1_rendezvous_hdr_t",
	"mca_pml_ob1_rget_hdr_t", "mca_btl_base_segment_t", "ompi_proc_t", NULL};

/* Each of the types @p types (NULL-terminated) in @p so's DWARF with its size into
 * @p sizes; how many are missing (named in @p missing). */
static int check_types(const char *so, const char *const *types, json_t *sizes, json_t *missing)
{
	int fd = open(so, O_RDONLY | O_CLOEXEC);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	int nmissing = 0;
	for (size_t i = 0; types[i]; i++) {
		const char *want = types[i];
		bool found = false;
		Dwarf_Off off = 0, next;
		size_t hsize;
		while (dw && !found && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			Dwarf_Die cu, d;
			if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &d) == 0) {
				do {
					const char *n = dwarf_diename(&d);
					if (dwarf_tag(&d) != DW_TAG_typedef || !n || strcmp(n, want))
						continue;
					Dwarf_Attribute a;
					Dwarf_Die t;
					Dwarf_Word size;
					if (dwarf_formref_die(dwarf_attr(&d, DW_AT_type, &a), &t) &&
					    dwarf_aggregate_size(&t, &size) == 0 && size > 0) {
						json_object_set_new(sizes, want, json_integer((json_int_t)size));
						found = true;
					}
				} while (!found && dwarf_siblingof(&d, &d) == 0);
			}
			off = next;
		}
		if (!found) {
			json_array_append_new(missing, json_string(want));
			nmissing++;
		}
	}
	if (dw)
		dwarf_end(dw);
	if (fd >= 0)
		close(fd);
	return nmissing;
}

int cq_cmd_donor(struct cq_cli *cli)
{
	if (cli->nargs) {
		fprintf(stderr, "coreq donor: no arguments (options: --arch ARCH, --sysroot DIR, --mpi-include DIR, --libmpi FILE, --ompi-source DIR, --cc CC, -o DIR)\n");
		return CQ_EXIT_USAGE;
	}
#if defined(__x86_64__)
	const char *host = "x86_64";
#elif defined(__i386__)
	const char *host = "i386";
#elif defined(__aarch64__)
	const char *host = "aarch64";
#else
	const char *host = NULL;
#endif
	const char *arch = cli->donor_arch ? cli->donor_arch : host;
	const struct cq_target *t = arch ? cq_target_by_name(arch) : NULL;
	if (!t) {
		char names[256];
		fprintf(stderr, "coreq donor: unknown architecture %s (one of %s)\n",
			arch ? cq_esc(arch) : "(host unknown: give --arch)", cq_target_names(names, sizeof(names)));
		return CQ_EXIT_USAGE;
	}
	const char *sysroot = cli->opts.sysroot ? cli->opts.sysroot : "";
	char *version = NULL, *inc = NULL, *mpi_h = NULL, *libmpi = NULL, *src = NULL, *out = NULL, *so = NULL, *cc = NULL;
	char *ob1 = NULL;
	int rc = CQ_EXIT_IO;
	json_t *m = NULL;
	if (cli->donor_mpi_include ? !(inc = strdup(cli->donor_mpi_include)) :
	    asprintf(&inc, "%s/usr/lib/%s/openmpi/include", sysroot, t->multiarch) < 0)
		goto oom;
	if (asprintf(&mpi_h, "%s/mpi.h", inc) < 0)
		goto oom;
	version = ompi_version(mpi_h);
	if (!version) {
		fprintf(stderr, "coreq donor: no Open MPI mpi.h at %s: install the target's Open MPI headers (Debian: libopenmpi-dev%s%s%s) or give --mpi-include DIR\n",
			cq_esc(mpi_h), strcmp(arch, host ? host : "") ? ":" : "",
			strcmp(arch, host ? host : "") ? (t->multiarch[0] == 'x' ? "amd64" : arch) : "",
			strcmp(arch, host ? host : "") ? " extracted under --sysroot DIR" : "");
		goto out;
	}
	if (!(src = donor_src())) {
		fprintf(stderr, "coreq donor: donor.c not found beside coreq (share/coreq/donor-src/): reinstall coreq (make install)\n");
		goto out;
	}
	/* the compiler: the user's, the host's for the host, else Debian's cross compiler */
	if (cli->donor_cc)
		cc = strdup(cli->donor_cc);
	else if (host && !strcmp(arch, host))
		cc = strdup("cc");
	else if (asprintf(&cc, "%s-gcc", t->gnu_triplet) < 0)
		cc = NULL;
	if (!cc)
		goto oom;
	if (!on_path(cc)) {
		fprintf(stderr, "coreq donor: compiler %s not found: install it (Debian: gcc%s%s) or give --cc CC\n", cq_esc(cc),
			strcmp(arch, host ? host : "") ? "-" : "", strcmp(arch, host ? host : "") ? t->gnu_triplet : "");
		goto out;
	}
	/* where: -o DIR, else the user's donor directory coreq searches first */
	if (cli->output) {
		out = strdup(cli->output);
	} else {
		char *dirs = cq_mqd_donor_dirs();
		size_t len = dirs ? strcspn(dirs, ":") : 0;
		if (len && asprintf(&out, "%.*s/%s-%s", (int)len, dirs, arch, version) < 0)
			out = NULL;
		free(dirs);
		if (!out) {
			fprintf(stderr, "coreq donor: no home directory for the donor (HOME, XDG_DATA_HOME unset): give -o DIR\n");
			goto out;
		}
	}
	if (!out)
		goto oom;
	if (mkdirs(out)) {
		fprintf(stderr, "coreq donor: cannot create %s: %s\n", cq_esc(out), strerror(errno));
		goto out;
	}
	if (asprintf(&so, "%s/ompi-types.so", out) < 0)
		goto oom;
	char *inc_ompi = NULL, *inc_src = NULL, *inc_sys = NULL, *inc_sys2 = NULL, *file = NULL;
	if (asprintf(&inc_ompi, "-I%s/openmpi", inc) < 0 || asprintf(&inc_src, "-I%s/donor-include", src) < 0 ||
	    asprintf(&file, "%s/donor.c", src) < 0 ||
	    asprintf(&inc_sys, "-I%s/usr/include/%s", sysroot, t->multiarch) < 0 ||
	    asprintf(&inc_sys2, "-I%s/usr/include", sysroot) < 0)
		goto oom;
	char *inc_main = NULL;
	if (asprintf(&inc_main, "-I%s", inc) < 0)
		goto oom;
	/* the target's hwloc/libevent headers before the host's when the headers come from a
	 * target tree (--sysroot): Debian's cross gcc also searches /usr/include */
	char *argv[24];
	int n = 0;
	argv[n++] = cc;
	argv[n++] = "-g";
	argv[n++] = "-O0";
	argv[n++] = "-fno-eliminate-unused-debug-types";
	argv[n++] = "-fPIC";
	argv[n++] = "-shared";
	argv[n++] = inc_ompi;
	argv[n++] = inc_main;
	argv[n++] = inc_src;
	if (*sysroot) {
		argv[n++] = inc_sys;
		argv[n++] = inc_sys2;
	}
	argv[n++] = "-o";
	argv[n++] = so;
	argv[n++] = file;
	argv[n] = NULL;
	fprintf(stderr, "coreq donor: Open MPI %s headers %s, %s, compiling %s\n", version, cq_esc(inc), cq_esc(cc), cq_esc(file));
	int crc = run_into(argv, n - 2, so);
	/* the ob1 PML's types (the unexpected queue, coreq's own DLL): no installed header has
	 * them, so from Open MPI's source tree of the same version, after the installed,
	 * configured headers (which decide the layouts) */
	char *ob1_file = NULL, *ob1_inc = NULL;
	bool ob1_failed = false;
	if (!crc && cli->donor_ompi_source) {
		if (asprintf(&ob1_file, "%s/donor_ob1.c", src) < 0 || asprintf(&ob1_inc, "-I%s", cli->donor_ompi_source) < 0 ||
		    asprintf(&ob1, "%s/ompi-ob1-types.so", out) < 0)
			goto oom;
		argv[n - 2] = ob1;
		argv[n - 1] = ob1_inc;
		argv[n] = ob1_file;
		argv[n + 1] = NULL;
		fprintf(stderr, "coreq donor: the ob1 PML's types from %s, compiling %s\n", cq_esc(cli->donor_ompi_source),
			cq_esc(ob1_file));
		if (run_into(argv, n - 2, ob1)) {
			fprintf(stderr, "coreq donor: %s failed to compile %s against %s and %s (its messages are above): is it Open MPI %s's source tree (apt-get source openmpi)?\n",
				cq_esc(cc), cq_esc(ob1_file), cq_esc(cli->donor_ompi_source), cq_esc(inc), version);
			ob1_failed = true;
		}
	}
	free(ob1_file);
	free(ob1_inc);
	free(inc_ompi);
	free(inc_src);
	free(inc_sys);
	free(inc_sys2);
	free(inc_main);
	free(file);
	if (ob1_failed) {
		rc = CQ_EXIT_INTERNAL;
		goto out;
	}
	if (crc) {
		fprintf(stderr, "coreq donor: %s failed to compile %s/donor.c against %s (its messages are above)\n", cq_esc(cc), cq_esc(src), cq_esc(inc));
		rc = CQ_EXIT_INTERNAL;
		goto out;
	}
	/* the result must be of the target and describe every type the DLL asks for */
	struct cq_elf *e = NULL;
	struct cq_error *err = cq_elf_open(so, &e);
	if (err || e->e_machine != t->e_machine || e->elf_class != t->elf_class) {
		fprintf(stderr, "coreq donor: %s is not a %s shared object (%s): give the target's compiler with --cc\n", cq_esc(so), arch,
			err ? cq_esc(err->message) : "another machine or class");
		cq_error_destroy(err);
		cq_elf_close(e);
		rc = CQ_EXIT_FORMAT;
		goto out;
	}
	cq_elf_close(e);
	json_t *sizes = json_object(), *missing = json_array();
	int nmissing = check_types(so, cq_ompi_dll_types, sizes, missing);
	/* the libmpi of the same headers, when here: its build-id makes the match exact */
	json_t *libs = json_array();
	if (cli->donor_libmpi ? !(libmpi = strdup(cli->donor_libmpi)) :
	    asprintf(&libmpi, "%s/usr/lib/%s/libmpi.so.40", sysroot, t->multiarch) < 0)
		goto oom;
	struct cq_elf *lib = NULL;
	err = cq_elf_open(libmpi, &lib);
	if (!err && lib->build_id_len && lib->e_machine == t->e_machine && lib->elf_class == t->elf_class) {
		char hex[129];
		for (size_t i = 0; i < lib->build_id_len && i < 64; i++)
			sprintf(hex + 2 * i, "%02x", lib->build_id[i]);
		json_array_append_new(libs, json_pack("{s:s, s:s, s:o}", "soname", "libmpi.so.40", "build_id", hex,
						      "path", cq_json_str(libmpi)));
	} else if (cli->donor_libmpi) {
		fprintf(stderr, "coreq donor: --libmpi %s: %s\n", cq_esc(libmpi),
			err ? cq_esc(err->message) : "no build-id, or another architecture");
		cq_error_destroy(err);
		cq_elf_close(lib);
		json_decref(sizes);
		json_decref(missing);
		json_decref(libs);
		rc = CQ_EXIT_FORMAT;
		goto out;
	}
	cq_error_destroy(err);
	cq_elf_close(lib);
	m = json_pack("{s:s, s:s, s:o, s:s, s:o, s:s, s:o, s:o}", "arch", arch, "ompi_version", version, "libmpi", libs,
		      "made_by", "coreq donor", "headers_from", cq_json_str(inc), "compiler", cc, "sizeof", sizes,
		      "missing", missing);
	if (ob1) {
		json_t *osz = json_object(), *omiss = json_array();
		nmissing += check_types(ob1, ob1_types, osz, omiss);
		json_object_set_new(m, "ob1_source", cq_json_str(cli->donor_ompi_source));
		json_object_set_new(m, "ob1_sizeof", osz);
		json_object_set_new(m, "ob1_missing", omiss);
	}
	char *mpath = NULL, *mtext = m ? json_dumps(m, JSON_INDENT(1)) : NULL;
	if (!mtext || asprintf(&mpath, "%s/types.json", out) < 0 || write_into(mtext, mpath) != 0) {
		fprintf(stderr, "coreq donor: cannot write %s/types.json\n", cq_esc(out));
		free(mpath);
		free(mtext);
		goto out;
	}
	free(mpath);
	free(mtext);
	if (nmissing) {
		fprintf(stderr, "coreq donor: %s lacks %d of the types the DLLs ask for (listed in types.json \"missing\", \"ob1_missing\"): these headers are not Open MPI 4.x's layout coreq knows\n",
			cq_esc(so), nmissing);
		rc = CQ_EXIT_PARTIAL;
	} else {
		rc = CQ_EXIT_OK;
	}
	if (cli->json) {
		json_object_set_new(m, "dir", cq_json_str(out));
		json_object_set_new(m, "file", cq_json_str(so));
		char *s = json_dumps(m, JSON_INDENT(2));
		if (s)
			puts(s);
		free(s);
	} else {
		printf("donor:    %s (%s, Open MPI %s, %zu types)\n", cq_esc(so), arch, version, json_object_size(sizes));
		printf("manifest: %s/types.json\n", cq_esc(out));
		if (json_array_size(libs))
			printf("libmpi:   %s, build-id %s: cores of this libmpi get this donor\n", cq_esc(libmpi),
			       json_string_value(json_object_get(json_array_get(libs, 0), "build_id")));
		else
			printf("libmpi:   none at %s: cores of Open MPI %s on %s get this donor (by version)\n", cq_esc(libmpi), version, arch);
		if (!cli->output)
			printf("coreq mqd picks it for such cores (searched first: %s)\n", cq_esc(out));
		else
			printf("use: coreq mqd --types %s CORE..., or move %s under ~/.local/share/coreq/donors/\n", cq_esc(so), cq_esc(out));
		if (ob1)
			printf("ob1:      %s (%zu types: the unexpected queue with coreq's own DLL)\n", cq_esc(ob1),
			       json_object_size(json_object_get(m, "ob1_sizeof")));
		else
			printf("note: coreq's own DLL also asks for the ob1 PML's types (the unexpected queue), which no\n"
			       "      installed header has: give Open MPI's source tree of this version with\n"
			       "      --ompi-source DIR (apt-get source openmpi) to build them too. Without them it takes\n"
			       "      them from an installed donor that fits; Open MPI's DLL gives the queues with this\n"
			       "      donor alone (coreq mqd --mqd-vendor)\n");
	}
	goto out;
oom:
	rc = cq_fail(&cq_error_nomem);
out:
	json_decref(m);
	free(version);
	free(inc);
	free(mpi_h);
	free(libmpi);
	free(src);
	free(out);
	free(so);
	free(ob1);
	free(cc);
	return rc;
}
