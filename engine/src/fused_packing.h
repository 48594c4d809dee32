#pragma once
// Host side of the fused matrix-core kernels: packs a Model's weights, once, into the A-fragment order of
// a tile family and its biases into accumulator order, so each lane fetches a weight fragment or a bias
// accumulator with one contiguous load (ops/fused_mlp.h).
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/src/backend.h"
#include "engine/src/fused_plan.h"
#include "mlpcore/error.h"
#include "mlpcore/model.h"
#include "ops/half_bits.h"
#include "ops/mlp_network.h"
#include "ops/tile_ops.h"

namespace mlpcore::detail {

struct PackedNetwork {
  PackedShape shape;              // the edges packed for narrow instructions, the padding
  std::vector<ops::half_t> weights;
  std::vector<std::byte> biases;  // the tile's accumulator elements: float, or float16 bits
  bool f16_accumulation = false;  // packed for a float16-accumulating tile
  std::vector<ops::LayerDesc> layers;
  std::uint32_t input_dim = 0, output_dim = 0;
  int max_tiles = 0;  // the device-side API's kernel variant (FusedPlan::max_tiles)
};

// Refuses (Error unsupported_model, naming the layer and value) what float16 operands cannot carry: a
// weight beyond +-65504, a hidden layer's bias beyond it (its sum becomes the next layer's float16
// operand), and with float16 accumulation the last layer's bias too.
void check_fits_f16_operands(const Model& model, const char* backend, bool f16_accumulation);

// What a call reports when its kernel's float16 range check failed (ops/float16_range.h): inputs or
// activations that depend on the data, which no check of the model can see.
Error out_of_float16_range(const std::string& backend);

template <class T>
void append_bytes(std::vector<std::byte>& out, const T& value) {
  const auto bytes = std::bit_cast<std::array<std::byte, sizeof(T)>>(value);
  out.insert(out.end(), bytes.begin(), bytes.end());
}

// The first lane of a bias slot (every lane of a slot holds the same units).
template <class Tile>
constexpr int slot_lane(int slot) {
  int lane = 0;
  while (Tile::bias_slot(lane) != slot) ++lane;
  return lane;
}

// Appends layer l, in_tiles x out_tiles tiles (at least its own; zero weights and biases beyond them), packed
// for LayerTile's instructions of K features and N units (weights as its A fragments, biases as its
// accumulators), and its descriptor.
template <class LayerTile>
void pack_layer(PackedNetwork& p, const Layer& l, int k, int n, int in_tiles, int out_tiles) {
  using Acc = ops::acc_elem_t<LayerTile>;
  ops::LayerDesc desc{static_cast<std::uint32_t>(p.weights.size()), static_cast<std::uint32_t>(p.biases.size() / sizeof(Acc)),
                      static_cast<std::uint16_t>(in_tiles), static_cast<std::uint16_t>(out_tiles), l.activation.kind, l.activation.param};
  desc.k = static_cast<std::uint8_t>(k);
  desc.n = static_cast<std::uint8_t>(n);
  p.layers.push_back(desc);
  for (int mt = 0; mt < out_tiles; ++mt)
    for (int kt = 0; kt < in_tiles; ++kt)
      for (int lane = 0; lane < LayerTile::kWave; ++lane)
        for (int e = 0; e < LayerTile::kA; ++e) {
          const std::size_t row = static_cast<std::size_t>(mt * 16 + LayerTile::acc_unit(LayerTile::a_row(lane, e)));
          const std::size_t col = static_cast<std::size_t>(kt * 16 + LayerTile::k_feature(LayerTile::a_col(lane, e)));
          const float w = row < l.out && col < l.in ? l.weight[row * l.in + col] : 0.0f;
          p.weights.push_back(std::bit_cast<ops::half_t>(ops::float_to_f16_bits(w)));
        }
  for (int mt = 0; mt < out_tiles; ++mt)
    for (int slot = 0; slot < LayerTile::kBiasSlots; ++slot)
      for (int e = 0; e < LayerTile::kAcc; ++e) {
        const auto unit = static_cast<std::size_t>(mt * 16 + LayerTile::acc_unit(LayerTile::acc_row(slot_lane<LayerTile>(slot), e)));
        const float b = unit < l.out ? l.bias[unit] : 0.0f;
        if constexpr (std::is_same_v<Acc, float>) {
          append_bytes(p.biases, b);
        } else {
          append_bytes(p.biases, ops::float_to_f16_bits(b));
        }
      }
}

// The model packed for kernels of the plan whose tile is Tile (the plan's family and accumulation), in
// `shape`: the edges they run on narrow instructions, the width their layers are padded to.
template <class Tile>
PackedNetwork pack_network(const Model& model, const FusedPlan& plan, PackedShape shape, const char* backend) {
  using Acc = ops::acc_elem_t<Tile>;
  static_assert(std::is_same_v<Acc, float> || sizeof(Acc) == 2, "accumulators are float32 or float16");
  if (Tile::kFamily != plan.family || plan.f16_accumulation != !std::is_same_v<Acc, float>)
    throw std::logic_error("pack_network: the tile is not the plan's");
  PackedNetwork p;
  p.shape = shape;
  p.f16_accumulation = plan.f16_accumulation;
  p.max_tiles = plan.max_tiles();
  check_fits_f16_operands(model, backend, p.f16_accumulation);
  p.input_dim = static_cast<std::uint32_t>(model.input_dim());
  p.output_dim = static_cast<std::uint32_t>(model.output_dim());
  // Narrow edges: a first layer of at most 8 features packed for K = 8, a last layer of at most 8 units for
  // N = 8, as the fixed-shape kernel then runs them. Padding: every layer's input (but the first layer's
  // where one_tile_input) and every hidden layer's output padded_tiles wide.
  const auto tiles = [&](std::size_t width, bool padded) { return std::max(static_cast<int>((width + 15) / 16), padded ? shape.padded_tiles : 0); };
  for (std::size_t li = 0; li < model.layers.size(); ++li) {
    const Layer& l = model.layers[li];
    const bool last = li + 1 == model.layers.size();
    const int k = shape.narrow.input && li == 0 ? 8 : 16, n = shape.narrow.output && last ? 8 : 16;
    ops::with_layer_tile<Tile, ops::HasNarrowTiles<Tile>, ops::HasNarrowTiles<Tile>>(
        k, n, [&]<class LayerTile>() { pack_layer<LayerTile>(p, l, k, n, tiles(l.in, li > 0 || !shape.one_tile_input), tiles(l.out, !last)); });
  }
  return p;
}

// A network packed for a backend: once for each packed shape that one of the plan's kernels runs
// (FusedPlan::packed_shape; a plan's sample- and feature-major kernels may differ in the first layer: a
// specialized plan's narrow edges, the run-time-shaped kernels' one-tile first layer, which are otherwise
// padded to their width), and for the device API (ops/device_api.h), which
// runs full 16x16 tiles of each layer's own width accumulating in float32: the kernels' packing where it is
// that, else a packing of its own, so that a backend offers a view of every network that accumulates in
// float32. With float16 accumulators the device API
// runs none (a backend then offers no view, and says why with no_device_view).
struct BackendPacking {
  std::vector<PackedNetwork> packings;                    // each of a distinct shape
  std::array<std::size_t, kKernelSlots.size()> of_slot{};  // by KernelSlot: the packing its kernel runs (slots without one: the first)
  std::optional<std::size_t> for_device_api;              // the packing the device API runs, if any

