#pragma once
// The fused MLP kernel, written once against the tile interface. A wave evaluates its policy's
// sample_tiles tiles of 16 samples at a time through every layer: the input tile is converted to float16
// by the tile's pack2 (cvt_pkrtz on AMD, cvt.rn on NVIDIA), each layer's accumulators start from the
// bias, run the matrix instruction over the K tiles with the packed weights as A and the activations as
// B, apply the activation in registers and turn into the next layer's B (to_b_layout).
// Activations never leave registers between layers. Waves stride over the batch's 16-sample tiles.
//
// Two drivers: mlp_forward<Tile, W> reads the depth and activations at run time (any network whose widest
// layer is at most 16 W, its layers padded to that width), mlp_forward_fixed<Tile, Policy, Activations, Edges, Widths...> has
// the activations and the shape (in tiles of 16: input, hidden..., output) compiled in, so its loops,
// guards and activation switches disappear; where the policy says so, its first and last layers run
// narrower instructions when they are at most 8 wide (FusedPolicy::narrow_input, ::narrow_output). The
// fixed driver is what the compiled-in shapes (ops/fused_shapes.h) and every model's specialized kernel
// (ops/fused_mlp_specialized.h) instantiate.
#include <cstddef>
#include <cstdint>

#include "ops/activation_math.h"
#include "ops/float16_range.h"
#include "ops/mlp_network.h"
#include "ops/std_subset.h"
#include "ops/tile_ops.h"

