#pragma once
// The only header that spells the GPU runtime's names (hip*, __global__, threadIdx, ...). Kernels and
// tiles use these instead, so the same source builds for HIP devices and for the host wave emulator.
#include "ops/arch_config.h"
#include "ops/host_device.h"

// Unrolls the next loop completely, so register arrays it indexes stay in registers.
// MLPCORE_NO_UNROLL keeps the next loop a loop (its body is large, and the same each time).
#if defined(__clang__) || defined(__CUDACC__)
#define MLPCORE_UNROLL _Pragma("unroll")
#define MLPCORE_NO_UNROLL _Pragma("unroll 1")
#else
#define MLPCORE_UNROLL _Pragma("GCC unroll 16")
#define MLPCORE_NO_UNROLL _Pragma("GCC unroll 1")
#endif

#if MLPCORE_EMULATOR
#include "ops/emu/wave_emulator.h"
#define MLPCORE_KERNEL
#define MLPCORE_LAUNCH_BOUNDS(threads)
#define MLPCORE_LAUNCH_BOUNDS_MIN(threads, min_blocks)
#define MLPCORE_DEVICE inline
// Blocks run one after another on the launching thread: per-thread storage is per-block storage.
#define MLPCORE_SHARED static thread_local
namespace mlpcore::ops {
inline unsigned thread_x() { return emu::thread_idx().x; }
inline unsigned thread_y() { return emu::thread_idx().y; }
inline unsigned block_x() { return emu::block_idx().x; }
inline unsigned block_dim_x() { return emu::block_dim().x; }
inline unsigned grid_dim_x() { return emu::grid_dim().x; }
inline unsigned lane_id() { return emu::lane_id(); }
inline unsigned warp_uniform(unsigned v) { return emu::wave_uniform(v); }
inline void sync_block() { emu::barrier(); }
inline void sync_wave() { emu::wave_barrier(); }
inline void schedule_barrier() {}
[[noreturn]] inline void trap(const char* why) { emu::trap(why); }
[[noreturn]] inline void abort_kernel(const char* why) { emu::trap(why); }
}  // namespace mlpcore::ops

#elif defined(__HIP__) || defined(__CUDACC__)
#if defined(__HIP__)
#if !defined(__HIPCC_RTC__)  // hiprtc has the HIP runtime's device side built in
#include <hip/hip_runtime.h>
#endif
#if MLPCORE_HIP_NO_DEVICE_LIBS
#include "ops/hip_device_lib_shim.h"
#endif
#endif
// HIP and CUDA share these names.
#define MLPCORE_KERNEL __global__
#define MLPCORE_LAUNCH_BOUNDS(threads) __launch_bounds__(threads)
// The same, and CUDA's register allocation leaves room for min_blocks blocks per multiprocessor (HIP's
// second argument means something else, and the AMD kernels need none).
#if defined(__CUDACC__)
#define MLPCORE_LAUNCH_BOUNDS_MIN(threads, min_blocks) __launch_bounds__(threads, min_blocks)
#else
#define MLPCORE_LAUNCH_BOUNDS_MIN(threads, min_blocks) __launch_bounds__(threads)
#endif
#define MLPCORE_DEVICE __device__ __forceinline__
#define MLPCORE_SHARED __shared__
namespace mlpcore::ops {
MLPCORE_DEVICE unsigned thread_x() { return threadIdx.x; }
MLPCORE_DEVICE unsigned thread_y() { return threadIdx.y; }
MLPCORE_DEVICE unsigned block_x() { return blockIdx.x; }
MLPCORE_DEVICE unsigned block_dim_x() { return blockDim.x; }
MLPCORE_DEVICE unsigned grid_dim_x() { return gridDim.x; }
MLPCORE_DEVICE void sync_block() { __syncthreads(); }
#if defined(__HIP__)
MLPCORE_DEVICE unsigned lane_id() { return __lane_id(); }
// The value every lane of the wave holds (the caller's contract), known to the compiler to be so. On AMD
// as given (no AMD policy asks for it: FusedPolicy::uniform_descriptors).
MLPCORE_DEVICE unsigned warp_uniform(unsigned v) { return v; }
// Orders this wave's LDS writes before its lanes read each other's.
MLPCORE_DEVICE void sync_wave() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
}
// Keeps the compiler from moving instructions across this point (register pressure control).
MLPCORE_DEVICE void schedule_barrier() { __builtin_amdgcn_sched_barrier(0); }
// Prints `why` through the device assert path (where the device libraries are linked), then traps.
[[noreturn]] __device__ inline void trap(const char* why) {
  __assert_fail(why, __FILE__, __LINE__, __func__);
  __builtin_trap();
}
// A trap that prints nothing on a GPU (no printing code, so no stack in kernels that keep it on their fast
// path); `why` is what the wave emulator reports.
[[noreturn]] __device__ inline void abort_kernel(const char*) { __builtin_trap(); }
#else
MLPCORE_DEVICE unsigned lane_id() { return threadIdx.x % 32; }
// The value every lane of the warp holds (the caller's contract), in a uniform register: branches on it
// then need no reconvergence barriers (BSSY/BSYNC), which a value loaded from memory gets around each one.
MLPCORE_DEVICE unsigned warp_uniform(unsigned v) {
  unsigned u;
  asm("redux.sync.min.u32 %0, %1, 0xffffffff;" : "=r"(u) : "r"(v));
  return u;
}
MLPCORE_DEVICE void sync_wave() { __syncwarp(); }
MLPCORE_DEVICE void schedule_barrier() {}
[[noreturn]] __device__ inline void trap(const char* why) {
  printf("mlpcore: %s\n", why);
  __trap();
}
[[noreturn]] __device__ inline void abort_kernel(const char*) { __trap(); }
#endif
}  // namespace mlpcore::ops

#else
#error "ops/gpu_platform.h needs a HIP or CUDA compile, or MLPCORE_EMULATOR=1"
#endif
