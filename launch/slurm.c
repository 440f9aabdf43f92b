/* SPDX-License-Identifier: MIT */
/* A Slurm job through scontrol, and the srun that reaches its nodes (slurm.h). */
#include "slurm.h"
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most scontrol prints of one job or node list: a 100,000-node job's list is ~1 MB. */
#define SCONTROL_MAX (16u << 20)

bool cq_slurm_parse_spec(const char *spec, long long *job, long long *step)
{
	char *end;
	*step = -1;
	if (!spec || *spec < '0' || *spec > '9')
		return false;
	*job = strtoll(spec, &end, 10);
	if (*job <= 0 || *job >= (1LL << 32))
		return false;
	if (!*end)
		return true;
	if (*end != '.' || end[1] < '0' || end[1] > '9')
		return false;
	*step = strtoll(end + 1, &end, 10);
	return !*end && *step >= 0 && *step < (1LL << 32);
}

/* The value of " KEY=" in one line of `scontrol -o` (up to the next space), malloc'd;
 * NULL when absent. */
static char *field(const char *line, const char *key)
{
	size_t klen = strlen(key);
	for (const char *p = line; (p = strstr(p, key)); p += klen)
		if ((p == line || p[-1] == ' ') && p[klen] == '=') {
			const char *v = p + klen + 1;
			return strndup(v, strcspn(v, " \n"));
		}
	return NULL;
}

/* Run scontrol with @p args (NULL-terminated, after "scontrol"): its output, or an error
 * that says what it said. *@p status: its exit status. */
static struct cq_error *scontrol(const char *const *args, unsigned timeout_ms, char **out, char **said, int *status)
{
	char *argv[8] = {"scontrol"};
	for (int i = 0; args[i] && i < 6; i++)
		argv[i + 1] = (char *)args[i];
	struct cq_error *err = cq_run_capture(argv, timeout_ms, SCONTROL_MAX, out, said, status);
	if (!err && *status < 0) {
		free(*out);
		free(*said);
		*out = *said = NULL;
		err = cq_error_create(CQ_ERR_IO, "scontrol %s %s did not answer within %u ms (is slurmctld up? "
				      "SLURM_CONF?)", args[0], args[1] ? args[1] : "", timeout_ms);
	}
	return err;
}

void cq_slurm_job_free(struct cq_slurm_job *j)
{
	for (size_t i = 0; i < j->nnodes; i++)
		free(j->nodes[i]);
	free(j->nodes);
	free(j->spec);
	free(j->state);
	free(j->nodelist);
	*j = (struct cq_slurm_job){0};
}

