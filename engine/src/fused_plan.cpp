#include "engine/src/fused_plan.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>

#include "mlpcore/error.h"
#include "ops/activation_math.h"
#include "ops/fused_shapes.h"
#include "ops/mlp_network.h"

namespace mlpcore::detail {
namespace {

int tiles_of(std::size_t width) { return static_cast<int>((width + 15) / 16); }

void check_widths(const Model& model, const char* backend) {
  for (std::size_t i = 0; i < model.layers.size(); ++i) {
    const Layer& l = model.layers[i];
    if (l.out > static_cast<std::size_t>(ops::kMaxFusedWidth) || l.in > static_cast<std::size_t>(ops::kMaxFusedWidth))
      throw Error(ErrorCode::unsupported_model, "backend '" + std::string(backend) + "'", "layers." + std::to_string(i),
                  std::to_string(l.in) + " -> " + std::to_string(l.out) + " is wider than the " + std::to_string(ops::kMaxFusedWidth) +
                      " the fused matrix-core kernel keeps in registers (use the cpu backend)");
  }
}

int compiled_in_index(const FusedPlan& p) {
  auto activations_are = [&](ActivationKind hidden, ActivationKind output) {
    for (std::size_t i = 0; i < p.activations.size(); ++i)
      if (p.activations[i] != (i + 1 == p.activations.size() ? output : hidden)) return false;
    return true;
  };
#define MLPCORE_MATCH_SHAPE(index, hidden, output, ...) \
  if (p.widths == std::vector<int>{__VA_ARGS__} && activations_are(ActivationKind::hidden, ActivationKind::output)) return index;
  MLPCORE_FIXED_SHAPES(MLPCORE_MATCH_SHAPE)
#undef MLPCORE_MATCH_SHAPE
  return -1;
}

// "64-64x5-4" where the hidden layers are one width, else every width: "3-32-64-1".
std::string shape_text(const Model& model) {
  std::vector<std::size_t> dims = {model.input_dim()};
  for (const Layer& l : model.layers) dims.push_back(l.out);
  const std::size_t hidden = dims.size() - 2;
  if (hidden >= 2 && std::all_of(dims.begin() + 1, dims.end() - 1, [&](std::size_t d) { return d == dims[1]; }))
    return std::to_string(dims.front()) + "-" + std::to_string(dims[1]) + "x" + std::to_string(hidden) + "-" + std::to_string(dims.back());
  std::string s;
  for (std::size_t d : dims) s += (s.empty() ? "" : "-") + std::to_string(d);
  return s;
}

// Whether a run-time-shaped plan's network can run the feature-major kernel's twin for inputs of one tile:
// its input is one tile with a hidden layer after it, and its weights fit (ops::kMaxOneTileInputTiles).
bool fits_one_tile_input_twin(const FusedPlan& p) {
  const int layers = static_cast<int>(p.activations.size());
  return ops::one_tile_first_layer(static_cast<std::uint32_t>(p.input_dim), static_cast<std::uint32_t>(layers)) &&
         ops::one_tile_input_tiles(p.width_tiles, layers, p.widths.back()) <= ops::kMaxOneTileInputTiles;
}

}  // namespace

int unrolled_tiles(const FusedPlan& p) {
  int tiles = 0;
  const std::size_t layers = p.activations.size();
  for (std::size_t l = 0; l < layers; ++l) {
    // ops::repeats_previous_layer: such a layer runs in the loop of the run's first
    const bool repeats = p.policy.loop_layers && l >= 2 && l + 1 < layers && p.widths[l - 1] == p.widths[l] &&
                         p.widths[l] == p.widths[l + 1] && p.activations[l - 1] == p.activations[l];
    if (!repeats) tiles += p.widths[l] * p.widths[l + 1];
  }
  return tiles;
}

FusedPlan plan_fused(const Model& model, const char* backend, PlanRequest request) {
  check_widths(model, backend);
  FusedPlan p;
  p.family = request.family;
  p.input_dim = model.input_dim();
  p.output_dim = model.output_dim();
  p.shape = shape_text(model);
  p.widths = {tiles_of(model.input_dim())};
  for (const Layer& l : model.layers) {
    p.widths.push_back(tiles_of(l.out));
    p.activations.push_back(l.activation.kind);
  }
  p.width_tiles = *std::max_element(p.widths.begin(), p.widths.end());
  p.fixed_index = compiled_in_index(p);
  p.kind = request.specialize ? KernelKind::specialized : p.fixed_index >= 0 ? KernelKind::compiled_in : KernelKind::runtime_shaped;
  if (p.kind != KernelKind::compiled_in) p.fixed_index = -1;
  p.activations_per_tile = p.kind == KernelKind::runtime_shaped && ops::runtime_activations_per_tile(p.family) &&
                           std::any_of(p.activations.begin(), p.activations.end() - 1, [](ActivationKind k) { return k != ActivationKind::relu; });
  if (p.kind == KernelKind::specialized) p.layouts = request.layouts;
  // The run-time-shaped kernels accumulate in float16 only at the widths that have such kernels.
  p.f16_accumulation = request.f16_accumulation && (p.kind != KernelKind::runtime_shaped ||
                                                    ops::runtime_f16_accumulation(p.family, p.width_tiles, p.activations_per_tile));
  ops::FusedShape shape = p.kind == KernelKind::runtime_shaped
                              ? ops::FusedShape{p.width_tiles, p.width_tiles, p.width_tiles, ops::ShapeKnown::widest}
                              : ops::FusedShape{p.widths.front(), p.width_tiles, p.widths.back(),
                                                p.kind == KernelKind::specialized ? ops::ShapeKnown::exact : ops::ShapeKnown::tiles, true,
                                                static_cast<int>(p.input_dim)};
  // Each layout's policy; a run-time-shaped kernel's as its activations make it.
  const auto layout_policy = [&](const ops::FusedShape& s) {
    const ops::FusedPolicy base = ops::fused_policy(p.family, s);
    return p.kind == KernelKind::runtime_shaped ? ops::runtime_activations_policy(p.family, p.width_tiles, base, p.activations_per_tile) : base;
  };
  p.policy = p.feature_major_policy = layout_policy(shape);
  // A specialized plan's feature-major kernels are its own, and they and the run-time-shaped ones have twins
  // for large feature-major batches where their policy function gives one (large_batch_policy, and
  // runtime_large_batch_policy: a specialized source builds the twins, the library has the run-time-shaped
  // ones); the compiled-in kernels serve both layouts with one policy. A network of one input tile runs
  // the run-time-shaped feature-major kernel's twin for such inputs where the library has one and its
  // weights fit (ops::kMaxOneTileInputTiles).
  if (p.kind == KernelKind::runtime_shaped || (p.kind == KernelKind::specialized && p.layouts.feature_major)) {
    shape.sample_major_input = false;
    p.feature_major_policy = layout_policy(shape);
    if (p.kind == KernelKind::runtime_shaped) {
      const ops::FusedPolicy one_tile =
          ops::runtime_twin_policy(p.family, p.width_tiles, p.feature_major_policy, p.activations_per_tile, ops::RuntimeTwin::one_tile_input);
      p.one_tile_input_twin = one_tile != p.feature_major_policy && fits_one_tile_input_twin(p);
      if (p.one_tile_input_twin) p.feature_major_policy = one_tile;
    }
    p.large_batch_policy = p.kind == KernelKind::runtime_shaped
                               ? ops::runtime_twin_policy(p.family, p.width_tiles, p.feature_major_policy, p.activations_per_tile,
                                                          ops::RuntimeTwin::large_batch)
                               : ops::large_batch_policy(p.family, shape, p.feature_major_policy, unrolled_tiles(p));
  } else {
    p.large_batch_policy = p.feature_major_policy;
  }
  p.large_batch_kernels = p.large_batch_policy != p.feature_major_policy;
  p.large_batch_float32_io = p.large_batch_kernels && ops::large_batch_float32_io(p.family, p.feature_major_policy, p.large_batch_policy,
                                                                                   static_cast<unsigned>(p.output_dim));
  if (p.kind == KernelKind::specialized && p.family == ops::TileFamily::nvidia && unrolled_tiles(p) > kMaxUnrolledTiles) {
    PlanRequest built_in = request;
    built_in.specialize = false;
    FusedPlan plan = plan_fused(model, backend, built_in);
    plan.not_specialized = "its kernel would unroll " + std::to_string(unrolled_tiles(p)) + " matrix tiles, more than the " +
                           std::to_string(kMaxUnrolledTiles) + " of a specialized kernel";
    return plan;
  }
  return p;
}

bool has_kernel(const FusedPlan& plan, KernelSlot slot, Io io) {
  if (slot == KernelSlot::feature_major_large_batch) return plan.large_batch_kernels && (io == Io::f16 || plan.large_batch_float32_io);
  return serves(plan.layouts, slot_layout(slot));
}

bool has_small_batch_twin(const FusedPlan& plan, KernelSlot slot, Io io) {
  if (plan.kind == KernelKind::runtime_shaped)
    return slot != KernelSlot::feature_major_large_batch && has_kernel(plan, slot, io) && plan.small_batch_policy(slot) != plan.policy_of(slot);
  return plan.kind == KernelKind::specialized && plan.family == ops::TileFamily::nvidia && slot != KernelSlot::feature_major_large_batch &&
         has_kernel(plan, slot, io) && plan.policy_of(slot).min_blocks > 0 &&
         unrolled_tiles(plan) <= (plan.f16_accumulation ? kMaxSmallBatchTilesF16Acc : kMaxSmallBatchTiles);
}

CallRouting call_routing(const FusedPlan& plan, unsigned multiprocessors) {
  CallRouting r;
  for (const Io io : {Io::f32, Io::f16})
    r.large_batch_from[static_cast<std::size_t>(io)] =
        has_kernel(plan, KernelSlot::feature_major_large_batch, io) ? plan.large_batch : std::numeric_limits<std::size_t>::max();
  for (const KernelSlot slot : kKernelSlots) r.sample_tiles[static_cast<std::size_t>(slot)] = plan.policy_of(slot).sample_tiles;
  const int input_tiles = plan.widths.front();
  r.large_batch_takes_aligned_input_only = ops::stages_feature_major_input(plan.family, plan.large_batch_policy, input_tiles) &&
                                           !ops::stages_feature_major_input(plan.family, plan.feature_major_policy, input_tiles);
  for (const KernelSlot slot : {KernelSlot::sample_major, KernelSlot::feature_major})
    for (const Io io : {Io::f32, Io::f16})
      r.small_batch_twin[static_cast<std::size_t>(slot)][static_cast<std::size_t>(io)] = has_small_batch_twin(plan, slot, io);
  r.small_batch_blocks = std::size_t{multiprocessors} * kSmallBatchBlocksPerMultiprocessor;
  return r;
}

KernelSlot CallRouting::slot(const IoBuffers& call) const {
  if (call.layout == Layout::sample_major) return KernelSlot::sample_major;
  if (call.batch < large_batch_from[static_cast<std::size_t>(call.io)]) return KernelSlot::feature_major;
  const bool copied = ops::copies_input_in_chunks(reinterpret_cast<std::uintptr_t>(call.input), call.batch * io_bytes(call.io));
  return copied || !large_batch_takes_aligned_input_only ? KernelSlot::feature_major_large_batch : KernelSlot::feature_major;
}

bool CallRouting::takes_small_batch_twin(const IoBuffers& call, KernelSlot slot) const {
  if (slot == KernelSlot::feature_major_large_batch) return false;
  return small_batch_twin[static_cast<std::size_t>(slot)][static_cast<std::size_t>(call.io)] &&
         fused_blocks(call.batch, sample_tiles_in(slot)) <= small_batch_blocks;
}

std::size_t fused_blocks(std::size_t batch, int sample_tiles) {
  const std::size_t samples_per_block = std::size_t{ops::kFusedWavesPerBlock} * 16 * static_cast<std::size_t>(sample_tiles);
  return std::max<std::size_t>(1, (batch + samples_per_block - 1) / samples_per_block);
}

const ops::FusedPolicy& FusedPlan::policy_of(KernelSlot slot) const {
  switch (slot) {
    case KernelSlot::sample_major: return policy;
    case KernelSlot::feature_major: return feature_major_policy;
    case KernelSlot::feature_major_large_batch: return large_batch_policy;
  }
  throw std::logic_error("policy_of: no such kernel slot");
}
ops::FusedPolicy& FusedPlan::policy_of(KernelSlot slot) { return const_cast<ops::FusedPolicy&>(std::as_const(*this).policy_of(slot)); }

ops::FusedPolicy FusedPlan::small_batch_policy(KernelSlot slot) const {
  if (kind != KernelKind::runtime_shaped || slot == KernelSlot::feature_major_large_batch) return policy_of(slot);
  return ops::runtime_twin_policy(family, width_tiles, policy_of(slot), activations_per_tile, ops::RuntimeTwin::small_batch);
}

NarrowEdges FusedPlan::narrow_edges(KernelSlot slot) const {
  const ops::FusedPolicy& p = policy_of(slot);
  const NarrowEdges narrowable = narrowable_edges();
  return {p.narrow_input && narrowable.input, p.narrow_output && narrowable.output};
}

PackedShape FusedPlan::packed_shape(KernelSlot slot) const {
  // Padded where a layer's input that the kernel runs padded is narrower than the widest layer (a network
  // whose every such layer has width_tiles in and out is packed so already, and shares that packing with the
  // device API).
  if (kind != KernelKind::runtime_shaped) return {narrow_edges(slot)};
  const bool one_tile_input =
      policy_of(slot).one_tile_first_layer && ops::one_tile_first_layer(static_cast<std::uint32_t>(input_dim), static_cast<std::uint32_t>(widths.size() - 1));
  const bool narrower = std::any_of(widths.begin() + (one_tile_input ? 1 : 0), widths.end() - 1, [&](int w) { return w < width_tiles; });
  return narrower ? PackedShape{narrow_edges(slot), width_tiles, one_tile_input} : PackedShape{narrow_edges(slot)};
}

std::string FusedPlan::kernel_name() const {
  const std::string acc = f16_accumulation ? "_f16acc" : "";
  switch (kind) {
    case KernelKind::runtime_shaped: return "mlpcore_mlp_w" + std::to_string(width_tiles) + (activations_per_tile ? "_act" : "") + acc;
    case KernelKind::compiled_in: return "mlpcore_mlp_fixed_" + std::to_string(fixed_index) + acc;
    case KernelKind::specialized: return "mlpcore_mlp_specialized";  // its module holds this model's kernels only
  }
  return {};
}

std::string FusedPlan::kernel_name(Io io, KernelSlot slot) const {
  const std::string twin = slot == KernelSlot::feature_major_large_batch                  ? "_large"
                           : slot == KernelSlot::feature_major && one_tile_input_twin ? "_one_tile_input"
                                                                                         : "";
  return kernel_name() + (io == Io::f16 ? "_f16" : "") + (slot_layout(slot) == Layout::feature_major ? "_fm" : "") + twin;
}

std::string FusedPlan::small_batch_twin_name(Io io, KernelSlot slot) const {
  return kernel_name(io, slot) + (kind == KernelKind::runtime_shaped ? "_small" : "");
}

std::string FusedPlan::describe(bool small_batch_calls) const {
  const std::string acc = f16_accumulation ? " (float16 accumulation)" : "";
  const std::string batch = std::has_single_bit(large_batch) ? "2^" + std::to_string(std::countr_zero(large_batch)) : std::to_string(large_batch);
  const std::string twin = large_batch_policy.sample_tiles != feature_major_policy.sample_tiles
                               ? std::to_string(large_batch_policy.sample_tiles) + " sample tiles per wave"
                               : std::string("input prefetched");
  const std::string large =
      large_batch_kernels ? ", " + twin + " from " + batch + " feature-major samples" + (large_batch_float32_io ? "" : " with float16 I/O") : "";
  // (both I/O types' kernels of a layout have twins or neither)
  const bool small_twins = small_batch_calls && (has_small_batch_twin(*this, KernelSlot::sample_major, Io::f32) ||
                                                 has_small_batch_twin(*this, KernelSlot::feature_major, Io::f32));
  switch (kind) {
    case KernelKind::runtime_shaped:
      return "run-time-shaped, " + std::to_string(16 * width_tiles) + " wide" + acc + (activations_per_tile ? ", activations tested per tile" : "") +
             (one_tile_input_twin ? ", feature-major first layer on one input tile" : "") + ", for " + shape +
             (small_twins ? ", twins loading weights a tile ahead for small batches" : "") + large;
    case KernelKind::compiled_in: return "compiled in for " + shape + acc;
    case KernelKind::specialized: {
      const std::string io = layouts.feature_major ? (layouts.sample_major ? " (both I/O layouts)" : " (feature-major I/O)") : "";
      return "specialized for " + shape + acc + io + (small_twins ? ", twins without the register bound for small batches" : "") + large;
    }
  }
  return {};
}

}  // namespace mlpcore::detail
