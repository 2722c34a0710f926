/* hk_gpu_claim.c - see hk_gpu_claim.h. */
#include "hk_gpu_claim.h"
#include "hk_log.h"
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Local time with milliseconds, for the GPU lock notices. */
const char *hk_gpu_claim_timestamp(char *buf, size_t n)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    localtime_r(&ts.tv_sec, &tm);
    size_t len = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + len, n - len, ".%03ld", ts.tv_nsec / 1000000);
    return buf;
}

#ifdef HAVE_CUDA
/* Claim one device of `cand` through DIR/gpu<N>.lock; waits while all are
 * taken. Returns the ordinal and leaves the lock's fd in *fd, or -1. */
int hk_gpu_claim_lock(const char *dir, const int *cand, int n, int *fd)
{
    int noticed = 0;
    for (;;) {
        for (int i = 0; i < n; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/gpu%d.lock", dir, cand[i]);
            /* a shared folder: a planted symbolic link, FIFO or device must
             * neither be followed nor block, and the file is never written
             * (a hard link to someone's file would be damaged) */
            int f = open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
            struct stat st;
            if (f < 0 || fstat(f, &st) || !S_ISREG(st.st_mode)) {
                hk_log_error("%s: cannot use as a GPU lock: %s", path,
                             f < 0 ? (errno == ELOOP ? "it is a symbolic link" : strerror(errno))
                                   : "not a regular file");
                if (f >= 0) close(f);
                return -1;
            }
            if (flock(f, LOCK_EX | LOCK_NB) == 0) {
                *fd = f;
                return cand[i];
            }
            close(f);
        }
        if (!noticed) hk_log_notice("all GPUs in %s are taken; waiting for one", dir);
        noticed = 1;
        struct timespec ts = { 0, 200 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

/* The GPUs chosen before CUDA starts (hk_engine_prepare_run): CUDA's start-up
 * grows with the devices it sees (each visible GPU is enumerated, whichever
 * are used), so a process that uses some of a host's GPUs makes those the
 * only ones CUDA sees, and claims its lock by the host's numbering first. */
static hk_gpu_chosen_t chosen = { .lock_fd = -1 };

const hk_gpu_chosen_t *hk_gpu_claim_chosen(void) { return &chosen; }

void hk_gpu_claim_take_lock(int *fd, int *locked)
{
    if (chosen.lock_fd < 0) return;
    *fd = chosen.lock_fd;
    *locked = chosen.locked;
    chosen.lock_fd = -1;
}

/* The GPUs of this host (or container) without starting CUDA: its device
 * nodes /dev/nvidia0, /dev/nvidia1, ... (a container is given only its
 * own). 0 when there are none to be seen. */
int hk_gpu_claim_count_nodes(void)
{
    DIR *d = opendir("/dev");
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d));) {
        const char *s = de->d_name;
        if (strncmp(s, "nvidia", 6) || !s[6]) continue;
        s += 6;
        while (*s >= '0' && *s <= '9') s++;
        n += *s == '\0';
    }
    if (d) closedir(d);
    return n;
}

/* hk_engine_prepare_run's part: choose the GPUs (claim one when a lock
 * directory is set) and make them the only ones CUDA sees, unless the user
 * (or a scheduler: SLURM, a container runtime) has already chosen with
 * CUDA_VISIBLE_DEVICES, or every GPU is used anyway. */
static void choose_gpus(const hk_config_t *c)
{
    int cand[HK_MAX_DEVICES], n = 0;
    /* HK_ALL_GPUS_VISIBLE=1: CUDA sees every GPU, as before (for measuring) */
    if (c->opt.env_visible_devices || c->opt.all_gpus_visible) return;
    if (c->n_devices >= 0) {
        for (int i = 0; i < c->n_devices; i++) {
            for (int j = 0; j < i; j++)
                if (c->devices[j] == c->devices[i]) return;   /* CUDA's open says so */
            cand[n++] = c->devices[i];
        }
    } else if (c->gpu_lock_dir) {
        const int k = hk_gpu_claim_count_nodes();
        for (int d = 0; d < k && n < HK_MAX_DEVICES; d++) cand[n++] = d;
    }
    if (n == 0) return;   /* all of them, or how many is unknown: CUDA enumerates them */
    if (c->gpu_lock_dir) {
        const int d = hk_gpu_claim_lock(c->gpu_lock_dir, cand, n, &chosen.lock_fd);
        if (d < 0) { chosen.failed = 1; return; }
        char when[64];
        hk_log_notice("claimed GPU %d (%s/gpu%d.lock) at %s", d, c->gpu_lock_dir, d,
                      hk_gpu_claim_timestamp(when, sizeof when));
        chosen.locked = d;
        cand[0] = d;
        n = 1;
    }
    char list[HK_MAX_DEVICES * 6] = "";
    for (int i = 0, at = 0; i < n; i++)
        at += snprintf(list + at, sizeof list - (size_t)at, "%s%d", i ? "," : "", cand[i]);
    setenv("CUDA_VISIBLE_DEVICES", list, 1);
    memcpy(chosen.phys, cand, (size_t)n * sizeof *cand);
    chosen.n = n;
    chosen.narrowed = 1;
    if (hk_log_tracing()) fprintf(stderr, "haplik: trace engine: CUDA_VISIBLE_DEVICES=%s\n", list);
}

#endif

void hk_engine_prepare_run(const hk_config_t *c)
{
#ifdef HAVE_CUDA
    if (c->backend == HK_BACKEND_CPU) return;
    choose_gpus(c);
    if (c->opt.env_max_connections) return;
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "2", 0);   /* read by the driver as it creates a context */
    if (hk_log_tracing()) fprintf(stderr, "haplik: trace engine: 2 hardware queues per device\n");
#else
    (void)c;
#endif
}

void hk_engine_unprepare_run(void)
{
#ifdef HAVE_CUDA
    if (chosen.lock_fd < 0) return;
    close(chosen.lock_fd);   /* the lock goes with it */
    chosen.lock_fd = -1;
#endif
}
