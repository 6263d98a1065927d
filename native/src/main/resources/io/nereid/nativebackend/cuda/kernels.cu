// Nereid's CUDA kernels, compiled at start-up by NVRTC for the device's compute capability (and by
// nvcc in the tests on machines without a GPU). No #include: NVRTC needs none, half and bfloat16 go
// through PTX conversions. Every kernel is extern "C" so the host finds it by name.
//
// Layouts (all row-major):
//   activations   float [tokens][width]
//   weights       the GGUF bytes of a matrix, rows of `rowBytes` bytes; a row of `cols` values is cols / 32
//                 groups of 32 values (a K-quant's 256-value super-block holds 8 groups)
//   KV cache      one layer: half or bfloat16 [block][kvHead][position in block][headDim], K and V apart
//   block tables  int [sequences][maxBlocks], physical block ids, -1 past the end
// Types (the TYPE_* numbers are GgmlType ids): F32 0, F16 1, Q4_0 2, Q8_0 8, Q4_K 12, Q5_K 13, Q6_K 14, BF16 30.

#define TYPE_F32 0
#define TYPE_F16 1
#define TYPE_Q4_0 2
#define TYPE_Q8_0 8
#define TYPE_Q4_K 12
#define TYPE_Q5_K 13
#define TYPE_Q6_K 14
#define TYPE_BF16 30

#define WARP 32
#define GEMV_WARPS 4      // rows per thread block of the GEMV kernels
#define GEMV_TOKENS 8     // tokens per thread block of the GEMV kernels: each weight group is decoded once for them
#define ATTN_WARPS 4      // warps per (token, head) of the attention kernel
#define MAX_HEAD_DIM 256
#define ROW_THREADS 256   // threads of a per-row block (rms_norm, sample_rows, row_logprobs): their shared arrays' size
#define SAMPLE_RANKS 1024 // the candidates sample_rows sorts: the most of a top-k, the ranks a top-p / min-p cut settles in
#define NEG_INF __int_as_float(0xff800000)

typedef unsigned char u8;
typedef unsigned short u16;

// The weight decoders (h2f, bf2f, ld16, scale_min_k4, load_group) are also host functions, so that a
// test compiles them with nvcc into a CPU program and checks them against the CPU backend's
// dequantizers on machines without a GPU.
#ifdef __CUDA_ARCH__
#define HD __host__ __device__ __forceinline__
#else
#define HD inline
#endif

HD float bits_to_float(unsigned int u) {
#ifdef __CUDA_ARCH__
    return __int_as_float((int) u);
#else
    float f;
    __builtin_memcpy(&f, &u, 4);
    return f;
#endif
}

HD float h2f(u16 h) {
#ifdef __CUDA_ARCH__
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
#else
    unsigned int sign = (unsigned int) (h >> 15) << 31, e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0) {
        float v = (float) m * (1.0f / 16777216.0f);   // subnormal: m * 2^-24, exact
        return sign ? -v : v;
    }
    if (e == 31) return bits_to_float(sign | 0x7f800000u | (m << 13));
    return bits_to_float(sign | ((e + 112) << 23) | (m << 13));
#endif
}

HD u16 f2h(float f) {   // round to nearest even, overflow to infinity
#ifdef __CUDA_ARCH__
    u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    unsigned int u;
    __builtin_memcpy(&u, &f, 4);
    unsigned int sign = (u >> 16) & 0x8000, a = u & 0x7fffffff;
    if (a > 0x7f800000) return (u16) (sign | 0x7e00 | ((a >> 13) & 0x3ff));   // NaN stays NaN
    if (a >= 0x477ff000) return (u16) (sign | 0x7c00);                       // 65520 and up round to infinity
    if (a >= 0x38800000) {                                                    // normal: rebias, round 13 bits
        unsigned int r = a - 0x38000000;
        return (u16) (sign | ((r + 0xfff + ((r >> 13) & 1)) >> 13));
    }
    unsigned int e = a >> 23;                                                 // subnormal half (or zero)
    if (e < 102) return (u16) sign;                                           // below half the smallest subnormal
    unsigned int m = (a & 0x7fffff) | 0x800000, shift = 126 - e;             // value = m * 2^(e - 150)
    unsigned int q = m >> shift, rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1))) q++;
    return (u16) (sign | q);
#endif
}

HD float bf2f(u16 b) {
    return bits_to_float(((unsigned int) b) << 16);
}

__device__ __forceinline__ u16 f2bf(float f) {   // round to nearest even, as ggml's fp32 -> bf16
    unsigned int u = __float_as_int(f);
    if ((u & 0x7fffffff) > 0x7f800000) {
        return (u16) ((u >> 16) | 64);   // NaN stays NaN
    }
    return (u16) ((u + (0x7fff + ((u >> 16) & 1))) >> 16);
}

