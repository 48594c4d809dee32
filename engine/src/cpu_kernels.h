#pragma once
// The cpu backend's math: a network packed for its kernels, and the kernels compiled once per instruction
// set (cpu_kernels_generic.cpp, cpu_kernels_avx2_fma.cpp: one source, cpu_kernels_impl.h). The backend
// picks the best set this CPU runs, once per network.
#include <cstddef>
#include <vector>

#include "mlpcore/model.h"

namespace mlpcore::detail {

// Samples per block: the kernels evaluate the whole network on one block at a time, its activations
// feature-major ([features][kCpuBlockRows], samples contiguous) in scratch that stays in L1/L2.
inline constexpr std::size_t kCpuBlockRows = 192;
// Output units per micro-tile: each layer's outputs are padded to a multiple (zero weights and bias).
inline constexpr std::size_t kCpuTileUnits = 4;

struct PackedCpuLayer {
  std::size_t in = 0;
  std::size_t out = 0;          // as in the model
  std::size_t padded_out = 0;   // out rounded up to kCpuTileUnits
  const float* weight = nullptr;  // [padded_out / kCpuTileUnits][in][kCpuTileUnits]
  const float* bias = nullptr;    // [padded_out]
  Activation activation;
};

struct PackedCpuNetwork {
  std::vector<PackedCpuLayer> layers;
  std::vector<float> storage;  // the layers' weights and biases
};

// One activation buffer of a block: the widest layer, input or padded output, by kCpuBlockRows samples.
std::size_t cpu_activation_floats(const PackedCpuLayer* layers, std::size_t count);

PackedCpuNetwork pack_cpu_network(const Model& model);

struct CpuKernels {
  const char* isa;  // "AVX-512", "AVX2+FMA", "SSE2" (x86-64's baseline) or "portable" (other CPUs)
  // Evaluates the network on rows <= kCpuBlockRows samples: input [rows][in], output [rows][out],
  // row-major float32. scratch: 2 * cpu_activation_floats(layers, count) floats, 32-byte aligned. Plain
  // pointers rather than PackedCpuNetwork: the kernels call no inline library code (cpu_kernels_impl.h).
  void (*forward_block)(const PackedCpuLayer* layers, std::size_t count, const float* input, float* output, std::size_t rows,
                        float* scratch);
};

const CpuKernels& generic_cpu_kernels();  // the compiler's baseline for the target (SSE2 on x86-64)
// AVX2 and FMA, 256-bit vectors; nullptr when this CPU lacks them or the build is not for x86-64.
const CpuKernels* avx2_fma_cpu_kernels();
// AVX-512F and FMA, 512-bit vectors; nullptr likewise.
const CpuKernels* avx512_cpu_kernels();
// The fastest set this CPU runs.
const CpuKernels& best_cpu_kernels();

}  // namespace mlpcore::detail
