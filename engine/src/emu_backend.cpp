// The emulated backends: the fused kernels of ops/fused_mlp.h, unchanged, on the wave emulator, with the
// AMD tiles or the NVIDIA ones (float32 or float16 accumulation).
// Slow (every lane is a fiber) and exact to the kernels' arithmetic: for checking models without the GPU.
#include <algorithm>
#include <string>

#include "engine/src/backend.h"
#include "engine/src/fused_packing.h"
#include "ops/fused_mlp.h"
#include "ops/fused_shapes.h"
#include "ops/tile_mfma_gfx9.h"
#include "ops/tile_mma_sm80.h"
#include "ops/tile_wmma_gfx11.h"
#include "ops/tile_wmma_gfx12.h"

namespace mlpcore::detail {
namespace {

constexpr unsigned kMaxBlocks = 8;  // a small grid, so the kernels' tile-striding loop is exercised too

template <class Tile>
class EmuNetwork final : public BackendNetwork {
 public:
  EmuNetwork(const Model& model, const char* name) : name_(name), packed_(pack_network<Tile>(model, name)), fixed_(fixed_shape_index(model)) {}

  void infer(const IoBuffers& call) const override {
    if (call.io == Io::f16)
      run(static_cast<const ops::half_t*>(call.input), static_cast<ops::half_t*>(call.output), call.batch);
    else
      run(static_cast<const float*>(call.input), static_cast<float*>(call.output), call.batch);
  }

  std::optional<DeviceNetworkView> device_view() const override {
    if (packed_.f16_accumulation) throw no_device_view_with_f16_accumulation(name_);
    return device_view_of(packed_.weights.data(), packed_.biases.data(), packed_.layers.data(), packed_);
  }

 private:
  template <class Io>
  void run(const Io* input, Io* output, std::size_t batch) const {
    check_fused_batch(batch);
    const ops::NetworkView view = network_view_of(packed_.weights.data(), packed_.biases.data(), packed_.layers.data(), packed_);
    const auto tiles = static_cast<unsigned>((batch + 15) / 16);
    const unsigned blocks = std::clamp((tiles + kFusedWavesPerBlock - 1) / kFusedWavesPerBlock, 1u, kMaxBlocks);
    const auto n = static_cast<unsigned>(batch);
    auto launch = [&](auto&& kernel) { emu::launch({blocks, 1, 1}, {kFusedWavesPerBlock * Tile::kWave, 1, 1}, Tile::kWave, kernel); };
    // The same choice of kernel as the hip and cuda backends: a fixed-shape kernel where one matches.
    switch (fixed_) {
#define MLPCORE_FIXED_CASE(index, hidden, out, ...) \
  case index: return launch([&] { ops::mlp_forward_fixed<Tile, ActivationKind::hidden, ActivationKind::out, __VA_ARGS__>(view, input, output, n); });
      MLPCORE_FIXED_SHAPES(MLPCORE_FIXED_CASE)
#undef MLPCORE_FIXED_CASE
      default:
        with_tile_variant(packed_.max_tiles, [&](auto max_tiles) { launch([&] { ops::mlp_forward<Tile, decltype(max_tiles)::value>(view, input, output, n); }); });
    }
  }

  std::string name_;
  PackedNetwork packed_;
  int fixed_;
};

}  // namespace

std::unique_ptr<BackendNetwork> create_emu_rdna3_network(const Model& m) { return std::make_unique<EmuNetwork<ops::TileWmmaGfx11>>(m, "emu-rdna3"); }
std::unique_ptr<BackendNetwork> create_emu_rdna4_network(const Model& m) { return std::make_unique<EmuNetwork<ops::TileWmmaGfx12>>(m, "emu-rdna4"); }
std::unique_ptr<BackendNetwork> create_emu_cdna_network(const Model& m) { return std::make_unique<EmuNetwork<ops::TileMfmaGfx9>>(m, "emu-cdna"); }
std::unique_ptr<BackendNetwork> create_emu_nvidia_network(const Model& m) { return std::make_unique<EmuNetwork<ops::TileMmaSm80>>(m, "emu-nvidia"); }
std::unique_ptr<BackendNetwork> create_emu_nvidia_f16acc_network(const Model& m) {
  if (!has_f16_accumulation_kernel(m)) return std::make_unique<EmuNetwork<ops::TileMmaSm80>>(m, "emu-nvidia-f16acc");
  return std::make_unique<EmuNetwork<ops::TileMmaSm80F16Acc>>(m, "emu-nvidia-f16acc");
}

}  // namespace mlpcore::detail