struct cq_error *cq_slurm_job_find(const char *spec, unsigned timeout_ms, struct cq_slurm_job *j)
{
	*j = (struct cq_slurm_job){.tasks = -1};
	if (!cq_slurm_parse_spec(spec, &j->job, &j->step))
		return cq_error_create(CQ_ERR_USAGE, "--slurm %s: not a job id (JOB or JOB.STEP, decimal)", spec);
	j->spec = strdup(spec);
	char id[32], *out = NULL, *said = NULL;
	int status;
	snprintf(id, sizeof(id), "%lld", j->job);
	struct cq_error *err = scontrol((const char *[]){"show", "job", "-o", id, NULL}, timeout_ms, &out, &said, &status);
	if (!err && status != 0)
		err = cq_error_create(CQ_ERR_JOB, "Slurm job %lld: %s", j->job,
				      said && strstr(said, "Invalid job id") ? "no such job (or it ended: scontrol forgets "
				      "a job MinJobAge after its end)" : said && *said ? said : "scontrol show job failed");
	if (!err) {
		j->state = field(out, "JobState");
		j->nodelist = field(out, "NodeList");
		char *t = field(out, "NumTasks");
		j->tasks = t ? strtoll(t, NULL, 10) : -1;
		free(t);
		if (!j->state || strcmp(j->state, "RUNNING"))
			err = cq_error_create(CQ_ERR_JOB, "Slurm job %lld is %s, not running: no process of it to "
					      "snapshot%s", j->job, j->state ? j->state : "in no state scontrol says",
					      j->state && !strcmp(j->state, "PENDING") ? " yet" : "");
	}
	free(out);
	free(said);
	out = said = NULL;
	if (!err && j->step >= 0) {
		snprintf(id, sizeof(id), "%lld.%lld", j->job, j->step);
		err = scontrol((const char *[]){"show", "step", "-o", id, NULL}, timeout_ms, &out, &said, &status);
		char *list = err ? NULL : field(out, "NodeList");
		if (!err && (status != 0 || !list))
			err = cq_error_create(CQ_ERR_JOB, "Slurm job %lld has no step %lld running (scontrol show step "
					      "%s: %s)", j->job, j->step, id, said && *said ? said : "no such step");
		if (!err) {
			free(j->nodelist);
			j->nodelist = list;
			free(j->state);
			j->state = field(out, "State");
			char *t = field(out, "Tasks");
			j->tasks = t ? strtoll(t, NULL, 10) : -1;
			free(t);
		} else {
			free(list);
		}
		free(out);
		free(said);
		out = said = NULL;
	}
	if (!err && (!j->nodelist || !*j->nodelist || !strcmp(j->nodelist, "(null)")))
		err = cq_error_create(CQ_ERR_JOB, "Slurm job %s runs on no node scontrol names", spec);
	if (!err)
		err = scontrol((const char *[]){"show", "hostnames", j->nodelist, NULL}, timeout_ms, &out, &said, &status);
	if (!err && status != 0)
		err = cq_error_create(CQ_ERR_JOB, "Slurm job %s: its node list %s cannot be spelled out: %s", spec,
				      j->nodelist, said ? said : "");
	for (char *line = err ? NULL : out, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (!*line)
			continue;
		char **nn = realloc(j->nodes, (j->nnodes + 1) * sizeof(*nn));
		if (!nn || !(nn[j->nnodes] = strdup(line))) {
			if (nn)
				j->nodes = nn;
			err = &cq_error_nomem;
			break;
		}
		j->nodes = nn;
		j->nnodes++;
	}
	free(out);
	free(said);
	if (!err && !j->nnodes)
		err = cq_error_create(CQ_ERR_JOB, "Slurm job %s: its node list %s names no node", spec, j->nodelist);
	if (err)
		cq_slurm_job_free(j);
	return err;
}

void cq_slurm_argv_free(char **argv)
{
	for (char **a = argv; a && *a; a++)
		free(*a);
	free(argv);
}

char **cq_slurm_per_node_argv(long long job, char *const *nodes, size_t nnodes, char *const cmd[])
{
	size_t ncmd = 0, list = 1;
	while (cmd[ncmd])
		ncmd++;
	for (size_t i = 0; i < nnodes; i++)
		list += strlen(nodes[i]) + 1;
	char **argv = calloc(16 + ncmd, sizeof(*argv));
	char *nl = malloc(list + 16);
	if (!argv || !nl) {
		free(argv);
		free(nl);
		return NULL;
	}
	strcpy(nl, "--nodelist=");
	for (size_t i = 0; i < nnodes; i++) {
		if (i)
			strcat(nl, ",");
		strcat(nl, nodes[i]);
	}
	size_t a = 0;
	char buf[64];
	argv[a++] = strdup("srun");
	snprintf(buf, sizeof(buf), "--jobid=%lld", job);
	argv[a++] = strdup(buf);
	/* inside the allocation, beside its steps; one task per node; no MPI set-up for the
	 * tool's step (a site's MpiDefault=pmix would start a PMIx server for it) */
	argv[a++] = strdup("--overlap");
	snprintf(buf, sizeof(buf), "--nodes=%zu", nnodes);
	argv[a++] = strdup(buf);
	snprintf(buf, sizeof(buf), "--ntasks=%zu", nnodes);
	argv[a++] = strdup(buf);
	argv[a++] = strdup("--ntasks-per-node=1");
	argv[a++] = nl;
	argv[a++] = strdup("--mpi=none");
	/* every path the node side uses is absolute: a cwd the nodes lack (a front end's /tmp)
	 * would only make slurmstepd complain */
	argv[a++] = strdup("--chdir=/");
	/* a node whose coreq fails must not end the others' (they resume their ranks first) */
	argv[a++] = strdup("--kill-on-bad-exit=0");
	argv[a++] = strdup("--label");
	argv[a++] = strdup("--quiet");
	for (size_t i = 0; i < ncmd; i++)
		argv[a++] = strdup(cmd[i]);
	argv[a] = NULL;
	for (size_t i = 0; i < a; i++)
		if (!argv[i]) {
			cq_slurm_argv_free(argv);
			return NULL;
		}
	return argv;
}
