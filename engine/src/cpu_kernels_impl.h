// The cpu backend's kernels, written once with GCC/Clang vector extensions and compiled once per
// instruction set by the files that include this one (cpu_kernels_generic.cpp, _avx2_fma.cpp, _avx512.cpp)
// after defining MLPCORE_CPU_ISA, the namespace that keeps each compilation's symbols apart,
// MLPCORE_CPU_VECTOR_BYTES and MLPCORE_CPU_TILE_VECTORS. This code calls no inline function from outside that namespace (only builtins):
// the linker keeps one copy of an inline function, and it could be the AVX2 one, called from the generic path.
#include <cstddef>

#include "engine/src/cpu_kernels.h"
#include "ops/activation_math.h"

namespace mlpcore::detail::MLPCORE_CPU_ISA {
namespace {

using Vec = float __attribute__((vector_size(MLPCORE_CPU_VECTOR_BYTES)));
constexpr std::size_t kLanes = MLPCORE_CPU_VECTOR_BYTES / sizeof(float);
// A micro-tile: kCpuTileUnits outputs by kTileVectors vectors of samples: its accumulators, one vector of
// samples per tile vector and a broadcast weight fill the registers (3: 12 + 3 + 1 of 16; 6: 24 + 6 + 1 of 32).
constexpr std::size_t kTileVectors = MLPCORE_CPU_TILE_VECTORS;
constexpr std::size_t kTileRows = kTileVectors * kLanes;
static_assert(kCpuBlockRows % kTileRows == 0);

Vec load(const float* p) {
  Vec v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

void store(float* p, Vec v) { __builtin_memcpy(p, &v, sizeof v); }

// libm through builtins, not <cmath>'s inline wrappers.
struct Math {
  static float exp(float x) { return __builtin_expf(x); }
  static float log1p(float x) { return __builtin_log1pf(x); }
  static float sin(float x) { return __builtin_sinf(x); }
  static float tanh(float x) { return __builtin_tanhf(x); }
  static float divide(float a, float b) { return a / b; }
};

// Activations that are a compare and a select (none, ReLU, leaky ReLU) run on whole vectors (the
// formulas of ops::activate); the others element by element through ops::activate.

template <ActivationKind K>
Vec activate(Vec x, float param) {
  if constexpr (K == ActivationKind::relu) return x < Vec{} ? Vec{} : x;  // NaN passes through
  else if constexpr (K == ActivationKind::leaky_relu) return x < Vec{} ? x * param : x;
  else if constexpr (K == ActivationKind::none) return x;
  else {
    for (std::size_t j = 0; j < kLanes; ++j) x[j] = ops::activate<float, Math>(K, param, x[j]);
    return x;
  }
}

// y[o][r] = act(bias[o] + sum_i w[o][i] x[i][r]) for the block's first `rows` samples (a multiple of
// kTileRows); bias and activation applied in registers before the one store.
template <ActivationKind K>
void dense(const PackedCpuLayer& l, const float* x, float* y, std::size_t rows) {
  const float param = l.activation.param;
  for (std::size_t r = 0; r < rows; r += kTileRows)
    for (std::size_t o = 0; o < l.padded_out; o += kCpuTileUnits) {
      const float* w = l.weight + o * l.in;
      Vec acc[kCpuTileUnits][kTileVectors];
#pragma GCC unroll 16
      for (std::size_t u = 0; u < kCpuTileUnits; ++u)
#pragma GCC unroll 16
        for (std::size_t v = 0; v < kTileVectors; ++v) acc[u][v] = Vec{} + l.bias[o + u];
      for (std::size_t i = 0; i < l.in; ++i) {
        // The sample vectors first, then one broadcast weight at a time: no accumulator spills.
        Vec xv[kTileVectors];
#pragma GCC unroll 16
        for (std::size_t v = 0; v < kTileVectors; ++v) xv[v] = load(x + i * kCpuBlockRows + r + v * kLanes);
#pragma GCC unroll 16
        for (std::size_t u = 0; u < kCpuTileUnits; ++u) {
          const float wu = w[i * kCpuTileUnits + u];
#pragma GCC unroll 16
          for (std::size_t v = 0; v < kTileVectors; ++v) acc[u][v] += wu * xv[v];
        }
      }
#pragma GCC unroll 16
      for (std::size_t u = 0; u < kCpuTileUnits; ++u)
#pragma GCC unroll 16
        for (std::size_t v = 0; v < kTileVectors; ++v)
          store(y + (o + u) * kCpuBlockRows + r + v * kLanes, activate<K>(acc[u][v], param));
    }
}

void dense(const PackedCpuLayer& l, const float* x, float* y, std::size_t rows) {
  ops::with_activation(l.activation.kind, [&](auto kind) { dense<decltype(kind)::value>(l, x, y, rows); });
}

}  // namespace

void forward_block(const PackedCpuLayer* layers, std::size_t count, const float* input, float* output, std::size_t rows,
                   float* scratch) {
  // Samples past `rows` up to a whole tile are computed from zeros and never written out.
  const std::size_t tiled = (rows + kTileRows - 1) / kTileRows * kTileRows;
  float* x = scratch;
  float* y = scratch + cpu_activation_floats(layers, count);
  const std::size_t in = layers[0].in;
  for (std::size_t i = 0; i < in; ++i) {
    for (std::size_t r = 0; r < rows; ++r) x[i * kCpuBlockRows + r] = input[r * in + i];
    for (std::size_t r = rows; r < tiled; ++r) x[i * kCpuBlockRows + r] = 0.0f;
  }
  for (std::size_t l = 0; l < count; ++l) {
    dense(layers[l], x, y, tiled);
    float* const swap = x;
    x = y;
    y = swap;
  }
  const std::size_t out = layers[count - 1].out;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t o = 0; o < out; ++o) output[r * out + o] = x[o * kCpuBlockRows + r];
}

}  // namespace mlpcore::detail::MLPCORE_CPU_ISA
