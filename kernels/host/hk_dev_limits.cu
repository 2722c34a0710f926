/* hk_dev_limits.cu - what the kernels need of a device, and asking the
 * device whether it has it.
 *
 * The build targets several architectures (configure's --with-cuda-arch),
 * whose multiprocessors differ in shared memory per block. Each kernel form
 * takes its dynamic shared memory from its template (SMEM_BYTES); the
 * compile-time bound in hk_fwd.cuh (HK_SMEM_SPREAD_MAX, sized for an H100)
 * only shapes the emission table's layout. Whether a device can run every
 * form is asked of the device at open and before a device scores, never
 * assumed from its name or compute capability: a device that cannot is
 * refused, with the form that does not fit named, so that no launch fails
 * half-way through a run.
 */
#include <cstdio>
#include <cstring>
#include "hk_fwd.cuh"
#include "hk_fwd_pair.cuh"
#include "hk_pdhmm.cuh"
#include "hk_host_internal.h"

namespace {

/* One kernel form the engine may launch, and its dynamic shared memory. */
struct hk_form {
    const char *family;
    int p, k;
    size_t smem;
};

/* Every form of the launchers in device/hk_kernel_*.cu, with the same
 * template arguments (the constant-gap forms of both coefficient sources
 * have the same layout; the multi-tile ones are the last entry's). */
#define HK_FORM_FLOAT(P, K, C) { "float", P, K, hk_fwd_pair<float, P, K, true, HK_CG_NONE, false, C>::SMEM_BYTES },
#define HK_FORM_CGAP(P, K, C) { "constant-gap float", P, K, hk_fwd_pair<float, P, K, true, HK_CG_READ, false, C>::SMEM_BYTES }, \
    { "constant-gap float", P, K, hk_fwd_pair<float, P, K, true, HK_CG_CHUNK, false, C>::SMEM_BYTES },
#define HK_FORM_DOUBLE(P, K) { "double", P, K, hk_fwd_pair<double, P, K, false, HK_CG_NONE, false, 2>::SMEM_BYTES },
#define HK_FORM_PD(P, K) { "PDHMM", P, K, hk_pd_fwd<P, K, false, false>::SMEM_BYTES },
#define HK_FORM_PD_CG(P, K) { "constant-gap PDHMM", P, K, hk_pd_fwd<P, K, false, false, true, true>::SMEM_BYTES },
#define HK_FORM_PD_MULTI(P, K) { "multi-tile PDHMM", P, K, hk_pd_fwd<P, K, true, false>::SMEM_BYTES }, \
    { "multi-tile PDHMM", P, K, hk_pd_fwd<P, K, true, true>::SMEM_BYTES },

#define HK_LIM_P3(P, K, C) P,
#define HK_LIM_K3(P, K, C) K,
#define HK_LIM_P(P, K) P,
#define HK_LIM_K(P, K) K,
constexpr int float_p[] = { HK_FLOAT_CONFIGS(HK_LIM_P3) }, float_k[] = { HK_FLOAT_CONFIGS(HK_LIM_K3) };
constexpr int double_p[] = { HK_DOUBLE_CONFIGS(HK_LIM_P) }, double_k[] = { HK_DOUBLE_CONFIGS(HK_LIM_K) };
constexpr int FL = HK_N_FLOAT_CONFIGS - 1, DL = HK_N_DOUBLE_CONFIGS - 1;

constexpr hk_form forms[] = {
    HK_FLOAT_CONFIGS(HK_FORM_FLOAT)
    { "multi-tile float", float_p[FL], float_k[FL],
      hk_fwd_pair<float, float_p[FL], float_k[FL], true, HK_CG_NONE, true, 2>::SMEM_BYTES },
    HK_CGAP_CONFIGS(HK_FORM_CGAP)
    HK_DOUBLE_CONFIGS(HK_FORM_DOUBLE)
    { "multi-tile double", double_p[DL], double_k[DL],
      hk_fwd_pair<double, double_p[DL], double_k[DL], false, HK_CG_NONE, true, 2>::SMEM_BYTES },
    HK_PDHMM_CONFIGS(HK_FORM_PD)
    HK_PDHMM_CG_CONFIGS(HK_FORM_PD_CG)
    HK_PDHMM_MULTI(HK_FORM_PD_MULTI)
};

/* The most shared memory per block of the architectures the build targets
 * (sm_90's opt-in limit): no form may be built to need more. */
constexpr size_t HK_SMEM_BLOCK_BUILD_MAX = 232448;

constexpr size_t most_smem(size_t i = 0, size_t m = 0)
{
    return i == sizeof forms / sizeof forms[0] ? m : most_smem(i + 1, forms[i].smem > m ? forms[i].smem : m);
}
static_assert(most_smem() <= HK_SMEM_BLOCK_BUILD_MAX, "a kernel form needs more shared memory than any target has");

/* Devices (ordinals 0..63) found to fit: asked once per process. */
std::atomic<uint64_t> fits_seen{0};

} // namespace