HD u16 ld16(const u8* p) {
    return (u16) (p[0] | (p[1] << 8));
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = WARP / 2; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

__device__ __forceinline__ float warp_max(float v) {
    for (int o = WARP / 2; o > 0; o >>= 1) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    return v;
}

// A K-quant sub-block's 6-bit scale and min (ggml's get_scale_min_k4).
HD void scale_min_k4(int j, const u8* q, int* sc, int* m) {
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// The 32 values of group g of a row, dequantized as ggml's dequantize_row_* does.
template <int TYPE>
HD void load_group(const u8* row, int g, float* w) {
    if (TYPE == TYPE_F32) {
        const float* p = (const float*) row + 32 * g;
        for (int i = 0; i < 32; i++) w[i] = p[i];
    } else if (TYPE == TYPE_F16) {
        const u16* p = (const u16*) row + 32 * g;
        for (int i = 0; i < 32; i++) w[i] = h2f(p[i]);
    } else if (TYPE == TYPE_BF16) {
        const u16* p = (const u16*) row + 32 * g;
        for (int i = 0; i < 32; i++) w[i] = bf2f(p[i]);
    } else if (TYPE == TYPE_Q8_0) {           // half d, int8 qs[32]
        const u8* b = row + 34 * g;
        float d = h2f(ld16(b));
        for (int i = 0; i < 32; i++) w[i] = d * (float) (signed char) b[2 + i];
    } else if (TYPE == TYPE_Q4_0) {           // half d, u8 qs[16]: low nibbles values 0-15, high 16-31
        const u8* b = row + 18 * g;
        float d = h2f(ld16(b));
        for (int i = 0; i < 16; i++) {
            w[i] = d * (float) ((b[2 + i] & 0xF) - 8);
            w[i + 16] = d * (float) ((b[2 + i] >> 4) - 8);
        }
    } else if (TYPE == TYPE_Q4_K) {           // half d, half dmin, u8 scales[12], u8 qs[128] per 256
        const u8* b = row + 144 * (g / 8);
        int sub = g % 8;                      // 64-value chunk sub / 2: low nibbles for even sub, high for odd
        float d = h2f(ld16(b));
        float dmin = h2f(ld16(b + 2));
        int sc, m;
        scale_min_k4(sub, b + 4, &sc, &m);
        const u8* q = b + 16 + 32 * (sub / 2);
        float d1 = d * sc, m1 = dmin * m;
        for (int i = 0; i < 32; i++) w[i] = d1 * (float) ((sub & 1) ? (q[i] >> 4) : (q[i] & 0xF)) - m1;
    } else if (TYPE == TYPE_Q5_K) {           // half d, half dmin, u8 scales[12], u8 qh[32], u8 qs[128] per 256
        const u8* b = row + 176 * (g / 8);
        int sub = g % 8;
        float d = h2f(ld16(b));
        float dmin = h2f(ld16(b + 2));
        int sc, m;
        scale_min_k4(sub, b + 4, &sc, &m);
        const u8* qh = b + 16;
        const u8* q = b + 48 + 32 * (sub / 2);
        int bit = 1 << sub;
        float d1 = d * sc, m1 = dmin * m;
        for (int i = 0; i < 32; i++) {
            int lo = (sub & 1) ? (q[i] >> 4) : (q[i] & 0xF);
            w[i] = d1 * (float) (lo + ((qh[i] & bit) ? 16 : 0)) - m1;
        }
    } else if (TYPE == TYPE_Q6_K) {           // u8 ql[128], u8 qh[64], int8 scales[16], half d per 256
        const u8* b = row + 210 * (g / 8);
        int sub = g % 8;                      // half = sub / 4 (128 values each), quarter = sub % 4
        int half = sub / 4, quarter = sub % 4;
        const u8* ql = b + 64 * half;
        const u8* qh = b + 128 + 32 * half;
        const signed char* scales = (const signed char*) (b + 192) + 8 * half;
        float d = h2f(ld16(b + 208));
        int shift = 2 * quarter;
        for (int l = 0; l < 32; l++) {
            int low = quarter == 0 ? (ql[l] & 0xF) : quarter == 1 ? (ql[l + 32] & 0xF)
                    : quarter == 2 ? (ql[l] >> 4) : (ql[l + 32] >> 4);
            int q = (low | (((qh[l] >> shift) & 3) << 4)) - 32;
            w[l] = d * (float) scales[l / 16 + 2 * quarter] * (float) q;
        }
    }
}

// Value c of a row of a float format (F32, F16, BF16: rows of any length; the quantized formats' rows
// are whole groups).
template <int TYPE>
HD float load_one(const u8* row, int c) {
    if (TYPE == TYPE_F16) return h2f(((const u16*) row)[c]);
    if (TYPE == TYPE_BF16) return bf2f(((const u16*) row)[c]);
    return ((const float*) row)[c];
}

// A GEMV warp's share: its row r, its lane, and the tokens [t0, t0 + nt) of its block; store() sums each
// token's lane partials and writes Y[t][r] (or adds them to it: the residual adds of the output and down
// projections, without a kernel of their own).
struct GemvTile {
    int lane, r, t0, nt;
    __device__ GemvTile(int rows, int tokens) {
        lane = threadIdx.x % WARP;
        r = blockIdx.x * GEMV_WARPS + threadIdx.x / WARP;
        t0 = blockIdx.y * GEMV_TOKENS;
        nt = min(GEMV_TOKENS, tokens - t0);
    }
    // up: null, or the up projection's partials: then Y = silu(gate) * up, as silu_mul computes it.
    __device__ void store(const float* acc, const float* up, float* Y, int rows, int accumulate) const {
        for (int t = 0; t < nt; t++) {
            float s = warp_sum(acc[t]);
            if (up != nullptr) {
                float u = warp_sum(up[t]);
                s = s / (1.f + expf(-s)) * u;
            }
            long long i = (long long) (t0 + t) * rows + r;
            if (lane == 0) Y[i] = accumulate ? Y[i] + s : s;
        }
    }
};

// A row's products with the tile's tokens, added to acc[t] (W[r][c] * X[t][c] summed over c): the row read
// a 32-value group per lane at a time (every format).
template <int TYPE>
struct GroupRow {
    __device__ static void add(const u8* row, const float* X, int cols, const GemvTile& tile, float* acc) {
        int lane = tile.lane, t0 = tile.t0, nt = tile.nt;
        float w[32];
        for (int g = lane; g < cols / 32; g += WARP) {
            load_group<TYPE>(row, g, w);
            for (int t = 0; t < nt; t++) {
                const float* x = X + (long long) (t0 + t) * cols + 32 * g;
                float s = 0.f;
                for (int i = 0; i < 32; i++) s = fmaf(w[i], x[i], s);
                acc[t] += s;
            }
        }
        if (TYPE == TYPE_F32 || TYPE == TYPE_F16 || TYPE == TYPE_BF16) {   // a row that is not whole groups
            for (int c = 32 * (cols / 32) + lane; c < cols; c += WARP) {
                float wc = load_one<TYPE>(row, c);
                for (int t = 0; t < nt; t++) acc[t] = fmaf(wc, X[(long long) (t0 + t) * cols + c], acc[t]);
            }
        }
    }
};

// The same for F16 / BF16 rows whose length is a multiple of 8 (rows 16-byte aligned): lane l reads the 16
// bytes at 16 (l + 32 i), so a warp reads 512 consecutive bytes of the row per iteration (coalesced, one
// 128-bit load per lane) — decode is bandwidth-bound and this is its kernel for 16-bit weights. A lane issues
// HALF_LOADS loads before it uses the first (a lane that waits on each load in turn keeps 512 bytes a warp in
// flight, short of what HBM needs to stay busy); the sums are taken in the same order either way.
#define HALF_LOADS 4
template <int BF16>
struct HalfRow {
    __device__ static void add(const u8* bytes, const float* X, int cols, const GemvTile& tile, float* acc) {
        const uint4* row = (const uint4*) bytes;
        int n8 = cols / 8;
        int c8 = tile.lane;
        for (; c8 + (HALF_LOADS - 1) * WARP < n8; c8 += HALF_LOADS * WARP) {
            uint4 raw[HALF_LOADS];
#pragma unroll
            for (int u = 0; u < HALF_LOADS; u++) raw[u] = row[c8 + u * WARP];
#pragma unroll
            for (int u = 0; u < HALF_LOADS; u++) dot8(raw[u], c8 + u * WARP, X, cols, tile, acc);
        }
        for (; c8 < n8; c8 += WARP) dot8(row[c8], c8, X, cols, tile, acc);
    }

    // acc[t] += the 8 weights in raw (columns 8 c8 ..) times the tile's tokens' inputs there.
    __device__ static void dot8(uint4 raw, int c8, const float* X, int cols, const GemvTile& tile, float* acc) {
        unsigned int words[4] = {raw.x, raw.y, raw.z, raw.w};
        float w[8];
        for (int i = 0; i < 4; i++) {
            u16 lo = (u16) (words[i] & 0xffff), hi = (u16) (words[i] >> 16);
            w[2 * i] = BF16 ? bf2f(lo) : h2f(lo);
            w[2 * i + 1] = BF16 ? bf2f(hi) : h2f(hi);
        }
        for (int t = 0; t < tile.nt; t++) {
            const float4* x = (const float4*) (X + (long long) (tile.t0 + t) * cols + 8 * c8);
            float4 a = x[0], b = x[1];
            float s = w[0] * a.x;
            s = fmaf(w[1], a.y, s);
            s = fmaf(w[2], a.z, s);
            s = fmaf(w[3], a.w, s);
            s = fmaf(w[4], b.x, s);
            s = fmaf(w[5], b.y, s);
            s = fmaf(w[6], b.z, s);
            s = fmaf(w[7], b.w, s);
            acc[t] += s;
        }
    }
};

// Y[t][r] = sum_c W[r][c] * X[t][c] (accumulate: Y[t][r] += that sum); with W2 (SwiGLU: W the gate, W2 the
// up projection, same format) Y[t][r] = silu(gate) * up. ROW reads the rows (GroupRow or HalfRow). Grid
// (ceil(rows / GEMV_WARPS), ceil(tokens / GEMV_TOKENS)), block GEMV_WARPS * 32: a warp per row, its lanes
// over the row, GEMV_TOKENS tokens at once.
template <typename ROW, bool SWIGLU>
__device__ void gemv(const u8* W, const u8* W2, long long rowBytes, const float* X, float* Y, int rows, int cols,
                     int tokens, int accumulate) {
    GemvTile tile(rows, tokens);
    if (tile.r >= rows) return;
    float acc[GEMV_TOKENS], up[SWIGLU ? GEMV_TOKENS : 1];
    for (int t = 0; t < GEMV_TOKENS; t++) acc[t] = 0.f;
    ROW::add(W + rowBytes * tile.r, X, cols, tile, acc);
    if (SWIGLU) {
        for (int t = 0; t < GEMV_TOKENS; t++) up[t] = 0.f;
        ROW::add(W2 + rowBytes * tile.r, X, cols, tile, up);
    }
    tile.store(acc, SWIGLU ? up : nullptr, Y, rows, accumulate);
}

// The Q, K and V projections of the same input in one launch (three matrices of one format and row size):
// the grid's rows run over Q's, then K's, then V's, each warp's output going to its matrix's Y. Grid
// (ceil((rowsQ + 2 rowsKV) / GEMV_WARPS), ceil(tokens / GEMV_TOKENS)), block GEMV_WARPS * 32.
template <typename ROW>
__device__ void gemv_qkv(const u8* Wq, const u8* Wk, const u8* Wv, long long rowBytes, const float* X, float* Yq,
                         float* Yk, float* Yv, int rowsQ, int rowsKV, int cols, int tokens) {
    GemvTile tile(rowsQ + 2 * rowsKV, tokens);
    int global = tile.r;
    if (global >= rowsQ + 2 * rowsKV) return;
    const u8* W = Wq;
    float* Y = Yq;
    int rows = rowsQ;
    if (global >= rowsQ + rowsKV) {
        W = Wv;
        Y = Yv;
        rows = rowsKV;
        tile.r = global - rowsQ - rowsKV;
    } else if (global >= rowsQ) {
        W = Wk;
        Y = Yk;
        rows = rowsKV;
        tile.r = global - rowsQ;
    }
    float acc[GEMV_TOKENS];
    for (int t = 0; t < GEMV_TOKENS; t++) acc[t] = 0.f;
    ROW::add(W + rowBytes * tile.r, X, cols, tile, acc);
    tile.store(acc, nullptr, Y, rows, 0);
}

// The GEMV entry points of one row reader: gemv_NAME (Y = or += W X), gemv_swiglu_NAME (Y = silu(W X) *
// (W2 X), the gate and up projections of a decode in one launch) and gemv_qkv_NAME.
#define GEMV_KERNELS(NAME, ROW)                                                                                     \
    extern "C" __global__ void gemv_##NAME(const u8* W, long long rowBytes, const float* X, float* Y, int rows,   \
                                            int cols, int tokens, int accumulate) {                                \
        gemv<ROW, false>(W, nullptr, rowBytes, X, Y, rows, cols, tokens, accumulate);                              \
    }                                                                                                              \
    extern "C" __global__ void gemv_swiglu_##NAME(const u8* W, const u8* W2, long long rowBytes, const float* X,  \
                                                   float* Y, int rows, int cols, int tokens) {                     \
        gemv<ROW, true>(W, W2, rowBytes, X, Y, rows, cols, tokens, 0);                                             \
    }                                                                                                              \
    extern "C" __global__ void gemv_qkv_##NAME(const u8* Wq, const u8* Wk, const u8* Wv, long long rowBytes,      \
                                                const float* X, float* Yq, float* Yk, float* Yv, int rowsQ,        \
                                                int rowsKV, int cols, int tokens) {                                \
        gemv_qkv<ROW>(Wq, Wk, Wv, rowBytes, X, Yq, Yk, Yv, rowsQ, rowsKV, cols, tokens);                           \
    }

