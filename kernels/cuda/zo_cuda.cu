/* SPDX-License-Identifier: Apache-2.0 */
/* kernels/cuda/zo_cuda.cu: the CUDA kernels behind dpzo/cuda.h and their launchers
 * (kernels/cuda/zo_cuda.h).
 *
 * Bit-exactness with the CPU (kernels/cpu/philox.c, zo_dir.c; trainer/step.c's release):
 *  - the generator is kernels/zo_core.h, the same source the CPU compiles; this file is
 *    compiled with -fmad=false --prec-div=true --prec-sqrt=true --ftz=false (no FMA
 *    contraction, IEEE division and square root, no flush to zero: kernels/CMakeLists.txt),
 *    so every double and float operation rounds exactly as on the host;
 *  - every output element is a function of its index alone: a thread handles one Philox
 *    block (elements 4m .. 4m + 3) at a time in a grid-stride loop, so the launch
 *    geometry changes which thread computes an element, never its value;
 *  - reductions run in the CPU's order, one thread per sum: the SPHERE norm's blocks of
 *    DPZO_CU_SPHERE_BLOCK elements (the squares computed by the whole CUDA block into
 *    shared memory, then summed left to right by one thread), then the block sums left to
 *    right by one thread; the clip-sum's row norms one thread per row, the per-query sums
 *    one thread per query over the rows in order.
 * Performance has not been measured on a GPU yet (docs/cuda.md lists what is missing). */
#include <cuda_runtime.h>
#include <stdio.h>
#include "../zo_core.h"
#include "../zo_dtype.h"
#include "zo_cuda.h"

/* ---- launch geometry ---------------------------------------------------------------- */

static unsigned g_blocks = 0, g_threads = 0; /* 0: defaults */
static int g_sms = 0;                        /* multiprocessors (set by the probe) */

extern "C" void dpzo__cu_set_launch(unsigned blocks, unsigned threads)
{
    g_blocks = blocks;
    g_threads = threads;
}

static unsigned threads_for(void) { return g_threads != 0 ? g_threads : 256u; }

/* Blocks for `work` items of one thread each: the forced count, or enough to cover the
 * work up to 16 blocks per multiprocessor (the grid-stride loops do the rest). */
static unsigned blocks_for(uint64_t work, unsigned threads)
{
    if (g_blocks != 0)
        return g_blocks;
    uint64_t want = (work + threads - 1) / threads;
    uint64_t cap = (uint64_t)(g_sms > 0 ? g_sms : 132) * 16u;
    if (want > cap)
        want = cap;
    return want > 0 ? (unsigned)want : 1u;
}

static const char *launched(void)
{
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? NULL : cudaGetErrorString(e);
}

#define CU_TRY(call)                                                                      \
    do {                                                                                  \
        cudaError_t e_ = (call);                                                          \
        if (e_ != cudaSuccess)                                                            \
            return cudaGetErrorString(e_);                                                \
    } while (0)

/* ---- probe, memory ------------------------------------------------------------------ */

__global__ void probe_kernel(int *flag) { *flag = 0x64707a6f; }

extern "C" const char *dpzo__cu_probe(int *ok)
{
    static char why[256];
    *ok = 0;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        snprintf(why, sizeof why, "cudaGetDeviceCount: %s (%s)", cudaGetErrorString(e),
                 cudaGetErrorName(e));
        cudaGetLastError();
        return why;
    }
    if (n <= 0)
        return "no CUDA device";
    int dev = 0;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, dev)) !=
            cudaSuccess) {
        snprintf(why, sizeof why, "device query: %s", cudaGetErrorString(e));
        cudaGetLastError();
        return why;
    }
    int *flag = NULL, host = 0;
    e = cudaMalloc((void **)&flag, sizeof *flag);
    if (e == cudaSuccess) {
        probe_kernel<<<1, 1>>>(flag);
        e = cudaGetLastError();
        if (e == cudaSuccess)
            e = cudaMemcpy(&host, flag, sizeof host, cudaMemcpyDeviceToHost);
        cudaFree(flag);
    }
    if (e != cudaSuccess || host != 0x64707a6f) {
        snprintf(why, sizeof why, "probe kernel: %s",
                 e != cudaSuccess ? cudaGetErrorString(e) : "wrong result");
        cudaGetLastError();
        return why;
    }
    *ok = 1;
    return NULL;
}

