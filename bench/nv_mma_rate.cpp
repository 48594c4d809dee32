// The tensor-core ceilings behind `cuda` (float32 accumulation) and `cuda-f16acc` (issue 14): how many
// mma.sync.m16n8k16 one NVIDIA GPU issues per second with float32 and with float16 accumulators, in two
// patterns, with the instruction wrappers the kernels use (ops/nv_intrinsics.h):
//   independent  8 accumulators per warp, each its own dependency chain: the pipe's peak;
//   layer        the chain of a fused 64-wide hidden layer on 8·S samples per warp: for each of S groups of
//                8 samples, 4 output x 4 K instructions (bias as the first C), each output tile's
//                accumulators packed into the next layer's operands with ReLU (cvt.rn.relu.f16x2.f32;
//                max.f16x2 on float16 accumulators) as soon as its chain ends. S = 4 is the specialized
//                kernels' chain up to 64 wide (two tiles of 16 samples per warp: 4 accumulators live per
//                output tile, 16 per layer); G output tiles' chains run interleaved (1 as the kernels).
//                The weights stay in registers, so this bounds the kernels' hidden layers from above.
// Prints TFLOP/s (2*16*8*16 flop per instruction) and the float32 / float16 ratio, for several warps per
// multiprocessor (a layer of 32 samples per warp takes up to 146 registers: 12 warps fit). Not a test: a
// measurement, as the other bench/ programs.
//   build/bench/nv_mma_rate   (built with the CUDA kernels, for the newest of MLPCORE_CUDA_ARCHS; or
//   nvcc -x cu -std=c++20 -O3 --expt-relaxed-constexpr -arch=sm_90 -I. -Iengine/include bench/nv_mma_rate.cpp -o nv_mma_rate)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>

#include "apps/gpu_vendor.h"
#include "ops/nv_intrinsics.h"

namespace {

namespace nv = mlpcore::ops::nv;
using std::uint32_t;

constexpr double kFlopPerMma = 2.0 * 16 * 8 * 16;

// Accumulator types and the two operations that differ between them.
template <bool F32>
struct Acc {
  using type = nv::f32x4;
  MLPCORE_DEVICE static type mma(const uint32_t (&a)[4], const uint32_t (&b)[2], const type& c) { return nv::mma_m16n8k16(a, b, c); }
  MLPCORE_DEVICE static void to_b(const type& d, uint32_t (&b)[2]) {
    b[0] = __builtin_bit_cast(uint32_t, nv::cvt_rn_relu_f16x2(d[0], d[1]));
    b[1] = __builtin_bit_cast(uint32_t, nv::cvt_rn_relu_f16x2(d[2], d[3]));
  }
  MLPCORE_DEVICE static float sum(const type& d) { return d[0] + d[1] + d[2] + d[3]; }
};

template <>
struct Acc<false> {
  using type = nv::f16x4;
  MLPCORE_DEVICE static type mma(const uint32_t (&a)[4], const uint32_t (&b)[2], const type& c) { return nv::mma_m16n8k16_f16(a, b, c); }
  MLPCORE_DEVICE static void to_b(const type& d, uint32_t (&b)[2]) {
    const auto r = __builtin_bit_cast(nv::u32x2, d);
    b[0] = nv::relu_f16x2(r[0]);
    b[1] = nv::relu_f16x2(r[1]);
  }
  MLPCORE_DEVICE static float sum(const type& d) { return float(d[0]) + float(d[1]) + float(d[2]) + float(d[3]); }
};

// Operands come from memory, every weight register of a layer from a word of its own, so that nothing
// folds or merges: weights of 2^-6 (a 64-wide layer's gain is 1, so activations of 2^-10 neither vanish
// nor grow over the iterations; main checks that they did not vanish).
constexpr int kWeightWords = 4 * 4 * 4 * 32;  // 4 x 4 tiles of 4 registers a lane
constexpr int kActivationWords = 4 * 32;      // a register a lane for each of up to 4 groups of 8 samples
constexpr uint32_t kWeightHalves = 0x24002400u, kActivationHalves = 0x14001400u;

template <bool F32, int Chains>
MLPCORE_KERNEL void independent(const uint32_t* operands, float* out, int iterations) {
  using A = Acc<F32>;
  const uint32_t lane = mlpcore::ops::lane_id();
  const uint32_t a[4] = {operands[lane], operands[lane + 32], operands[lane + 64], operands[lane + 96]};
  const uint32_t b[2] = {operands[kWeightWords + lane], operands[kWeightWords + lane + 32]};
  typename A::type acc[Chains] = {};
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < Chains; ++c) acc[c] = A::mma(a, b, acc[c]);
  }
  float s = 0;
