/* ompd_bigomp.c - the OpenMP program of the OMPD benchmark (bench-ompd.sh).
 *
 * main calls omp_set_dynamic(0) (so it is libomp's initial thread, in serial
 * state: `work_serial`) and starts one pthread, a second OpenMP root, which opens
 * `#pragma omp parallel num_threads(64)`. Every team thread checks in (atomic
 * counter, no OpenMP barrier or lock), then sleeps in a bounded loop inside the
 * region. When all 64 have checked in, team thread 0 calls abort(): the kernel
 * core then has 65 threads (main in pthread_join + 64 team threads, all
 * `work_parallel` in OMPD terms). With --nested, team threads 1..4 each open an
 * inner region of 2 threads (4 more threads, nesting level 2), so 69 threads.
 *
 * Every wait is bounded: thread 0 gives up after 60 s (exit 2), the others after
 * 120 s (exit 3). Run it with OMP_DEBUG=enabled (so libomp keeps the OMPD state),
 * OMP_MAX_ACTIVE_LEVELS=2 for --nested.
 *
 *   clang-14 -fopenmp -O1 -g -I build/omp/x86_64/include -L build/omp/x86_64 \
 *       -Wl,-rpath,<abs build/omp/x86_64> -o ompd_bigomp ompd_bigomp.c -lpthread
 */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TEAM 64
#define NESTED_OUTER 4 /* team threads 1..4 open an inner region of 2 */

static int nested;
static int expected; /* threads that must check in before the abort */
int bigomp_checked_in;
int bigomp_tid_num[TEAM + 2 * NESTED_OUTER]; /* thread numbers (for a debugger) */
volatile int bigomp_release;                 /* never set: the abort comes first */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void nap(void)
{
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

__attribute__((noinline)) void bigomp_park(double limit)
{
    double t0 = now();
    __atomic_add_fetch(&bigomp_checked_in, 1, __ATOMIC_SEQ_CST);
    while (!bigomp_release) {
        if (now() - t0 > limit) {
            fprintf(stderr, "ompd_bigomp: thread %d gave up\n", omp_get_thread_num());
            exit(3);
        }
        nap();
    }
}

__attribute__((noinline)) void bigomp_crash(void)
{
    double t0 = now();
    __atomic_add_fetch(&bigomp_checked_in, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&bigomp_checked_in, __ATOMIC_SEQ_CST) < expected) {
        if (now() - t0 > 60) {
            fprintf(stderr, "ompd_bigomp: only %d of %d threads checked in\n",
                    __atomic_load_n(&bigomp_checked_in, __ATOMIC_SEQ_CST), expected);
            exit(2);
        }
        nap();
    }
    nap(); /* let the last ones reach nanosleep */
    abort();
}

__attribute__((noinline)) void bigomp_inner(void)
{
#pragma omp parallel num_threads(2)
    bigomp_park(120);
}

static void *omp_root(void *arg)
{
    (void)arg;
#pragma omp parallel num_threads(TEAM)
    {
        int n = omp_get_thread_num();
        if (omp_get_num_threads() != TEAM) {
            fprintf(stderr, "ompd_bigomp: team of %d, not %d\n", omp_get_num_threads(), TEAM);
            exit(4);
        }
        if (n == 0)
            bigomp_crash();
        else if (nested && n <= NESTED_OUTER)
            bigomp_inner();
        else
            bigomp_park(120);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t;
    nested = argc > 1 && strcmp(argv[1], "--nested") == 0;
    expected = TEAM + (nested ? NESTED_OUTER : 0);
    omp_set_dynamic(0);
    if (nested)
        omp_set_max_active_levels(2);
    if (pthread_create(&t, NULL, omp_root, NULL) != 0) {
        perror("pthread_create");
        return 1;
    }
    pthread_join(t, NULL);
    fprintf(stderr, "ompd_bigomp: the region ended without abort\n");
    return 5;
}