GEMV_KERNELS(f16_h8, HalfRow<0>)
GEMV_KERNELS(bf16_h8, HalfRow<1>)

// OUT[t][c] = W[tokens[t]][c] (the embedding gather). Grid tokens, block 256.
template <int TYPE>
__device__ void embed(const u8* W, long long rowBytes, const int* tokens, float* out, int cols) {
    int t = blockIdx.x;
    const u8* row = W + rowBytes * tokens[t];
    float w[32];
    for (int g = threadIdx.x; g < cols / 32; g += blockDim.x) {
        load_group<TYPE>(row, g, w);
        for (int i = 0; i < 32; i++) out[(long long) t * cols + 32 * g + i] = w[i];
    }
    if (TYPE == TYPE_F32 || TYPE == TYPE_F16 || TYPE == TYPE_BF16) {
        for (int c = 32 * (cols / 32) + threadIdx.x; c < cols; c += blockDim.x) {
            out[(long long) t * cols + c] = load_one<TYPE>(row, c);
        }
    }
}

// OUT (half or bfloat16, rows x cols) = W, for cuBLAS. Grid ceil(rows * cols / 32 / 256), block 256.
template <int TYPE>
__device__ void dequant(const u8* W, long long rowBytes, u16* out, int rows, int cols, int bf16) {
    long long gi = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    long long groups = (long long) rows * (cols / 32);
    if (gi >= groups) return;
    int r = (int) (gi / (cols / 32)), g = (int) (gi % (cols / 32));
    float w[32];
    load_group<TYPE>(W + rowBytes * r, g, w);
    u16* o = out + (long long) r * cols + 32 * g;
    for (int i = 0; i < 32; i++) o[i] = bf16 ? f2bf(w[i]) : f2h(w[i]);
}

