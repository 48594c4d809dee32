#pragma once
// What a GPU kernel needs to evaluate an uploaded network (ops/device_api.h): pointers to the packed
// weights, biases and layer descriptors in the backend's memory, trivially copyable, passed by value.
// Valid while the Network that produced it (Network::device_view()) lives.
#include <cstdint>

namespace mlpcore {

struct DeviceNetworkView {
  const void* weights;       // float16 A fragments in the tile family's order
  const float* biases;
  const void* layers;        // one descriptor per layer
  std::uint32_t num_layers;
  std::uint32_t input_dim;
  std::uint32_t output_dim;
  std::uint32_t max_tiles;   // the kernel variant to instantiate: 1, 2, 4 or 8
};

}  // namespace mlpcore
