/* SPDX-License-Identifier: MIT */
/* Plugin path policy (plugin_path.h), shared by the OMPD and MQD hosts. */
#include <elf.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin_load.h"
#include "plugin_path.h"

#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#define HOST_MULTIARCH "x86_64-linux-gnu"
#elif defined(__i386__)
#define HOST_MACHINE EM_386
#define HOST_MULTIARCH "i386-linux-gnu"
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#define HOST_MULTIARCH "aarch64-linux-gnu"
#elif defined(__arm__)
#define HOST_MACHINE EM_ARM
#define HOST_MULTIARCH "arm-linux-gnueabihf"
#elif defined(__s390x__)
#define HOST_MACHINE EM_S390
#define HOST_MULTIARCH "s390x-linux-gnu"
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#if defined(__LITTLE_ENDIAN__)
#define HOST_MULTIARCH "powerpc64le-linux-gnu"
#else
#define HOST_MULTIARCH "powerpc64-linux-gnu"
#endif
#elif defined(__powerpc__)
#define HOST_MACHINE EM_PPC
#define HOST_MULTIARCH "powerpc-linux-gnu"
#elif defined(__riscv)
#define HOST_MACHINE EM_RISCV
#define HOST_MULTIARCH "riscv64-linux-gnu"
#endif
#define HOST_CLASS (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)

#define MAX_DIRS 256

const char *cq_host_multiarch(void)
{
	return HOST_MULTIARCH;
}

struct cq_dirs cq_plugin_trusted_dirs(const char *extra, const char *const *patterns)
{
	static const char *const fixed[] = {("/usr/lib/" HOST_MULTIARCH), "/usr/lib",
					    "/usr/local/lib"};
	struct cq_dirs d = {calloc(MAX_DIRS, sizeof(char *)), 0};
	if (!d.dir)
		return d;
	for (const char *e = extra; e && *e && d.n < MAX_DIRS / 2;) {
		size_t len = strcspn(e, ":");
		if (len && (d.dir[d.n] = strndup(e, len)))
			d.n++;
		e += len + (e[len] == ':');
	}
	for (size_t p = 0; patterns && patterns[p]; p++) {
		glob_t g;
		if (glob(patterns[p], 0, NULL, &g) != 0)
			continue;
		for (size_t i = 0; i < g.gl_pathc && d.n < MAX_DIRS - 4; i++)
			if ((d.dir[d.n] = strdup(g.gl_pathv[i])))
				d.n++;
		globfree(&g);
	}
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if ((d.dir[d.n] = strdup(fixed[i])))
			d.n++;
	return d;
}

void cq_dirs_free(struct cq_dirs *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->dir[i]);
	free(d->dir);
	d->dir = NULL;
	d->n = 0;
}

bool cq_plugin_trusted(const char *real, const struct cq_dirs *d)
{
	for (size_t i = 0; i < d->n; i++) {
		char rd[PATH_MAX];
		if (!d->dir[i] || !realpath(d->dir[i], rd))
			continue;
		size_t len = strlen(rd);
		if (strncmp(real, rd, len) == 0 && real[len] == '/' && !strchr(real + len + 1, '/'))
			return true;
	}
	return false;
}

/* Whether an ELF header (its first 20 bytes) is of this host's class and machine. */
static bool elf_fits(const unsigned char eh[20])
{
	unsigned machine = eh[EI_DATA] == ELFDATA2LSB ? (unsigned)(eh[18] | eh[19] << 8) :
							(unsigned)(eh[18] << 8 | eh[19]);
	return eh[EI_CLASS] == HOST_CLASS && machine == HOST_MACHINE;
}

char *cq_plugin_host_mismatch_fd(int fd, const char *path, const char *option)
{
	unsigned char eh[20];
	char *why = NULL;
	if (pread(fd, eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh, ELFMAG, SELFMAG)) {
		if (asprintf(&why, "%s is not a readable ELF file", path) < 0)
			why = NULL;
	} else if (!elf_fits(eh)) {
		unsigned machine = eh[EI_DATA] == ELFDATA2LSB ? (unsigned)(eh[18] | eh[19] << 8) :
								(unsigned)(eh[18] << 8 | eh[19]);
		if (asprintf(&why, "%s is a %d-bit plugin for e_machine %u; this coreq is %d-bit for e_machine %u: use a plugin built for the host (%s)",
			     path, eh[EI_CLASS] == ELFCLASS64 ? 64 : 32, machine,
			     (int)sizeof(void *) * 8, (unsigned)HOST_MACHINE, option) < 0)
			why = NULL;
	}
	return why;
}

void cq_plugin_choose(char *const *names, size_t n, const struct cq_dirs *dirs,
		      bool allow_untrusted, const char *option, struct cq_plugin_choice *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->fd = -1;
	for (size_t i = 0; i < n && !ret->path; i++) {
		const char *name = names[i];
		const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
		for (size_t d = 0; d <= dirs->n && !ret->path; d++) {
			char cand[PATH_MAX];
			if (d == 0 && name[0] != '/')
				continue;
			if (d == 0)
				snprintf(cand, sizeof(cand), "%s", name);
			else
				snprintf(cand, sizeof(cand), "%s/%s", dirs->dir[d - 1], base);
			if (access(cand, F_OK) != 0)
				continue;
			int fd;
			char *real;
			struct cq_error *err = cq_plugin_open(cand, allow_untrusted ? NULL : dirs, option, &fd, &real);
			if (err) {
				/* "PATH (resolves to REAL)" from the trust check; anything else (a '$',
				 * not a regular file, another class) is a reason the plugin does not fit */
				bool untrusted = strstr(err->message, " (resolves to ") != NULL || strchr(cand, '$');
				char **slot = untrusted ? &ret->refused : &ret->mismatch;
				if (!*slot)
					*slot = strdup(err->message);
				cq_error_destroy(err);
				continue;
			}
			ret->path = strdup(cand);
			ret->fd = fd;
			ret->real = real;
		}
	}
}

void cq_plugin_choice_deinit(struct cq_plugin_choice *c)
{
	free(c->path);
	free(c->real);
	if (c->fd >= 0)
		close(c->fd);
	free(c->refused);
	free(c->mismatch);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}
