/* bench_pack.cu - how long the engine's host side takes to plan and pack
 * chunks, without a GPU.
 *
 *   tests/bench/bench_pack THREADS INPUT [RUNS]   (build: make tests/bench/bench_pack)
 *
 * Reads INPUT into one batch, then RUNS times (default 5) plans and packs
 * the whole of it as hk_cuda_score does on one device, three ways: the
 * host's packing with every row packed, and with the rows listed for a copy
 * from the (pinned) batch; and the engine's staging for GPU packing, whose
 * host work is to list the batch's arrays for a copy (slots of
 * HK_SLOT_BYTES, about 8 chunks' worth of cells at most per chunk, a pool of
 * THREADS host threads), into ordinary memory. Prints the chunks and the
 * milliseconds of planning and packing per run. Host code only: it runs
 * where there is no GPU, and on a GPU host it measures what the device's
 * thread spends per chunk besides enqueueing and copying out. */
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "hk_host_internal.h"
extern "C" {                       /* C headers without guards of their own */
#include "hk_model.h"
#include "hk_reader.h"
}

static double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char **argv)
{
    if (argc < 3 || atoi(argv[1]) < 1) {
        fprintf(stderr, "usage: bench_pack THREADS INPUT [RUNS]\n");
        return 2;
    }
    const unsigned threads = (unsigned)atoi(argv[1]);
    const int runs = argc > 3 ? atoi(argv[3]) : 5;
    hk_model_t m = { HK_PREC_MIXED, HK_FLOAT_THRESHOLD, 6, -1, 0 };
    hk_batch_t b;
    hk_batch_init(&b);
    hk_reader_t *r;
    if (hk_reader_open(argv[2], HK_FMT_AUTO, hk_model_seq_rules(&m), NULL, &r)) return 2;
    size_t added = 0;
    hk_status_t rc;
    while ((rc = hk_reader_next(r, &b, (size_t)1 << 30, &added)) == HK_OK && added > 0) {}
    hk_reader_close(r);
    if (rc != HK_OK) return 2;

    hk_pool pool(threads - 1);
    pool.part_reads = (size_t)hk_knob(HK_KNOB_CUDA_PACK_READS);   /* a tuning knob */
    hk_plan_limits lim;
    lim.in_bytes = lim.min_in_bytes = HK_SLOT_BYTES;
    lim.pairs = lim.min_pairs = HK_SLOT_PAIRS;
    lim.items = lim.pairs + (HK_SLOT_BYTES >> 8) + 1024;
    lim.cells = b.cells / 8 + 1;
    std::vector<unsigned char> in(2 * HK_SLOT_BYTES);
    std::vector<uint64_t> degen;
    printf("# %zu regions, %zu reads, %zu pairs; %u threads\n", b.n_regions, b.n_reads, b.n_pairs, threads);
    static const char *const ways[] = { "rows packed", "rows listed", "staged for the GPU to pack" };
    for (int k = 0; k < 3 * runs; k++) {
        /* alternating: the host's packing with rows packed, with rows listed
         * for a copy from the batch; the engine's staging (GPU packing) */
        const int way = k % 3;
        const bool direct = way > 0;
        double t_plan = 0, t_pack = 0;
        int chunks = 0;
        size_t reg = 0, rd = 0;
        while (rd < b.n_reads) {
            hk_chunk ch;
            const double t0 = now();
            while (reg < b.n_regions && rd >= (size_t)b.regions[reg].read0 + b.regions[reg].n_reads) reg++;
            if (hk_chunk_plan(&b, &lim, reg, rd, b.n_reads, &ch)) {
                fprintf(stderr, "bench_pack: a read with its haplotypes does not fit one slot\n");
                return 1;
            }
            const double t1 = now();
            if (way == 2) hk_chunk_stage(&b, &ch, HK_PREC_MIXED, true, in.data());
            else hk_chunk_pack(&b, &ch, HK_PREC_MIXED, direct, in.data(), &degen, &pool);
            t_plan += t1 - t0;
            t_pack += now() - t1;
            chunks++;
            rd = ch.r1;
            reg = ch.reg1 - 1;
        }
        printf("run %d, %s: %d chunks, plan %.2f ms, pack %.2f ms (%.3f ms per chunk)\n", k / 3, ways[way], chunks, t_plan * 1e3, t_pack * 1e3, t_pack * 1e3 / chunks);
    }
    hk_batch_free(&b);
    return 0;
}