#define FORMAT_KERNELS(NAME, TYPE)                                                                                  \
    GEMV_KERNELS(NAME, GroupRow<TYPE>)                                                                             \
    extern "C" __global__ void embed_##NAME(const u8* W, long long rowBytes, const int* tokens, float* out,        \
                                             int cols) {                                                           \
        embed<TYPE>(W, rowBytes, tokens, out, cols);                                                               \
    }                                                                                                              \
    extern "C" __global__ void dequant_##NAME(const u8* W, long long rowBytes, u16* out, int rows, int cols,       \
                                               int bf16) {                                                         \
        dequant<TYPE>(W, rowBytes, out, rows, cols, bf16);                                                         \
    }

FORMAT_KERNELS(f32, TYPE_F32)
FORMAT_KERNELS(f16, TYPE_F16)
FORMAT_KERNELS(bf16, TYPE_BF16)
FORMAT_KERNELS(q8_0, TYPE_Q8_0)
FORMAT_KERNELS(q4_0, TYPE_Q4_0)
FORMAT_KERNELS(q4_k, TYPE_Q4_K)
FORMAT_KERNELS(q5_k, TYPE_Q5_K)
FORMAT_KERNELS(q6_k, TYPE_Q6_K)

// OUT[row] = X[row] / rms(X[row]) * w, rows of n; the sum of squares in double (as the CPU backend and
// ggml's rms_norm). Grid rows, block 256. In place is fine (OUT == X).
extern "C" __global__ void rms_norm(float* out, const float* x, const float* w, int n, float eps) {
    __shared__ double partial[ROW_THREADS];
    const float* xr = x + (long long) blockIdx.x * n;
    float* o = out + (long long) blockIdx.x * n;
    double s = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += (double) xr[i] * xr[i];
    partial[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) partial[threadIdx.x] += partial[threadIdx.x + k];
        __syncthreads();
    }
    float scale = (float) (1.0 / sqrt(partial[0] / n + (double) eps));
    for (int i = threadIdx.x; i < n; i += blockDim.x) o[i] = xr[i] * scale * w[i];
}

// y[t][i] += b[i], rows of n. Grid ceil(tokens * n / 256), block 256.
extern "C" __global__ void add_bias(float* y, const float* b, int n, int tokens) {
    long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (long long) n * tokens) y[i] += b[i % n];
}

// g[i] = silu(g[i]) * u[i] (SwiGLU). Grid ceil(n / 256), block 256.
extern "C" __global__ void silu_mul(float* g, const float* u, long long n) {
    long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = g[i];
        g[i] = v / (1.f + expf(-v)) * u[i];
    }
}

// out (half or bfloat16) = x (float), n values, for cuBLAS's inputs. Grid ceil(n / 256), block 256.
extern "C" __global__ void to_half(u16* out, const float* x, long long n, int bf16) {
    long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = bf16 ? f2bf(x[i]) : f2h(x[i]);
}

// out[r] = x[rows[r]], rows of n floats: the positions that need logits. Grid count, block 256.
extern "C" __global__ void gather_rows(float* out, const float* x, const int* rows, int n) {
    const float* src = x + (long long) rows[blockIdx.x] * n;
    float* dst = out + (long long) blockIdx.x * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
}

// ids[r] = the token chosen from row r of logits (rows of n floats) as the engine's TokenChoice defines it, so
// that only the id goes to the host: choice[5r ..] = the temperature (0: the argmax), the draw's number in
// [0, 1), top-k (0: none), top-p, min-p. Grid rows, block 256.
//  - argmax: the scan from id 0 that moves on only to a strictly greater value: the lowest id of the greatest
//    value; NaN is never greater, and a row whose id 0 is NaN gives 0. Each thread scans ids t, t + 256, ...
//    (ascending, so its first greatest is its lowest), then a tree over the 256 (value, id) pairs; id -1 marks
//    a thread that saw nothing above -infinity (a row of only -infinity and NaN gives 0, as the scan does).
//  - draw: weights w_i = exp(z_i / T - m) in double (weight_exp: the host's bits; m the largest z_i / T, NaN if
//    any is); the id where u x sum(w) falls when the weights are walked in id order; past the end the last id of
//    positive weight; none positive, id 0.
//    Thread t sums the contiguous ids [t c, t c + c) (c = ceil(n / 256)), thread 0 walks the 256 sums, then id by
//    id from the chunk the number falls in. The same token as the host's walk but where the number lies within
//    double rounding (~1e-16 of the total) of an edge: the sums are grouped by chunk (each weight is the host's
//    bits: weight_exp, the products kept unfused as the host rounds them).
//  - top-k draw (k <= SAMPLE_RANKS): the k-th largest sortable key found by bisection over the keys' 32 bits
//    (counting the row each round), ties at it by bisection over the ids (the higher ids rank first, as the host's
//    sort of (bits, id)), the k candidates gathered in id order and bitonic-sorted by (bits, id) descending, their
//    weights computed by every thread (float products, as the host); thread 0 then runs the host's loop (the sum in
//    rank order, top-p's running share, min-p, the walk).
//  - top-p / min-p without a top-k: the same over the first SAMPLE_RANKS ranks, top-p's share of every weight
//    (summed per thread over its contiguous ids, then the threads' sums in order: the host sums in id order, so the
//    cut may differ where a running share lies within double rounding of top-p). A cut that does not settle
//    within those ranks (a nucleus wider than that) gives -1: the backend hands that row to the host.
// The engine's sampling exponential (io.nereid.engine.sampling.Exp), operation for operation, so a weight here
// has the host's bits: x = k ln 2 + r (k by the 1.5 x 2^52 rounding trick, ln 2 in two parts), exp(r) by its
// Taylor polynomial of degree 13 in fused multiply-adds, times 2^k from k's bits; below -708 0, above 709
// infinity, NaN stays NaN. Every product and difference is an _rn intrinsic: NVRTC would otherwise fuse them.
__device__ const double EXP_TAYLOR[14] = {1.0, 1.0, 0.5, 0.16666666666666666, 0.041666666666666664,
    0.008333333333333333, 0.001388888888888889, 1.984126984126984e-4, 2.48015873015873e-5, 2.7557319223985893e-6,
    2.755731922398589e-7, 2.505210838544172e-8, 2.08767569878681e-9, 1.6059043836821613e-10};

__device__ __forceinline__ double weight_exp(double x) {
    if (x < -708.0) return 0.0;
    if (x > 709.0) return __longlong_as_double(0x7ff0000000000000LL);
    double t = __fma_rn(x, 0x1.71547652b82fep0, 0x1.8p52);
    double k = __dsub_rn(t, 0x1.8p52);
    double r = __fma_rn(-k, 0x1.62e42fefa39efp-1, x);
    r = __fma_rn(-k, 0x1.abc9e3b39803fp-56, r);
    double p = EXP_TAYLOR[13];
    for (int n = 12; n >= 0; n--) p = __fma_rn(p, r, EXP_TAYLOR[n]);
    unsigned long long bits = (unsigned long long) __double_as_longlong(t) - 0x4338000000000000ULL;   // k
    return __dmul_rn(p, __longlong_as_double((long long) ((bits + 1023) << 52)));
}