extern "C" const char *dpzo__cu_device_info(char *name, size_t name_len, int *major, int *minor,
                                            int *sms)
{
    int dev = 0;
    cudaDeviceProp p;
    CU_TRY(cudaGetDevice(&dev));
    CU_TRY(cudaGetDeviceProperties(&p, dev));
    if (name != NULL && name_len > 0)
        snprintf(name, name_len, "%s", p.name);
    if (major != NULL)
        *major = p.major;
    if (minor != NULL)
        *minor = p.minor;
    if (sms != NULL)
        *sms = p.multiProcessorCount;
    return NULL;
}

extern "C" const char *dpzo__cu_malloc(void **p, size_t bytes)
{
    CU_TRY(cudaMalloc(p, bytes > 0 ? bytes : 1));
    return NULL;
}

extern "C" void dpzo__cu_free(void *p) { cudaFree(p); }

extern "C" const char *dpzo__cu_copy(void *dst, const void *src, size_t bytes, int to_device)
{
    CU_TRY(cudaMemcpy(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost));
    return NULL;
}

extern "C" const char *dpzo__cu_sync(void)
{
    CU_TRY(cudaDeviceSynchronize());
    return NULL;
}

/* ---- fill / axpy ---------------------------------------------------------------------- */

struct apply_args {
    dpzo_dir dir[DPZO_CU_MAX_DIRS];
    double alpha[DPZO_CU_MAX_DIRS];
    unsigned k;
    int axpy;
    uint64_t j0, n;   /* the elements [j0, j0 + n) */
    uint64_t m0, nm;  /* their Philox blocks m0 .. m0 + nm - 1 */
};

static __device__ __forceinline__ float nan_f(void) { return __int_as_float(0x7fc00000); }

/* Element j of direction d as the CPU's float u_j (dpzo_dir_fill), given the block's raw
 * values (unused for an explicit vector). */
static __device__ __forceinline__ float element(const dpzo_dir &d, uint64_t j, double raw)
{
    if (j >= d.dim)
        return nan_f();
    if (d.vec != NULL)
        return d.vec[j];
    float u = (float)(d.scale * raw);
    if (d.mult != NULL)
        u = u * d.mult[j]; /* the float product, as zo_dir.c's apply_special */
    return u;
}

/* One direction over the four elements jb .. jb + 3 of Philox block m (those with in[e]):
 * acc[e] = (float)((double)acc[e] + alpha (double)u) when axpy, else acc[e] = u. */
__device__ __forceinline__ void add_dir4(const dpzo_dir &dir, double alpha, bool axpy,
                                         uint64_t m, uint64_t jb, const bool in[4], float acc[4])
{
    double raw[4] = {0.0, 0.0, 0.0, 0.0};
    if (dir.vec == NULL)
        dpzo_hd_raw4(dir.seed, (uint32_t)dir.step, dir.query, dir.kind == DPZO_DIR_RADEMACHER, m,
                     raw);
#pragma unroll
    for (int e = 0; e < 4; e++) {
        if (!in[e])
            continue;
        float u = element(dir, jb + (uint64_t)e, raw[e]);
        acc[e] = axpy ? (float)((double)acc[e] + alpha * (double)u) : u;
    }
}

__global__ void apply_kernel(const apply_args a, float *out)
{
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; t < a.nm; t += stride) {
        const uint64_t m = a.m0 + t, jb = 4 * m;
        bool in[4];
        float acc[4];
#pragma unroll
        for (int e = 0; e < 4; e++) {
            uint64_t j = jb + (uint64_t)e;
            in[e] = j >= a.j0 && j - a.j0 < a.n;
            acc[e] = (a.axpy && in[e]) ? out[j - a.j0] : 0.0f;
        }
        for (unsigned d = 0; d < a.k; d++)
            add_dir4(a.dir[d], a.axpy ? a.alpha[d] : 0.0, a.axpy, m, jb, in, acc);
#pragma unroll
        for (int e = 0; e < 4; e++)
            if (in[e])
                out[jb + (uint64_t)e - a.j0] = acc[e];
    }
}

