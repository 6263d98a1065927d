// The device side of Nereid's CUDA emulator: what kernels.cu needs from CUDA C (thread and block
// indices, __syncthreads, warp shuffles, vector types, device math) for a host compiler, so that the
// kernels run unchanged on the CPU. Each CUDA thread of a block is a fiber (emulator.cpp); a barrier or a
// shuffle yields to the block's scheduler until every live thread of the block (or of the warp) arrives.
// Blocks run one after another, so __shared__ is a static (poisoned before each block).
#pragma once

#include <cmath>
#include <cstring>
#include <cstdint>

struct dim3 {
    unsigned int x, y, z;
};

struct alignas(16) uint4 {
    unsigned int x, y, z, w;
};

struct alignas(16) float4 {
    float x, y, z, w;
};

namespace emu {

struct Fiber {
    dim3 tid;
    int linear;       // threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)
    int state;        // READY, WAIT_BLOCK, WAIT_WARP, DONE
    long shuffles;    // shuffles it has entered; the round's parity picks one of the warp's two buffers
    void* sp;
};

extern Fiber* current;
extern dim3 block_idx, block_dim, grid_dim;

void sync_block();
unsigned long long exchange(unsigned int mask, unsigned long long bits, int src_lane);

// Every lane of the warp gives v and gets the v of lane src (0-31).
template <typename T>
T shfl(unsigned int mask, T v, int src) {
    static_assert(sizeof(T) <= 8, "a shuffle moves at most 8 bytes");
    unsigned long long bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    bits = exchange(mask, bits, src & 31);
    T out;
    std::memcpy(&out, &bits, sizeof(T));
    return out;
}

}  // namespace emu

#define threadIdx (emu::current->tid)
#define blockIdx (emu::block_idx)
#define blockDim (emu::block_dim)
#define gridDim (emu::grid_dim)
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
// Shared memory: statics in a section of their own, which the emulator fills with 0xff bytes (NaN) before
// every block, as a GPU's shared memory holds garbage: a thread that reads what no thread of its block wrote
// sees NaN, not the previous block's values.
#define __shared__ static __attribute__((section("emu_shared")))
#define __syncthreads() emu::sync_block()

template <typename T>
inline T __shfl_xor_sync(unsigned int mask, T v, int lane_mask) {
    return emu::shfl(mask, v, (emu::current->linear % 32) ^ lane_mask);
}

template <typename T>
inline T __shfl_sync(unsigned int mask, T v, int src_lane) {
    return emu::shfl(mask, v, src_lane);
}

inline float __int_as_float(int i) {
    float f;
    std::memcpy(&f, &i, 4);
    return f;
}

// round-to-nearest products and differences that the compiler may not fuse into a multiply-add (the host
// compiler fuses nothing without -mfma; NVRTC fuses by default, these intrinsics opt out)
inline double __dmul_rn(double a, double b) {
    return a * b;
}

inline double __dsub_rn(double a, double b) {
    return a - b;
}

inline double __fma_rn(double a, double b, double c) {
    return std::fma(a, b, c);
}

inline long long __double_as_longlong(double d) {
    long long i;
    std::memcpy(&i, &d, 8);
    return i;
}

inline double __longlong_as_double(long long i) {
    double d;
    std::memcpy(&d, &i, 8);
    return d;
}

inline float __fmul_rn(float a, float b) {
    return a * b;
}

inline int __float_as_int(float f) {
    int i;
    std::memcpy(&i, &f, 4);
    return i;
}

inline int min(int a, int b) {
    return a < b ? a : b;
}

inline int max(int a, int b) {
    return a > b ? a : b;
}
