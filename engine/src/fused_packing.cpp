#include "engine/src/fused_packing.h"

#include "engine/src/backend.h"

#include <algorithm>
#include <cmath>


namespace mlpcore::detail {

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

Error out_of_float16_range(const std::string& backend) {
  return Error(ErrorCode::float16_range, "backend '" + backend + "'", "",
               "an input or a hidden activation of this call is at or beyond float16's range (|x| >= 65504), which this backend's "
               "float16 operands cannot carry: its outputs would be wrong. Scale the inputs down, or use the cpu backend");
}

Error no_device_view(const std::string& backend) {
  return Error(ErrorCode::invalid_argument, "device_view", "",
               "backend '" + backend + "' packs this network for float16 accumulators; the device API (ops/device_api.h) runs " +
                   "full 16x16 tiles accumulating in float32: use the backend without -f16acc");
}

unsigned fused_grid(std::size_t batch, int sample_tiles, unsigned max_blocks) {
  return static_cast<unsigned>(std::min<std::size_t>(fused_blocks(batch, sample_tiles), max_blocks));
}

void check_fused_batch(const IoBuffers& call) {
  // The kernels count sample blocks of up to 16 kMaxSampleTiles samples in 32 bits: the batch rounded up
  // to whole blocks must not wrap.
  constexpr std::size_t kBlock = 16 * ops::kMaxSampleTiles, kMaxBatch = 0xffffffffu - (kBlock - 1);
  if (call.batch > kMaxBatch)
    throw Error(ErrorCode::invalid_argument, "infer", "batch",
                std::to_string(call.batch) + " samples in one call; at most 2^32 - " + std::to_string(kBlock));
  if (call.layout == Layout::feature_major && call.batch > (std::size_t{1} << 28))
    throw Error(ErrorCode::invalid_argument, "infer", "batch",
                std::to_string(call.batch) + " samples in one feature-major call; at most 2^28 (split the call)");
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