extern "C" const char *dpzo__cu_apply(const dpzo_dir *dirs, const double *alpha, unsigned k,
                                      int axpy, uint64_t j0, size_t n, float *out)
{
    if (n == 0)
        return NULL;
    if (k == 0 || k > DPZO_CU_MAX_DIRS)
        return "internal: bad direction count";
    apply_args a;
    memset(&a, 0, sizeof a);
    for (unsigned d = 0; d < k; d++) {
        a.dir[d] = dirs[d];
        a.alpha[d] = axpy ? alpha[d] : 0.0;
    }
    a.k = k;
    a.axpy = axpy;
    a.j0 = j0;
    a.n = n;
    a.m0 = j0 >> 2;
    a.nm = ((j0 + n - 1) >> 2) - a.m0 + 1;
    unsigned threads = threads_for();
    apply_kernel<<<blocks_for(a.nm, threads), threads>>>(a, out);
    return launched();
}

/* ---- typed perturb / update (dpzo_dir_perturb, dpzo_dir_update) --------------------------- */

struct typed_args {
    dpzo_dir dir[DPZO_CU_MAX_DIRS]; /* k <= DPZO_CU_MAX_DIRS: the directions by value */
    double alpha[DPZO_CU_MAX_DIRS];
    const dpzo_dir *gdir;           /* k > DPZO_CU_MAX_DIRS: device copies */
    const double *galpha;
    unsigned k;
    uint64_t j0, n;  /* the elements [j0, j0 + n) */
    uint64_t lim;    /* the smallest dim: elements at j >= lim are T(NaN) */
    uint64_t m0, nm; /* their Philox blocks m0 .. m0 + nm - 1 */
};

/* Element i of an array of type DT, as float (exact), and T(v) stored. */
template <int DT> static __device__ __forceinline__ float load_typed(const void *p, uint64_t i)
{
    if (DT == DPZO_F32)
        return ((const float *)p)[i];
    uint16_t h = ((const uint16_t *)p)[i];
    return DT == DPZO_BF16 ? dpzo_hd_bf16_to_f32(h) : dpzo_hd_f16_to_f32(h);
}

template <int DT> static __device__ __forceinline__ void store_typed(void *p, uint64_t i, float v)
{
    if (DT == DPZO_F32)
        ((float *)p)[i] = v;
    else
        ((uint16_t *)p)[i] = DT == DPZO_BF16 ? dpzo_hd_f32_to_bf16(v) : dpzo_hd_f32_to_f16(v);
}

/* One thread per Philox block at a time (grid-stride), as apply_kernel: the values of the
 * block's elements in [j0, j0 + n) are loaded as floats, every direction applied in order
 * (dpzo_dir_axpy's operation, the float rounding in between), and stored as T once. The
 * CPU writes the float NaN 0x7fc00000 converted to T past a direction's dim; so does this
 * kernel (not the device's canonical NaN), so the bits agree there too. x may equal out
 * (each element is read, then written, by one thread). */
template <int DT, bool GLOBAL>
__global__ void typed_kernel(const typed_args a, const void *x, void *out)
{
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; t < a.nm; t += stride) {
        const uint64_t m = a.m0 + t, jb = 4 * m;
        bool in[4], ok[4], any = false;
        float acc[4];
#pragma unroll
        for (int e = 0; e < 4; e++) {
            uint64_t j = jb + (uint64_t)e;
            in[e] = j >= a.j0 && j - a.j0 < a.n;
            ok[e] = in[e] && j < a.lim;
            any = any || ok[e];
            acc[e] = in[e] ? load_typed<DT>(x, j - a.j0) : 0.0f;
        }
        if (any) {
            for (unsigned d = 0; d < a.k; d++)
                add_dir4(GLOBAL ? a.gdir[d] : a.dir[d], GLOBAL ? a.galpha[d] : a.alpha[d], true,
                         m, jb, ok, acc);
        }
#pragma unroll
        for (int e = 0; e < 4; e++)
            if (in[e])
                store_typed<DT>(out, jb + (uint64_t)e - a.j0, ok[e] ? acc[e] : nan_f());
    }
}

