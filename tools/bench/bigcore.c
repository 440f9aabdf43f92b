/* bigcore — benchmark subject: 64 worker threads + main (65 in all) and a heap of
 * SIZE bytes (default 1 GiB), every page touched so it is really dumped. When all
 * threads are parked, main either calls abort() (kernel core; run under
 * `ulimit -c unlimited` with core_pattern `core`) or, with --wait, prints READY and
 * sleeps so that gdb can `gcore` it.
 *
 *   bigcore [--size N[K|M|G]] [--threads N] [--wait]
 *
 * Built by tools/bench/make-bigcore.sh: cc -O1 -g -pthread -o bigcore bigcore.c
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_barrier_t ready;
static volatile int stop; /* never set: keeps workers parked */
static atomic_int parked;
static unsigned char *heap;
static size_t heap_size;

/* Each worker sits a few frames deep so unwinders have something to walk. */
static __attribute__((noinline)) void park(int depth, long id)
{
    if (depth > 0) {
        park(depth - 1, id);
        __asm__ volatile("" ::: "memory"); /* keep it from becoming a tail call */
        return;
    }
    pthread_barrier_wait(&ready);
    atomic_fetch_add(&parked, 1);
    while (!stop)
        pause();
}

/* Wait until every thread but the caller sleeps (state S in /proc), so the core
 * shows all workers in pause() and none still inside pthread_barrier_wait. */
static void wait_all_sleeping(int nthreads)
{
    while (atomic_load(&parked) < nthreads)
        usleep(1000);
    pid_t self = (pid_t)getpid();
    for (int tries = 0; tries < 5000; tries++) {
        DIR *d = opendir("/proc/self/task");
        if (!d)
            return;
        int busy = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.' || atoi(e->d_name) == self)
                continue;
            char path[300], buf[256];
            snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
            FILE *f = fopen(path, "r");
            if (!f)
                continue;
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[n] = 0;
            char *rp = strrchr(buf, ')');
            if (rp && rp[1] == ' ' && rp[2] != 'S')
                busy++;
        }
        closedir(d);
        if (!busy)
            return;
        usleep(1000);
    }
}

static void *worker(void *arg)
{
    long id = (long)(intptr_t)arg;
    park((int)(id % 4), id);
    return NULL;
}

static size_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    switch (*end) {
    case 'k': case 'K': v <<= 10; break;
    case 'm': case 'M': v <<= 20; break;
    case 'g': case 'G': v <<= 30; break;
    case '\0': break;
    default: fprintf(stderr, "bigcore: bad size '%s'\n", s); exit(2);
    }
    return (size_t)v;
}

int main(int argc, char **argv)
{
    size_t size = (size_t)1 << 30;
    int nthreads = 64, wait = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc)
            size = parse_size(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--wait"))
            wait = 1;
        else {
            fprintf(stderr, "usage: bigcore [--size N[K|M|G]] [--threads N] [--wait]\n");
            return 2;
        }
    }

    heap_size = size;
    heap = malloc(size);          /* one big mmap'd chunk: a single heap segment */
    if (!heap) {
        perror("malloc");
        return 1;
    }
    long pg = sysconf(_SC_PAGESIZE);
    for (size_t off = 0; off < size; off += (size_t)pg)
        heap[off] = (unsigned char)(off / (size_t)pg) | 1;  /* nonzero: not a zero page */

    pthread_barrier_init(&ready, NULL, (unsigned)nthreads + 1);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    for (long i = 0; i < nthreads; i++) {
        pthread_t t;
        if (pthread_create(&t, &attr, worker, (void *)(intptr_t)i)) {
            fprintf(stderr, "bigcore: pthread_create failed\n");
            return 1;
        }
    }
    pthread_barrier_wait(&ready);
    wait_all_sleeping(nthreads);

    if (wait) {
        printf("READY %d\n", (int)getpid());
        fflush(stdout);
        for (;;)
            pause();
    }
    abort();
}