namespace mlpcore::ops {

// f(stdx::integral_constant<int, I>{}) for I = 0 .. N-1, unrolled by construction: a compiler that declines
// to unroll a large loop over register arrays (NVRTC did, for a layer's output tiles with costly
// activations) puts the arrays in local memory. Only for such loops: each call is a function the
// compiler optimizes before it inlines it (NVRTC took twice as long with a layer's output tiles written
// this way, FusedPolicy::compiler_unrolls_tiles).
template <int N, class F>
MLPCORE_DEVICE void static_for(F&& f) {
  [&]<int... I>(stdx::integer_sequence<int, I...>) { (f(stdx::integral_constant<int, I>{}), ...); }(stdx::make_integer_sequence<int, N>{});
}

// Slot `slot` of the `block`-th block of `slots` fragments (Frag-sized) from `base`: where a lane finds its
// fragment in the packed arrays, one wide load. On AMD the block's address is the wave's (scalar
// registers) and the lane indexes it: per-lane 64-bit addresses for every block are what clang-17
// hoisted out of the sample loop and spilled (134 VGPRs in 32-128x4-16 on gfx1100). On NVIDIA the
// one-index form measured 1-4% faster (ptxas schedules it better).
template <class Frag, class T>
MLPCORE_DEVICE Frag load_fragment(const T* base, int block, int slots, int slot) {
  constexpr int kElements = static_cast<int>(sizeof(Frag) / sizeof(T));
#if MLPCORE_DEVICE_AMD
  return reinterpret_cast<const Frag*>(base + block * slots * kElements)[slot];
#else
  return *reinterpret_cast<const Frag*>(base + (block * slots + slot) * kElements);
#endif
}

// The A fragment of output tile `mt`, K tile `kt`: kA contiguous halves per lane.
template <class Tile>
MLPCORE_DEVICE typename Tile::AFrag load_packed_a(const half_t* layer_weights, int in_tiles, int mt, int kt) {
  static_assert(sizeof(typename Tile::AFrag) == Tile::kA * sizeof(half_t));
  return load_fragment<typename Tile::AFrag>(layer_weights, mt * in_tiles + kt, Tile::kWave, static_cast<int>(lane_id()));
}

// The accumulator holding output tile mt's biases, packed per bias slot in accumulator order: one wide load.
template <class Tile>
MLPCORE_DEVICE typename Tile::AccFrag load_packed_bias(const acc_elem_t<Tile>* layer_biases, int mt) {
  static_assert(sizeof(typename Tile::AccFrag) == Tile::kAcc * sizeof(acc_elem_t<Tile>));
  return load_fragment<typename Tile::AccFrag>(layer_biases, mt, Tile::kBiasSlots, Tile::bias_slot(static_cast<int>(lane_id())));
}

template <class Tile>
MLPCORE_DEVICE void activate_values(typename Tile::AccFrag& acc, ActivationKind kind, float param) {
  for (int i = 0; i < Tile::kAcc; ++i) acc[i] = static_cast<acc_elem_t<Tile>>(activate<float, GpuMath>(kind, param, static_cast<float>(acc[i])));
}

// The activation of a tile's values: a kind known only at run time tested per value, or (PerTile) once for
// the tile, each activation's code compiled on its own (with_activation).
template <class Tile, bool PerTile = false>
MLPCORE_DEVICE void activate_tile(typename Tile::AccFrag& acc, ActivationKind kind, float param) {
  if (kind == ActivationKind::none) return;
  if constexpr (PerTile)
    with_activation(kind, [&](auto k) {
      if constexpr (decltype(k)::value != ActivationKind::none) activate_values<Tile>(acc, k, param);
    });
  else
    activate_values<Tile>(acc, kind, param);
}

// float16 accumulators are float16 values too: they are checked as the matrix instructions leave them,
// every layer's, before the activation. A sum that overflowed is infinite there, which a bounded
// activation (sigmoid, tanh) or the ReLU of -inf would hide.
template <class Tile>
MLPCORE_DEVICE void see_float16_sums(const typename Tile::AccFrag& acc, Float16Range& range) {
  if constexpr (sizeof(acc_elem_t<Tile>) == 2) range.see_packed<Tile>(acc);
}

// A hidden layer's output tile, activated already (but for a ReLU the tile folds into its packing,
// Tile::to_b_layout_relu), as the next layer's input, seen by the float16 range check as packed; after
// float16 sums (checked before the activation, see_float16_sums) only what the activation can make larger.
template <class Tile>
MLPCORE_DEVICE auto pack_activated(const typename Tile::AccFrag& acc, ActivationKind kind, Float16Range& range) {
  constexpr bool kFloat32 = sizeof(acc_elem_t<Tile>) == 4;
  const auto checked = [&](ActivationReach reach, const auto& b) {
    range.see_packed<Tile>(b, reach);
    return b;
  };
  if constexpr (FoldsRelu<Tile>) {  // (ReLU keeps the positive values as they are)
    if (kind == ActivationKind::relu) return checked(kFloat32 ? ActivationReach::above : ActivationReach::bounded, Tile::to_b_layout_relu(acc));
  }
  return checked(kFloat32 ? reach_of(kind) : reach_beyond_input(kind), Tile::to_b_layout(acc));
}

// Whether the tile's packing applies `kind` (pack_activated): then nothing else does.
template <class Tile>
MLPCORE_DEVICE bool packing_applies(ActivationKind kind) {
  return FoldsRelu<Tile> && kind == ActivationKind::relu;
}

// A hidden layer's output tile, activated, as the next layer's input, seen by the float16 range check.
template <class Tile, bool PerTile>
MLPCORE_DEVICE auto activate_to_b(typename Tile::AccFrag acc, ActivationKind kind, float param, Float16Range& range) {
  see_float16_sums<Tile>(acc, range);
  if (!packing_applies<Tile>(kind)) activate_tile<Tile, PerTile>(acc, kind, param);
  return pack_activated<Tile>(acc, kind, range);
}

// A descriptor's value as the policy reads it: warp-uniform where it says so (uniform_descriptors).
template <FusedPolicy kPolicy>
MLPCORE_DEVICE unsigned descriptor_value(unsigned v) {
  if constexpr (kPolicy.uniform_descriptors) return warp_uniform(v);
  return v;
}

// Which activation a layer applies: the one its descriptor names, or one compiled in
// (reads_descriptor(last) says which); with kPerTile a kind read at run time is tested once per tile
// rather than per value (activate_tile).
struct RuntimeActivations {
  static constexpr bool kPerTile = false;
  MLPCORE_DEVICE static constexpr bool reads_descriptor(bool) { return true; }
  MLPCORE_DEVICE static ActivationKind of(const LayerDesc& d, bool) { return d.activation; }
};
// NVIDIA's run-time-shaped kernels without a suffix (mlpcore_mlp_w<W>): every hidden layer's activation is
// ReLU, compiled in, and only the output layer's is read (and tested per value); the plan names the
// per-tile twins for networks with any other hidden activation (FusedPlan::activations_per_tile). A kind
// read per layer made each output and sample tile branch on it (4-96x2-1 feature-major: 114 branches and
// 52 reconvergence barriers per 32 samples, the specialized kernel 13 and 18; 994 instructions against
// 636): without, on an H200, ReLU networks 16-128 wide +20% feature-major and +12% sample-major at 2^22,
// +8% and +18% at 2^16 (geometric means of 18 networks, with the launch bounds ops::fused_policy gives
// them since; docs/benchmarks.md, "Stop 48"); leaky ReLU networks run 1.6-5.4 times faster in the twins.
struct ReluHiddenActivations {
  static constexpr bool kPerTile = false;
  MLPCORE_DEVICE static constexpr bool reads_descriptor(bool last) { return last; }
  MLPCORE_DEVICE static ActivationKind of(const LayerDesc& d, bool last) { return last ? d.activation : ActivationKind::relu; }
};
// The twin for networks with a hidden activation other than ReLU, on NVIDIA (FusedPlan::activations_per_tile,
// runtime_activations_per_tile). Tested per value, each value's test covers the nine kinds (NVVM keeps
// activate's switch on every value): on an H200 SiLU, sine, softplus and tanh networks ran 1.5-3.2 times
// slower so (docs/benchmarks.md, "Stop 45"). ReLU networks keep their kernel: with the per-tile code in
// it, though they never run it, they ran up to 22% slower.
struct RuntimeActivationsPerTile : RuntimeActivations {
  static constexpr bool kPerTile = true;
};
// The activations of a family's run-time-shaped kernels without a suffix: ReLU hidden layers compiled in
// where twins take every other hidden activation (runtime_activations_per_tile), else each layer's read.
template <TileFamily Family>
using RuntimeKernelActivations = stdx::conditional_t<runtime_activations_per_tile(Family), ReluHiddenActivations, RuntimeActivations>;
template <ActivationKind Kind>
struct FixedActivation {
  static constexpr bool kPerTile = false;
  MLPCORE_DEVICE static constexpr bool reads_descriptor(bool) { return false; }
  MLPCORE_DEVICE static ActivationKind of(const LayerDesc&, bool) { return Kind; }
};

// Where one wave is in the batch: S tiles of 16 samples from sample0. Several tiles per wave reuse each
// weight fragment S times and give the matrix unit S independent accumulation chains.
struct SampleBlock {
  unsigned sample0;
  unsigned batch;
};

// A quiet NaN: what the samples past the batch in a partial tile hold (see load_input), and what the
// device API returns where the range check failed.
inline constexpr float kQuietNaN = __builtin_bit_cast(float, 0x7fc00000u);

// Inputs and outputs are float32 or float16 (Io = float or half_t) in memory; the kernel computes the same.
// Tiles with row-vector I/O (RowVectorIo: 4 consecutive values per lane and sample row) use it
// wherever the sample tile is whole and the rows allow it: a dimension that is a multiple of 4 and a base
// aligned to 4 values.
template <class Io>
MLPCORE_DEVICE bool rows_vectorizable(const Io* base, unsigned dim) {
  return dim % 4 == 0 && reinterpret_cast<std::uintptr_t>(base) % (4 * sizeof(Io)) == 0;
}

// Tiles with column-vector I/O (ColumnVectorIo) use it for feature-major blocks whose every sample is in
// the batch, where a lane's 2S consecutive samples (Tile::block_sample) start aligned as their vector
// (vec<Io, 2S>, at most 16 bytes): every feature row, so the base and the batch's bytes too.
template <int S, class Io>
MLPCORE_DEVICE bool columns_vectorizable(const Io* base, unsigned batch) {
  constexpr std::size_t kAlign = alignof(vec<Io, 2 * S>);
  return batch * sizeof(Io) % kAlign == 0 && reinterpret_cast<std::uintptr_t>(base) % kAlign == 0;
}

// Sample n of tile s of a block of S tiles (Tile::block_sample), counted from the block's first.
template <class Tile, int S>
MLPCORE_DEVICE unsigned sample_in_block(int s, int n) {
  return static_cast<unsigned>(Tile::block_sample(S, s, n));
}

// The sample that sample tile s of block b counts its columns' samples from, in layout L, and the sample
// (counted from it) of the tile's hardware column n: sample-major tiles take 16 consecutive samples' rows
// (from the tile's first), feature-major ones the columns of Tile::block_sample (from the block's first).
template <IoLayout L>
MLPCORE_DEVICE unsigned tile_first_sample(SampleBlock b, int s) {
  if constexpr (L == IoLayout::feature_major) return b.sample0;
  return b.sample0 + 16u * static_cast<unsigned>(s);
}
template <class Tile, IoLayout L, int S>
MLPCORE_DEVICE unsigned tile_column_sample(int s, int n) {
  if constexpr (L == IoLayout::feature_major) return sample_in_block<Tile, S>(s, n);
  return static_cast<unsigned>(n);
}

// Whether every sample of block b's S tiles is in the batch.
template <int S>
MLPCORE_DEVICE bool block_in_batch(SampleBlock b) {
  return b.sample0 + 16u * S <= b.batch;
}

// Whether every sample of tile s of block b is in the batch, in layout L.
template <class Tile, IoLayout L, int S>
MLPCORE_DEVICE bool tile_in_batch(SampleBlock b, int s) {
  unsigned last = 0;
  for (int n = 0; n < 16; ++n) {
    const unsigned at = tile_column_sample<Tile, L, S>(s, n);
    last = at > last ? at : last;
  }
  return tile_first_sample<L>(b, s) + (last + 1) <= b.batch;
}

// Element (row, col) of rows `len` values long, computed in Offset (input_offset_t, output_offset_t below).
template <class Offset>
MLPCORE_DEVICE Offset row_offset(int row, unsigned len, int col) {
  return static_cast<Offset>(row) * len + static_cast<Offset>(col);
}

// Where value (f, n) of sample tile s is from its tile's start (io_tile), f a feature or output unit and n a
// hardware column: sample-major in row n (a sample's `len` values), column f; feature-major in row f (a
// feature's `len` = batch values), the column of tile_column_sample.
template <class Offset, class Tile, IoLayout L, int S>
MLPCORE_DEVICE Offset io_offset(int f, int n, int s, unsigned len) {
  if constexpr (L == IoLayout::feature_major) return row_offset<Offset>(f, len, static_cast<int>(tile_column_sample<Tile, L, S>(s, n)));
  return row_offset<Offset>(n, len, f);
}

// Where sample tile s of feature or unit tile t of the block from sample0 starts in an array of rows `len`
// values long (as io_offset): feature-major, all S sample tiles share the start (io_offset places them).
template <IoLayout L, class Io>
MLPCORE_DEVICE Io* io_tile(Io* array, unsigned sample0, int s, int t, unsigned len) {
  if constexpr (L == IoLayout::feature_major) return array + static_cast<std::size_t>(t * 16) * len + sample0;
  return array + static_cast<std::size_t>(sample0 + 16u * static_cast<unsigned>(s)) * len + t * 16;
}

// The offset widths. Inputs: feature-major 32-bit on every GPU (16 rows of at most 2^28 samples,
// check_fused_batch: with 64-bit ones ptxas spilled NVIDIA's 128-wide run-time-shaped kernel, 60 B at 168
// registers; none at 195 with these); sample-major 64-bit. Outputs: 32-bit on AMD, where 64-bit per-lane
// offsets for every element are what clang-17 hoisted out of the sample loop and spilled in the 128-wide
// run-time-shaped RDNA3 kernel (and clang-19 in its feature-major twin); NVIDIA's code keeps the form it
// was measured with.
template <IoLayout L>
struct InputOffset {
  using type = std::size_t;
};
template <>
struct InputOffset<IoLayout::feature_major> {
  using type = unsigned;
};
template <IoLayout L>
using input_offset_t = typename InputOffset<L>::type;
#if MLPCORE_DEVICE_AMD
using output_offset_t = unsigned;
#else
using output_offset_t = std::size_t;
#endif

// The input tiles of block b, seen by the float16 range check. `rows` is where sample b.sample0's values
// start: sample_major, its row (in_dim values; the next sample's follows); feature_major, its first
// feature's value (each feature's b.batch values are a row; lanes of neighbouring samples read
// neighbouring values). StagedWhole: every block is whole and its rows aligned for column vectors (an
// InputPrefetch that stages every block), so only the vector loads are built. Tiles from in_tiles on are
// zeros where ZeroPastInput (a run-time-shaped kernel's first layer reads all its Tiles), else left as they
// are. (Zeroed as tiles of no features, through the same loads: with those tiles skipped by a branch and
// the array zero-initialised instead, clang-17 gave the 112- and 128-wide RDNA3 kernels 256 VGPRs and
// scratch, 160-167 at 64 wide; 184-216 and 132-149 this way.) Rows: how whole sample-major tiles that row
// vectors cannot read load (RowLoads, FusedPolicy::row_loads).
template <class Tile, IoLayout L = IoLayout::sample_major, bool StagedWhole = false, bool ZeroPastInput = false, RowLoads Rows = RowLoads::branched,
          int Tiles, int S, class Io>
MLPCORE_DEVICE void load_input(typename Tile::BFrag (&act)[Tiles][S], int in_tiles, const Io* rows, unsigned in_dim, SampleBlock b,
                               Float16Range& range) {
  constexpr bool kFeatureMajor = L == IoLayout::feature_major;
  const auto skipped = [&](int kt) { return !ZeroPastInput && kt >= in_tiles; };
  const auto tile_features = [&](int kt) { return ZeroPastInput && kt >= in_tiles ? 0u : in_dim - static_cast<unsigned>(kt) * 16; };
  if constexpr (kFeatureMajor && ColumnVectorIo<Tile>) {
    if (StagedWhole || (block_in_batch<S>(b) && columns_vectorizable<S>(rows, b.batch))) {
      MLPCORE_UNROLL
      for (int kt = 0; kt < Tiles; ++kt) {
        if (skipped(kt)) continue;
        Tile::template load_columns<S>(act[kt], io_tile<L>(rows, 0, 0, kt, b.batch), b.batch, tile_features(kt));
        MLPCORE_UNROLL
        for (int s = 0; s < S; ++s) range.see_packed<Tile>(act[kt][s]);
      }
      return;
    }
  }
  static_assert(!StagedWhole || (kFeatureMajor && ColumnVectorIo<Tile>), "only column-vector loads read staged blocks");
  const unsigned len = kFeatureMajor ? b.batch : in_dim;
  const bool vector_rows = !kFeatureMajor && rows_vectorizable(rows, in_dim);
  MLPCORE_UNROLL
  for (int s = 0; s < S; ++s) {
    const unsigned first = tile_first_sample<L>(b, s);
    const bool whole_tile = tile_in_batch<Tile, L, S>(b, s);
    MLPCORE_UNROLL
    for (int kt = 0; kt < Tiles; ++kt) {
      if (skipped(kt)) continue;
      const Io* tile = io_tile<L>(rows, 0, s, kt, len);
      const unsigned features = tile_features(kt);
      act[kt][s] = [&] {
        // (defined here, not outside this lambda: from there clang-19 kept more loads in flight, and the
        // 128-wide RDNA3 float16 kernel spilled; and its row length not through `len`: with it, clang-19
        // took the device-side API's 64-wide gfx90a kernel from 64 VGPRs to 68)
        const auto at = [&](int f, int n) {
          return static_cast<float>(tile[io_offset<input_offset_t<L>, Tile, L, S>(f, n, s, kFeatureMajor ? b.batch : in_dim)]);
        };
        if constexpr (!kFeatureMajor && RowVectorIo<Tile>) {
          if (whole_tile && vector_rows) return Tile::load_rows(tile, in_dim, features);
        }
        if (whole_tile && features >= 16) return load_b<Tile>(at);  // uniform branch: no per-element checks
        if constexpr (!kFeatureMajor && RowVectorIo<Tile> && Rows != RowLoads::branched) {
          // Whole tiles whose rows row vectors cannot read (2, 3, 5 features...), without the per-sample test
          // below, under which each value was a branch with reconvergence barriers (about 13 instructions a
          // value): every value loads from a feature clamped into the row and padding features are then
          // selected to 0, or (RowLoads::tested) only the row's features load, each under its test.
          if (whole_tile) {
            // A tile past the input (ZeroPastInput) has no feature to clamp to.
            if (features == 0) return typename Tile::BFrag{};
            if constexpr (Rows == RowLoads::tested)
              return load_b<Tile>([&](int f, int n) { return static_cast<unsigned>(f) < features ? at(f, n) : 0.0f; });
            const int last_feature = static_cast<int>(features) - 1;
            return load_b<Tile>([&](int f, int n) {
              const float v = at(f < last_feature ? f : last_feature, n);
              return f <= last_feature ? v : 0.0f;
            });
          }
        }
        return load_b<Tile>([&](int f, int n) {
          // Padding features meet zero weights. (The test in the form each layout's kernels were measured with:
          // with the sample-major one, ptxas gave 64-64x5-4's `cuda` feature-major kernels 144 and 152
          // registers instead of 108, and they ran 27-30% slower at 2^16.)
          const bool padding = kFeatureMajor ? static_cast<unsigned>(f) >= features : static_cast<unsigned>(kt * 16 + f) >= in_dim;
          const unsigned sample = first + tile_column_sample<Tile, L, S>(s, n);
          if (padding) return 0.0f;
          // Samples past the batch are NaN: a NaN stays in its own sample, and the range check passes it over
          // (zeros could overflow, as in an exponential layer with a large bias).
          return sample < b.batch ? at(f, n) : kQuietNaN;
        });
      }();  // (one assignment: with a conditional expression clang-19 spilled the 128-wide RDNA3 kernel, and
            // with a `continue` after the row-vector load ptxas spilled at 96 registers)
      range.see_packed<Tile>(act[kt][s]);
    }
  }
}

// Output tile mt of the accumulator rows' units (Tile::acc_unit) for block b's S sample tiles, in layout L.
// TestedRows: whole sample-major tiles that row vectors cannot write test each value's unit alone
// (FusedPolicy::tested_row_stores).
template <class Tile, IoLayout L = IoLayout::sample_major, bool TestedRows = false, int S, class Io>
MLPCORE_DEVICE void store_output(const typename Tile::AccFrag (&acc)[S], int mt, Io* output, unsigned out_dim, SampleBlock b) {
  constexpr bool kFeatureMajor = L == IoLayout::feature_major;
  const unsigned len = kFeatureMajor ? b.batch : out_dim, units = out_dim - static_cast<unsigned>(mt) * 16;
  if constexpr (kFeatureMajor && ColumnVectorIo<Tile>) {
    if (block_in_batch<S>(b) && columns_vectorizable<S>(output, b.batch))
      return Tile::template store_columns<S>(acc, io_tile<L>(output, b.sample0, 0, mt, len), b.batch, units);
  }
  MLPCORE_UNROLL
  for (int s = 0; s < S; ++s) {
    const unsigned first = tile_first_sample<L>(b, s);
    const bool whole_tile = tile_in_batch<Tile, L, S>(b, s);
    Io* tile = io_tile<L>(output, b.sample0, s, mt, len);
    const auto at = [&](int m, int n) -> Io& { return tile[io_offset<output_offset_t, Tile, L, S>(Tile::acc_unit(m), n, s, len)]; };
    if constexpr (!kFeatureMajor && RowVectorIo<Tile>) {
      if (whole_tile && rows_vectorizable(output, out_dim)) {
        Tile::store_rows(acc[s], tile, out_dim, units);
        continue;
      }
    }
    if (whole_tile && units >= 16) {
      store_acc<Tile>(acc[s], [&](int m, int n, float v) { at(m, n) = static_cast<Io>(v); });
      continue;
    }
    if constexpr (!kFeatureMajor && RowVectorIo<Tile> && TestedRows) {
      if (whole_tile) {
        store_acc<Tile>(acc[s], [&](int m, int n, float v) {
          if (static_cast<unsigned>(Tile::acc_unit(m)) < units) at(m, n) = static_cast<Io>(v);
        });
        continue;
      }
    }
    store_acc<Tile>(acc[s], [&](int m, int n, float v) {
      if (static_cast<unsigned>(Tile::acc_unit(m)) < units && first + tile_column_sample<Tile, L, S>(s, n) < b.batch) at(m, n) = static_cast<Io>(v);
    });
  }
}

// One dense layer, with Tile's instructions, on the activations in `act` (registers indexed only by
// unrolled counters), as kPolicy says (prefetch_weights, prefetch_bias, compiler_unrolls_tiles). A hidden layer leaves
// its output in `out` (which may be `act`), seen by `range`; the last layer stores it.
template <class Tile, class Activations, FusedPolicy kPolicy, IoLayout L = IoLayout::sample_major, int InTiles, int Tiles, int S, class OutFrag,
          class Io>
MLPCORE_DEVICE void dense_layer(const NetworkView& net, const LayerDesc& d, int in_tiles, int out_tiles, bool last,
                                const typename Tile::BFrag (&act)[InTiles][S], OutFrag (&out)[Tiles][S], Io* output, SampleBlock b,
                                Float16Range& range) {
  const half_t* w = net.weights + d.weight_offset;
  const auto* bias = static_cast<const acc_elem_t<Tile>*>(net.biases) + d.bias_offset;
  // With uniform_descriptors an activation read from the descriptor is made warp-uniform once, before the
  // layer's tiles; else each tile reads it where it applies it (hoisted, the 80-128-wide kernels' code
  // moved: 6 more registers).
  const bool read = Activations::reads_descriptor(last);
  [[maybe_unused]] ActivationKind uniform_kind{};
  if constexpr (kPolicy.uniform_descriptors) {
    if (read) uniform_kind = static_cast<ActivationKind>(descriptor_value<kPolicy>(static_cast<unsigned>(Activations::of(d, last))));
  }
  const auto kind = [&] {
    if constexpr (kPolicy.uniform_descriptors) {
      if (read) return uniform_kind;
    }
    return Activations::of(d, last);
  };
  constexpr bool Prefetch = kPolicy.prefetch_weights, PrefetchBias = kPolicy.prefetch_bias;
  static_assert(Prefetch || !PrefetchBias, "a bias loads ahead with its tile's weights");
  OutFrag next[Tiles][S];
  // With Prefetch, output tile mt + 1's weight fragments (and with PrefetchBias its bias) load while tile
  // mt's matrix instructions run (their L1 latency is what such a kernel otherwise waits on).
  typename Tile::AFrag weights[InTiles]{}, upcoming[InTiles]{};  // only fragments kt < in_tiles are read
  typename Tile::AccFrag bias_ahead{}, bias_upcoming{};
  const auto load_ahead = [&](int mt, typename Tile::AFrag (&into)[InTiles], typename Tile::AccFrag& bias_into) {
    MLPCORE_UNROLL
    for (int kt = 0; kt < InTiles; ++kt)
      if (kt < in_tiles) into[kt] = load_packed_a<Tile>(w, in_tiles, mt, kt);
    if constexpr (PrefetchBias) bias_into = load_packed_bias<Tile>(bias, mt);
  };
  if constexpr (Prefetch) load_ahead(0, weights, bias_ahead);
  const auto output_tile = [&](auto tile) {  // tile: an int, or static_for's integral_constant
    const int mt = tile;
    if (mt >= out_tiles) return;
    if constexpr (Prefetch) {
      if (mt + 1 < out_tiles) load_ahead(mt + 1, upcoming, bias_upcoming);
    }
    // The bias is the first K tile's C operand: no copies into the S accumulators.
    const typename Tile::AccFrag bias_acc = PrefetchBias ? bias_ahead : load_packed_bias<Tile>(bias, mt);
    typename Tile::AccFrag acc[S];
    MLPCORE_UNROLL
    for (int kt = 0; kt < InTiles; ++kt) {
      if (kt > 0 && kt >= in_tiles) break;  // a layer has at least one K tile: every acc[s] is set
      // Without Prefetch each fragment loads right before its instructions: the fewest live registers.
      const typename Tile::AFrag fragment = Prefetch ? weights[kt] : load_packed_a<Tile>(w, in_tiles, mt, kt);
      MLPCORE_UNROLL
      for (int s = 0; s < S; ++s) acc[s] = Tile::mma(fragment, act[kt][s], kt == 0 ? bias_acc : acc[s]);
    }
    if constexpr (Prefetch) {
      MLPCORE_UNROLL
      for (int kt = 0; kt < InTiles; ++kt)
        if (kt < in_tiles && mt + 1 < out_tiles) weights[kt] = upcoming[kt];
      if (PrefetchBias && mt + 1 < out_tiles) bias_ahead = bias_upcoming;
    }
    if (last) {
      MLPCORE_UNROLL
      for (int s = 0; s < S; ++s) {
        see_float16_sums<Tile>(acc[s], range);
        activate_tile<Tile, Activations::kPerTile>(acc[s], kind(), d.param);
      }
      store_output<Tile, L, kPolicy.tested_row_stores>(acc, mt, output, net.output_dim, b);
    } else if constexpr (FeedsNextLayer<Tile>) {
      MLPCORE_UNROLL
      for (int s = 0; s < S; ++s) next[mt][s] = activate_to_b<Tile, Activations::kPerTile>(acc[s], kind(), d.param, range);
    }
    // Without this the scheduler hoists later tiles' weight loads and a 128-wide RDNA3 layer spills.
    schedule_barrier();
  };
  if constexpr (kPolicy.compiler_unrolls_tiles) {
    MLPCORE_UNROLL
    for (int mt = 0; mt < Tiles; ++mt) output_tile(mt);
  } else {
    static_for<Tiles>(output_tile);
  }
  if constexpr (FeedsNextLayer<Tile>) {
    if (last) return;
    MLPCORE_UNROLL
    for (int mt = 0; mt < Tiles; ++mt)
      MLPCORE_UNROLL
      for (int s = 0; s < S; ++s)
        if (mt < out_tiles) out[mt][s] = next[mt][s];
  }
}

// Calls f(block, next) for each block of S sample tiles this wave owns (grid-stride over waves); next is
// the first sample of the wave's following block, >= batch after its last.
template <class Tile, int S, class F>
MLPCORE_DEVICE void for_each_sample_block(unsigned batch, F f) {
  static_assert(S <= kMaxSampleTiles, "the host bounds a call's batch by kMaxSampleTiles (check_fused_batch)");
  const unsigned waves_per_block = block_dim_x() / Tile::kWave;
  const unsigned stride = grid_dim_x() * waves_per_block;
  const unsigned blocks = (batch + 16 * S - 1) / (16 * S);
  for (unsigned t = block_x() * waves_per_block + thread_x() / Tile::kWave; t < blocks; t += stride)
    f(SampleBlock{t * 16 * S, batch}, t + stride < blocks ? (t + stride) * 16 * S : batch);
}

// What load_input reads for a block: its rows, and the block to read them as.
template <class Io>
struct BlockRows {
  const Io* rows;
  SampleBlock block;
};

// FusedPolicy::prefetch_input: while a wave computes on one block of S sample tiles, the input of its
// next block is copied into the wave's shared memory (Tile::copy_async16), whole 16-byte chunks only.
//  - Sample-major: whole blocks of a 16-byte aligned input (a block's rows are then whole chunks); other
//    blocks read global memory.
//  - Feature-major, where stages_feature_major_input says (ops/fused_policy.h): every block goes through
//    the stage, each feature's 16 S samples a row. Whole blocks of an input whose feature rows start
//    16-byte aligned are fetched as above (a wave's first block when it is reached); a partial block, and
//    every block of an unaligned input, are staged by the wave's own loads, samples past the batch as NaN
//    (as load_input pads them). The tiles then load from shared memory without per-sample checks: reading
//    global memory with those checks made ptxas spill at the policy's register bound (16-64x3-16: 112 B
//    at 96 registers).
template <class Tile, class Io, FusedPolicy kPolicy, int InTiles, IoLayout L>
class InputPrefetch {
  static constexpr bool kFeatureMajor = L == IoLayout::feature_major;
  static constexpr bool Enabled =
      kFeatureMajor ? stages_feature_major_input(Tile::kFamily, kPolicy, InTiles) && CopiesAsync<Tile> : kPolicy.prefetch_input;
  static constexpr int S = kPolicy.sample_tiles;
  static constexpr unsigned kBlockSamples = 16 * S;
  // Feature rows of the stage, 16 bytes longer than a block's samples: the column loads of one feature
  // per lane (Tile::load_columns; lanes of features 4t + j, t = 0..3, and 8 sample groups) then find
  // features 4t of even and odd t in different banks, though those of t and t + 2 still share theirs:
  // on an H100 Nsight Compute counted 4.1 shared-memory wavefronts per float16 load where 2 would hold it
  // (16-64x2-4; 8.3 where 4 would with float32). No row length that keeps cp.async's 16-byte alignment
  // spreads all four; rows 8-15 of each tile swapped in pairs did (stop 35), and moved the kernels -9% to
  // +7% (their bound is elsewhere), so the rows keep their order.
  static constexpr unsigned kFeatureStride = kBlockSamples + 16 / sizeof(Io);
  static constexpr unsigned kChunks = 16 * InTiles * (kFeatureMajor ? kFeatureStride : kBlockSamples) * sizeof(Io) / 16;
  static_assert(kFeatureStride * sizeof(Io) % 16 == 0, "stage rows must be whole 16-byte chunks");

