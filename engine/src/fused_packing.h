#pragma once
// Host side of the fused matrix-core kernels: packs a Model's weights, once, into the A-fragment order of
// a tile family and its biases into accumulator order, so each lane fetches a weight fragment or a bias
// accumulator with one contiguous load (ops/fused_mlp.h).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "engine/src/backend.h"
#include "mlpcore/error.h"
#include "mlpcore/model.h"
#include "ops/half_bits.h"
#include "ops/mlp_network.h"

namespace mlpcore::detail {

struct PackedNetwork {
  std::vector<ops::half_t> weights;
  std::vector<float> biases;
  std::vector<ops::LayerDesc> layers;
  std::uint32_t input_dim = 0, output_dim = 0;
  int max_tiles = 0;  // the kernel variant: 1, 2, 4 or 8 tiles of 16 per layer
};

// The fused kernel variant for a model: the widest padded layer in tiles, rounded up to 1, 2, 4 or 8.
// Throws Error(unsupported_model) for a layer wider than ops::kMaxFusedWidth.
int fused_tile_variant(const Model& model, const char* backend);

// The first lane of a bias slot (every lane of a slot holds the same units).
template <class Tile>
constexpr int slot_lane(int slot) {
  int lane = 0;
  while (Tile::bias_slot(lane) != slot) ++lane;
  return lane;
}

template <class Tile>
PackedNetwork pack_network(const Model& model, const char* backend) {
  PackedNetwork p;
  p.max_tiles = fused_tile_variant(model, backend);
  p.input_dim = static_cast<std::uint32_t>(model.input_dim());
  p.output_dim = static_cast<std::uint32_t>(model.output_dim());
  for (std::size_t li = 0; li < model.layers.size(); ++li) {
    const Layer& l = model.layers[li];
    const int in_tiles = static_cast<int>((l.in + 15) / 16), out_tiles = static_cast<int>((l.out + 15) / 16);
    p.layers.push_back({static_cast<std::uint32_t>(p.weights.size()), static_cast<std::uint32_t>(p.biases.size()),
                        static_cast<std::uint16_t>(in_tiles), static_cast<std::uint16_t>(out_tiles), l.activation.kind, l.activation.param});
    for (int mt = 0; mt < out_tiles; ++mt)
      for (int kt = 0; kt < in_tiles; ++kt)
        for (int lane = 0; lane < Tile::kWave; ++lane)
          for (int e = 0; e < Tile::kA; ++e) {
            const std::size_t row = static_cast<std::size_t>(mt * 16 + Tile::acc_unit(Tile::a_row(lane, e)));
            const std::size_t col = static_cast<std::size_t>(kt * 16 + Tile::k_feature(Tile::a_col(lane, e)));
            const float w = row < l.out && col < l.in ? l.weight[row * l.in + col] : 0.0f;
            const std::uint16_t bits = ops::float_to_f16_bits(w);
            if ((bits & 0x7c00u) == 0x7c00u)
              throw Error(ErrorCode::unsupported_model, "backend '" + std::string(backend) + "'", "layers." + std::to_string(li) + ".weight",
                          "value " + std::to_string(w) + " does not fit float16 (|w| <= 65504)");
            p.weights.push_back(std::bit_cast<ops::half_t>(bits));
          }
    for (int mt = 0; mt < out_tiles; ++mt)
      for (int slot = 0; slot < Tile::kBiasSlots; ++slot)
        for (int e = 0; e < Tile::kAcc; ++e) {
          const auto unit = static_cast<std::size_t>(mt * 16 + Tile::acc_unit(Tile::acc_row(slot_lane<Tile>(slot), e)));
          p.biases.push_back(unit < l.out ? l.bias[unit] : 0.0f);
        }
  }
  return p;
}

// The view the fused kernels take of a packed network whose arrays are at these (device) addresses.
ops::NetworkView network_view_of(const void* weights, const float* biases, const void* layers, const PackedNetwork& p);

// The index of the fixed-shape kernel (ops/fused_shapes.h) for the model's padded shape, or -1.
int fixed_shape_index(const Model& model);

// The kernel of ops/fused_mlp_kernels.hip to run the model with: its fixed-shape kernel where one
// exists, else the run-time-shaped variant for p.max_tiles.
std::string fused_kernel_name(const Model& model, const PackedNetwork& p);
// What that kernel's name gets for its float16-I/O twin ("_f16"), or "" for float32.
const char* fused_kernel_suffix(Io io);

// Launch geometry of the fused kernels: blocks of ops::kFusedWavesPerBlock waves, enough blocks to fill
// any GPU; the kernels stride over the rest of the batch.
using ops::kFusedWavesPerBlock;
unsigned fused_grid(std::size_t batch);
void check_fused_batch(std::size_t batch);  // the kernels index samples with 32 bits

// Calls f(std::integral_constant<int, N>) for the kernel variant N = p.max_tiles.
template <class F>
void with_tile_variant(int max_tiles, F&& f) {
  switch (max_tiles) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 4: return f(std::integral_constant<int, 4>{});
    default: return f(std::integral_constant<int, 8>{});
  }
}

}  // namespace mlpcore::detail
