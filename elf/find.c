/* SPDX-License-Identifier: MIT */
/* Finding the files a core names on this machine: --sysroot, --solib-search-path,
 * build-id under --debug-dir, .gnu_debuglink. A candidate whose build-id differs from the
 * one the core names is never used; the mismatch is reported instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/decode.h"
#include "debuginfod.h"
#include "elf_file.h"
#include "find.h"

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Append "what" to a growing "; "-separated list (best effort). */
static void note_tried(char **list, const char *what)
{
	char *n;
	if (asprintf(&n, "%s%s%s", *list ? *list : "", *list ? ", " : "", what) < 0)
		return;
	free(*list);
	*list = n;
}

/* @p root followed by the absolute @p path a core names, normalized lexically first: "//"
 * and "." dropped, ".." taking off one component and staying at "/" when there is none
 * (as under chroot), so "/../../tmp/x" is ROOT/tmp/x and never a file outside the sysroot. */
static char *under_root(const char *root, const char *path)
{
	size_t rl = strlen(root), pl = strlen(path);
	char *out = malloc(rl + pl + 2);
	if (!out)
		return NULL;
	memcpy(out, root, rl);
	size_t len = rl;
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (!n)
			break;
		if (n == 1 && p[0] == '.') {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			while (len > rl && out[len - 1] != '/')
				len--;
			if (len > rl)
				len--; /* the slash */
		} else {
			out[len++] = '/';
			memcpy(out + len, p, n);
			len += n;
		}
		p += n;
	}
	if (len == rl)
		out[len++] = '/';
	out[len] = 0;
	return out;
}

/* Try one candidate; returns 1 if usable, 0 if absent, -1 if present but mismatched. */
static int try_candidate(const char *cand, const uint8_t *bid, size_t bid_len, char **mismatch,
			 struct cq_elf **keep)
{
	if (access(cand, F_OK) != 0)
		return 0;
	/* present but not usable (a FIFO, a device, unreadable, not ELF): said, not skipped */
	struct cq_error *err = NULL;
	struct cq_elf *e = NULL;
	if (!bid_len) {
		int fd;
		if (!(err = cq_open_regular(cand, NULL, &fd)))
			close(fd);
	} else {
		err = cq_elf_open(cand, &e);
	}
	if (err) {
		if (!*mismatch)
			*mismatch = strdup(err->message);
		cq_error_destroy(err);
		return -1;
	}
	if (!bid_len)
		return 1;
	int ok = e->build_id_len == bid_len && memcmp(e->build_id, bid, bid_len) == 0;
	if (!ok && !*mismatch) {
		char *have = cq_hex_string(e->build_id, e->build_id_len), *want = cq_hex_string(bid, bid_len);
		if (asprintf(mismatch, "%s has build-id %s, the core names %s", cand,
			     e->build_id_len ? have : "(none)", want) < 0)
			*mismatch = NULL;
		free(have);
		free(want);
	}
	if (ok)
		*keep = e;
	else
		cq_elf_close(e);
	return ok ? 1 : -1;
}