 public:
  // Whether every block's rows are the stage's: whole, and aligned for column vectors (load_input's StagedWhole).
  static constexpr bool kStagesEveryBlock = Enabled && kFeatureMajor;
  static_assert(!kStagesEveryBlock || alignof(vec<Io, 2 * S>) <= 16, "a staged row's column vectors are aligned (load_input's StagedWhole)");

  MLPCORE_DEVICE InputPrefetch(const Io* input, unsigned in_dim, unsigned batch) : input_(input), in_dim_(in_dim), batch_(batch) {
    if constexpr (Enabled) {
      MLPCORE_SHARED vec<std::uint32_t, 4> chunks[kFusedWavesPerBlock][kChunks];
      stage_ = chunks[thread_x() / Tile::kWave];
      aligned_ = copies_input_in_chunks(reinterpret_cast<std::uintptr_t>(input), kFeatureMajor ? batch * sizeof(Io) : 0);
    }
  }
  // Where block b's input is: in shared memory if it was fetched (feature-major: always), else in the input.
  MLPCORE_DEVICE BlockRows<Io> rows(SampleBlock b) {
    if constexpr (Enabled) {
      if constexpr (kFeatureMajor) {
        if (fetched_ != b.sample0) fetch(b.sample0);        // the wave's first block: fetched now
        if (fetched_ != b.sample0) stage_block(b.sample0);  // a partial block, or an unaligned input
      }
      if (fetched_ == b.sample0) {
        Tile::wait_async_copies();
        sync_wave();  // the other lanes' copies are visible
      }
      // A staged feature-major block reads as a whole feature-major array of kFeatureStride samples.
      if (kFeatureMajor || fetched_ == b.sample0) return {staged(), kFeatureMajor ? SampleBlock{0, kFeatureStride} : b};
    }
    if constexpr (kFeatureMajor) return {input_ + b.sample0, b};
    return {input_ + static_cast<std::size_t>(b.sample0) * in_dim_, b};
  }
  // Starts fetching block sample0's input, once the wave has read the previous block's.
  MLPCORE_DEVICE void fetch(unsigned sample0) {
    if constexpr (Enabled) {
      fetched_ = kNone;
      if (!aligned_ || sample0 + kBlockSamples > batch_) return;  // not a whole block
      fetched_ = sample0;
      sync_wave();
      // The block's kBlockSamples x in_dim_ values in 16-byte chunks, in order: consecutive in the input and
      // the stage sample-major; feature-major, each feature's row of chunks followed by a gap (the rest of
      // the input's row of batch_ values, one chunk of the stage's row of kFeatureStride).
      constexpr unsigned kChunksPerRow = kBlockSamples * sizeof(Io) / 16, kStageGap = (kFeatureStride - kBlockSamples) * sizeof(Io) / 16;
      const std::size_t input_gap = kFeatureMajor ? (batch_ - kBlockSamples) * sizeof(Io) / 16 : 0;
      const auto* src = reinterpret_cast<const vec<std::uint32_t, 4>*>(input_ + (kFeatureMajor ? sample0 : static_cast<std::size_t>(sample0) * in_dim_));
      // (each layout's count in the form its kernels were measured with: NVVM unrolls the sample-major loop
      // four times, and leaves the feature-major one rolled)
      const unsigned count = kFeatureMajor ? in_dim_ * kChunksPerRow : kBlockSamples * in_dim_ * sizeof(Io) / 16;
      for (unsigned c = lane_id(); c < count; c += Tile::kWave) {
        const unsigned row = kFeatureMajor ? c / kChunksPerRow : 0;
        Tile::copy_async16(&stage_[c + row * kStageGap], &src[c + row * input_gap]);
      }
    }
  }