__device__ __forceinline__ int sortable_bits(float v) {
    int b = v != v ? 0x7fc00000 : __float_as_int(v);   // Java's Float.floatToIntBits: one NaN
    return b >= 0 ? b : b ^ 0x7fffffff;
}

// The sum of every thread's c, for every thread of the block (sc: blockDim.x ints of shared scratch).
__device__ int block_sum(int c, int* sc) {
    sc[threadIdx.x] = c;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) sc[threadIdx.x] += sc[threadIdx.x + k];
        __syncthreads();
    }
    int total = sc[0];
    __syncthreads();
    return total;
}

// Where this thread's mine items go when every thread's are laid out in thread order: the count of the threads
// before it (sc: blockDim.x ints of shared scratch, free again on return).
__device__ int block_offset(int mine, int* sc) {
    sc[threadIdx.x] = mine;
    __syncthreads();
    if (threadIdx.x == 0) {
        int run = 0;
        for (int j = 0; j < blockDim.x; j++) {
            int m = sc[j];
            sc[j] = run;
            run += m;
        }
    }
    __syncthreads();
    int at = sc[threadIdx.x];
    __syncthreads();
    return at;
}

// How many of the row's ids i have key(i) >= (bits, from): bits above, or equal with i >= from. Block-wide.
__device__ int count_keys(const float* z, int n, int bits, int from, int* sc) {
    int c = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        int b = sortable_bits(z[i]);
        c += b > bits || (b == bits && i >= from);
    }
    return block_sum(c, sc);
}

__device__ void sample_top_k(int* id, const float* z, int n, const double* c, int* sc, long long* keys, double* probs) {
    int t = threadIdx.x;
    bool whole = c[2] <= 0;   // no top-k: top-p / min-p over the vocabulary, settled within its first ranks or declined
    if (c[2] > SAMPLE_RANKS) {   // more candidates than the block sorts (TokenChoice never asks): the host draws
        if (t == 0) *id = -1;
        return;
    }
    int k = whole ? min(SAMPLE_RANKS, n) : min((int) c[2], n);
    // the largest bits b with count(key >= (b, 0)) >= k
    long long lo = -2147483648LL, hi = 2147483647LL;
    while (lo < hi) {
        long long mid = lo + (hi - lo + 1) / 2;
        if (count_keys(z, n, (int) mid, 0, sc) >= k) lo = mid; else hi = mid - 1;
    }
    int bits = (int) lo;
    // the largest id f with count(key >= (bits, f)) >= k: the ties at bits that make the k
    int flo = 0, fhi = n - 1;
    while (flo < fhi) {
        int mid = flo + (fhi - flo + 1) / 2;
        if (count_keys(z, n, bits, mid, sc) >= k) flo = mid; else fhi = mid - 1;
    }
    int from = flo;
    // gather the k candidates in id order: thread t's contiguous ids, at the offset of the threads before it
    int chunk = (n + blockDim.x - 1) / blockDim.x;
    int lo0 = min(n, t * chunk), hi0 = min(n, lo0 + chunk);
    int mine = 0;
    for (int i = lo0; i < hi0; i++) {
        int b = sortable_bits(z[i]);
        mine += b > bits || (b == bits && i >= from);
    }
    for (int s = t; s < SAMPLE_RANKS; s += blockDim.x) keys[s] = -9223372036854775807LL - 1;   // padding sorts last
    int at = block_offset(mine, sc);   // (its barriers order the padding before the gather)
    for (int i = lo0; i < hi0; i++) {
        int b = sortable_bits(z[i]);
        if ((b > bits || (b == bits && i >= from)) && at < SAMPLE_RANKS) {
            keys[at++] = ((long long) b << 32) | (unsigned int) i;
        }
    }
    __syncthreads();
    // bitonic sort of the first span keys (k rounded up to a power of two; the rest is padding), descending: each
    // thread takes the pairs (s, s ^ stride) of its s
    int span = 2;
    while (span < k) span <<= 1;
    for (int size = 2; size <= span; size <<= 1) {
        for (int stride = size / 2; stride > 0; stride >>= 1) {
            for (int s = t; s < span; s += blockDim.x) {
                int j = s ^ stride;
                if (j > s) {
                    bool descending = (s & size) == 0;
                    long long a = keys[s], b = keys[j];
                    if (descending ? a < b : a > b) {
                        keys[s] = b;
                        keys[j] = a;
                    }
                }
            }
            __syncthreads();
        }
    }
    float inv = 1.f / (float) c[0];
    double max = (double) __fmul_rn(z[(int) (keys[0] & 0xffffffff)], inv);
    double part = 0;
    if (whole) {   // every weight's sum: per thread over its contiguous ids, then the threads' sums in order
        for (int i = lo0; i < hi0; i++) part += weight_exp(__dsub_rn((double) __fmul_rn(z[i], inv), max));
    }
    for (int r = t; r < k; r += blockDim.x) {   // the candidates' weights, each the host's bits
        probs[r] = weight_exp(__dsub_rn((double) __fmul_rn(z[(int) (keys[r] & 0xffffffff)], inv), max));
    }
    double* parts = probs + SAMPLE_RANKS;
    parts[t] = part;
    __syncthreads();
    if (t != 0) return;
    double all = 0;
    for (int j = 0; whole && j < blockDim.x; j++) all += parts[j];
    double sum = 0;
    for (int r = 0; r < k; r++) sum += probs[r];
    if (whole) sum = all;
    int keep = k;
    bool open = whole && k < n;   // the cut may lie past the ranks at hand
    float topP = (float) c[3], minP = (float) c[4];
    if (topP < 1.f) {
        double cumulative = 0;
        for (int r = 0; r < k; r++) {
            cumulative += probs[r] / sum;
            if (cumulative >= (double) topP) {
                keep = r + 1;
                open = false;
                break;
            }
        }
    }
    if (minP > 0.f) {
        double threshold = __dmul_rn((double) minP, probs[0]);
        int r = 1;
        while (r < keep && probs[r] >= threshold) r++;
        if (r < keep) open = false;
        keep = r;
    }
    if (open) {   // top-p's nucleus or min-p's cut is wider than SAMPLE_RANKS: the host draws from the row
        *id = -1;
        return;
    }
    double total = 0;
    for (int r = 0; r < keep; r++) total += probs[r];
    double rest = __dmul_rn(c[1], total);
    for (int r = 0; r < keep; r++) {
        rest -= probs[r];
        if (rest < 0) {
            *id = (int) (keys[r] & 0xffffffff);
            return;
        }
    }
    *id = (int) (keys[keep - 1] & 0xffffffff);
}