char *cq_find_file(const struct cq_search_paths *paths, const char *target_path,
		    const uint8_t *build_id, size_t build_id_len, char **why, struct cq_elf **elf)
{
	char *tried = NULL, *mismatch = NULL, *cand = NULL;
	*elf = NULL;
	const char *sysroot = paths->sysroot;
	*why = NULL;
	if (target_path[0] == '/') {
		if (!(cand = under_root(sysroot ? sysroot : "", target_path)))
			return NULL;
		if (try_candidate(cand, build_id, build_id_len, &mismatch, elf) > 0)
			goto found;
		note_tried(&tried, cand);
		free(cand);
		cand = NULL;
	}
	const char *sp = paths->solib_search_path;
	const char *base = base_name(target_path);
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		sp = NULL; /* no file name to look for: "DIR/.." would be a directory elsewhere */
	while (sp && *sp) {
		size_t n = strcspn(sp, ":");
		if (n && asprintf(&cand, "%.*s/%s", (int)n, sp, base) >= 0) {
			if (try_candidate(cand, build_id, build_id_len, &mismatch, elf) > 0)
				goto found;
			note_tried(&tried, cand);
			free(cand);
			cand = NULL;
		}
		sp += n + (sp[n] == ':');
	}
	if (build_id_len > 1 && paths->debug_dir) {
		/* debuginfod-style trees also hold the binary itself next to the .debug file */
		char *hex = cq_hex_string(build_id, build_id_len);
		if (hex && asprintf(&cand, "%s/.build-id/%.2s/%s", paths->debug_dir, hex,
				    hex + 2) >= 0) {
			if (try_candidate(cand, build_id, build_id_len, &mismatch, elf) > 0) {
				free(hex);
				goto found;
			}
			note_tried(&tried, cand);
			free(cand);
			cand = NULL;
		}
		free(hex);
	}
	if (mismatch) {
		*why = mismatch;
		free(tried);
	} else {
		/* with a build-id, a debuginfod server could send it (debuginfod.h): said when
		 * none is named (otherwise the image's problem says what the server answered) */
		bool ask = build_id_len > 1 && !cq__debuginfod_enabled();
		if (asprintf(why, "not found (tried: %s); use --sysroot, --solib-search-path%s",
			     tried ? tried : "nothing: relative path and no search path",
			     ask ? ", --debug-dir or DEBUGINFOD_URLS" : " or --debug-dir") < 0)
			*why = NULL;
		free(tried);
	}
	return NULL;
found:
	free(tried);
	free(mismatch);
	return cand;
}

char *cq_find_debug_file(const struct cq_search_paths *paths, const char *found_path,
			  const struct cq_elf *e)
{
	const char *dirs[2] = {paths->debug_dir, NULL};
	char *sysdbg = NULL;
	if (asprintf(&sysdbg, "%s/usr/lib/debug", paths->sysroot ? paths->sysroot : "") >= 0)
		dirs[1] = sysdbg;
	char *cand = NULL;
	for (int d = 0; d < 2 && e->build_id_len > 1; d++) {
		if (!dirs[d])
			continue;
		char *hex = cq_hex_string(e->build_id, e->build_id_len);
		if (hex && asprintf(&cand, "%s/.build-id/%.2s/%s.debug", dirs[d], hex, hex + 2) >= 0) {
			free(hex);
			if (access(cand, R_OK) == 0)
				goto out;
			free(cand);
			cand = NULL;
		} else
			free(hex);
	}
	/* the debuglink name comes from the image file, which may be hostile: a file name in
	 * the directories below, never a path */
	if (e->debuglink && !strchr(e->debuglink, '/') && strcmp(e->debuglink, "..") && strcmp(e->debuglink, ".")) {
		char *dir = strdup(found_path);
		if (!dir)
			goto out;
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		else
			strcpy(dir, ".");
		const char *fmts[] = {"%s/%s", "%s/.debug/%s"};
		for (int i = 0; i < 2 && !cand; i++) {
			if (asprintf(&cand, fmts[i], dir, e->debuglink) < 0) {
				cand = NULL;
				break;
			}
			/* a debuglink naming the file itself is not a separate debug file */
			if (strcmp(cand, found_path) == 0 || access(cand, R_OK) != 0) {
				free(cand);
				cand = NULL;
			}
		}
		for (int d = 0; d < 2 && !cand; d++) {
			if (dirs[d] && asprintf(&cand, "%s%s/%s", dirs[d], dir, e->debuglink) >= 0 &&
			    access(cand, R_OK) != 0) {
				free(cand);
				cand = NULL;
			}
		}
		free(dir);
	}
out:
	free(sysdbg);
	return cand;
}