 private:
  static constexpr unsigned kNone = ~0u;  // no block's sample0 (blocks are whole tiles of 16)

  MLPCORE_DEVICE Io* staged() const { return reinterpret_cast<Io*>(stage_); }
  // The wave copies a feature-major block into the stage itself (lanes of neighbouring samples read and
  // write neighbours), kLoads loads per lane in flight before their stores: one at a time would add up
  // every load's latency.
  MLPCORE_DEVICE void stage_block(unsigned sample0) {
    constexpr unsigned kLoads = 4;
    const unsigned count = in_dim_ * kBlockSamples;
    sync_wave();  // the wave has read the previous block
    for (unsigned c0 = lane_id(); c0 < count; c0 += kLoads * Tile::kWave) {
      Io v[kLoads];
      MLPCORE_UNROLL
      for (unsigned j = 0; j < kLoads; ++j) {
        const unsigned c = c0 + j * Tile::kWave, feature = c / kBlockSamples, sample = c % kBlockSamples;
        v[j] = c < count && sample0 + sample < batch_ ? input_[static_cast<std::size_t>(feature) * batch_ + sample0 + sample]
                                                      : static_cast<Io>(kQuietNaN);
      }
      MLPCORE_UNROLL
      for (unsigned j = 0; j < kLoads; ++j)
        if (const unsigned c = c0 + j * Tile::kWave; c < count) staged()[c / kBlockSamples * kFeatureStride + c % kBlockSamples] = v[j];
    }
    sync_wave();
  }

