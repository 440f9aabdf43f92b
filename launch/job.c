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

/* What a process's environment says of its job: its rank (-1: none) and the strength of
 * the variable it came from (its index in rank_vars: 0 strongest), its Slurm job and step
 * (-1: none; the batch step has no SLURM_STEP_ID). */
struct env_ids {
	int rank, strength;
	long long slurm_job, slurm_step;
};

/* The number variable @p name of environment @p buf (@p n bytes, NUL-separated) holds, -1
 * when it is absent or not a number below 2^30 (the whole value: "1" is not read of "10"). */
static long long env_number(const char *buf, size_t n, const char *name)
{
	size_t len = strlen(name);
	for (size_t at = 0; at < n; at += strlen(buf + at) + 1)
		if (!strncmp(buf + at, name, len) && buf[at + len] == '=') {
			char *end;
			long long v = strtoll(buf + at + len + 1, &end, 10);
			if (end != buf + at + len + 1 && !*end && v >= 0 && v < (1LL << 30))
				return v;
		}
	return -1;
}

/* The ids of process @p pid from its environment (/proc/PID/environ, the whole of it). */
static struct env_ids environ_ids(int pid)
{
	struct env_ids ids = {-1, 99, -1, -1};
	char path[64];
	size_t n;
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	char *buf = cq_live_slurp(path, ENVIRON_MAX, &n);
	if (!buf)
		return ids;
	for (size_t v = 0; v < sizeof(rank_vars) / sizeof(rank_vars[0]) && ids.rank < 0; v++) {
		long long r = env_number(buf, n, rank_vars[v]);
		if (r >= 0) {
			ids.rank = (int)r;
			ids.strength = (int)v;
		}
	}
	ids.slurm_job = env_number(buf, n, "SLURM_JOB_ID");
	ids.slurm_step = env_number(buf, n, "SLURM_STEP_ID");
	free(buf);
	return ids;
}

static int rank_in_environ(int pid, int *strength)
{
	struct env_ids ids = environ_ids(pid);
	*strength = ids.strength;
	return ids.rank;
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

/* Which processes a job's ranks are taken from: the descendants of @p top, or (top < 0)
 * the processes of Slurm job @p slurm_job (its step @p slurm_step, -1: every step) but
 * those of step @p skip_step (coreq's own, on the job's nodes). */
struct scan {
	int top;
	long long slurm_job, slurm_step, skip_step;
};

/* The ranks among the processes @p sc names into @p job (none: job->n 0): those with a rank
 * variable; where any of them maps an MPI library, those that do, else those whose variable
 * is the strongest seen; each the topmost such on its branch. Two processes of one rank are
 * an error (two jobs, or two steps of one job). */
static struct cq_error *select_ranks(const struct scan *sc, struct cq_job *job)
{
	DIR *d = opendir("/proc");
	if (!d)
		return cq_error_errno(errno, "/proc");
	size_t np = 0, pcap = 0;
	struct proc {
		int pid, ppid;
		struct env_ids ids;  /* each environment read once */
		bool in, mpi, taken; /* of the job; maps an MPI library; taken as a rank */
	} *procs = NULL;
	struct dirent *e;
	while ((e = readdir(d))) {
		int p = atoi(e->d_name);
		if (p <= 0 || p == getpid())
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
		procs[np++] = (struct proc){.pid = p, .ppid = parent_of(p), .ids = environ_ids(p)};
	}
	closedir(d);
	/* the parent's entry of each (-1: none seen), for the walks up the tree */
	ssize_t *up = malloc((np ? np : 1) * sizeof(*up));
	if (!up) {
		free(procs);
		return &cq_error_nomem;
	}
	for (size_t i = 0; i < np; i++) {
		up[i] = -1;
		for (size_t j = 0; j < np && up[i] < 0; j++)
			if (procs[j].pid == procs[i].ppid)
				up[i] = (ssize_t)j;
	}
	bool any_mpi = false;
	int best = 99;
	for (size_t i = 0; i < np; i++) {
		struct proc *q = &procs[i];
		if (q->ids.rank < 0)
			continue;
		if (sc->top >= 0) {
			int k = 0;
			for (ssize_t a = up[i]; !q->in && a >= 0 && k < 64; a = up[a], k++)
				q->in = procs[a].pid == sc->top;
			q->in |= q->ppid == sc->top;
		} else {
			q->in = q->ids.slurm_job == sc->slurm_job &&
				(sc->slurm_step < 0 || q->ids.slurm_step == sc->slurm_step) &&
				q->ids.slurm_step != sc->skip_step;
		}
		if (!q->in)
			continue;
		q->mpi = cq_job_maps_mpi(q->pid);
		any_mpi |= q->mpi;
		if (q->ids.strength < best)
			best = q->ids.strength;
	}
	/* a Slurm job's: only processes that map an MPI library (every task of a step has
	 * SLURM_PROCID, and PMIX_RANK under --mpi=pmix: a step of sleep has ranks by them) */
	for (size_t i = 0; i < np; i++)
		procs[i].taken = procs[i].in && (any_mpi || sc->top < 0 ? procs[i].mpi : procs[i].ids.strength == best);
	size_t cap = 0, n = 0;
	struct cq_job_rank *r = NULL;
	for (size_t i = 0; i < np; i++) {
		if (!procs[i].taken)
			continue;
		/* a rank's own children inherit its variables and libraries: not ranks */
		bool nested = false;
		int k = 0;
		for (ssize_t a = up[i]; !nested && a >= 0 && procs[a].pid != sc->top && k < 64; a = up[a], k++)
			nested = procs[a].taken;
		if (nested)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			struct cq_job_rank *nr = realloc(r, cap * sizeof(*nr));
			if (!nr) {
				free(r);
				free(up);
				free(procs);
				return &cq_error_nomem;
			}
			r = nr;
		}
		r[n++] = (struct cq_job_rank){procs[i].pid, procs[i].ids.rank};
	}
	free(up);
	free(procs);
	if (n)
		qsort(r, n, sizeof(*r), by_rank);
	for (size_t i = 1; i < n; i++)
		if (r[i].rank == r[i - 1].rank) {
			struct cq_error *dup = sc->top >= 0 ?
				cq_error_create(CQ_ERR_PROCESS, "processes %d and %d both say they are rank %d under "
						"process %d: two jobs?", r[i - 1].pid, r[i].pid, r[i].rank, sc->top) :
				cq_error_create(CQ_ERR_PROCESS, "processes %d and %d both say they are rank %d of Slurm "
						"job %lld: two of its steps? (JOB.STEP names one)", r[i - 1].pid, r[i].pid,
						r[i].rank, sc->slurm_job);
			free(r);
			return dup;
		}
	job->ranks = r;
	job->n = n;
	return NULL;
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
	struct scan sc = {.top = top, .slurm_job = -1};
	if ((err = select_ranks(&sc, job)))
		return err;
	if (!job->n)
		return cq_error_create(CQ_ERR_PROCESS, "process %d: no MPI rank found under process %d (no %s, %s, %s or "
				       "%s in the environment of its descendants, and no MPIR_proctable in it)", pid, top,
				       rank_vars[0], rank_vars[1], rank_vars[2], rank_vars[3]);
	return NULL;
}

struct cq_error *cq_job_find_slurm(long long job_id, long long step_id, struct cq_job *job)
{
	*job = (struct cq_job){0};
	struct env_ids self = environ_ids(getpid());
	struct scan sc = {.top = -1, .slurm_job = job_id, .slurm_step = step_id,
			  .skip_step = self.slurm_job == job_id ? self.slurm_step : -2};
	return select_ranks(&sc, job);
}