extern "C" __global__ void sample_rows(int* ids, const float* logits, const double* choice, int n) {
    __shared__ double sd[SAMPLE_RANKS + ROW_THREADS];   // the candidates' weights, then the threads' sums
    __shared__ int si[ROW_THREADS];
    __shared__ float sv[ROW_THREADS];
    __shared__ long long keys[SAMPLE_RANKS];
    const float* z = logits + (long long) blockIdx.x * n;
    const double* c = choice + 5LL * blockIdx.x;
    double temperature = c[0];
    int t = threadIdx.x;
    if (temperature != 0 && (c[2] > 0 || c[3] < 1 || c[4] > 0)) {
        sample_top_k(ids + blockIdx.x, z, n, c, si, keys, sd);
        return;
    }
    if (temperature == 0) {
        float best = NEG_INF;
        int at = -1;
        for (int i = t; i < n; i += blockDim.x) {
            float v = z[i];
            if (v > best) {
                best = v;
                at = i;
            }
        }
        sv[t] = best;
        si[t] = at;
        __syncthreads();
        for (int k = blockDim.x / 2; k > 0; k >>= 1) {
            if (t < k) {
                float v = sv[t + k];
                int j = si[t + k];
                int a = si[t];
                if (j >= 0 && (a < 0 || v > sv[t] || (v == sv[t] && j < a))) {
                    sv[t] = v;
                    si[t] = j;
                }
            }
            __syncthreads();
        }
        if (t == 0) ids[blockIdx.x] = z[0] != z[0] || si[0] < 0 ? 0 : si[0];
        return;
    }
    double inv = 1.0 / temperature;
    double m = (double) NEG_INF;   // a NaN stays (as Java's Math.max): then no weight is positive and the id is 0
    for (int i = t; i < n; i += blockDim.x) {
        double x = __dmul_rn((double) z[i], inv);
        if (x > m || x != x) m = x;
    }
    sd[t] = m;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k && (sd[t + k] > sd[t] || sd[t + k] != sd[t + k])) sd[t] = sd[t + k];
        __syncthreads();
    }
    m = sd[0];
    __syncthreads();
    int chunk = (n + blockDim.x - 1) / blockDim.x;
    int lo = min(n, t * chunk), hi = min(n, lo + chunk);
    double sum = 0;
    int last = -1;
    for (int i = lo; i < hi; i++) {
        double w = weight_exp(__dsub_rn(__dmul_rn((double) z[i], inv), m));   // unfused, as the host rounds it
        sum += w;
        if (w > 0) last = i;
    }
    sd[t] = sum;
    si[t] = last;
    __syncthreads();
    if (t != 0) return;
    double total = 0;
    int lastPositive = -1;
    for (int k = 0; k < blockDim.x; k++) {
        total += sd[k];
        lastPositive = max(lastPositive, si[k]);
    }
    double rest = __dmul_rn(c[1], total);
    int from = n;   // whole chunks are skipped while the number lies past them; then id by id to the end
    for (int k = 0; k < blockDim.x; k++) {
        if (rest - sd[k] < 0) {
            from = min(n, k * chunk);
            break;
        }
        rest -= sd[k];
    }
    for (int i = from; i < n; i++) {
        double w = weight_exp(__dsub_rn(__dmul_rn((double) z[i], inv), m));
        if (w > 0) {
            rest -= w;
            if (rest < 0) {
                ids[blockIdx.x] = i;
                return;
            }
        }
    }
    ids[blockIdx.x] = max(lastPositive, 0);   // past the end (rounding): the last id of positive weight
}

// How many entries of the row have log-probability keys at or above (bits, ids <= upto): sortable bits of
// z - logSum above bits, or equal with id <= upto (upto -1: equal ones none, n: all). Block-wide.
__device__ int count_raw(const float* z, int n, float logSum, int bits, int upto, int* sc) {
    int c = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        int b = sortable_bits(z[i] - logSum);
        c += b > bits || (b == bits && i <= upto);
    }
    return block_sum(c, sc);
}

// The raw log-probabilities of the tokens sample_rows chose, as the engine's RawLogprobs.score reports them:
// logSum = (float) (max + log(sum of weight_exp(z - max))), the logprob z[id] - logSum (in float), the rank
// (1 + the entries whose z - logSum is above it) and the k = tops[r] most likely (0 to 20; -1: row r asks for
// none), largest first, equal values in id order. out holds 42 words a row: the logprob, the rank, 20 ids,
// 20 logprobs (min(k, n) of them written). A row with a NaN or an infinite largest logit is declined (ids[r] =
// -1: its row goes to the host); a row sample_rows declined is left. The sum is per thread over contiguous ids,
// then the threads' sums in order (the host sums in id order, and CUDA's log may differ from Math.log in the
// last bit: the float logSum may, rarely, be one ulp off the host's). Grid rows, block 256.
extern "C" __global__ void row_logprobs(int* ids, int* out, const float* logits, const int* tops, int n) {
    __shared__ int sc[ROW_THREADS];
    __shared__ float sf[ROW_THREADS];
    __shared__ double sd[ROW_THREADS];
    __shared__ int cand[32];
    int row = blockIdx.x;
    int k = tops[row];
    int id = ids[row];
    if (k < 0 || id < 0) return;
    const float* z = logits + (long long) row * n;
    int t = threadIdx.x;
    float m = NEG_INF;
    int nan = 0;
    for (int i = t; i < n; i += blockDim.x) {
        float v = z[i];
        nan |= v != v;
        m = v > m ? v : m;
    }
    sf[t] = m;
    sc[t] = nan;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            sf[t] = sf[t + s] > sf[t] ? sf[t + s] : sf[t];
            sc[t] |= sc[t + s];
        }
        __syncthreads();
    }
    float max = sf[0];
    bool declined = sc[0] != 0 || max == NEG_INF || max == -NEG_INF;
    __syncthreads();
    if (declined) {
        if (t == 0) ids[row] = -1;
        return;
    }
    int chunk = (n + blockDim.x - 1) / blockDim.x;
    int lo = min(n, t * chunk), hi = min(n, lo + chunk);
    double part = 0;
    for (int i = lo; i < hi; i++) part += weight_exp((double) (z[i] - max));
    sd[t] = part;
    __syncthreads();
    if (t == 0) {
        double sum = 0;
        for (int j = 0; j < blockDim.x; j++) sum += sd[j];
        sf[0] = (float) (max + log(sum));
    }
    __syncthreads();
    float logSum = sf[0];
    __syncthreads();
    float own = z[id] - logSum;
    int above = 0;
    for (int i = t; i < n; i += blockDim.x) above += z[i] - logSum > own;
    int rank = 1 + block_sum(above, sc);
    int* o = out + 42LL * row;
    if (k > 0) {
        k = min(k, n);
        // the k-th largest bits: the largest b with count(bits >= b) >= k
        long long blo = -2147483648LL, bhi = 2147483647LL;
        while (blo < bhi) {
            long long mid = blo + (bhi - blo + 1) / 2;
            if (count_raw(z, n, logSum, (int) mid, n, sc) >= k) blo = mid; else bhi = mid - 1;
        }
        int bits = (int) blo;
        // the ties at bits in id order: the smallest upto with count(above bits, or at bits with ids <= upto) >= k
        int ulo = 0, uhi = n - 1;
        while (ulo < uhi) {
            int mid = ulo + (uhi - ulo) / 2;
            if (count_raw(z, n, logSum, bits, mid, sc) >= k) uhi = mid; else ulo = mid + 1;
        }
        int upto = ulo;
        // the k candidates gathered in id order: thread t's contiguous ids, at the offset of the threads before it
        int mine = 0;
        for (int i = lo; i < hi; i++) {
            int b = sortable_bits(z[i] - logSum);
            mine += b > bits || (b == bits && i <= upto);
        }
        int at = block_offset(mine, sc);
        for (int i = lo; i < hi; i++) {
            int b = sortable_bits(z[i] - logSum);
            if ((b > bits || (b == bits && i <= upto)) && at < k) cand[at++] = i;
        }
        __syncthreads();
        if (t == 0) {
            // insertion sort: larger first, equal values in id order (the candidates come in id order)
            for (int a = 1; a < k; a++) {
                int x = cand[a];
                float xv = z[x] - logSum;
                int j = a;
                while (j > 0 && z[cand[j - 1]] - logSum < xv) {
                    cand[j] = cand[j - 1];
                    j--;
                }
                cand[j] = x;
            }
            for (int r = 0; r < k; r++) {
                o[2 + r] = cand[r];
                o[22 + r] = __float_as_int(z[cand[r]] - logSum);
            }
        }
    }
    if (t == 0) {
        o[0] = __float_as_int(own);
        o[1] = rank;
    }
}