template <bool GLOBAL>
static void launch_typed(int dt, unsigned blocks, unsigned threads, cudaStream_t s,
                         const typed_args &a, const void *x, void *out)
{
    if (dt == DPZO_F32)
        typed_kernel<DPZO_F32, GLOBAL><<<blocks, threads, 0, s>>>(a, x, out);
    else if (dt == DPZO_BF16)
        typed_kernel<DPZO_BF16, GLOBAL><<<blocks, threads, 0, s>>>(a, x, out);
    else
        typed_kernel<DPZO_F16, GLOBAL><<<blocks, threads, 0, s>>>(a, x, out);
}

extern "C" const char *dpzo__cu_typed(const dpzo_dir *dirs, const double *alpha, unsigned k,
                                      int dt, uint64_t j0, size_t n, const void *x, void *out,
                                      void *stream)
{
    if (n == 0)
        return NULL;
    if (k == 0 || (dt != DPZO_F32 && dt != DPZO_BF16 && dt != DPZO_F16))
        return "internal: bad direction count or element type";
    typed_args a;
    memset(&a, 0, sizeof a);
    a.k = k;
    a.j0 = j0;
    a.n = n;
    a.lim = UINT64_MAX;
    for (unsigned d = 0; d < k; d++)
        a.lim = dirs[d].dim < a.lim ? dirs[d].dim : a.lim;
    a.m0 = j0 >> 2;
    a.nm = ((j0 + n - 1) >> 2) - a.m0 + 1;
    cudaStream_t s = (cudaStream_t)stream;
    const unsigned threads = threads_for(), blocks = blocks_for(a.nm, threads);
    if (k <= DPZO_CU_MAX_DIRS) {
        for (unsigned d = 0; d < k; d++) {
            a.dir[d] = dirs[d];
            a.alpha[d] = alpha[d];
        }
        launch_typed<false>(dt, blocks, threads, s, a, x, out);
        return launched();
    }
    /* many directions: copies in stream-ordered device memory, freed after the kernel */
    const size_t dbytes = (size_t)k * sizeof(dpzo_dir), abytes = (size_t)k * sizeof(double);
    char *buf = NULL;
    CU_TRY(cudaMallocAsync((void **)&buf, dbytes + abytes, s));
    cudaError_t e = cudaMemcpyAsync(buf, dirs, dbytes, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(buf + dbytes, alpha, abytes, cudaMemcpyHostToDevice, s);
    const char *err = e == cudaSuccess ? NULL : cudaGetErrorString(e);
    if (err == NULL) {
        a.gdir = (const dpzo_dir *)buf;
        a.galpha = (const double *)(buf + dbytes);
        launch_typed<true>(dt, blocks, threads, s, a, x, out);
        err = launched();
    }
    cudaFreeAsync(buf, s);
    return err;
}

/* ---- the SPHERE norm -------------------------------------------------------------------- */

/* partial[sb] = the left-to-right sum from +0.0 of x_j^2 over the elements of block sb,
 * [sb B, min((sb + 1) B, dim)), B = DPZO_CU_SPHERE_BLOCK. */
__global__ void sumsq_blocks_kernel(const dpzo_dir d, uint64_t nsb, double *partial)
{
    __shared__ double sq[DPZO_CU_SPHERE_BLOCK];
    for (uint64_t sb = blockIdx.x; sb < nsb; sb += gridDim.x) {
        const uint64_t base = sb * DPZO_CU_SPHERE_BLOCK;
        const uint64_t left = d.dim - base;
        const unsigned cnt = left < DPZO_CU_SPHERE_BLOCK ? (unsigned)left : DPZO_CU_SPHERE_BLOCK;
        for (unsigned p = threadIdx.x; 4 * p < cnt; p += blockDim.x) {
            double raw[4];
            dpzo_hd_raw4(d.seed, (uint32_t)d.step, d.query, 0, (base >> 2) + p, raw);
#pragma unroll
            for (unsigned e = 0; e < 4; e++) {
                unsigned idx = 4 * p + e;
                if (idx < cnt) {
                    double x = raw[e];
                    if (d.mult != NULL)
                        x = x * (double)d.mult[base + idx];
                    sq[idx] = x * x;
                }
            }
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            double s = 0.0;
            for (unsigned i = 0; i < cnt; i++)
                s += sq[i];
            partial[sb] = s;
        }
        __syncthreads();
    }
}

__global__ void sum_in_order_kernel(const double *v, uint64_t n, double *out)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        double s = 0.0;
        for (uint64_t i = 0; i < n; i++)
            s += v[i];
        *out = s;
    }
}

