#pragma once
// How a fused-kernel backend runs one model, decided once when the network is built: the model's shape in
// tiles and activations, which kernel (compiled in, run-time-shaped, or specialized for this model), its
// policy (the family's table entry, ops/fused_policy.h) and its accumulation. Packing, kernel lookup and
// the specialized source all take this plan; nothing re-derives it from the Model.
#include <array>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "engine/src/backend.h"
#include "mlpcore/model.h"
#include "mlpcore/network.h"
#include "ops/fused_policy.h"

namespace mlpcore::detail {

enum class KernelKind {
  runtime_shaped,  // mlpcore_mlp_w<width_tiles>: depth and activations read at run time, layers padded to its width
  compiled_in,     // mlpcore_mlp_fixed_<fixed_index>: one of ops/fused_shapes.h
  specialized,     // mlpcore_mlp_specialized: this model's own kernel, compiled for it
};

// Which of a plan's kernels runs a call: the one of its I/O layout, or for a feature-major call of at least
// FusedPlan::large_batch samples the twin built for large batches, where the plan has one (large_batch_policy).
enum class KernelSlot { sample_major, feature_major, feature_major_large_batch };

// The edges a fixed-shape kernel runs on the tile's narrow instructions (FusedPolicy::narrow_input,
// ::narrow_output): a first layer of at most 8 features (K = 8), a last one of at most 8 units (N = 8).
// The host packs those layers for them (engine/src/fused_packing.h).
struct NarrowEdges {
  bool input = false, output = false;
  bool operator==(const NarrowEdges&) const = default;
};

// How a kernel's layers are packed (engine/src/fused_packing.h): the edges it runs on narrow instructions, and
// the width in tiles that every layer's input and every hidden layer's output is padded to with zero
// weights and biases (0: none; the run-time-shaped kernels' width, ops/fused_mlp.h, mlp_forward), but the
// first layer's input where one_tile_input (FusedPolicy::one_tile_first_layer).
struct PackedShape {
  NarrowEdges narrow;
  int padded_tiles = 0;
  bool one_tile_input = false;
  bool operator==(const PackedShape&) const = default;
};

struct FusedPlan {
  ops::TileFamily family = ops::TileFamily::rdna3;
  KernelKind kind = KernelKind::runtime_shaped;
  bool f16_accumulation = false;
  std::vector<int> widths;                   // in tiles of 16: input, then each layer's output
  std::vector<ActivationKind> activations;   // one per layer
  std::size_t input_dim = 0, output_dim = 0;
  int width_tiles = 1;                       // the widest layer in tiles
  int fixed_index = -1;                      // compiled_in: the ops/fused_shapes.h entry
  // runtime_shaped: whether a hidden layer's activation is other than ReLU where the family has twins that
  // test activations once per tile (ops::runtime_activations_per_tile), so that the kernel is the twin
  // (mlpcore_mlp_w<W>_act): the family's other kernels have ReLU hidden layers compiled in
  // (ops::RuntimeKernelActivations).
  bool activations_per_tile = false;
  // runtime_shaped: whether the feature-major kernels are the twins for an input of one tile with a hidden
  // layer after it (ops::runtime_one_tile_input_policy, mlpcore_mlp_w<W>_fm_one_tile_input; where the
  // network's weights fit, ops::kMaxOneTileInputTiles), which feature_major_policy then is.
  bool one_tile_input_twin = false;
  // What the kernels run with: `policy` the sample-major ones, `feature_major_policy` the feature-major ones.
  // They differ only where the table gives a kernel that reads feature-major input another first layer: a
  // narrow one that sample-major input does not pay for (specialized), or none of one K tile (the 128-wide
  // run-time-shaped kernel, unless one_tile_input_twin; ops::fused_policy, FusedShape::sample_major_input);
  // the compiled-in kernels serve both layouts with one.
  ops::FusedPolicy policy, feature_major_policy;
  // Whether the feature-major kernels (a specialized plan's, or the run-time-shaped ones) have twins that
  // calls of at least `large_batch` samples take (where the twin's policy differs from
  // feature_major_policy), run with large_batch_policy (equal to feature_major_policy without twins: a
  // specialized source builds twins where the two differ, the library has the run-time-shaped ones), and
  // whether float32 I/O calls take them too, else float16 ones only.
  bool large_batch_kernels = false;
  ops::FusedPolicy large_batch_policy;
  std::size_t large_batch = ops::kLargeBatch;
  bool large_batch_float32_io = false;
  // The I/O layouts its kernels serve: both for the built-in ones, the requested ones for a specialized one.
  NetworkOptions::Layouts layouts{true, true};
  std::string shape;                         // "64-64x5-4": input-width x hidden layers-output, or all widths
  // Why a network the backend could have specialized runs the built-in kernels instead; "" otherwise.
  std::string not_specialized;