// The KV-cache slot of position p of sequence s, as an element offset of one head's vectors.
__device__ __forceinline__ long long kv_offset(const int* tables, int maxBlocks, int s, int p, int kvHeads, int kvh,
                                               int blockSize, int headDim) {
    int block = tables[s * maxBlocks + p / blockSize];
    return (((long long) block * kvHeads + kvh) * blockSize + p % blockSize) * headDim;
}

// Rotary embedding in place on one token's vectors x (heads x headDim), the first ropeDim values of every
// head: pairs (2i, 2i + 1) ("normal", GGUF llama) or (i, i + ropeDim / 2) (NeoX, HF), angle pos * invFreq[i]
// in double (frequencies already scaled: linear, Llama 3, rope_freqs), its cosine and sine rounded to
// float and the rotation in float, as the CPU backend's tables do. The block's threads share the pairs.
__device__ void rope_token(float* x, double pos, const double* invFreq, int heads, int headDim, int ropeDim, int neox) {
    int half = ropeDim / 2;
    for (int k = threadIdx.x; k < heads * half; k += blockDim.x) {
        int h = k / half, i = k % half;
        double sd, cd;
        sincos(pos * invFreq[i], &sd, &cd);
        float s = (float) sd, c = (float) cd;
        float* v = x + (long long) h * headDim;
        int a = neox ? i : 2 * i, b = neox ? i + half : 2 * i + 1;
        float x0 = v[a], x1 = v[b];
        v[a] = x0 * c - x1 * s;
        v[b] = x0 * s + x1 * c;
    }
}

// Token t's RoPE on its query and key heads (q: tokens x heads x headDim, k and v: tokens x kvHeads x
// headDim, float), then its K and V stored as half (bf16: bfloat16) in its sequence's blocks: three steps of
// a layer in one launch. Grid tokens, block 256.
extern "C" __global__ void rope_kv_write(float* q, float* k, const float* v, u16* kc, u16* vc, const int* tables,
                                         int maxBlocks, const int* seqOf, const int* posOf, const double* invFreq,
                                         int heads, int kvHeads, int headDim, int ropeDim, int neox, int blockSize,
                                         int bf16) {
    int t = blockIdx.x;
    if (posOf[t] < 0) return;   // a graph's padding: no position, nothing written
    int kvDim = kvHeads * headDim;
    double pos = posOf[t];
    rope_token(q + (long long) t * heads * headDim, pos, invFreq, heads, headDim, ropeDim, neox);
    rope_token(k + (long long) t * kvDim, pos, invFreq, kvHeads, headDim, ropeDim, neox);
    __syncthreads();   // the threads store elements of K that others rotated
    for (int i = threadIdx.x; i < kvDim; i += blockDim.x) {
        int h = i / headDim, d = i % headDim;
        long long o = kv_offset(tables, maxBlocks, seqOf[t], posOf[t], kvHeads, h, blockSize, headDim) + d;
        float kf = k[(long long) t * kvDim + i], vf = v[(long long) t * kvDim + i];
        kc[o] = bf16 ? f2bf(kf) : f2h(kf);
        vc[o] = bf16 ? f2bf(vf) : f2h(vf);
    }
}

// Causal attention over the paged cache: token t (of sequence seqOf[t], at posOf[t]) and query head h
// attend to positions 0..posOf[t] of their sequence through KV head h / (heads / kvHeads) (GQA).
// The cache holds half, or bfloat16 (bf16). Grid (heads, tokens, parts), block ATTN_WARPS * 32; headDim a multiple of 8 up to MAX_HEAD_DIM (K rows are
// 16-byte aligned: the cache's rows are headDim halves from a 256-byte-aligned allocation).
//
// As vLLM's paged attention, a warp takes 32 positions at a time (warp w the chunks w, w + ATTN_WARPS, ...):
// lane l scores position base + l with a whole dot product (its K row read 16 bytes at a time), the chunk's 32 scores update the warp's running maximum and sum in one
// step (online softmax), then every lane adds the chunk's V rows into the head values it holds
// (d = lane + 32 j), each position's weight broadcast by a shuffle. A chunk costs one maximum and one
// sum over the warp, not one sum per position, so a decode's chain is 32x shorter. The warps' partial
// results are merged at the end.
// A KV-cache element as float: half, or (bf16) bfloat16.
__device__ __forceinline__ float kv2f(u16 v, int bf16) {
    return bf16 ? bf2f(v) : h2f(v);
}

