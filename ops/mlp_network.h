#pragma once
// What the fused MLP kernel reads: packed weights, biases and one descriptor per layer, all in device
// memory, described by a small trivially copyable view passed by value.
#include <cstdint>

#include "mlpcore/activation_kind.h"
#include "ops/simd_types.h"

namespace mlpcore::ops {

// How a call's inputs and outputs lie in memory; every fused kernel is built for one. sample_major:
// [batch, dim], each sample's values together (PyTorch's [batch, features]). feature_major: [dim, batch],
// each feature's values together (a renderer's structure-of-arrays buffers).
enum class IoLayout : unsigned char { sample_major, feature_major };
// Selects a kernel body's layout (ops/fused_kernel_entry.h).
template <IoLayout L>
struct LayoutTag {};
// A set of layouts as bits (a specialized source's, ops/fused_mlp_specialized.h).
constexpr unsigned layout_bit(IoLayout l) { return 1u << static_cast<unsigned>(l); }

// Blocks of the fused kernels hold this many waves (their launch bounds; the hosts launch them so).
inline constexpr unsigned kFusedWavesPerBlock = 4;

// The widest layer the fused kernel keeps in registers: 8 tiles of 16.
inline constexpr int kMaxTilesPerLayer = 8;
inline constexpr int kMaxFusedWidth = 16 * kMaxTilesPerLayer;

// Whether a run-time-shaped kernel (ops/fused_mlp.h, mlp_forward) runs a network's first layer on its one
// input tile rather than padded to the kernel's width: an input of at most 16 features with a hidden layer
// after it. Its weights are then packed one K tile wide (engine/src/fused_packing.h, pack_network).
constexpr bool one_tile_first_layer(std::uint32_t input_dim, std::uint32_t layers) { return input_dim <= 16 && layers > 1; }

struct LayerDesc {
  std::uint32_t weight_offset;  // in half_t, start of this layer's packed A fragments
  std::uint32_t bias_offset;    // in accumulator elements, start of this layer's biases: [out_tiles][bias slots][accumulator elements]
  std::uint16_t in_tiles;       // padded input width / 16
  std::uint16_t out_tiles;      // padded output width / 16
  ActivationKind activation;
  float param;                  // leaky_relu alpha, softplus beta
  std::uint8_t k = 16, n = 16;  // the matrix instructions' features and units the weights are packed for:
                                // 8 on a narrow edge (FusedPolicy::narrow_input, ::narrow_output), else 16
};

struct NetworkView {
  const half_t* weights;        // per layer: [out_tiles][in_tiles][wave lanes][A elements], see pack_weights
  const void* biases;           // the tile's accumulator elements (float, or half_t with float16 accumulation)
  const LayerDesc* layers;
  std::uint32_t num_layers;
  std::uint32_t input_dim;
  std::uint32_t output_dim;
  // Set to 1 by a call whose float16 operands left float16's range (ops/float16_range.h); the host gives
  // each call its own. Null: not checked.
  std::uint32_t* range_flag = nullptr;
};

}  // namespace mlpcore::ops
