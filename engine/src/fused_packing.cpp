#include "engine/src/fused_packing.h"

#include "engine/src/backend.h"

#include <algorithm>
#include <cmath>

#include "ops/fused_shapes.h"

namespace mlpcore::detail {

int fused_tile_variant(const Model& model, const char* backend) {
  std::size_t widest = model.input_dim();
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const std::size_t out = model.layers[i].out;
    if (out > static_cast<std::size_t>(ops::kMaxFusedWidth) || model.layers[i].in > static_cast<std::size_t>(ops::kMaxFusedWidth))
      throw Error(ErrorCode::unsupported_model, "backend '" + std::string(backend) + "'", "layers." + std::to_string(i),
                  std::to_string(model.layers[i].in) + " -> " + std::to_string(out) + " is wider than the " +
                      std::to_string(ops::kMaxFusedWidth) + " the fused matrix-core kernel keeps in registers (use the cpu backend)");
    widest = std::max(widest, out);
  }
  const int tiles = static_cast<int>((widest + 15) / 16);
  return tiles <= 1 ? 1 : tiles <= 2 ? 2 : tiles <= 4 ? 4 : 8;
}

int fixed_shape_index(const Model& model) {
  std::vector<int> tiles = {static_cast<int>((model.input_dim() + 15) / 16)};
  for (const auto& l : model.layers) tiles.push_back(static_cast<int>((l.out + 15) / 16));
  auto activations_are = [&](ActivationKind hidden, ActivationKind output) {
    for (std::size_t i = 0; i < model.layers.size(); ++i)
      if (model.layers[i].activation.kind != (i + 1 == model.layers.size() ? output : hidden)) return false;
    return true;
  };
#define MLPCORE_MATCH_SHAPE(index, hidden, output, ...) \
  if (tiles == std::vector<int>{__VA_ARGS__} && activations_are(ActivationKind::hidden, ActivationKind::output)) return index;
  MLPCORE_FIXED_SHAPES(MLPCORE_MATCH_SHAPE)
#undef MLPCORE_MATCH_SHAPE
  return -1;
}

void check_fits_f16_operands(const Model& model, const char* backend, bool f16_accumulation) {
  constexpr float kF16Max = 65504.0f;
  auto refuse = [&](std::size_t li, const char* tensor, std::size_t i, float v, const char* why) {
    throw Error(ErrorCode::unsupported_model, "backend '" + std::string(backend) + "'",
                "layers." + std::to_string(li) + "." + tensor + "[" + std::to_string(i) + "]",
                "value " + std::to_string(v) + " is beyond float16's range (|x| <= 65504), " + why + " (use the cpu backend)");
  };
  for (std::size_t li = 0; li < model.layers.size(); ++li) {
    const Layer& l = model.layers[li];
    for (std::size_t i = 0; i < l.weight.size(); ++i)
      if (std::fabs(l.weight[i]) > kF16Max) refuse(li, "weight", i, l.weight[i], "the type this backend multiplies weights in");
    const bool last = li + 1 == model.layers.size();
    if (last && !f16_accumulation) continue;
    for (std::size_t i = 0; i < l.bias.size(); ++i)
      if (std::fabs(l.bias[i]) > kF16Max)
        refuse(li, "bias", i, l.bias[i], last ? "the type this backend accumulates in" : "the type of the next layer's operands");
  }
}

bool has_f16_accumulation_kernel(const Model& model) { return fixed_shape_index(model) >= 0; }

std::string fused_kernel_name(const Model& model, const PackedNetwork& p) {
  const int fixed = fixed_shape_index(model);
  return (fixed >= 0 ? "mlpcore_mlp_fixed_" + std::to_string(fixed) : "mlpcore_mlp_t" + std::to_string(p.max_tiles)) +
         (p.f16_accumulation ? "_f16acc" : "");
}

const char* fused_kernel_suffix(Io io) { return io == Io::f16 ? "_f16" : ""; }

Error no_device_view_with_f16_accumulation(const std::string& backend) {
  return Error(ErrorCode::invalid_argument, "device_view", "",
               "backend '" + backend + "' accumulates in float16; the device API (ops/device_api.h) accumulates in float32: use the backend without -f16acc");
}

unsigned fused_grid(std::size_t batch) {
  constexpr std::size_t kMaxBlocks = 4096;
  const std::size_t tiles = (batch + 15) / 16;
  return static_cast<unsigned>(std::clamp<std::size_t>((tiles + kFusedWavesPerBlock - 1) / kFusedWavesPerBlock, 1, kMaxBlocks));
}

void check_fused_batch(std::size_t batch) {
  if (batch > 0xffffffffu - 15)
    throw Error(ErrorCode::invalid_argument, "infer", "batch", std::to_string(batch) + " samples in one call; at most 2^32 - 16");
}

ops::NetworkView network_view_of(const void* weights, const void* biases, const void* layers, const PackedNetwork& p) {
  return {static_cast<const ops::half_t*>(weights), biases, static_cast<const ops::LayerDesc*>(layers), static_cast<std::uint32_t>(p.layers.size()),
          p.input_dim, p.output_dim};
}

DeviceNetworkView device_view_of(const void* weights, const void* biases, const void* layers, const PackedNetwork& p) {
  return {weights, static_cast<const float*>(biases), layers, static_cast<std::uint32_t>(p.layers.size()), p.input_dim, p.output_dim,
          static_cast<std::uint32_t>(p.max_tiles)};
}

}  // namespace mlpcore::detail