/* One alt-file candidate into *@p ret (build-id checked, kept open); true when it is the one. */
static bool alt_candidate(char *cand, const struct cq_elf *e, char **tried, char **mismatch, char **ret_path,
			  struct cq_elf **ret)
{
	if (!cand)
		return false;
	if (try_candidate(cand, e->altlink_build_id, e->altlink_build_id_len, mismatch, ret) > 0) {
		*ret_path = cand;
		return true;
	}
	note_tried(tried, cand);
	free(cand);
	return false;
}

char *cq_find_alt_file(const struct cq_search_paths *paths, const char *dwarf_path, const struct cq_elf *e,
			struct cq_elf **elf, char **why)
{
	char *tried = NULL, *mismatch = NULL, *path = NULL, *cand;
	const char *link = e->altlink, *sysroot = paths->sysroot, *ddir = paths->debug_dir;
	*elf = NULL;
	*why = NULL;
	/* where it says: absolute under the sysroot (Debian's dh_dwz writes
	 * /usr/lib/debug/.dwz/TRIPLET/PKG.debug), relative to the debug file (Fedora's
	 * ../../.dwz/NAME) */
	if (link[0] == '/')
		cand = under_root(sysroot ? sysroot : "", link);
	else {
		const char *slash = strrchr(dwarf_path, '/');
		if (asprintf(&cand, "%.*s%s", slash ? (int)(slash + 1 - dwarf_path) : 0, dwarf_path, link) < 0)
			cand = NULL;
	}
	if (alt_candidate(cand, e, &tried, &mismatch, &path, elf))
		goto found;
	/* under --debug-dir as under /usr/lib/debug, and by build-id there and in the sysroot */
	const char *dwz = strstr(link, ".dwz/");
	if (ddir && dwz && asprintf(&cand, "%s/%s", ddir, dwz) >= 0 &&
	    alt_candidate(cand, e, &tried, &mismatch, &path, elf))
		goto found;
	char *hex = cq_hex_string(e->altlink_build_id, e->altlink_build_id_len);
	const char *roots[2] = {ddir, NULL};
	char *sysdbg = NULL;
	if (asprintf(&sysdbg, "%s/usr/lib/debug", sysroot ? sysroot : "") >= 0)
		roots[1] = sysdbg;
	for (int r = 0; hex && r < 2; r++)
		if (roots[r] && asprintf(&cand, "%s/.build-id/%.2s/%s.debug", roots[r], hex, hex + 2) >= 0 &&
		    alt_candidate(cand, e, &tried, &mismatch, &path, elf)) {
			free(hex);
			free(sysdbg);
			goto found;
		}
	free(sysdbg);
	/* a debuginfod server has alt files by their build-id, as debug files */
	struct cq_debuginfod_file f;
	char *fetch_why = NULL;
	enum cq_debuginfod_result got = cq__debuginfod_fetch(CQ_DEBUGINFOD_DEBUGINFO, e->altlink_build_id,
							     e->altlink_build_id_len, "dwz alt file", &f, &fetch_why);
	if (got == CQ_DEBUGINFOD_FETCHED) {
		free(hex);
		*elf = f.elf;
		path = f.path;
		f.elf = NULL;
		f.path = NULL;
		cq__debuginfod_file_deinit(&f);
		goto found;
	}
	if (mismatch) {
		if (asprintf(why, "dwz alt file %s: %s", link, mismatch) < 0)
			*why = NULL;
		free(mismatch);
	} else if (asprintf(why, "dwz alt file %s (build-id %s) not found (tried: %s)%s%s; use --debug-dir%s",
			  link, hex ? hex : "?", tried ? tried : "nothing", fetch_why ? "; " : "",
			  fetch_why ? fetch_why : "", cq__debuginfod_enabled() ? "" : " or DEBUGINFOD_URLS") < 0)
		*why = NULL;
	free(hex);
	free(fetch_why);
	free(tried);
	return NULL;
found:
	free(tried);
	free(mismatch);
	return path;
}