  const Io* input_;
  unsigned in_dim_, batch_;
  vec<std::uint32_t, 4>* stage_ = nullptr;
  bool aligned_ = false;
  unsigned fetched_ = kNone;  // the block whose input is in (or on its way to) stage_
};

// The device-side API's policy (ops/device_api.h): its networks' widths are at most MaxTiles tiles.
template <class Tile, int MaxTiles>
constexpr FusedPolicy bounded_shape_policy() {
  return tile_policy<Tile>({MaxTiles, MaxTiles, MaxTiles, ShapeKnown::bounds});
}

// The policy of the run-time-shaped kernel of layout L, or of its Twin (runtime_twin_policy), or with
// PerTile of its _act twin (runtime_activations_policy; ops/fused_mlp_kernels.gpu.cpp): its launch bounds
// too, the same for both. Only the kernels without the _act suffix have twins.
template <class Tile, int W, IoLayout L = IoLayout::sample_major, RuntimeTwin Twin = RuntimeTwin::none, bool PerTile = false>
constexpr FusedPolicy runtime_shape_policy() {
  static_assert(Twin == RuntimeTwin::none || Twin == RuntimeTwin::small_batch || L == IoLayout::feature_major,
                "the twins but the small-batch ones are feature-major");
  const FusedPolicy base = tile_policy<Tile>({W, W, W, ShapeKnown::widest, L == IoLayout::sample_major});
  return runtime_twin_policy(Tile::kFamily, W, runtime_activations_policy(Tile::kFamily, W, base, PerTile), PerTile, Twin);
}

// Whether the family's run-time-shaped kernel W tiles wide with Activations has Twin in layout L (as
// FusedPlan decides, with the same function; `none`, the kernel itself, always). A feature-major kernel
// with a one-tile-input twin has no other: the plan derives the large-batch and small-batch twins'
// policies from the feature-major slot's, which that twin changes, and its packing with it.
template <class Tile, int W, RuntimeTwin Twin, class Activations = RuntimeKernelActivations<Tile::kFamily>, IoLayout L = IoLayout::feature_major>
constexpr bool runtime_twin() {
  static_assert(Twin == RuntimeTwin::none || Twin == RuntimeTwin::small_batch || L == IoLayout::feature_major,
                "the twins but the small-batch ones are feature-major");
  constexpr FusedPolicy kPolicy = runtime_shape_policy<Tile, W, L>();
  constexpr bool kPerTile = Activations::kPerTile;
  constexpr auto has = [](RuntimeTwin t) {
    return runtime_twin_policy(Tile::kFamily, W, runtime_shape_policy<Tile, W, IoLayout::feature_major>(), kPerTile, t) !=
           runtime_shape_policy<Tile, W, IoLayout::feature_major>();
  };
  static_assert(!has(RuntimeTwin::one_tile_input) || !(has(RuntimeTwin::large_batch) || has(RuntimeTwin::small_batch)),
                "a run-time-shaped feature-major kernel with a one-tile-input twin has no other");
  return Twin == RuntimeTwin::none || runtime_twin_policy(Tile::kFamily, W, kPolicy, kPerTile, Twin) != kPolicy;
}

// The run-time-shaped kernel of networks whose widest layer is W tiles: the depth and the activations read
// at run time, every layer's K tiles and every hidden layer's output tiles W. The host pads each layer to
// that width with zero weights and biases (FusedPlan::packed_shape), so the layer code has no run-time
// bounds but the last layer's output tiles; the input's padding tiles are zeros, and padded hidden units
// hold their activation of 0, which meets zero weights. Where the policy says so (one_tile_first_layer), an
// input of one tile followed by a hidden layer (up to 16 features, as in SDFs and radiance caches) runs its
// first layer on that tile, W matrix instructions per sample tile rather than W x W (the host packs it so,
// FusedPlan::packed_shape). What a network runs
// where no kernel was compiled in or specialized for it: one kernel per width serves every depth and
// activation (on NVIDIA every depth of ReLU hidden layers, RuntimeKernelActivations), with a twin per
// width whose Activations test each layer's once per tile (RuntimeActivationsPerTile), and twins of some
// widths (Twin, runtime_twin): feature-major ones for large batches, more sample tiles per wave, and for
// inputs of one tile, which it runs as above and has no code for other inputs; and of both layouts for
// small batches, each output tile's operands loaded a tile ahead. (With every layer's K and output
// tiles bounded at run time instead, the kernel before this one, nvcc gave the 64-wide kernel 164-168
// registers; 116-118 now.)
template <class Tile, int W, class Activations = RuntimeKernelActivations<Tile::kFamily>, RuntimeTwin Twin = RuntimeTwin::none, class Io,
          IoLayout L = IoLayout::sample_major>
MLPCORE_DEVICE void mlp_forward(const NetworkView& net, const Io* input, Io* output, unsigned batch, LayoutTag<L> = {}) {
  static_assert(W >= 1 && W <= kMaxTilesPerLayer, "unsupported fused width");
  static_assert(runtime_twin<Tile, W, Twin, Activations, L>(), "no such twin of this kernel");
  constexpr bool kOneTileInputOnly = Twin == RuntimeTwin::one_tile_input;
  if (kOneTileInputOnly && !one_tile_first_layer(net.input_dim, net.num_layers)) abort_kernel("mlp_forward: the one-tile-input twin without one");
  constexpr FusedPolicy kPolicy = runtime_shape_policy<Tile, W, L, Twin, Activations::kPerTile>();
  constexpr int S = kPolicy.sample_tiles;
  using Prefetch = InputPrefetch<Tile, Io, kPolicy, W, L>;
  Prefetch prefetch(input, net.input_dim, batch);
  Float16Range range;
  const int input_tiles = static_cast<int>((net.input_dim + 15) / 16);
  const unsigned last = net.num_layers - 1;
  for_each_sample_block<Tile, S>(batch, [&](SampleBlock b, unsigned next) {
    typename Tile::BFrag act[W][S];
    const BlockRows<Io> in = prefetch.rows(b);
    unsigned l = 0;
    if (kOneTileInputOnly || (kPolicy.one_tile_first_layer && one_tile_first_layer(net.input_dim, net.num_layers))) {
      typename Tile::BFrag first[1][S];
      load_input<Tile, L, Prefetch::kStagesEveryBlock, false, kPolicy.row_loads>(first, 1, in.rows, net.input_dim, in.block, range);
      prefetch.fetch(next);
      dense_layer<Tile, Activations, kPolicy, L>(net, net.layers[0], 1, W, false, first, act, output, b, range);
      l = 1;
    } else {
      load_input<Tile, L, Prefetch::kStagesEveryBlock, true, kPolicy.row_loads>(act, input_tiles, in.rows, net.input_dim, in.block, range);
      prefetch.fetch(next);
    }
    for (; l < last; ++l)
      dense_layer<Tile, Activations, kPolicy, L>(net, net.layers[l], W, W, false, act, act, output, b, range);
    const int out_tiles = static_cast<int>(descriptor_value<kPolicy>(net.layers[last].out_tiles));
    dense_layer<Tile, Activations, kPolicy, L>(net, net.layers[last], W, out_tiles, true, act, act, output, b, range);
  });
  range.report(net.range_flag);
}

template <int I, int... Widths>
constexpr int width_at() {
  constexpr int widths[] = {Widths...};
  return widths[I];
}

template <int... Widths>
constexpr int widest() {
  int m = 0;
  ((m = Widths > m ? Widths : m), ...);  // a fold: hiprtc has no std::initializer_list for a braced list
  return m;
}

// Whether layer L of a fixed shape repeats layer L - 1: both hidden layers (neither the first nor the
// last), with the same tiles in and out and the same activation.
template <class ActivationsOf, int L, int... Widths>
constexpr bool repeats_previous_layer() {
  constexpr int kLayers = static_cast<int>(sizeof...(Widths)) - 1;
  if constexpr (L < 2 || L + 1 >= kLayers)
    return false;
  else
    return width_at<L - 1, Widths...>() == width_at<L, Widths...>() && width_at<L, Widths...>() == width_at<L + 1, Widths...>() &&
           ActivationsOf::template at<L - 1, kLayers>() == ActivationsOf::template at<L, kLayers>();
}

// The number of layers from L on that repeat it, itself included.
template <class ActivationsOf, int L, int... Widths>
constexpr int layer_run() {
  if constexpr (repeats_previous_layer<ActivationsOf, L + 1, Widths...>())
    return 1 + layer_run<ActivationsOf, L + 1, Widths...>();
  else
    return 1;
}

template <class Tile, int... Widths>
constexpr FusedPolicy fixed_shape_policy() {
  return tile_policy<Tile>({width_at<0, Widths...>(), widest<Widths...>(), width_at<sizeof...(Widths) - 1, Widths...>(), ShapeKnown::tiles});
}

// The activations of a compiled-in shape: ActivationsOf::at<L, Layers>() is layer L's of Layers.
template <ActivationKind Hidden, ActivationKind Output>
struct HiddenThenOutput {
  template <int L, int Layers>
  static constexpr ActivationKind at() { return L + 1 == Layers ? Output : Hidden; }
};
template <ActivationKind... Kinds>
struct PerLayer {
  template <int L, int Layers>
  static constexpr ActivationKind at() {
    static_assert(Layers == sizeof...(Kinds), "one activation per layer");
    constexpr ActivationKind kinds[] = {Kinds...};
    return kinds[L];
  }
};

// Which one-tile edges of a fixed shape run narrow (kPolicy.narrow_input, .narrow_output): in a
// compiled-in kernel, which serves models of several input and output sizes, the packing says per layer
// (LayerDesc::k, ::n); a kernel specialized for one model knows whether its input has at most 8 features
// and its output at most 8 units (the host packs such edges for its kernels whose policy narrows them,
// FusedPlan::narrow_edges), and has no other path.
struct PackedEdges {
  static constexpr bool kKnown = false, kNarrowIn = true, kNarrowOut = true;
};
template <bool NarrowIn, bool NarrowOut>
struct KnownEdges {
  static constexpr bool kKnown = true, kNarrowIn = NarrowIn, kNarrowOut = NarrowOut;
};

// The network's shape (in tiles of 16: input, each layer's output) and activations compiled in, run
// with kPolicy (the tile family's table entry for the shape, ops/fused_policy.h, as the host planned it).
template <class Tile, FusedPolicy kPolicy, class ActivationsOf, class Edges, int... Widths, class Io, IoLayout Layout = IoLayout::sample_major>
MLPCORE_DEVICE void mlp_forward_fixed(const NetworkView& net, const Io* input, Io* output, unsigned batch, LayoutTag<Layout> = {}) {
  constexpr int kLayers = static_cast<int>(sizeof...(Widths)) - 1;
  constexpr int kTiles = widest<Widths...>();
  static_assert(kLayers >= 1 && kTiles <= kMaxTilesPerLayer, "unsupported fused shape");
  static_assert(!(kPolicy.narrow_input || kPolicy.narrow_output) || HasNarrowTiles<Tile>, "narrow edges need the tile's narrow instructions");
  static_assert(!kPolicy.prefetch_input || CopiesAsync<Tile>, "the input prefetch needs the tile's asynchronous copies");
  constexpr int S = kPolicy.sample_tiles;
  constexpr int kInTiles = width_at<0, Widths...>();
  // Edges one tile wide may hold at most 8 features or units, and be packed for narrow instructions.
  constexpr bool kNarrowIn = kPolicy.narrow_input && kInTiles == 1 && Edges::kNarrowIn;
  constexpr bool kNarrowOut = kPolicy.narrow_output && width_at<kLayers, Widths...>() == 1 && Edges::kNarrowOut;
  using Prefetch = InputPrefetch<Tile, Io, kPolicy, kInTiles, Layout>;
  Prefetch prefetch(input, net.input_dim, batch);
  Float16Range range;
  for_each_sample_block<Tile, S>(batch, [&](SampleBlock b, unsigned next) {
    typename Tile::BFrag act[kTiles][S];
    const auto layer = [&]<int L>(stdx::integral_constant<int, L>) {
      constexpr bool kFirst = L == 0, kLast = L + 1 == kLayers;
      constexpr int kRun = kPolicy.loop_layers ? layer_run<ActivationsOf, L, Widths...>() : 1;
      if constexpr (kPolicy.loop_layers && repeats_previous_layer<ActivationsOf, L, Widths...>()) {
        // run by the loop of its run's first layer
      } else if constexpr (kRun > 1) {
        MLPCORE_NO_UNROLL
        for (int l = L; l < L + kRun; ++l)
          dense_layer<Tile, FixedActivation<ActivationsOf::template at<L, kLayers>()>, kPolicy, Layout>(
              net, net.layers[l], width_at<L, Widths...>(), width_at<L + 1, Widths...>(), false, act, act, output, b, range);
      } else {
        const LayerDesc& d = net.layers[L];
        const auto with_tile = [&](auto&& f) {
          if constexpr (Edges::kKnown)
            f.template operator()<shaped_tile_t<Tile, kNarrowIn && kFirst ? 8 : 16, kNarrowOut && kLast ? 8 : 16>>();
          else
            with_layer_tile<Tile, kNarrowIn && kFirst, kNarrowOut && kLast>(d.k, d.n, f);
        };
        with_tile([&]<class LayerTile>() {
          const auto run = [&](const auto& in) {
            dense_layer<LayerTile, FixedActivation<ActivationsOf::template at<L, kLayers>()>, kPolicy, Layout>(
                net, d, width_at<L, Widths...>(), width_at<L + 1, Widths...>(), kLast, in, act, output, b, range);
          };
          if constexpr (kFirst) {
            // (GCC takes these bounds from the templates, not the enclosing lambda's constants)
            typename LayerTile::BFrag in[width_at<0, Widths...>()][kPolicy.sample_tiles];
            const BlockRows<Io> rows = prefetch.rows(b);
            load_input<LayerTile, Layout, Prefetch::kStagesEveryBlock, false, kPolicy.row_loads>(in, width_at<0, Widths...>(), rows.rows,
                                                                                                      net.input_dim, rows.block, range);
            prefetch.fetch(next);
            run(in);
          } else {
            run(act);
          }
        });
      }
    };
    [&]<int... L>(stdx::integer_sequence<int, L...>) { (layer(stdx::integral_constant<int, L>{}), ...); }(stdx::make_integer_sequence<int, kLayers>{});
  });
  range.report(net.range_flag);
}

}  // namespace mlpcore::ops

// The forward pass of a compiled-in shape (an MLPCORE_FIXED_SHAPES entry, ops/fused_shapes.h) on Tile:
// the kernels and the emulated backends expand it alike.
#define MLPCORE_FIXED_FORWARD(Tile, hidden, output, ...)                                                                    \
  mlpcore::ops::mlp_forward_fixed<Tile, mlpcore::ops::fixed_shape_policy<Tile, __VA_ARGS__>(),                           \
                                  mlpcore::ops::HiddenThenOutput<mlpcore::ActivationKind::hidden, mlpcore::ActivationKind::output>, \
                                  mlpcore::ops::PackedEdges, __VA_ARGS__>