  const PackedNetwork& kernel(KernelSlot slot) const { return packings[of_slot[static_cast<std::size_t>(slot)]]; }
  const PackedNetwork* device_api() const { return for_device_api ? &packings[*for_device_api] : nullptr; }
};

template <class Tile>
BackendPacking pack_for_backend(const Model& model, const FusedPlan& plan, const char* backend) {
  BackendPacking b;
  // The packing of `shape`, packed now where none has it yet.
  const auto packing_of = [&](PackedShape shape) {
    for (std::size_t i = 0; i < b.packings.size(); ++i)
      if (b.packings[i].shape == shape) return i;
    b.packings.push_back(pack_network<Tile>(model, plan, shape, backend));
    return b.packings.size() - 1;
  };
  for (const KernelSlot slot : kKernelSlots)
    if (has_kernel(plan, slot, Io::f32) || has_kernel(plan, slot, Io::f16)) b.of_slot[static_cast<std::size_t>(slot)] = packing_of(plan.packed_shape(slot));
  if (!plan.f16_accumulation) b.for_device_api = packing_of(PackedShape{});
  return b;
}
Error no_device_view(const std::string& backend);

// The view the fused kernels take of a packed network whose arrays are at these (device) addresses.
ops::NetworkView network_view_of(const void* weights, const void* biases, const void* layers, const PackedNetwork& p);

// Launch geometry of the fused kernels: blocks of ops::kFusedWavesPerBlock waves, one wave per block of
// `sample_tiles` tiles of 16 samples (CallRouting; fused_blocks) up to max_blocks, enough to fill any GPU; the kernels
// stride over the rest of the batch. (Counting waves of one tile left half the blocks of two-tile kernels
// without work up to 2^18 samples.)
using ops::kFusedWavesPerBlock;
inline constexpr unsigned kMaxFusedBlocks = 4096;
unsigned fused_grid(std::size_t batch, int sample_tiles, unsigned max_blocks = kMaxFusedBlocks);
// The kernels index samples with 32 bits, and feature-major arrays' 16-row tiles too.
void check_fused_batch(const IoBuffers& call);

}  // namespace mlpcore::detail
