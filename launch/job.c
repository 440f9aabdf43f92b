/* SPDX-License-Identifier: MIT */
/* The ranks of an MPI job on this node (job.h). */
#include "job.h"
#include "mpir.h"
#include "live/procfs.h"

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

/* The rank process @p pid's environment gives, -1 when none; the strength of the variable
 * it came from (its index in rank_vars: 0 strongest) into *@p strength. */
static int rank_in_environ(int pid, int *strength)
{
	char path[64];
	size_t n;
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	/* the whole of it: a variable cut at a buffer's end would read "1" for rank 10 */
	char *buf = cq_live_slurp(path, ENVIRON_MAX, &n);
	if (!buf)
		return -1;
	int found = -1;
	for (size_t v = 0; v < sizeof(rank_vars) / sizeof(rank_vars[0]) && found < 0; v++) {
		size_t len = strlen(rank_vars[v]);
		for (size_t at = 0; at < n; at += strlen(buf + at) + 1)
			if (!strncmp(buf + at, rank_vars[v], len) && buf[at + len] == '=') {
				char *end;
				long rank = strtol(buf + at + len + 1, &end, 10);
				if (end != buf + at + len + 1 && !*end && rank >= 0 && rank < (1 << 30)) {
					found = (int)rank;
					*strength = (int)v;
					break;
				}
			}
	}
	free(buf);
	return found;
}

int cq_job_rank_of(int pid)
{
	int strength;
	return rank_in_environ(pid, &strength);
}

bool cq_job_maps_mpi(int pid)
{
	char path[64];
	size_t n;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	char *buf = cq_live_slurp(path, 64u << 20, &n);
	if (!buf)
		return false;
	bool found = false;
	for (char *line = buf; line && *line && !found; ) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		const char *file = strchr(line, '/');
		const char *base = file ? strrchr(file, '/') + 1 : NULL;
		/* libmpi.so.40 (Open MPI), libmpich.so.12 (MPICH, MVAPICH), libmpi.so.12 (Intel),
		 * libmpi_cray.so: an MPI library's names all begin so (libmpfr does not) */
		found = base && !strncmp(base, "libmpi", 6);
		line = nl ? nl + 1 : NULL;
	}
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

/* The ranks of launcher @p pid's MPIR table, when it has one, into @p job: those on this
 * host as ranks (each checked to be there), the others as elsewhere. *@p used: whether the
 * table decided. */
static struct cq_error *from_table(int pid, struct cq_job *job, bool *used)
{
	struct cq_mpir_table *t;
	*used = false;
	struct cq_error *err = cq_mpir_read(pid, &t);
	if (err || !t)
		return err;
	*used = true;
	job->launcher = pid;
	job->table_image = strdup(t->image);
	job->ranks = calloc(t->n, sizeof(*job->ranks));
	job->elsewhere = calloc(t->n, sizeof(*job->elsewhere));
	if (!job->table_image || !job->ranks || !job->elsewhere) {
		cq_mpir_free(t);
		return &cq_error_nomem;
	}
	for (size_t i = 0; i < t->n; i++) {
		if (!cq_mpir_host_is_here(t->procs[i].host)) {
			job->elsewhere[job->nelsewhere++] = (struct cq_job_remote){(int)i, t->procs[i].pid, t->procs[i].host};
			t->procs[i].host = NULL;
			continue;
		}
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d", t->procs[i].pid);
		if (access(path, F_OK)) {
			err = cq_error_create(CQ_ERR_PROCESS, "launcher %d: rank %zu's process %d (its MPIR_proctable in %s) "
					      "is not there: the rank exited, or runs in another pid namespace", pid, i,
					      t->procs[i].pid, t->image);
			break;
		}
		job->ranks[job->n++] = (struct cq_job_rank){t->procs[i].pid, (int)i};
	}
	cq_mpir_free(t);
	return err;
}

void cq_job_free(struct cq_job *job)
{
	for (size_t i = 0; i < job->nelsewhere; i++)
		free(job->elsewhere[i].host);
	free(job->elsewhere);
	free(job->ranks);
	free(job->table_image);
	*job = (struct cq_job){0};
}

