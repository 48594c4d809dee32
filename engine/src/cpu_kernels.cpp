#include "engine/src/cpu_kernels.h"

#include <algorithm>

namespace mlpcore::detail {

// Each instruction set's kernel (cpu_kernels_<isa>.cpp). The tables naming them live here, with internal
// linkage: a program that links the static library and libmlpcore_c.so then holds no global twice.
#define MLPCORE_CPU_FORWARD_BLOCK(isa)                                                                     \
  namespace isa {                                                                                          \
  void forward_block(const PackedCpuLayer* layers, std::size_t count, const float* input, float* output, \
                     std::size_t rows, float* scratch);                                                    \
  }
MLPCORE_CPU_FORWARD_BLOCK(generic)
#if MLPCORE_CPU_X86_64
MLPCORE_CPU_FORWARD_BLOCK(avx2_fma)
MLPCORE_CPU_FORWARD_BLOCK(avx512)
#endif
#undef MLPCORE_CPU_FORWARD_BLOCK

namespace {
#if defined(__x86_64__)
constexpr CpuKernels kGenericCpuKernels = {"SSE2", generic::forward_block};
#else
constexpr CpuKernels kGenericCpuKernels = {"portable", generic::forward_block};
#endif
#if MLPCORE_CPU_X86_64
constexpr CpuKernels kAvx2FmaCpuKernels = {"AVX2+FMA", avx2_fma::forward_block};
constexpr CpuKernels kAvx512CpuKernels = {"AVX-512", avx512::forward_block};
#endif
}  // namespace

PackedCpuNetwork pack_cpu_network(const Model& model) {
  PackedCpuNetwork net;
  std::vector<std::size_t> offsets;  // of each layer's weights; biases follow them
  for (const Layer& l : model.layers) {
    const std::size_t padded_out = (l.out + kCpuTileUnits - 1) / kCpuTileUnits * kCpuTileUnits;
    offsets.push_back(net.storage.size());
    net.storage.resize(net.storage.size() + padded_out * l.in + padded_out, 0.0f);
    float* weight = net.storage.data() + offsets.back();
    for (std::size_t o = 0; o < l.out; ++o)
      for (std::size_t i = 0; i < l.in; ++i)
        weight[(o / kCpuTileUnits * l.in + i) * kCpuTileUnits + o % kCpuTileUnits] = l.weight[o * l.in + i];
    std::copy(l.bias.begin(), l.bias.end(), weight + padded_out * l.in);
    net.layers.push_back({l.in, l.out, padded_out, nullptr, nullptr, l.activation});
  }
  for (std::size_t i = 0; i < net.layers.size(); ++i) {  // storage has its final size now
    PackedCpuLayer& l = net.layers[i];
    l.weight = net.storage.data() + offsets[i];
    l.bias = l.weight + l.padded_out * l.in;
  }
  return net;
}

std::size_t cpu_activation_floats(const PackedCpuLayer* layers, std::size_t count) {
  std::size_t widest = layers[0].in;
  for (std::size_t l = 0; l < count; ++l) widest = std::max(widest, layers[l].padded_out);
  return widest * kCpuBlockRows;
}

const CpuKernels& generic_cpu_kernels() { return kGenericCpuKernels; }

const CpuKernels* avx2_fma_cpu_kernels() {
#if MLPCORE_CPU_X86_64
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  if (supported) return &kAvx2FmaCpuKernels;
#endif
  return nullptr;
}

const CpuKernels* avx512_cpu_kernels() {
#if MLPCORE_CPU_X86_64
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  }();
  if (supported) return &kAvx512CpuKernels;
#endif
  return nullptr;
}

const CpuKernels& best_cpu_kernels() {
  if (const CpuKernels* avx512 = avx512_cpu_kernels()) return *avx512;
  if (const CpuKernels* avx2 = avx2_fma_cpu_kernels()) return *avx2;
  return generic_cpu_kernels();
}

}  // namespace mlpcore::detail
