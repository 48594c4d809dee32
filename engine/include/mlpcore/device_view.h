#pragma once
// What a GPU kernel needs to evaluate an uploaded network (ops/device_api.h): pointers to the packed
// weights, biases and layer descriptors in the backend's memory, trivially copyable, passed by value.
// Valid while the Network that produced it (Network::device_view()) lives.
#include <cstdint>
#include <type_traits>

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

// Calls f(std::integral_constant<int, N>{}) with N = max_tiles (1, 2, 4 or 8), so that the caller
// instantiates and launches exactly the variant a network needs; the device API's evaluate<Tile, N, ...>
// traps when N is smaller than the network's.
//   mlpcore::with_max_tiles(view, [&](auto n) { shade<decltype(n)::value><<<grid, block>>>(view, ...); });
template <class F>
decltype(auto) with_max_tiles(std::uint32_t max_tiles, F&& f) {
  switch (max_tiles) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 4: return f(std::integral_constant<int, 4>{});
    default: return f(std::integral_constant<int, 8>{});
  }
}
template <class F>
decltype(auto) with_max_tiles(const DeviceNetworkView& view, F&& f) {
  return with_max_tiles(view.max_tiles, static_cast<F&&>(f));
}

}  // namespace mlpcore