#pragma unroll
  for (int c = 0; c < Chains; ++c) s += A::sum(acc[c]);
  out[mlpcore::ops::block_x() * mlpcore::ops::block_dim_x() + mlpcore::ops::thread_x()] = s;
}

// G output tiles at a time: their chains interleaved K tile by K tile (G = 1 is the kernels' order,
// ops/fused_mlp.h, dense_layer), each group's accumulators packed into the next layer's operands as soon as
// its chains end, as the kernels do: G·S accumulators live, 4 registers each with float32, 2 with float16.
template <bool F32, int S, int G = 1>
MLPCORE_KERNEL void layer(const uint32_t* operands, float* out, int iterations) {
  using A = Acc<F32>;
  constexpr int T = 4;  // 64 units: 4 tiles of 16
  static_assert(T % G == 0, "whole groups of output tiles");
  const uint32_t lane = mlpcore::ops::lane_id();
  uint32_t w[T][T][4];
#pragma unroll
  for (int m = 0; m < T; ++m)
#pragma unroll
    for (int k = 0; k < T; ++k)
#pragma unroll
      for (int r = 0; r < 4; ++r) w[m][k][r] = operands[lane + 32 * ((m * T + k) * 4 + r)];
  typename A::type bias = {};
  uint32_t act[T][S][2];
#pragma unroll
  for (int k = 0; k < T; ++k)
#pragma unroll
    for (int s = 0; s < S; ++s) act[k][s][0] = act[k][s][1] = operands[kWeightWords + lane + 32 * s];
  for (int i = 0; i < iterations; ++i) {
    uint32_t next[T][S][2];
#pragma unroll
    for (int m0 = 0; m0 < T; m0 += G) {
      typename A::type acc[G][S];
#pragma unroll
      for (int k = 0; k < T; ++k)
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
          for (int s = 0; s < S; ++s) acc[g][s] = A::mma(w[m0 + g][k], act[k][s], k == 0 ? bias : acc[g][s]);
#pragma unroll
      for (int g = 0; g < G; ++g)
#pragma unroll
        for (int s = 0; s < S; ++s) A::to_b(acc[g][s], next[m0 + g][s]);
    }
#pragma unroll
    for (int m = 0; m < T; ++m)
#pragma unroll
      for (int s = 0; s < S; ++s) act[m][s][0] = next[m][s][0], act[m][s][1] = next[m][s][1];
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < T; ++k)
#pragma unroll
    for (int t = 0; t < S; ++t) s += __builtin_bit_cast(float, act[k][t][0]);  // 0 only where they vanished
  out[mlpcore::ops::block_x() * mlpcore::ops::block_dim_x() + mlpcore::ops::thread_x()] = s;
}

void check(gpuError_t e, const char* what) {
  if (e != gpuSuccess) {
    std::fprintf(stderr, "nv_mma_rate: %s: %s\n", what, gpuGetErrorString(e));
    std::exit(1);
  }
}