//
// Long contexts are split as vLLM's paged attention v2 does: with a grid of (heads, tokens, parts), block z takes
// positions [z partition, (z + 1) partition) only (partition a multiple of ATTN_WARPS * 32) and leaves its
// unnormalised values, maximum and sum in part* for attention_reduce; a part past the token's position leaves
// maximum -inf. So a decode of one sequence fills the GPU with heads x parts blocks, not heads. With one part
// the block writes out directly. A token's sums are grouped by the partition size, which the backend picks per
// step (longer parts when the step's scratch would not fit; none under --deterministic).
extern "C" __global__ void attention(float* out, const float* q, const u16* kc, const u16* vc, const int* tables,
                                     int maxBlocks, const int* seqOf, const int* posOf, int heads, int kvHeads,
                                     int headDim, int blockSize, float scale, int bf16, int partition,
                                     float* partAcc, float* partMax, float* partSum) {
    __shared__ float sm_max[ATTN_WARPS], sm_sum[ATTN_WARPS];
    __shared__ float sm_acc[ATTN_WARPS][MAX_HEAD_DIM];
    __shared__ float sm_q[MAX_HEAD_DIM];
    int h = blockIdx.x, t = blockIdx.y;
    int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    int kvh = h / (heads / kvHeads);
    int s = seqOf[t], last = posOf[t];
    int parts = gridDim.z;
    long long part = ((long long) t * heads + h) * parts + blockIdx.z;
    int first = parts > 1 ? blockIdx.z * partition : 0;
    if (last < 0 && parts == 1) {   // a graph's padding (position -1): zeros, no context read
        float* o = out + ((long long) t * heads + h) * headDim;
        for (int d = threadIdx.x; d < headDim; d += blockDim.x) o[d] = 0.f;
        return;
    }
    if (first > last) {   // the whole block: nothing of this token in this part (or padding)
        if (threadIdx.x == 0) {
            partMax[part] = NEG_INF;
            partSum[part] = 0.f;
        }
        return;
    }
    if (parts > 1) last = min(last, first + partition - 1);
    const float* qv = q + ((long long) t * heads + h) * headDim;
    for (int d = threadIdx.x; d < headDim; d += blockDim.x) sm_q[d] = qv[d];
    __syncthreads();
    float acc[MAX_HEAD_DIM / WARP];
#pragma unroll
    for (int j = 0; j < MAX_HEAD_DIM / WARP; j++) acc[j] = 0.f;
    float m = NEG_INF, l = 0.f;
    for (int base = first + warp * WARP; base <= last; base += ATTN_WARPS * WARP) {
        int p = base + lane;
        float score = NEG_INF;
        if (p <= last) {
            const u16* k = kc + kv_offset(tables, maxBlocks, s, p, kvHeads, kvh, blockSize, headDim);
            float dot = 0.f;
            for (int d8 = 0; d8 < headDim / 8; d8++) {
                uint4 raw = ((const uint4*) k)[d8];
                unsigned int words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    dot = fmaf(sm_q[8 * d8 + 2 * i], kv2f((u16) (words[i] & 0xffff), bf16), dot);
                    dot = fmaf(sm_q[8 * d8 + 2 * i + 1], kv2f((u16) (words[i] >> 16), bf16), dot);
                }
            }
            score = dot * scale;
        }
        float mNew = fmaxf(m, warp_max(score));   // finite: position base is in range
        float correction = expf(m - mNew);         // 0 on the first chunk (m = -inf)
        float e = p <= last ? expf(score - mNew) : 0.f;
        l = l * correction + warp_sum(e);
#pragma unroll
        for (int j = 0; j < MAX_HEAD_DIM / WARP; j++) acc[j] *= correction;
        int n = min(WARP, last - base + 1);
        for (int i = 0; i < n; i++) {
            float w = __shfl_sync(0xffffffffu, e, i);
            const u16* v = vc + kv_offset(tables, maxBlocks, s, base + i, kvHeads, kvh, blockSize, headDim);
#pragma unroll
            for (int j = 0; j < MAX_HEAD_DIM / WARP; j++) {
                int d = lane + WARP * j;
                if (d < headDim) acc[j] = fmaf(w, kv2f(v[d], bf16), acc[j]);
            }
        }
        m = mNew;
    }
    if (lane == 0) {
        sm_max[warp] = m;
        sm_sum[warp] = l;
    }
#pragma unroll
    for (int j = 0; j < MAX_HEAD_DIM / WARP; j++) {
        int d = lane + WARP * j;
        if (d < headDim) sm_acc[warp][d] = acc[j];
    }
    __syncthreads();
    float gm = NEG_INF;
    for (int w = 0; w < ATTN_WARPS; w++) gm = fmaxf(gm, sm_max[w]);
    float total = 0.f;
    for (int w = 0; w < ATTN_WARPS; w++) total += sm_max[w] == NEG_INF ? 0.f : sm_sum[w] * expf(sm_max[w] - gm);
    float* o = parts > 1 ? partAcc + part * headDim : out + ((long long) t * heads + h) * headDim;
    for (int d = threadIdx.x; d < headDim; d += blockDim.x) {
        float v = 0.f;
        for (int w = 0; w < ATTN_WARPS; w++) {
            if (sm_max[w] != NEG_INF) v += sm_acc[w][d] * expf(sm_max[w] - gm);
        }
        o[d] = parts > 1 ? v : v / total;
    }
    if (parts > 1 && threadIdx.x == 0) {
        partMax[part] = gm;
        partSum[part] = total;
    }
}

// out = the parts of attention merged: sum_z acc_z e^(max_z - M) / sum_z sum_z e^(max_z - M), M the largest
// maximum (a single part gives acc / sum, the same bits as attention writes itself). Grid (heads, tokens),
// block 128.
extern "C" __global__ void attention_reduce(float* out, const float* partAcc, const float* partMax,
                                            const float* partSum, int heads, int headDim, int parts) {
    int h = blockIdx.x, t = blockIdx.y;
    long long base = ((long long) t * heads + h) * parts;
    float gm = NEG_INF;
    for (int z = 0; z < parts; z++) gm = fmaxf(gm, partMax[base + z]);
    float* o = out + ((long long) t * heads + h) * headDim;
    if (gm == NEG_INF) {   // no part holds a position: a graph's padding
        for (int d = threadIdx.x; d < headDim; d += blockDim.x) o[d] = 0.f;
        return;
    }
    float total = 0.f;
    for (int z = 0; z < parts; z++) {
        if (partMax[base + z] != NEG_INF) total += partSum[base + z] * expf(partMax[base + z] - gm);
    }
    for (int d = threadIdx.x; d < headDim; d += blockDim.x) {
        float v = 0.f;
        for (int z = 0; z < parts; z++) {
            if (partMax[base + z] != NEG_INF) v += partAcc[(base + z) * headDim + d] * expf(partMax[base + z] - gm);
        }
        o[d] = v / total;
    }
}

// Copies whole KV blocks (copy-on-write of a shared partial block): for each pair, block dst[i] = block
// src[i], K and V of every layer (the caches of all layers are one array each: layer-major). Grid pairs,
// block 256; blockElems = kvHeads * blockSize * headDim, layerElems = numBlocks * blockElems.
extern "C" __global__ void copy_blocks(u16* kc, u16* vc, const int* src, const int* dst, int layers,
                                       long long layerElems, int blockElems) {
    int i = blockIdx.x;
    for (int l = 0; l < layers; l++) {
        long long from = l * layerElems + (long long) src[i] * blockElems;
        long long to = l * layerElems + (long long) dst[i] * blockElems;
        for (int e = threadIdx.x; e < blockElems; e += blockDim.x) {
            kc[to + e] = kc[from + e];
            vc[to + e] = vc[from + e];
        }
    }
}
