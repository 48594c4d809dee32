#pragma once
// Evaluating an mlpcore network inside your own GPU kernel (HIP or CUDA; also on the wave emulator).
//
//   #include "ops/device_api.h"                       // target mlpcore::device
//   template <int MaxTiles>
//   __global__ void shade(mlpcore::DeviceNetworkView net, ...) {
//     __shared__ float scratch[kWavesPerBlock][mlpcore::device::scratch_floats<Tile, 3, 1>()];
//     float in[3] = {...}, out[1];
//     mlpcore::device::evaluate<Tile, MaxTiles, 3, 1>(net, scratch[wave_in_block], in, out, ray_alive);
//   }
//   // On the host, the variant this network needs:
//   mlpcore::with_max_tiles(view, [&](auto max_tiles) { shade<decltype(max_tiles)::value><<<grid, block>>>(view, ...); });
//
// Contract: every lane of the wave calls evaluate together, from converged control flow, with the same
// network (a wave evaluates up to 32/64 samples at once on the matrix cores). A lane with no sample (a
// ray that missed, a pixel outside the image) passes active = false: its inputs are ignored (the wave
// computes a NaN sample there, which affects no other sample and no range check), and its outputs are
// left untouched. Lanes must not return before the call: the matrix
// instructions need the whole wave (the wave emulator reports a lane that returned as an error).
// Tile is the tile family of the GPU (ops/native_tile.h's NativeTile in a device build), MaxTiles the
// kernel variant (widths up to 16 * MaxTiles): at least view.max_tiles, else the kernel traps; launch
// through mlpcore::with_max_tiles (mlpcore/device_view.h), which instantiates exactly that variant.
// InDim/OutDim are the model's dimensions (checked too).
// `scratch` is this wave's scratch_floats<Tile, InDim, OutDim>() floats of shared memory (LDS): the
// lanes' inputs and outputs pass through it; between layers the activations stay in registers.
// Where an input or a hidden activation of the wave's samples leaves float16's range (|x| >= 65504, the
// README's "What float16 operands cannot carry"), the results would be wrong: every active lane of the
// wave gets NaN outputs instead.
#include "mlpcore/device_view.h"
#include "ops/fused_mlp.h"

namespace mlpcore::device {

template <class Tile, int InDim, int OutDim>
constexpr int scratch_floats() {
  return Tile::kWave * (InDim + OutDim) + 4;  // and the wave's range flag, padded to keep 16-byte rows
}

MLPCORE_DEVICE ops::NetworkView to_network(const DeviceNetworkView& v) {
  return {static_cast<const ops::half_t*>(v.weights), v.biases, static_cast<const ops::LayerDesc*>(v.layers), v.num_layers,
          v.input_dim, v.output_dim};
}

template <class Tile, int MaxTiles, int InDim, int OutDim>
MLPCORE_DEVICE void evaluate(const DeviceNetworkView& view, float* scratch, const float (&in)[InDim], float (&out)[OutDim], bool active) {
  static_assert(Tile::kWave % 16 == 0, "a wave holds whole 16-sample tiles");
  // The wave's 16-sample tiles run through the network in passes of S, the policy table's choice for
  // networks of at most MaxTiles tiles: all of them at once would need, in a 128-wide layer on RDNA3 (B operands
  // replicated across the half-waves), 256 VGPRs for one wave32's activations alone.
  constexpr int kWaveTiles = Tile::kWave / 16;
  constexpr ops::FusedPolicy kPolicy = ops::bounded_shape_policy<Tile, MaxTiles>();
  constexpr int S = kPolicy.sample_tiles;
  static_assert(kWaveTiles % S == 0, "a wave holds whole passes");
  if (view.input_dim != InDim || view.output_dim != OutDim) ops::abort_kernel("device::evaluate: InDim/OutDim are not the network's");
  // A smaller variant would skip the wider layers' tiles: launch through mlpcore::with_max_tiles(view, ...).
  if (view.max_tiles > MaxTiles) ops::abort_kernel("device::evaluate: MaxTiles is smaller than view.max_tiles");
  const ops::NetworkView net = to_network(view);
  const unsigned lane = ops::lane_id();
  float* inputs = scratch;
  float* outputs = scratch + Tile::kWave * InDim;
  float* out_of_range = outputs + Tile::kWave * OutDim;  // set by a lane whose float16 range check failed
  MLPCORE_UNROLL  // constant indices: the lane's arrays stay in registers, never in scratch
  for (int i = 0; i < InDim; ++i) inputs[lane * InDim + i] = active ? in[i] : ops::kQuietNaN;
  ops::sync_wave();  // (and every lane has read the flag of a previous call)
  if (lane == 0) *out_of_range = 0.0f;
  ops::sync_wave();  // clear before any lane can set it
  ops::Float16Range range;
  MLPCORE_NO_UNROLL
  for (int pass = 0; pass < kWaveTiles / S; ++pass) {
    const ops::SampleBlock block{16u * S * static_cast<unsigned>(pass), Tile::kWave};
    typename Tile::BFrag act[MaxTiles][S];
    ops::load_input<Tile>(act, net.layers[0].in_tiles, inputs + block.sample0 * InDim, InDim, block, range);
    for (unsigned l = 0; l < net.num_layers; ++l) {
      const ops::LayerDesc d = net.layers[l];
      ops::dense_layer<Tile, ops::RuntimeActivations, kPolicy>(net, d, d.in_tiles, d.out_tiles, l + 1 == net.num_layers, act, act, outputs, block, range);
    }
  }
  if (range.exceeded()) *out_of_range = 1.0f;  // every lane that writes writes the same value
  ops::sync_wave();
  const bool wrong = *out_of_range != 0.0f;
  MLPCORE_UNROLL
  for (int o = 0; o < OutDim; ++o)
    if (active) out[o] = wrong ? ops::kQuietNaN : outputs[lane * OutDim + o];
}

}  // namespace mlpcore::device