extern "C" size_t hk_cuda_smem_need(void)
{
    return most_smem();
}

extern "C" hk_status_t hk_cuda_limits_check(const hk_cuda_limits_t *lim, char *err, size_t errlen)
{
    if (!lim) {
        hk_cu_seterr(err, errlen, "hk_cuda_limits_check: no limits given");
        return HK_E_INVAL;
    }
    if (lim->warp_size != 32) {
        hk_cu_seterr(err, errlen, "warps of %d threads (the kernels' groups need 32)", lim->warp_size);
        return HK_E_NODEV;
    }
    if (lim->max_threads_block < HK_BLOCK_THREADS) {
        hk_cu_seterr(err, errlen, "at most %d threads per block (the kernels need %d)", lim->max_threads_block,
                     HK_BLOCK_THREADS);
        return HK_E_NODEV;
    }
    for (const hk_form &f : forms)
        if (f.smem > lim->smem_block_optin) {
            hk_cu_seterr(err, errlen,
                         "%zu bytes of shared memory per block, but the %s kernel of %dx%d rows needs %zu "
                         "(this build's kernels need up to %zu)",
                         lim->smem_block_optin, f.family, f.p, f.k, f.smem, most_smem());
            return HK_E_NODEV;
        }
    return HK_OK;
}

extern "C" hk_status_t hk_cuda_device_fits(int ordinal, char *err, size_t errlen)
{
    const uint64_t bit = ordinal >= 0 && ordinal < 64 ? 1ull << ordinal : 0;
    if (bit && (fits_seen.load(std::memory_order_acquire) & bit)) return HK_OK;
    int smem = 0, threads = 0, warp = 0, major = 0, minor = 0;
    const char *what = "cudaDeviceGetAttribute";
    cudaError_t e = cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerBlock, ordinal);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, ordinal);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ordinal);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ordinal);
    if (e == cudaSuccess) {
        /* whether the build has code this device runs (its own or PTX it can compile) */
        what = "cudaFuncGetAttributes";
        int cur = 0;
        e = cudaGetDevice(&cur);
        if (e == cudaSuccess && (e = cudaSetDevice(ordinal)) == cudaSuccess) {
            e = hk_pad_kernel_image();
            const cudaError_t back = cudaSetDevice(cur);
            if (e == cudaSuccess) e = back;
        }
        if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction) {
            (void)cudaGetLastError();
            hk_cu_seterr(err, errlen, "CUDA device %d (compute capability %d.%d) cannot run this build's kernels: "
                         "rebuild with its architecture in --with-cuda-arch", ordinal, major, minor);
            return HK_E_NODEV;
        }
    }
    if (e != cudaSuccess) {
        hk_status_t rc = hk_cu_fail(e, what, ordinal, err, errlen);
        (void)cudaGetLastError();
        return rc;
    }
    const hk_cuda_limits_t lim = { (size_t)smem, threads, warp };
    char why[256] = "";
    const hk_status_t rc = hk_cuda_limits_check(&lim, why, sizeof why);
    if (rc != HK_OK) {
        hk_cu_seterr(err, errlen, "CUDA device %d (compute capability %d.%d) has %s", ordinal, major, minor, why);
        return rc;
    }
    if (bit) fits_seen.fetch_or(bit, std::memory_order_acq_rel);
    return HK_OK;
}