  std::string kernel_name() const;           // the kernel's, without the suffixes of kernel_name(io, slot)
  // The kernel that runs calls of this I/O type in `slot`: kernel_name(), then "_f16" for float16 I/O, "_fm"
  // for feature-major, and "_large" for the large-batch twin or "_one_tile_input" for the one-tile-input one.
  std::string kernel_name(Io io, KernelSlot slot) const;
  // The small-batch twin of that kernel (has_small_batch_twin): a specialized kernel's has its name (its
  // code assembled again, in a module of its own), a run-time-shaped one's the suffix "_small".
  std::string small_batch_twin_name(Io io, KernelSlot slot) const;
  // The policy the kernel in `slot` runs with, and its small-batch twin (a run-time-shaped kernel's twin
  // runs a policy of its own, ops::runtime_small_batch_policy; a specialized kernel's the same).
  const ops::FusedPolicy& policy_of(KernelSlot slot) const;
  ops::FusedPolicy& policy_of(KernelSlot slot);
  ops::FusedPolicy small_batch_policy(KernelSlot slot) const;
  // The edges narrow instructions can run: an input of at most 8 features, an output of at most 8 units (a
  // specialized source's KnownEdges).
  NarrowEdges narrowable_edges() const { return {input_dim <= 8, output_dim <= 8}; }
  // The edges the kernel in `slot` runs on narrow instructions, and its layers are packed for: those of
  // narrowable_edges its policy narrows.
  NarrowEdges narrow_edges(KernelSlot slot) const;
  // How the kernel in `slot` needs the layers packed: its narrow edges, or padded to the run-time-shaped
  // kernel's width where a layer is narrower.
  PackedShape packed_shape(KernelSlot slot) const;
  // width_tiles rounded up to 1, 2, 4 or 8: the device-side API's kernel variant (mlpcore::with_max_tiles).
  int max_tiles() const { return width_tiles <= 1 ? 1 : width_tiles <= 2 ? 2 : width_tiles <= 4 ? 4 : 8; }
  // For Network::kernel(): "compiled in for 32-64x4-16 (float16 accumulation)", "run-time-shaped, 128
  // wide, for 3-128x8-1", "specialized for 64-64x5-4". `small_batch_calls`: whether calls may take the
  // small-batch twins (CallRouting::small_batch_blocks; not on the emulator without a multiprocessor count),
  // so that only twins that run are named.
  std::string describe(bool small_batch_calls = true) const;
  bool operator==(const FusedPlan&) const = default;
};

// Whether kernels built for `layouts` serve calls in `layout`.
inline bool serves(const NetworkOptions::Layouts& layouts, Layout layout) {
  return layout == Layout::feature_major ? layouts.feature_major : layouts.sample_major;
}

// Which kernels a backend may plan for. specialize: it can compile this model's own kernel;
// f16_accumulation: it accumulates in float16 wherever the kernel's shape is compiled in or specialized, and
// in the run-time-shaped kernels that have float16-accumulating twins (ops::runtime_f16_accumulation).
struct PlanRequest {
  ops::TileFamily family;
  bool specialize = false;
  bool f16_accumulation = false;
  NetworkOptions::Layouts layouts{};  // the ones a specialized kernel serves
};

inline constexpr std::array<KernelSlot, 3> kKernelSlots = {KernelSlot::sample_major, KernelSlot::feature_major,
                                                           KernelSlot::feature_major_large_batch};
inline Layout slot_layout(KernelSlot slot) { return slot == KernelSlot::sample_major ? Layout::sample_major : Layout::feature_major; }
// Whether the plan has a kernel in `slot` for I/O type `io`.
bool has_kernel(const FusedPlan& plan, KernelSlot slot, Io io);

// Whether the plan's kernel in `slot` for `io` has a small-batch twin, for calls of at most
// kSmallBatchBlocksPerMultiprocessor blocks per multiprocessor. NVIDIA's specialized kernels: the same code
// assembled without its register bound (from their PTX; engine/src/specialize.cpp). Such calls leave most of
// the registers the bound keeps free for blocks that never come; spent on each lane instead, they shorten
// the chain of layers. Twins are planned for sample- and feature-major kernels with a bound
// (FusedPolicy::min_blocks) of at most kMaxSmallBatchTiles matrix tiles (unrolled_tiles; with float16
// accumulators, which take half the registers, kMaxSmallBatchTilesF16Acc). NVIDIA's run-time-shaped kernels:
// a kernel of the library's where the policy table gives one (ops::runtime_small_batch_policy), both layouts.
bool has_small_batch_twin(const FusedPlan& plan, KernelSlot slot, Io io);

// Beyond these, ptxas spilled more than a kernel may (kMaxSpillBytes) at 255 registers, and the twin was
// dropped after its assembly had added a second to the build (NVRTC 13.0, feature-major: with float32
// accumulators 3-64x4-1's 56 tiles fit and 3-64x5-1's 72 spilled 64 bytes; with float16 ones 9-64x6-3's 88
// spilled 4 bytes and 2-64x8-3's 120 spilled 56).
inline constexpr int kMaxSmallBatchTiles = 64, kMaxSmallBatchTilesF16Acc = 96;

// Calls of at most this many blocks per multiprocessor take the small-batch twins. A twin's lanes take
// at most 255 registers, so that 2 of its blocks (ops::kFusedWavesPerBlock waves of 32 lanes) fit a
// multiprocessor's 64K: every block of such a call runs at once. (An H200, 132 multiprocessors, blocks of
// 128 samples: the twins ran 2^13-2^15 samples 3-111% faster than the bounded kernels; at 2^16, 4 blocks
// per multiprocessor, the unbounded assembly ran -17% to +18%: docs/benchmarks.md, "Stop 56", "Stop 57".)
inline constexpr unsigned kSmallBatchBlocksPerMultiprocessor = 2;

// Which of a plan's kernels a call takes, and the sample tiles per wave of each (what sizes a launch's
// grid), decided once from the plan for the backends and the emulator.
struct CallRouting {
  // By Io: the batch from which feature-major calls take the large-batch twin; never where the plan has
  // none for that I/O type.
  std::array<std::size_t, 2> large_batch_from = {std::numeric_limits<std::size_t>::max(), std::numeric_limits<std::size_t>::max()};
  std::array<int, kKernelSlots.size()> sample_tiles = {1, 1, 1};  // by KernelSlot
  // Whether the twin takes only calls whose input its shared-memory stage copies with cp.async (the input
  // 16-byte aligned, and a feature's batch of values a multiple of 16 bytes): a twin that prefetches the
  // input of a kernel without a stage, which would otherwise stage every block with the lanes' own loads
  // (17-63% slower than the kernel at 2^20 + 17 samples, float16 I/O, one H100).
  bool large_batch_takes_aligned_input_only = false;
  // By KernelSlot (sample_major, feature_major), then Io: whether the slot's kernel has a small-batch twin.
  std::array<std::array<bool, 2>, 2> small_batch_twin{};
  // The most blocks (fused_blocks) of a call that takes a small-batch twin: kSmallBatchBlocksPerMultiprocessor
  // times the device's multiprocessors; 0 without a count (the emulator), where no call takes one.
  std::size_t small_batch_blocks = 0;
  KernelSlot slot(const IoBuffers& call) const;
  // Whether `call`, routed to `slot`, takes that kernel's small-batch twin.
  bool takes_small_batch_twin(const IoBuffers& call, KernelSlot slot) const;
  int sample_tiles_in(KernelSlot slot) const { return sample_tiles[static_cast<std::size_t>(slot)]; }
};
// `multiprocessors`: the device's, which size the small-batch twins' share of calls (0: none take them).
CallRouting call_routing(const FusedPlan& plan, unsigned multiprocessors = 0);

// The blocks of ops::kFusedWavesPerBlock waves, each of `sample_tiles` tiles of 16 samples, that cover
// `batch` samples (at least 1): a launch's grid, before fused_grid's limit.
std::size_t fused_blocks(std::size_t batch, int sample_tiles);

// The matrix tiles (out x in) in a fixed-shape kernel's code: every layer's, less those of hidden layers
// that run in a loop (FusedPolicy::loop_layers).
int unrolled_tiles(const FusedPlan& plan);

// An NVIDIA specialized kernel has at most this many tiles in its code; a larger one is planned as the
// built-in kernels (NVRTC's unrolling gave up on 104-128-128-128-128-128-128-89 with seven different
// activations, 424 tiles: loops over register arrays put them in local memory).
inline constexpr int kMaxUnrolledTiles = 256;

// Throws Error(unsupported_model) for a layer wider than ops::kMaxFusedWidth, naming `backend`.
FusedPlan plan_fused(const Model& model, const char* backend, PlanRequest request);

}  // namespace mlpcore::detail
