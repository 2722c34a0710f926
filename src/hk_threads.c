/* hk_threads.c - see hk_threads.h. */
#include "hk_threads.h"

#include <pthread.h>
#include <stdlib.h>

#define MAX_THREADS 256

void hk_threads_run(void *(*fn)(void *), void *args, size_t size, int n)
{
    pthread_t tid[MAX_THREADS];
    char *arg = args;
    int started = 1;
    if (n > MAX_THREADS) n = MAX_THREADS;
    while (started < n && !pthread_create(&tid[started], NULL, fn, arg + (size_t)started * size))
        started++;
    for (int k = started; k < n; k++) fn(arg + (size_t)k * size);   /* no thread: here */
    fn(arg);
    for (int k = 1; k < started; k++) pthread_join(tid[k], NULL);
}
