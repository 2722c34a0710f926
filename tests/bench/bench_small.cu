/* bench_small.cu - the small-call kernel's round trip (kernels/hk_cuda_small.h)
 * on synthetic HaplotypeCaller-like regions of one shape.
 *
 *   tests/bench/bench_small PRECISION READS HAPS READ_LEN HAP_LEN [CALLS [SUMS]]
 *
 * PRECISION: 0 mixed, 1 float, 2 double (HK_PREC_*). Each read is copied
 * from the first haplotype with 1 % substitutions (qualities 20-40, GATK's
 * gap penalties), the other haplotypes are random: in mixed precision the
 * reads' own haplotype stays in float and the others go on to double. The
 * same arguments give the same input on every run. Launches CALLS (default
 * 200) calls, one after the other, each waited for by polling the flag its
 * last warp raises in mapped memory as the GKL library does, and prints the
 * median, 10th and 90th percentile microseconds of a call. SUMS: a file to
 * write the last call's sums and precisions to, so that two builds of the
 * kernel can be compared byte for byte (cmp). Build: make tests/bench/bench_small. */
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "hk_cuda_internal.h"

static void fail(const char *what, cudaError_t e)
{
    fprintf(stderr, "bench_small: error: %s: %s\n", what, cudaGetErrorString(e));
    exit(3);
}

static uint64_t rng_state = 88172645463325252ull;
static unsigned rnd()
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)rng_state;
}

/* The input block of R reads of rlen against H haplotypes of hlen, laid out
 * by lay (hk_small_layout's). */
static std::vector<unsigned char> make_input(const hk_small_layout_t *lay, int R, int H, int rlen, int hlen)
{
    std::vector<unsigned char> in(lay->in_float + lay->n_pairs);
    hk_small_pair_t *pairs = reinterpret_cast<hk_small_pair_t *>(&in[lay->pairs]);
    for (int r = 0; r < R; r++)
        for (int h = 0; h < H; h++) pairs[r * H + h] = { (uint32_t)r, (uint32_t)h };
    hk_small_seq_t *reads = reinterpret_cast<hk_small_seq_t *>(&in[lay->reads]);
    hk_small_seq_t *haps = reinterpret_cast<hk_small_seq_t *>(&in[lay->haps]);
    uint8_t *hb = &in[lay->hbase], *rb = &in[lay->rbase];
    for (int h = 0; h < H; h++) {
        haps[h] = { (uint32_t)(h * hlen), (uint32_t)hlen };
        for (int j = 0; j < hlen; j++) hb[h * hlen + j] = (uint8_t)(rnd() % 4);
    }
    hk_small_row_t *row = reinterpret_cast<hk_small_row_t *>(&in[lay->rows]);
    for (int r = 0; r < R; r++) {
        reads[r] = { (uint32_t)(r * rlen), (uint32_t)rlen };
        const int off = hlen > rlen ? (int)(rnd() % (unsigned)(hlen - rlen)) : 0;
        for (int i = 0; i < rlen; i++) {
            rb[r * rlen + i] = rnd() % 100 ? hb[(off + i) % hlen] : (uint8_t)(rnd() % 4);
            /* base qualities 20-40; GATK's insertion/deletion 45, gap continuation 10 */
            row[r * rlen + i] = { (uint8_t)(20 + rnd() % 21), 45, 45, 10 };
        }
    }
    return in;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: bench_small PRECISION READS HAPS READ_LEN HAP_LEN [CALLS [SUMS]]\n");
        return 2;
    }
    const int prec = atoi(argv[1]), R = atoi(argv[2]), H = atoi(argv[3]), rlen = atoi(argv[4]), hlen = atoi(argv[5]);
    const int calls = argc > 6 ? atoi(argv[6]) : 200;
    if (prec < 0 || prec > 2 || R < 1 || H < 1 || rlen < 1 || rlen > HK_SMALL_MAX_READ || hlen < 1 || calls < 1) {
        fprintf(stderr, "bench_small: error: PRECISION 0-2, READS and HAPS from 1, READ_LEN 1-%d, HAP_LEN and CALLS from 1\n",
                HK_SMALL_MAX_READ);
        return 2;
    }
    hk_small_layout_t lay;
    if (hk_small_layout(&lay, prec, HK_FLOAT_THRESHOLD, (uint32_t)(R * H), (uint32_t)R, (uint32_t)H,
                        (uint64_t)R * rlen, (uint64_t)H * hlen, (uint32_t)hlen, SIZE_MAX)) {
        fprintf(stderr, "bench_small: error: the shape does not fit the kernel (a haplotype of at most 8192 bases)\n");
        return 2;
    }
    const std::vector<unsigned char> in = make_input(&lay, R, H, rlen, hlen);
    unsigned char *d_in, *host, *host_dev;
    unsigned *count, *flag, *flag_dev;
    cudaStream_t st;
    cudaError_t e;
    if ((e = cudaMalloc(&d_in, lay.bytes)) || (e = cudaMemcpy(d_in, in.data(), lay.bytes, cudaMemcpyHostToDevice)) ||
        (e = cudaHostAlloc(&host, in.size(), cudaHostAllocMapped)) ||
        (e = cudaHostGetDevicePointer(reinterpret_cast<void **>(&host_dev), host, 0)) ||
        (e = cudaMalloc(&count, sizeof *count)) || (e = cudaMemset(count, 0, sizeof *count)) ||
        (e = cudaHostAlloc(&flag, sizeof *flag, cudaHostAllocMapped)) ||
        (e = cudaHostGetDevicePointer(reinterpret_cast<void **>(&flag_dev), flag, 0)) ||
        (e = cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking)))
        fail("setting up", e);
    *flag = 0;
    std::vector<double> us;
    for (int k = 0; k < calls + 10; k++) {                 /* the first 10 warm up */
        const unsigned seq = (unsigned)k + 1;
        const auto t0 = std::chrono::steady_clock::now();
        if ((e = hk_launch_small(d_in, &lay, reinterpret_cast<double *>(host_dev + lay.sums), host_dev + lay.in_float,
                                 count, flag_dev, seq, st)))
            fail("the small-call kernel", e);
        while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != seq) {}
        if (k >= 10) us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    if ((e = cudaStreamSynchronize(st))) fail("the last call", e);
    std::sort(us.begin(), us.end());
    unsigned kept = 0;
    for (uint32_t p = 0; p < lay.n_pairs; p++) kept += host[lay.in_float + p];
    printf("precision=%d reads=%d haps=%d read_len=%d hap_len=%d: %.1f us a call [p10 %.1f, p90 %.1f], %u of %u sums in float\n",
           prec, R, H, rlen, hlen, us[us.size() / 2], us[us.size() / 10], us[us.size() * 9 / 10], kept, lay.n_pairs);
    if (argc > 7) {
        FILE *f = fopen(argv[7], "wb");
        if (!f || fwrite(host + lay.sums, 1, lay.n_pairs * 9, f) != lay.n_pairs * 9 || fclose(f)) {
            fprintf(stderr, "bench_small: error: %s: cannot write the sums\n", argv[7]);
            return 3;
        }
    }
    return 0;
}