// TFLOP/s of `kernel` on `warps_per_mp` warps per multiprocessor, each issuing mma_per_iteration per loop,
// timed between the events `start` and `stop`.
template <typename Kernel>
double tflops(Kernel kernel, int multiprocessors, int warps_per_mp, int mma_per_iteration, const uint32_t* operands, float* out,
              gpuEvent_t start, gpuEvent_t stop) {
  const int iterations = 4096;
  const int threads = 128, blocks = multiprocessors * warps_per_mp / 4;
  kernel<<<blocks, threads>>>(operands, out, iterations);  // warm-up
  check(gpuEventRecord(start), "record");
  kernel<<<blocks, threads>>>(operands, out, iterations);
  check(gpuEventRecord(stop), "record");
  check(gpuEventSynchronize(stop), "synchronize");
  check(gpuGetLastError(), "launch");
  float ms = 0, first = 0;
  check(gpuEventElapsedTime(&ms, start, stop), "elapsed");
  check(gpuMemcpy(&first, out, sizeof first, gpuMemcpyDeviceToHost), "copy");
  if (!(first > 0)) {
    std::fprintf(stderr, "nv_mma_rate: a kernel's values vanished (%g)\n", first);
    std::exit(1);
  }
  return double(blocks) * threads / 32 * iterations * mma_per_iteration * kFlopPerMma / (ms * 1e-3) / 1e12;
}

}  // namespace

int main() {
  gpuDeviceProp prop{};
  check(gpuGetDeviceProperties(&prop, 0), "properties");
  const int multiprocessors = prop.multiProcessorCount;
  uint32_t host[kWeightWords + kActivationWords];
  for (int i = 0; i < kWeightWords + kActivationWords; ++i) host[i] = i < kWeightWords ? kWeightHalves : kActivationHalves;
  uint32_t* operands;
  float* out;
  check(gpuMalloc(reinterpret_cast<void**>(&operands), sizeof host), "malloc");
  check(gpuMemcpy(operands, host, sizeof host, gpuMemcpyHostToDevice), "copy");
  check(gpuMalloc(reinterpret_cast<void**>(&out), sizeof(float) * 128 * multiprocessors * 64), "malloc");
  gpuEvent_t start, stop;
  check(gpuEventCreate(&start), "event");
  check(gpuEventCreate(&stop), "event");
  std::printf("%s, %d multiprocessors: mma.sync.m16n8k16 TFLOP/s, float32 / float16 accumulators\n", prop.name, multiprocessors);
  std::printf("| pattern | warps/MP | float32 acc | float16 acc | ratio |\n|---|---|---|---|---|\n");
  // A table row per warp count: `pattern`'s float32- and float16-accumulating kernels, `mma` instructions per
  // iteration each.
  const auto table_rows = [&](const char* pattern, std::initializer_list<int> warp_counts, auto f32_kernel, auto f16_kernel, int mma) {
    for (const int warps : warp_counts) {
      const double f32 = tflops(f32_kernel, multiprocessors, warps, mma, operands, out, start, stop);
      const double f16 = tflops(f16_kernel, multiprocessors, warps, mma, operands, out, start, stop);
      std::printf("| %s | %d | %.0f | %.0f | %.2f |\n", pattern, warps, f32, f16, f32 / f16);
    }
  };
  table_rows("8 independent accumulators", {4, 8, 16, 32}, independent<true, 8>, independent<false, 8>, 8);
  // A layer issues 4 x 4 instructions for each of its S groups of 8 samples.
  table_rows("64-wide layer, 16 samples per warp", {4, 8, 16}, layer<true, 2>, layer<false, 2>, 32);
  table_rows("64-wide layer, 32 samples per warp", {4, 8, 12}, layer<true, 4>, layer<false, 4>, 64);
  table_rows("64-wide layer, 32 samples per warp, output tiles in pairs", {4, 8, 12}, layer<true, 4, 2>, layer<false, 4, 2>, 64);
  table_rows("64-wide layer, 32 samples per warp, all 4 output tiles at once", {4, 8, 12}, layer<true, 4, 4>, layer<false, 4, 4>, 64);
  check(gpuEventDestroy(start), "event");
  check(gpuEventDestroy(stop), "event");
  check(gpuFree(out), "free");
  check(gpuFree(operands), "free");
  return 0;
}
