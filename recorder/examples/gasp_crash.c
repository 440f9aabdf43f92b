/* GASP C-model demo for the flight recorder: function entry/exit (-finstrument-functions),
 * malloc/realloc/free (-Wl,--wrap=...), a user event and explicit gasp_event_notify calls
 * in two threads; then abort() in a nested function. Build: see run.sh. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gasp.h"

static unsigned int ev_phase;

static char *grow(char *buf, size_t n)
{
	char *p = realloc(buf, n);
	memset(p, 'x', n);
	return p;
}

static int depth(int n)
{
	if (n == 0) {
		void *p = malloc(24);
		free(p);
		return 0;
	}
	return depth(n - 1) + 1;
}

static void crash_here(char *buf)
{
	gasp_event_notify(NULL, ev_phase, GASP_ATOMIC, __FILE__, __LINE__, 0, 99);
	fprintf(stderr, "aborting with buf %p\n", (void *)buf);
	abort();
}

static void *worker(void *arg)
{
	gasp_context_t ctx = gasp_init(GASP_MODEL_C, NULL, NULL);
	char *b = NULL;
	for (int i = 1; i <= 4; i++)
		b = grow(b, (size_t)i * 100);
	depth(3);
	gasp_event_notify(ctx, GASP_C_FUNC, GASP_START, __FILE__, __LINE__, 0, "void *worker(void *)");
	gasp_event_notify(ctx, GASP_C_FUNC, GASP_END, __FILE__, __LINE__, 0, "void *worker(void *)");
	free(b);
	return arg;
}

int main(int argc, char **argv)
{
	gasp_context_t ctx = gasp_init(GASP_MODEL_C, &argc, &argv);
	ev_phase = gasp_create_event(ctx, "phase", "%d");
	pthread_t t;
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	gasp_control(ctx, 0);
	depth(50); /* not recorded */
	gasp_control(ctx, 1);
	char *buf = grow(NULL, 64);
	buf = grow(buf, 4096);
	depth(2);
	crash_here(buf);
	return 0;
}