struct cq_error *cq_job_find(int pid, struct cq_job *job)
{
	*job = (struct cq_job){0};
	/* a launcher's table first: srun's ranks are no descendants of it */
	int strength0;
	bool used = false;
	struct cq_error *err = NULL;
	if (rank_in_environ(pid, &strength0) < 0 || !cq_job_maps_mpi(pid))
		err = from_table(pid, job, &used);
	if (err || used) {
		if (!err && !job->n && !job->nelsewhere)
			err = cq_error_create(CQ_ERR_PROCESS, "launcher %d: its MPIR_proctable (%s) lists no rank", pid,
					      job->table_image);
		if (err)
			cq_job_free(job);
		return err;
	}
	/* the launcher: the nearest ancestor without a rank variable (slurmstepd, mpirun) */
	int top = pid, hops = 0;
	if (cq_job_rank_of(pid) >= 0) {
		int p = parent_of(pid);
		while (p > 1 && cq_job_rank_of(p) >= 0 && hops++ < 64)
			p = parent_of(p);
		if (p <= 0)
			return cq_error_create(CQ_ERR_PROCESS, "process %d: its launcher cannot be found", pid);
		top = p;
	}
	job->launcher = top;
	DIR *d = opendir("/proc");
	if (!d)
		return cq_error_errno(errno, "/proc");
	size_t np = 0, pcap = 0;
	struct proc {
		int pid, ppid, rank, strength; /* each environment read once */
		bool mpi, rank_here;           /* maps an MPI library; taken as a rank */
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
		struct proc *q = &procs[np++];
		*q = (struct proc){.pid = p, .ppid = parent_of(p), .strength = 99};
		q->rank = rank_in_environ(p, &q->strength);
	}
	closedir(d);
	/* the launcher's descendants with a rank variable; what of them maps an MPI library */
	bool any_mpi = false;
	int best = 99;
	for (size_t i = 0; i < np; i++) {
		struct proc *q = &procs[i];
		if (q->rank < 0)
			continue;
		bool under = false;
		int p = q->ppid;
		for (int k = 0; p > 1 && k < 64 && !under; k++) {
			under = p == top;
			int up = -1;
			for (size_t j = 0; j < np && up < 0; j++)
				if (procs[j].pid == p)
					up = procs[j].ppid;
			p = up;
		}
		if (!under) {
			q->rank = -1;
			continue;
		}
		q->mpi = cq_job_maps_mpi(q->pid);
		any_mpi |= q->mpi;
		if (q->strength < best)
			best = q->strength;
	}
	for (size_t i = 0; i < np; i++)
		procs[i].rank_here = procs[i].rank >= 0 && (any_mpi ? procs[i].mpi : procs[i].strength == best);
	/* each the topmost rank on its branch (a rank's own children are not ranks) */
	size_t cap = 0, n = 0;
	struct cq_job_rank *r = NULL;
	for (size_t i = 0; i < np; i++) {
		if (!procs[i].rank_here)
			continue;
		bool nested = false;
		int p = procs[i].ppid;
		for (int k = 0; p > 1 && p != top && k < 64 && !nested; k++) {
			int up = -1;
			for (size_t j = 0; j < np && up < 0; j++)
				if (procs[j].pid == p) {
					up = procs[j].ppid;
					nested = procs[j].rank_here;
				}
			p = up;
		}
		if (nested)
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
		r[n++] = (struct cq_job_rank){procs[i].pid, procs[i].rank};
	}
	free(procs);
	if (!n)
		return cq_error_create(CQ_ERR_PROCESS, "process %d: no MPI rank found under process %d (no %s, %s, %s or "
				       "%s in the environment of its descendants, and no MPIR_proctable in it)", pid, top,
				       rank_vars[0], rank_vars[1], rank_vars[2], rank_vars[3]);
	qsort(r, n, sizeof(*r), by_rank);
	for (size_t i = 1; i < n; i++)
		if (r[i].rank == r[i - 1].rank) {
			struct cq_error *dup = cq_error_create(CQ_ERR_PROCESS, "processes %d and %d both say they are rank %d "
							       "under process %d: two jobs?", r[i - 1].pid, r[i].pid,
							       r[i].rank, top);
			free(r);
			return dup;
		}
	job->ranks = r;
	job->n = n;
	return NULL;
}