extern "C" const char *dpzo__cu_sumsq(const dpzo_dir *dir, double *total)
{
    const uint64_t nsb = (dir->dim + DPZO_CU_SPHERE_BLOCK - 1) / DPZO_CU_SPHERE_BLOCK;
    double *buf = NULL;
    CU_TRY(cudaMalloc((void **)&buf, (size_t)(nsb + 1) * sizeof(double)));
    unsigned threads = threads_for();
    unsigned blocks = g_blocks != 0 ? g_blocks
                      : nsb < (uint64_t)(g_sms > 0 ? g_sms : 132) * 8
                          ? (unsigned)nsb
                          : (unsigned)(g_sms > 0 ? g_sms : 132) * 8;
    sumsq_blocks_kernel<<<blocks, threads>>>(*dir, nsb, buf);
    const char *err = launched();
    if (err == NULL) {
        sum_in_order_kernel<<<1, 1>>>(buf, nsb, buf + nsb);
        err = launched();
    }
    if (err == NULL) {
        cudaError_t e = cudaMemcpy(total, buf + nsb, sizeof *total, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess)
            err = cudaGetErrorString(e);
    }
    cudaFree(buf);
    return err;
}

/* ---- clip and sum ------------------------------------------------------------------------ */

__global__ void clip_rows_kernel(double *v, uint64_t b, unsigned Q, int mode, double clip,
                                 double *factor)
{
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < b; i += stride) {
        double *r = v + i * Q;
        double f = 1.0;
        if (mode != DPZO_CUDA_CLIP_NONE) {
            bool finite = true;
            for (unsigned k = 0; k < Q; k++)
                finite = finite && isfinite(r[k]);
            double s = 0.0;
            if (finite)
                for (unsigned k = 0; k < Q; k++)
                    s += mode == DPZO_CUDA_CLIP_L1 ? fabs(r[k]) : r[k] * r[k];
            if (!finite || !isfinite(s)) {
                for (unsigned k = 0; k < Q; k++)
                    r[k] = 0.0;
                f = 0.0;
            } else {
                double norm = mode == DPZO_CUDA_CLIP_L1 ? s : sqrt(s);
                f = norm > clip ? clip / norm : 1.0;
                if (f < 1.0) {
                    f *= 1.0 - 1e-12;
                    for (unsigned k = 0; k < Q; k++)
                        r[k] *= f;
                }
            }
        }
        if (factor != NULL)
            factor[i] = f;
    }
}

__global__ void sum_rows_kernel(const double *v, uint64_t b, unsigned Q, double *qsum)
{
    const unsigned stride = gridDim.x * blockDim.x;
    for (unsigned k = blockIdx.x * blockDim.x + threadIdx.x; k < Q; k += stride) {
        double s = 0.0;
        for (uint64_t i = 0; i < b; i++)
            s += v[i * Q + k];
        qsum[k] = s;
    }
}

extern "C" const char *dpzo__cu_clip_sum(double *diff, size_t b, unsigned Q, int mode,
                                         double clip, double *qsum, double *factor)
{
    unsigned threads = threads_for();
    if (b > 0) {
        clip_rows_kernel<<<blocks_for(b, threads), threads>>>(diff, b, Q, mode, clip, factor);
        const char *err = launched();
        if (err != NULL)
            return err;
    }
    sum_rows_kernel<<<blocks_for(Q, threads), threads>>>(diff, b, Q, qsum);
    return launched();
}
