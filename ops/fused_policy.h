#pragma once
// How each tile family runs the fused kernel, in one table (as llama.cpp's fattn_mma_config): tiles
// carry geometry only, and their family (Tile::kFamily) keys this table. The host plans with it
// (engine/src/fused_plan.h) and the kernels read the same values, so both agree on every choice.
#include "ops/host_device.h"

namespace mlpcore::ops {

// The matrix-core families; mirrors the arch macros of ops/arch_config.h.
enum class TileFamily { rdna3, rdna4, cdna, nvidia };

// How much of a network's shape a fused kernel has compiled in.
enum class ShapeKnown {
  bounds,  // none: every width at most the shape's (the device-side API's networks in users' kernels, ops/device_api.h)
  widest,  // the widest layer's width, every other at most that, the depth at run time (run-time-shaped mlpcore_mlp_w<W>)
  tiles,   // every layer's width in tiles, and the depth (compiled-in shapes; each serves models of several sizes)
  exact,   // all of it, to the feature (kernels specialized for one model)
};

// What a fused kernel knows of its network at compile time: input, widest layer and output in tiles of
// 16 (upper bounds where they are not known), and whether it may read its input sample-major ([batch,
// in]; false for feature-major kernels that serve that layout alone: a specialized plan's, and the
// run-time-shaped `_fm` kernels).
struct FusedShape {
  int input_tiles;
  int width_tiles;
  int output_tiles;
  ShapeKnown known;
  bool sample_major_input = true;
  int input_features = 0;  // ShapeKnown::exact: the input's features (0, a multiple of 4, where not known)
};

// How a whole tile of sample-major rows that row vectors cannot read (FusedPolicy::row_loads) loads its
// values, on tiles with row-vector I/O (NVIDIA's full tiles; ops/fused_mlp.h, load_input): each under a
// branch that tests its feature and its sample (`branched`, as every partial tile does), from a feature
// clamped into the row with padding features selected to 0 after (`clamped`: no test before any load), or
// only the row's features, each under its test (`tested`).
enum class RowLoads { branched, clamped, tested };

// sample_tiles 16-sample tiles per wave, each weight fragment feeding that many mma chains; with
// prefetch_weights the next output tile's weights load during this one's matrix instructions, and with
// prefetch_bias too its bias (the first matrix instruction's C operand); with
// prefetch_input the next sample block's input is copied to shared memory during this one's layers
// (the tile provides copy_async16 and wait_async_copies); min_blocks is the number of blocks per
// multiprocessor the register allocation must leave room for (CUDA's __launch_bounds__ minimum; 0 leaves
// it to the compiler, as the AMD kernels always do); with narrow_input a fixed-shape kernel runs a first
// layer of at most 8 features, with narrow_output a last layer of at most 8 units, on the tile's narrow
// instructions (Tile::Shaped<8, 16>, <16, 8>; the host packs those layers for them, LayerDesc::k, ::n); with
// loop_layers a fixed-shape kernel runs each run of identical hidden layers as a loop at run time (one
// layer's code: smaller kernels, and NVRTC compiles a deep 128-wide network in seconds, not a minute);
// with compiler_unrolls_tiles a layer's output tiles are a loop for the compiler to unroll, else they are
// unrolled by construction (ops/fused_mlp.h, dense_layer); with one_tile_first_layer a run-time-shaped
// kernel runs the first layer of an input of one tile with a hidden layer after it on that tile alone,
// not padded to the kernel's width (ops::one_tile_first_layer; the host packs that layer so,
// FusedPlan::packed_shape); with uniform_descriptors a run-time-shaped kernel reads each layer's
// activation and the last layer's output tiles as warp-uniform values (ops::warp_uniform); row_loads is how
// whole tiles of sample-major rows that row vectors cannot read load (RowLoads); with tested_row_stores
// whole sample-major output tiles whose rows row vectors cannot write (1, 2, 3 outputs...) store each value
// under a test of its unit alone, without the test of its sample that partial tiles need; with
// light_assembly a kernel's assembler optimizes less (ptxas -O1, not -O3, on the same PTX: NVRTC for
// specialized kernels, engine/src/specialize.cpp; nvcc for the built-in ones, ops/fused_kernel_entry.h),
// but with full_assembly_float16_io not the kernel's float16-I/O instance (one policy serves both I/O
// types, and ptxas gives their code different registers): assembled_light says which.
// A structural type: specialized kernels take the plan's policy as a template argument.
struct FusedPolicy {
  int sample_tiles = 1;  // at most kMaxSampleTiles
  bool prefetch_weights = false;
  bool prefetch_input = false;
  int min_blocks = 0;
  bool narrow_input = false;
  bool narrow_output = false;
  bool loop_layers = false;
  bool compiler_unrolls_tiles = false;
  bool one_tile_first_layer = false;
  bool uniform_descriptors = false;
  RowLoads row_loads = RowLoads::branched;
  bool tested_row_stores = false;
  bool light_assembly = false;
  bool full_assembly_float16_io = false;
  bool prefetch_bias = false;
  bool operator==(const FusedPolicy&) const = default;
};

// Whether ptxas assembles the instance of a kernel of `policy` for float16 I/O (float16_io) or float32 at
// -O1 (FusedPolicy::light_assembly, full_assembly_float16_io).
MLPCORE_HOST_DEVICE constexpr bool assembled_light(FusedPolicy policy, bool float16_io) {
  return policy.light_assembly && !(float16_io && policy.full_assembly_float16_io);
}

// The most sample tiles any policy gives a wave: the host bounds a call's batch by it (a block of
// 16 kMaxSampleTiles samples counted in 32 bits).
inline constexpr int kMaxSampleTiles = 4;

// NVIDIA's run-time-shaped kernels by width in tiles of 16, as measured (fused_policy and
// runtime_large_batch_policy say where): sample tiles per wave of the kernels with ReLU hidden layers
// compiled in (ops::RuntimeKernelActivations; their twins' too unless said below) and of the _act kernels
// (runtime_activations_policy); the blocks per multiprocessor each kernel is bound to
// (FusedPolicy::min_blocks; 0 unbound), and its feature-major twin's for large batches: sample tiles per
// wave (0: no twin) and bound. The 96-wide twin is unbound where its kernel is bound to 4: that bound is for
// one sample tile, and the twin of two was measured unbound. Whether the sample-major kernel stores whole
// tiles that row vectors cannot write under tests of their units alone (FusedPolicy::tested_row_stores).
// Whether the sample-major and the feature-major kernels (their large-batch twins too) and the
// one-tile-input twin are assembled light (FusedPolicy::light_assembly), and whether the twin's
// float16-I/O instance is not (FusedPolicy::full_assembly_float16_io). Whether the kernels with ReLU hidden
// layers have twins for small batches that load each output tile's operands a tile ahead
// (runtime_small_batch_policy).
struct RuntimeShapeTuning {
  int sample_tiles = 1;
  int per_tile_sample_tiles = 1;
  int min_blocks = 0;
  int large_batch_sample_tiles = 0;
  int large_batch_min_blocks = 0;
  bool tested_row_stores = false;
  bool light_assembly_sample_major = false;
  bool light_assembly_feature_major = false;
  bool light_assembly_one_tile_input = false;
  bool full_assembly_one_tile_input_float16_io = false;
  bool small_batch_twins = false;
};
MLPCORE_HOST_DEVICE constexpr RuntimeShapeTuning nvidia_runtime_shape_tuning(int width_tiles) {
  switch (width_tiles) {
    case 1:
      return {.sample_tiles = 2, .per_tile_sample_tiles = 2, .min_blocks = 5, .large_batch_sample_tiles = 4, .large_batch_min_blocks = 5,
              .tested_row_stores = true};
    case 2:
    case 3: return {.sample_tiles = 2, .per_tile_sample_tiles = 2, .tested_row_stores = true, .small_batch_twins = true};
    case 4:
      return {.sample_tiles = 2, .per_tile_sample_tiles = 2, .min_blocks = 4, .tested_row_stores = true, .light_assembly_sample_major = true,
              .light_assembly_feature_major = true, .small_batch_twins = true};
    case 5: return {.sample_tiles = 1, .per_tile_sample_tiles = 1, .min_blocks = 3, .large_batch_sample_tiles = 2, .large_batch_min_blocks = 3};
    case 6:
      return {.sample_tiles = 1, .per_tile_sample_tiles = 1, .min_blocks = 4, .large_batch_sample_tiles = 2, .small_batch_twins = true};
    case 7:
      return {.sample_tiles = 1, .per_tile_sample_tiles = 1, .large_batch_sample_tiles = 2, .tested_row_stores = true,
              .light_assembly_sample_major = true, .light_assembly_feature_major = true, .small_batch_twins = true};
    default:  // 128 wide
      return {.sample_tiles = 2, .per_tile_sample_tiles = 1, .light_assembly_one_tile_input = true, .full_assembly_one_tile_input_float16_io = true};
  }
}

MLPCORE_HOST_DEVICE constexpr FusedPolicy fused_policy(TileFamily family, FusedShape shape) {
  switch (family) {
    case TileFamily::rdna3:
    case TileFamily::rdna4:
    case TileFamily::cdna:
      // One sample tile per wave and no early weight loads: more does not fit AMD register budgets. The
      // run-time-shaped kernels pad a first layer of one input tile (run alone, it took clang-19's RDNA3
      // feature-major kernels up to 16 VGPRs higher; no AMD GPU here measures what it would save).
      return {};
    case TileFamily::nvidia:
      // Measured on an H100 ("compiled-in": every fixed shape, specialized ones too): two sample tiles
      // per warp (one in specialized kernels 33-64 wide, for more warps, lost 4-46%), except one in the
      // device-side API's networks wider than 32 (their extra registers would spill or cost occupancy:
      // 32-64x3-8 +36%, 32-128x3-16 +40% with one). Compiled-in shapes wider
      // than 64 load the next output tile's weights early (32-128x4-16 +19%), keep one sample tile where
      // the input is wider than 32 or the output than 16 (two took ptxas to 255 registers and spills, as
      // in 104-128x6-89), and loop over identical hidden layers (NVRTC took 54 s on 3-128x8-1 unrolled; at
      // 48-64 wide the loop cut NVRTC's time by 22-58%, 64-64x5-4 2.25 to 1.34 s, 2-64x8-3 3.81 to 1.62 s,
      // but cost up to 16% at 2^22 feature-major, 64-64x5-4 with float16 accumulation and I/O 16%: not there).
      // Compiled-in shapes up to 64 wide with one input tile prefetch their input and fit 96 registers,
      // 5 blocks per SM (16-64x2-4 +38%, 3-64x4-1 +14%; with two input tiles that bound spills, and the
      // prefetch alone gains nothing; with float16 accumulators too, 96 registers beat 80 with 6 blocks
      // by 2-5%). Narrow edges for shapes up to 64 wide (with float16 accumulators 3-64x4-1 +9%,
      // 16-64x2-4 +6%; with float32 ones, specialized, 1-35% with either layout and I/O type, 2-16x3-1
      // +35%, 5-48x3-3 +20%, 64-64x5-4 +15%, and compiled in 3-64x4-1 +7-10%, 16-64x2-4 +8-15%, though
      // ptxas spills 20-144 bytes at 96 registers there; at 128 wide the extra code paths took 178 to 255
      // registers and spilled). Above 64 wide, only kernels specialized for one model, which have no extra
      // code paths: narrow output (sample-major -2% to +9%, 3-96x4-1 +4-9%, 8-96x3-1 +5-9%; feature-major
      // -3% to +8%), and narrow input where the kernel reads feature-major input (with the narrow
      // output, feature-major +2-14% in 30 of 32 figures, 3-128x8-1 with float16 accumulators -2%, -3%;
      // with sample-major input it lost up to 14% with 8 features, 8-96x3-1, 8-112x5-4, and 5% on
      // 4-80x6-8). The device API runs full tiles: those networks are packed for it again
      // (engine/src/fused_packing.h, pack_for_backend).
      // The run-time-shaped kernels (every layer padded to their width, ops/fused_mlp.h, mlp_forward) take
      // the entry of a shape whose every layer is as wide as their widest, without narrow edges and early
      // weight loads, and above 64 wide the compiler unrolling the output tiles; sample tiles per wave as
      // nvidia_runtime_shape_tuning says (two, but one at 80-112 wide and in the 128-wide _act kernels). On an
      // H200, with a form of the kernel that branched to each activation once per output tile: unrolled by
      // construction, NVVM left the 112- and 128-wide kernels' arrays in local memory (560-608 bytes, 5-20
      // times slower); early loads took 80-128 wide to 186-255 registers; two sample tiles above 64 wide
      // were between 25% slower (64-128-64-3) and 38% faster (128-128x3-4); two at 48 wide (one was faster
      // before the padding) -5% to +26% at 2^22, 0 to +54% at 2^16. A first layer of one input tile runs on
      // that tile alone from 32 wide (against padded, networks of up to 16 inputs: feature-major +9.9% at 2^22,
      // +1.5% at 2^16; sample-major +20.5% and +14.7%, geometric means), but in the 128-wide feature-major
      // kernel: ptxas then gave it 96 registers instead of 128, and it ran 26-35% slower on 3-128x8-1 (since
      // stop 49 a twin of its own runs it, runtime_one_tile_input_policy).
      // The 80-wide kernels are bound to 3 blocks per multiprocessor: left to itself, ptxas gave them 72
      // registers and spills (32,768 local-memory requests per 2^16-sample call of 32-80x4-8 sample-major);
      // bound, 94 registers sample-major and 112 feature-major, no spills. On an H200, six 80-wide
      // networks: sample-major +1% to +24% at 2^22, +23% to +49% at 2^16; feature-major, seven networks:
      // +34% at 2^16 and +26% at 2^14 but -5% to -6% from 2^18 up (geometric means; a bound of 5 there,
      // 96 registers: +20% at 2^16, +25% at 2^14, -2% to 0% from 2^18 up).
      // With ReLU hidden layers compiled in (ops::RuntimeKernelActivations, stop 48) ptxas took the 64- and
      // 96-wide kernels to 128-138 registers, 3 blocks per multiprocessor, and a call of 2^16 samples
      // then ran in two rounds of blocks: bound to 4 blocks (128 registers, at most 20 bytes spilled), on
      // an H200, 64 wide +14% feature-major and +13% sample-major at 2^16 against the unbound kernels'
      // +6% and -6% (64-64x5-4 with float16 I/O sample-major +6% against -27%), at 2^22 +22% and +26%
      // against +23% and +21% (geometric means of eight networks); 96 wide (4-96x2-1, 27-96x3-3,
      // 3-96-96-48-1) -0.3% to +15% feature-major at 2^16 against -15% to +13%, sample-major +48% to +54%
      // against +32% to +38%.
      // Up to 64 wide they read each layer's activation as a warp-uniform value (uniform_descriptors):
      // loaded from memory, every branch on it had reconvergence barriers (BSSY/BSYNC, 46 of the 428
      // instructions per 32 samples of 2-16x3-1); uniform, 22 of 408. On an H200, ReLU networks 16-64
      // wide +3.9% feature-major, +2.3% sample-major (geometric means; 2-32x2-1 up to +11%, 32-32x2-3 up
      // to +12%), SiLU ones +4.8%; 80-128 wide -1% to -3%, so not there.
      // Whole tiles of sample-major rows that row vectors cannot read (inputs of 2, 3, 5, 27 features) load
      // every value from a feature clamped into the row (RowLoads::clamped) in the run-time-shaped kernels
      // from 32 wide and in specialized kernels of such inputs: each value had been a branch with
      // reconvergence barriers (5-48x3-3's run-time-shaped kernel: 888 instructions per 32 samples, the
      // specialized one 614). On an H200 against that, sample-major, 2^22 / 2^16 / 2^14: the run-time-shaped
      // kernels 32-128 wide on such inputs +1% to +44% (5-48x3-3, 7-40x3-2, 9-48x2-1 +23% to +44% at 2^22),
      // specialized ones with full first layers +1% to +68% (3-128x2-1 +24% to +68%, 27-96x3-3 +16% to
      // +20%). The 16-wide kernel, whose layers are a matrix instruction per tile, loads only each row's
      // features, each under its test (RowLoads::tested: +10% to +25%; clamped, twice the loads where a row
      // has at most 8 features, -2% to -9% at 2^22). With tested loads everywhere, 3-128x2-1's specialized
      // kernel gained only 5-12% at 2^16-2^14 (not 37-68%). The path costs where row vectors read the input:
      // compiled in beside them, it took 64-64x5-4's specialized kernel 13-36% slower (16-64x3-16 up to
      // 16%), so kernels specialized for a multiple of 4 features keep the branches, and so do the
      // compiled-in ones, which serve such inputs too (the four benchmark shapes); the run-time-shaped
      // kernels, which serve every input, pay it there: 4-32x3-1 and 32-32x2-3 with float16 I/O -7% to -11%
      // at 2^16-2^14 (+10% and +18% at 2^22), 20-64x3-4 with float32 I/O -7% at 2^22. Narrow first layers
      // (Shaped<8, 16>) have no row vectors and keep the branches too.
      // Whole sample-major output tiles whose rows row vectors cannot write (1, 2, 3 outputs) stored each
      // value under tests of its unit and of its sample, as partial tiles do. The run-time-shaped kernels
      // 16-64 and 112 wide test the unit alone (tested_row_stores, nvidia_runtime_shape_tuning). On an
      // H200 against that, float32 / float16 I/O, 2^22 / 2^16 / 2^14, geometric means of 18 networks 16-64
      // wide: +3.7% / +2.6% / +2.3% (-3.5% to +17%: 5-48x3-3 +6% / +11% and 12-40x3-6 +7% / +11% at 2^22,
      // 6-32x4-3 and 32-32x2-3 with float16 I/O +12% to +17% at 2^16 / 2^14); 112 wide, four networks,
      // +5.7% / +10.1% / +21.3%, 24-100x3-8 too, whose 8 outputs row vectors write (the path beside them
      // changed ptxas's code). In every kernel, 96 wide lost 1-10%, 128 wide 2-19% (3-128x2-1), 80 wide
      // gained nothing: not there, nor in the specialized kernels (six networks within 2%).
      // Fixed shapes leave unrolling their layers' output tiles to the compiler: NVRTC 13 then optimizes
      // one tile's code before it copies it, in about half the time (64-64x5-4: 1.0 s to 0.56 s in its
      // optimizer; the same registers in 23 networks of every activation, 17 to 128 wide; on one H100
      // machine twelve networks' kernels built in 0.57-2.34 s instead of 0.73-3.92 s, and ran as fast up
      // to 64 wide; above, the order of early weight loads moved: 3-128x8-1 4-7% faster, 32-128x4-16 with
      // float32 accumulation and I/O 5% slower).
      // A compiler may decline to unroll: NVRTC 13 did for 128-wide layers with early weight loads while
      // the loop's body held the tile's code rather than calling it. A kernel whose arrays a compiler left
      // in local memory is compiled again with the tiles unrolled by construction (engine/src/specialize.cpp,
      // compile_kernel). The device-side API's networks stay unrolled by construction: users' own compilers
      // build those, and nvcc's code for them changed with the loop.
      // Specialized kernels 128 wide, and 64 wide with more than one input tile (where the 5-block bound does
      // not apply), are assembled with light_assembly: ptxas -O3 moved float32 accumulators' packed halves
      // into the four registers the next mma reads (3-64x4-1: 152 moves against 27 with float16
      // accumulation), -O1 about half as many, and those kernels ran small batches faster (on an H200 against
      // -O3, 16 networks, 13 of them such, geometric means: `cuda` +3% to +5% at 2^22, +23% to +34% at
      // 2^14). At 80 and 96 wide -O1 took more registers and a block fewer per multiprocessor (up to -37%);
      // under the bound, 112 wide and 32 wide it gained nothing on balance (docs/benchmarks.md, "Stop 52").
      // The built-in kernels follow the same rule where it was measured so: the compiled-in shapes 128 wide,
      // and 64 wide with more than one input tile (32-128x4-16 +2% to +59%, 32-64x4-16 0 to +34% at
      // 2^22-2^14; 16-64x2-4, under the bound, -9% to -24% at 2^16-2^14), and the run-time-shaped kernels
      // 64 and 112 wide, and 128 wide sample-major until stop 54, below (nvidia_runtime_shape_tuning). On an
      // H200 against -O3, `cuda+builtin`, geometric means at 2^22 / 2^16 / 2^14: 64 wide +3% to +6% / +9% to +10% / +9% to +10%, 112
      // wide +2% to +8% / +9% to +13% / +16% to +23%, 128 wide sample-major +5% / +11% / +17%. Not 128 wide
      // feature-major (0% / +3% / -1%, 64-128-64-3 -9% at 2^22), nor 16-48 wide (sample-major -2% to -10%),
      // 80 wide (-24% to -27% at 2^14) or 96 wide (-5% to -13% at 2^14) (docs/benchmarks.md, "Stop 53").
      // The 128-wide kernels with ReLU hidden layers run two sample tiles at -O3 (ptxas: 255 registers, at
      // most 28 bytes spilled), the one-tile-input twin two at -O1 (182-186 registers): on an H200 against
      // one tile, 11 networks, float32 / float16 I/O, geometric means at 2^22 / 2^16 / 2^14: sample-major
      // +18% / +20%, +25% / +24%, +32% / +33%; feature-major, padded input, +39% / +8%, +30% / +21%, +26% /
      // +15%; the twin +26% / +26%, +20% / +23%, +17% / +17%. (At stop 47, before ReLU was compiled into
      // the hidden layers, two lost 3-27%.) With SiLU hidden layers (the _act kernels) two lost 36-55%, so
      // those keep one (docs/benchmarks.md, "Stop 54").
      // The library builds its kernels into one fat binary per assembly (ops/fused_kernel_entry.h).
      if (shape.known == ShapeKnown::bounds) return {shape.width_tiles <= 2 ? 2 : 1};
      const bool fixed = shape.known >= ShapeKnown::tiles, exact = shape.known == ShapeKnown::exact;
      if (shape.known == ShapeKnown::widest) {
        const bool one_tile = shape.width_tiles > 1 && (shape.sample_major_input || shape.width_tiles < 8);
        const RuntimeShapeTuning tuning = nvidia_runtime_shape_tuning(shape.width_tiles);
        const int min_blocks = tuning.min_blocks;
        const RowLoads rows = !shape.sample_major_input ? RowLoads::branched : shape.width_tiles == 1 ? RowLoads::tested : RowLoads::clamped;
        const bool stores = shape.sample_major_input && tuning.tested_row_stores;
        const bool light = shape.sample_major_input ? tuning.light_assembly_sample_major : tuning.light_assembly_feature_major;
        const bool wide = shape.width_tiles > 4;
        return {tuning.sample_tiles, false, shape.width_tiles == 1, min_blocks, false, false, false, wide, one_tile, !wide, rows, stores, light};
      }
      // A first layer of at most 8 features up to 64 wide is narrow (Shaped<8, 16>, no row vectors): branched.
      const bool narrow_first = shape.width_tiles <= 4 && shape.input_features <= 8;
      const RowLoads rows =
          exact && shape.sample_major_input && shape.input_features % 4 != 0 && !narrow_first ? RowLoads::clamped : RowLoads::branched;
      if (shape.width_tiles > 4)
        return {shape.input_tiles <= 2 && shape.output_tiles == 1 ? 2 : 1, true, false, 0, exact && !shape.sample_major_input, exact, true, fixed,
                false, false, rows, false, fixed && shape.width_tiles == 8};
      if (shape.input_tiles > 1) return {2, false, false, 0, fixed, fixed, false, fixed, false, false, rows, false, fixed && shape.width_tiles == 4};
      return {2, false, true, 5, fixed, fixed, false, fixed, false, false, rows};
  }
  return {};
}

// Whether the family's run-time-shaped kernels have twins that test each layer's activation once per tile
// (ops::RuntimeActivationsPerTile, mlpcore_mlp_w<W>_act), for networks with a hidden activation other than
// ReLU, so that the kernels without the suffix have ReLU hidden layers compiled in
// (ops::RuntimeKernelActivations). NVIDIA's: on an H200 the twins ran SiLU, sine, softplus and tanh
// networks 1.5-3.2 times faster than a kernel testing each value's kind. Not AMD's: no AMD GPU here
// measures them.
MLPCORE_HOST_DEVICE constexpr bool runtime_activations_per_tile(TileFamily family) { return family == TileFamily::nvidia; }

// Whether the family's run-time-shaped kernel `width_tiles` wide has a twin that accumulates in float16
// (its float16-accumulating tile, ops/native_tile.h: mlpcore_mlp_w<W>_f16acc, its large-batch twin too),
// which networks on it run where float16 accumulation was asked for (cuda-f16acc;
// FusedPlan::f16_accumulation). On an H200 against the float32 kernels, side by side, ReLU networks, both
// layouts and I/O types (docs/benchmarks.md, "The built-in fallback with float16 accumulation"): 32-112
// wide +8% to +15% on geometric means at 2^22, 2^16 and 2^14 samples (16 networks; 20 in two runs, up to
// +39%), but 48 wide feature-major with float16 I/O -2% to -12% at 2^16-2^14 (32-48x3-3, 5-48x3-3,
// 9-40x4-2); 16 wide -3% to +2%; 128 wide feature-major +11% to +38% but sample-major -4% to -19% at 2^16;
// with other hidden activations (the _act kernels) 32-112 wide -19% to +7%. (An earlier form of these
// kernels was slower with it at every width measured: docs/nvidia-kernels.md.)
MLPCORE_HOST_DEVICE constexpr bool runtime_f16_accumulation(TileFamily family, int width_tiles, bool activations_per_tile) {
  return family == TileFamily::nvidia && !activations_per_tile && width_tiles >= 2 && width_tiles <= 7;
}

// Feature-major calls of at least kLargeBatch samples run a kernel of their own where the family's table
// gives one (large_batch_policy differs from the kernel's policy): enough warps for every multiprocessor
// then, so more sample tiles per warp pay.
inline constexpr unsigned kLargeBatch = 1u << 20;

// The policy of a specialized kernel's feature-major twin for large batches (kLargeBatch), given the
// kernel's own (`base`); the run-time-shaped kernels' are runtime_large_batch_policy's, below. On NVIDIA, up to 32 wide with at most 2 input tiles: four sample tiles (their
// layers are a few mma each, and two more chains per weight fragment hide more of their latency). On an
// H100 against two, feature-major, both I/O types and accumulations: 2-16x3-1 +28-44% at 2^22, 3-32x4-1
// +10-24%, 16-16x2-16 +3-29%, 32-32x2-3 +1-13%, 24-32x3-8 +2-18%; for every call, most lost up to 28% at
// 2^14-2^16 (1024 warps at 2^16, under 8 per multiprocessor; docs/benchmarks.md). Not wider, nor deeper
// than kMaxLargeBatchTiles matrix tiles per 16 samples (`layer_tiles`, what the kernel's layers unroll):
// a model should compile within 2 s, and NVRTC took 2.2-2.4 s for 5-48x3-3 (24 tiles) and 32-48x3-32 with
// four, 2.2-2.3 s for 2-32x8-3 (32 tiles; 1.3-1.4 s with two). 48-wide kernels gained 3-36% at 2^22,
// 64-64x5-4 lost 16-26%, 48-48x3-3 (3 input tiles) 2-16%; again at stop 35, with the hidden layers in a
// loop so that NVRTC took 1.5-2.8 s for four kernels on 16 cores, 48-64 wide with at most 2 input tiles and
// 32 matrix tiles, against the kernel without either: 16-64x2-4 -14 to -16% at 2^20, 24-64x6-8 0 to -15%,
// 3-64x4-1 and 2-64x8-3 -9 to -4%, 5-48x3-3 -6 to +6%. The AMD tiles keep one (register budgets).
// Up to 64 wide with more than 2 input tiles (which the kernels read from global memory, no stage: see
// stages_feature_major_input), the twin keeps its sample tiles and prefetches its input: the next block's
// is copied into the wave's shared memory while this one runs. On an H100 against the kernel without, at
// 2^20 and 2^22, float16 I/O: +6% to +44% in all of 64-64x5-4 (+16-27%), 48-64x3-8, 64-64x2-64, 60-60x3-8,
// 64-64x4-16, 40-64x3-2, 48-48x3-3, 64-48x4-4, 64-32x3-4 and 48-32x4-8, both accumulations; float32 I/O
// -34% to +9%, so it keeps the kernel (large_batch_float32_io).
inline constexpr int kMaxLargeBatchTiles = 16;
MLPCORE_HOST_DEVICE constexpr FusedPolicy large_batch_policy(TileFamily family, FusedShape shape, FusedPolicy base, int layer_tiles) {
  if (family != TileFamily::nvidia || shape.known != ShapeKnown::exact) return base;
  if (shape.input_tiles > 2) {
    if (shape.width_tiles <= 4) base.prefetch_input = true;
    return base;
  }
  if (shape.width_tiles > 2 || layer_tiles > kMaxLargeBatchTiles) return base;
  base.sample_tiles = 4;
  return base;
}

// The policy of a run-time-shaped kernel's feature-major twin for large batches, given the kernel's own
// (`base`, the policy of a shape `width_tiles` wide, ShapeKnown::widest) and whether it tests activations
// once per tile (ops::RuntimeActivationsPerTile); `base` where it has none. The library builds these
// twins, so no compile time is at stake. Measured on an H200 against the kernels at 2^20 and 2^22
// samples, ReLU networks (the per-tile kernels, of other activations, lost up to 7% with them at 16 wide
// and 3-38% at 80-112 wide, so they have none):
//  - 16 wide, four sample tiles (from two): up to 8 outputs, float32 I/O +11% to +27% (2-16x3-1, 8-16x4-4,
//    3-16x6-1), float16 I/O +4% to +7%; 16 outputs, float16 I/O -3% to +7% (16-16x2-16);
//  - 80-112 wide, two (from one): +1% to +30% on 15 networks, 4-96x2-1 -6% to 0%; at 2^16 two lost 14-35%,
//    and 128 wide 3-27% at 2^22 too (at stop 47; since stop 54 the 128-wide kernels run two at every batch);
//  - not 32 wide with four (-6% to +1%: ptxas took 118 registers; bound to 96 it spilled, -17% to +3%),
//    nor 48-64 wide (-34% to 0%).
MLPCORE_HOST_DEVICE constexpr FusedPolicy runtime_large_batch_policy(TileFamily family, int width_tiles, FusedPolicy base, bool activations_per_tile) {
  const RuntimeShapeTuning tuning = nvidia_runtime_shape_tuning(width_tiles);
  if (family != TileFamily::nvidia || activations_per_tile || tuning.large_batch_sample_tiles == 0) return base;
  base.sample_tiles = tuning.large_batch_sample_tiles;
  base.min_blocks = tuning.large_batch_min_blocks;
  return base;
}

// The policy of a run-time-shaped kernel that tests each layer's activation once per tile
// (ops::RuntimeActivationsPerTile: the _act kernels, for hidden activations other than ReLU), given the
// policy of its width's and layout's kernel with ReLU hidden layers (`base`): assembled at -O3
// (FusedPolicy::light_assembly), with its own sample tiles (nvidia_runtime_shape_tuning). At -O1, on an
// H200, SiLU networks 64, 112 and 128 wide ran 11% to 36% slower (geometric means at 2^22-2^14, 8-128x6-1
// down to -51%), where the ReLU kernels of those widths gained (docs/benchmarks.md, "Stop 53"); 128 wide
// with two sample tiles at -O3, 36% to 55% slower, where the ReLU kernels gained 8% to 39% ("Stop 54").
MLPCORE_HOST_DEVICE constexpr FusedPolicy runtime_activations_policy(TileFamily family, int width_tiles, FusedPolicy base,
                                                                    bool activations_per_tile) {
  if (!activations_per_tile) return base;
  base.light_assembly = false;
  if (family == TileFamily::nvidia) base.sample_tiles = nvidia_runtime_shape_tuning(width_tiles).per_tile_sample_tiles;
  return base;
}

// The policy of a run-time-shaped feature-major kernel's twin for networks whose input is one tile with a
// hidden layer after it (ops::one_tile_first_layer), given the kernel's own (`base`) and whether it tests
// activations once per tile; `base` where it has none. The twin runs that first layer on the one tile
// alone and has no code for other inputs. NVIDIA's 128-wide feature-major kernel pads such an input
// instead (fused_policy): with both first layers in one kernel, ptxas took it from 128 registers to 112,
// and networks of wider inputs ran 17-25% slower (128-128x3-4), deep ones of one input tile 12-31% slower
// (3-128x8-1). The twin (110 registers with one sample tile), on an H200 against the padding kernel, ReLU
// networks feature-major, 2^16-2^22 samples: +14% to +63% with 2-7 hidden layers (3-128x2-1, 4-128-64-1 +37% to
// +63%; 3-128x7-1 +18% to +51%, its weights now in L1, below), -3% to -8% with 8-12; at 2^14 -10% to +36%.
// With SiLU hidden layers (the per-tile kernels) -27% to +35%, so those have none (docs/benchmarks.md,
// "Stop 49"). With two sample tiles, as the 128-wide kernels since stop 54, the twin's float32-I/O
// instance is assembled light and its float16-I/O one is not (nvidia_runtime_shape_tuning): at -O3 ptxas
// gave it 186 registers with float32 I/O and 255 with float16, and against the twin of one tile it ran
// float32 I/O 10% / 27% slower at 2^16 / 2^14 (-O1: 20% / 17% faster), float16 I/O 34% / 46% / 70% faster
// at 2^22 / 2^16 / 2^14 (-O1: 26% / 23% / 17%) ("Stop 54"; each instance as measured, "Stop 55").
MLPCORE_HOST_DEVICE constexpr FusedPolicy runtime_one_tile_input_policy(TileFamily family, int width_tiles, FusedPolicy base,
                                                                       bool activations_per_tile) {
  if (family != TileFamily::nvidia || activations_per_tile || width_tiles == 1 || base.one_tile_first_layer) return base;
  base.one_tile_first_layer = true;
  const RuntimeShapeTuning tuning = nvidia_runtime_shape_tuning(width_tiles);
  base.light_assembly = tuning.light_assembly_one_tile_input;
  base.full_assembly_float16_io = tuning.full_assembly_one_tile_input_float16_io;
  return base;
}

// The policy of a run-time-shaped kernel's twin for small batches (calls of at most a few blocks per
// multiprocessor: engine/src/fused_plan.h, CallRouting), given the kernel's own (`base`, either layout's)
// and whether it tests activations once per tile; `base` where it has none. A warp then runs one block
// of sample tiles through every layer with at most one other warp beside it on its scheduler, so its waits
// are mostly the call's: the twin loads each output tile's weights and bias while the tile before runs its matrix
// instructions (prefetch_weights, prefetch_bias), without the kernel's register bound (min_blocks), which
// leaves room for blocks such a call does not have. On an H200 at 2^14 samples (one block per
// multiprocessor), Nsight Compute: in 3-64x6-3's kernel the first matrix instruction of each hidden
// layer's output tiles waited on its operands' loads for 36% of the warps' stall samples, and the kernel
// took twice as long as the specialized one (its small-batch twin, whose unrolled layers ptxas loads
// ahead). NVIDIA's kernels with ReLU hidden layers, twins against kernels at 2^13-2^15 (docs/benchmarks.md,
// "The built-in fallback at small batches"): 32-48 wide +2% to +47% (8 networks), 64 wide +3% to +24%,
// 96 wide (5 networks) with float32 accumulators +14% to +54%, with float16 ones -6% to +11%, 112 wide +8%
// to +59%; not 16 wide (one output tile: -2% to -10%) nor 80 wide (-8% to +3%), and 128 wide unmeasured.
// Loading ahead at every batch instead lost up to 53% at 2^16-2^22 (16-64x3-16), where other warps hide
// those loads.
MLPCORE_HOST_DEVICE constexpr FusedPolicy runtime_small_batch_policy(TileFamily family, int width_tiles, FusedPolicy base,
                                                                    bool activations_per_tile) {
  if (family != TileFamily::nvidia || activations_per_tile || !nvidia_runtime_shape_tuning(width_tiles).small_batch_twins) return base;
  base.prefetch_weights = base.prefetch_bias = true;
  base.min_blocks = 0;
  return base;
}

// Which of a width's run-time-shaped kernels: the kernel of a layout, a feature-major twin, for large
// batches (runtime_large_batch_policy) or for inputs of one tile (runtime_one_tile_input_policy), or a
// twin of either layout's kernel for small batches (runtime_small_batch_policy).
enum class RuntimeTwin { none, large_batch, one_tile_input, small_batch };

// The policy of a run-time-shaped kernel's `twin`, given the kernel's own (`base`); `base` for `none` and
// where the kernel has no such twin. The kernels (ops::runtime_shape_policy, ops::runtime_twin) and the
// plan (FusedPlan) take their twins from this one choice.
MLPCORE_HOST_DEVICE constexpr FusedPolicy runtime_twin_policy(TileFamily family, int width_tiles, FusedPolicy base, bool activations_per_tile,
                                                             RuntimeTwin twin) {
  switch (twin) {
    case RuntimeTwin::none: break;
    case RuntimeTwin::large_batch: return runtime_large_batch_policy(family, width_tiles, base, activations_per_tile);
    case RuntimeTwin::one_tile_input: return runtime_one_tile_input_policy(family, width_tiles, base, activations_per_tile);
    case RuntimeTwin::small_batch: return runtime_small_batch_policy(family, width_tiles, base, activations_per_tile);
  }
  return base;
}

// The most matrix tiles per 16 samples a network may have to run the one-tile-input twin
// (runtime_one_tile_input_policy), counted as the twin runs them (one_tile_input_tiles): their weights,
// 512 bytes a tile, then stay within the 200 KiB of the L1 cache that its warps on a multiprocessor read
// them from. On an H200, 128 wide: with 7 hidden layers (400 tiles) the twin ran 3-128x7-1 and 8-128x7-1
// 18-51% faster, where the padding kernel's 456 tiles had spilled from L1 (it ran them at 1.0 G samples/s,
// 6 hidden layers at 1.6); with 8 hidden layers (464 tiles) both spill, and the twin, with fewer registers
// to keep loads in flight, lost 3-5% (3-128x8-1, 8-128x8-1, 16-128x8-16), with 10 and 12 5-8%.
inline constexpr int kMaxOneTileInputTiles = 400;
// The twin's matrix tiles per 16 samples for `layers` layers: the first layer's W (one K tile), each
// hidden layer's W x W, the last layer's W x output_tiles.
MLPCORE_HOST_DEVICE constexpr int one_tile_input_tiles(int width_tiles, int layers, int output_tiles) {
  return width_tiles + (layers - 2) * width_tiles * width_tiles + width_tiles * output_tiles;
}

// Whether float32 I/O calls take the large-batch twins (`twin`, of the kernel's `base`) too, or only float16
// ones: twins of more sample tiles up to 8 output features, input-prefetching ones never (above).
// Wider float32 outputs bound the kernel by its stores, and with four sample tiles a lane's 32 bytes of one
// feature are two 16-byte stores that each fill half of 8 sectors, where float16's 16 bytes are one. At
// 2^20 samples on an H100 against two tiles, float32 / float16 I/O: 1-32x3-32 -24 to -30% / +82-103%,
// 32-16x4-32 -6 to -12% / +68-70%, 20-20x3-20 0 to -8% / +28-31%, 16-16x2-16 -4 to -8% / gains; up to 8
// outputs float32 I/O gained up to 16% (2-16x3-1, 3-32x4-1, 6-16x6-6, 16-32x2-2, 32-24x3-4). (Measured
// while NVVM split those stores into 2- or 4-byte ones; again with whole stores (nv::store_words) at 2^20:
// 1-32x3-32 -28 to -33%, 32-16x4-32 -11 to -19%, 16-16x2-16 -1 to -9%, 8-32x3-16 -2 to -6%, 20-20x3-20 -4 to
// +3%, 24-32x3-12 +11-12%.) Twins of two sample tiles (the 80-112-wide run-time-shaped kernels', from one)
// store as the kernels of two do, and take float32 I/O at any width: 16 and 32 outputs +5% to +28% on an
// H200 (16-96x4-16, 32-96x2-32, 64-80x2-16).
MLPCORE_HOST_DEVICE constexpr bool large_batch_float32_io(TileFamily family, FusedPolicy base, FusedPolicy twin, unsigned output_features) {
  return family == TileFamily::nvidia && twin.sample_tiles > base.sample_tiles && (output_features <= 8 || twin.sample_tiles <= 2);
}

// Whether a feature-major kernel (ops/fused_mlp.h, InputPrefetch) copies each block's input through the
// wave's shared memory: on NVIDIA wherever the input prefetches, and for inputs of at most 2 tiles. The
// stage holds a row per feature, a block's 16 S samples and 16 bytes of padding: up to 2 tiles at most 8.5
// KiB per wave (float32, 4 sample tiles); an input-prefetching twin (float16 I/O, 2 sample tiles, at most
// 64 features) 80 bytes per feature, 5 KiB.
MLPCORE_HOST_DEVICE constexpr bool stages_feature_major_input(TileFamily family, FusedPolicy policy, int input_tiles) {
  return family == TileFamily::nvidia && (policy.prefetch_input || input_tiles <= 2);
}

// Whether a stage copies a call's input with cp.async, in whole 16-byte chunks: the input's address
// 16-byte aligned and, feature-major, each feature's row (`row_bytes`, the batch's values) a multiple of 16
// bytes (0 for sample-major input, whose blocks of rows are whole chunks). Otherwise a feature-major stage
// is filled by the lanes' own loads and sample-major input read from global memory (ops/fused_mlp.h,
// InputPrefetch); where only an input-prefetching twin stages the input, the call takes the kernel instead
// (engine/src/fused_plan.h, CallRouting).
MLPCORE_HOST_DEVICE constexpr bool copies_input_in_chunks(unsigned long long input_address, unsigned long long row_bytes) {
  return input_address % 16 == 0 && row_bytes % 16 == 0;
}

}  // namespace mlpcore::ops
