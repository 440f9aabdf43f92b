/* OpenMP demo for the flight recorder: parallel regions, a worksharing loop, tasks, a
 * lock, a critical section, a barrier; then thread 0 aborts while holding the lock and
 * the other threads wait for it. Run: OMP_TOOL_LIBRARIES=.../libcoreq_rec.so ./omp_crash */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static omp_lock_t lock;
static long counter;

static long fib(int n)
{
	if (n < 2)
		return n;
	long x, y;
#pragma omp task shared(x) if (n > 8)
	x = fib(n - 1);
#pragma omp task shared(y) if (n > 8)
	y = fib(n - 2);
#pragma omp taskwait
	return x + y;
}

int main(void)
{
	omp_init_lock(&lock);
	double sum = 0;
#pragma omp parallel for reduction(+ : sum) num_threads(4)
	for (int i = 0; i < 1000; i++)
		sum += i * 0.5;

	long f = 0;
#pragma omp parallel num_threads(4)
	{
#pragma omp single
		f = fib(14);
#pragma omp critical
		counter++;
		omp_set_lock(&lock);
		counter++;
		omp_unset_lock(&lock);
#pragma omp barrier
	}
	printf("sum %g fib %ld counter %ld\n", sum, f, counter);
	fflush(stdout);

#pragma omp parallel num_threads(4)
	{
		if (omp_get_thread_num() == 0) {
			omp_set_lock(&lock);
#pragma omp barrier
			usleep(200000); /* the others are now waiting for the lock */
			abort();
		}
#pragma omp barrier
		omp_set_lock(&lock);
		omp_unset_lock(&lock);
	}
	return 0;
}
