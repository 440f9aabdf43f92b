/* SPDX-License-Identifier: MIT */
/* MQD benchmark program (tools/bench/bench-mqd.sh): every rank of `mpirun -np N` posts a
 * receive from its right neighbour and a small receive from anyone, announces its pid in
 * rank<R>.pid, moves into rank<R>/ (so its kernel core lands there) and blocks: a
 * receive cycle over all N ranks, each rank with a few pending operations. */
#include <mpi.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static char ring_buf[256], any_buf[64];

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm dup;
	MPI_Comm_dup(MPI_COMM_WORLD, &dup);
	MPI_Comm_set_name(dup, "bench-dup");
	MPI_Request req[2];
	MPI_Irecv(any_buf, sizeof any_buf, MPI_CHAR, MPI_ANY_SOURCE, 99, dup, &req[0]);
	MPI_Irecv(ring_buf, sizeof ring_buf, MPI_CHAR, (rank + 1) % size, 2, MPI_COMM_WORLD, &req[1]);
	char name[32];
	snprintf(name, sizeof name, "rank%d", rank);
	if (mkdir(name, 0755) != 0 || chdir(name) != 0)
		return 1;
	snprintf(name, sizeof name, "../rank%d.pid", rank);
	FILE *f = fopen(name, "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	MPI_Waitall(2, req, MPI_STATUSES_IGNORE); /* never completes */
	MPI_Finalize();
	return 0;
}
