/* SPDX-License-Identifier: MIT */
/* The ranks of an MPI job on this node (job.h). */
#include "job.h"
#include "procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The launchers' variables for the rank, in the order coreq stacks reads them. */
static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};

/* The most of an environment read: the kernel bounds it by the stack limit's quarter (the
 * arguments too), which an HPC site's module tables approach; far past any real one. */
#define ENVIRON_MAX (64u << 20)

int cq_job_rank_of(int pid)
{
	char path[64];
	size_t n;
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	/* the whole of it: a variable cut at a buffer's end would read "1" for rank 10 */
	char *buf = cq_live_slurp(path, ENVIRON_MAX, &n);
	if (!buf)
		return -1;
	int found = -1;
	for (size_t v = 0; v < sizeof(rank_vars) / sizeof(rank_vars[0]); v++) {
		size_t len = strlen(rank_vars[v]);
		for (size_t at = 0; at < n; at += strlen(buf + at) + 1)
			if (!strncmp(buf + at, rank_vars[v], len) && buf[at + len] == '=') {
				char *end;
				long rank = strtol(buf + at + len + 1, &end, 10);
				if (end != buf + at + len + 1 && !*end && rank >= 0 && rank < (1 << 30)) {
					found = (int)rank;
					goto out;
				}
			}
	}
out:
	free(buf);
	return found;
}

static int parent_of(int pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	int ppid;
	char state;
	return p && sscanf(p + 1, " %c %d", &state, &ppid) == 2 ? ppid : -1;
}

static int by_rank(const void *a, const void *b)
{
	const struct cq_job_rank *x = a, *y = b;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

struct cq_error *cq_job_ranks(int pid, struct cq_job_rank **ret, size_t *nret, int *launcher)
{
	*ret = NULL;
	*nret = 0;
	/* the launcher: the nearest ancestor without a rank (mpirun, orted, srun's step) */
	int top = pid, hops = 0;
	if (cq_job_rank_of(pid) >= 0) {
		int p = parent_of(pid);
		while (p > 1 && cq_job_rank_of(p) >= 0 && hops++ < 64)
			p = parent_of(p);
		if (p <= 0)
			return cq_error_create(CQ_ERR_PROCESS, "process %d: its launcher cannot be found", pid);
		top = p;
	}
	*launcher = top;
	DIR *d = opendir("/proc");
	if (!d)
		return cq_error_errno(errno, "/proc");
	size_t cap = 0, n = 0, np = 0, pcap = 0;
	struct cq_job_rank *r = NULL;
	struct {
		int pid, ppid, rank; /* each environment read once */
	} *procs = NULL;
	struct dirent *e;
	while ((e = readdir(d))) {
		int p = atoi(e->d_name);
		if (p <= 0)
			continue;
		if (np == pcap) {
			pcap = pcap ? 2 * pcap : 1024;
			void *np2 = realloc(procs, pcap * sizeof(*procs));
			if (!np2) {
				closedir(d);
				free(procs);
				return &cq_error_nomem;
			}
			procs = np2;
		}
		procs[np].pid = p;
		procs[np].ppid = parent_of(p);
		procs[np].rank = cq_job_rank_of(p);
		np++;
	}
	closedir(d);
	/* the launcher's descendants, each the topmost with a rank on its branch (a rank's own
	 * children inherit its variables: they are not ranks) */
	for (size_t i = 0; i < np; i++) {
		int rank = procs[i].rank;
		if (rank < 0)
			continue;
		bool under = false, nested = false;
		int p = procs[i].ppid;
		for (int k = 0; p > 1 && k < 64; k++) {
			if (p == top) {
				under = true;
				break;
			}
			int q = -1;
			for (size_t j = 0; j < np; j++)
				if (procs[j].pid == p) {
					q = procs[j].ppid;
					if (procs[j].rank >= 0)
						nested = true;
				}
			p = q;
		}
		if (!under || nested)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			struct cq_job_rank *nr = realloc(r, cap * sizeof(*nr));
			if (!nr) {
				free(r);
				free(procs);
				return &cq_error_nomem;
			}
			r = nr;
		}
		r[n++] = (struct cq_job_rank){procs[i].pid, rank};
	}
	free(procs);
	if (!n)
		return cq_error_create(CQ_ERR_PROCESS, "process %d: no MPI rank found under process %d (no %s, %s, %s or "
				       "%s in the environment of its descendants)", pid, top, rank_vars[0], rank_vars[1],
				       rank_vars[2], rank_vars[3]);
	qsort(r, n, sizeof(*r), by_rank);
	for (size_t i = 1; i < n; i++)
		if (r[i].rank == r[i - 1].rank) {
			struct cq_error *err = cq_error_create(CQ_ERR_PROCESS, "processes %d and %d both say they are rank %d "
							       "under process %d: two jobs?", r[i - 1].pid, r[i].pid,
							       r[i].rank, top);
			free(r);
			return err;
		}
	*ret = r;
	*nret = n;
	return NULL;
}
