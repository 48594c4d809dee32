#include "engine/src/specialized_source.h"

#include <cstdio>
#include <stdexcept>

#include "engine/src/fused_packing.h"
#include "engine/src/kernel_headers.h"
#include "ops/mlp_network.h"

namespace mlpcore::detail {
namespace {

const char* family_name(ops::TileFamily f) {
  switch (f) {
    case ops::TileFamily::rdna3: return "rdna3";
    case ops::TileFamily::rdna4: return "rdna4";
    case ops::TileFamily::cdna: return "cdna";
    case ops::TileFamily::nvidia: return "nvidia";
  }
  return "unknown";
}

std::string hex64(std::uint64_t v) {
  char s[17];
  std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(v));
  return s;
}

const char* boolean(bool b) { return b ? "true" : "false"; }

std::string row_loads_text(ops::RowLoads r) {
  switch (r) {
    case ops::RowLoads::branched: return "mlpcore::ops::RowLoads::branched";
    case ops::RowLoads::clamped: return "mlpcore::ops::RowLoads::clamped";
    case ops::RowLoads::tested: return "mlpcore::ops::RowLoads::tested";
  }
  throw std::logic_error("row_loads_text: no such RowLoads");
}

std::string policy_text(const ops::FusedPolicy& p) {
  return "mlpcore::ops::FusedPolicy{" + std::to_string(p.sample_tiles) + ", " + boolean(p.prefetch_weights) + ", " + boolean(p.prefetch_input) + ", " +
         std::to_string(p.min_blocks) + ", " + boolean(p.narrow_input) + ", " + boolean(p.narrow_output) + ", " + boolean(p.loop_layers) + ", " +
         boolean(p.compiler_unrolls_tiles) + ", " + boolean(p.one_tile_first_layer) + ", " + boolean(p.uniform_descriptors) + ", " +
         row_loads_text(p.row_loads) + ", " + boolean(p.tested_row_stores) + ", " + boolean(p.light_assembly) + ", " +
         boolean(p.full_assembly_float16_io) + ", " + boolean(p.prefetch_bias) + "}";
}

}  // namespace

std::uint64_t fnv1a64(const void* data, std::size_t size, std::uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) seed = (seed ^ p[i]) * 0x100000001b3ull;
  return seed;
}

std::string specialized_source(const FusedPlan& plan) {
  if (plan.kind != KernelKind::specialized) throw std::logic_error("specialized_source: not a specialized plan");
  std::string activations, widths;
  for (ActivationKind a : plan.activations) activations += std::string(activations.empty() ? "" : ", ") + "mlpcore::ActivationKind::" + to_string(a);
  for (int w : plan.widths) widths += (widths.empty() ? "" : ", ") + std::to_string(w);
  using ops::IoLayout;
  const NarrowEdges narrowable = plan.narrowable_edges();
  const std::string layouts = std::to_string((plan.layouts.sample_major ? ops::layout_bit(IoLayout::sample_major) : 0u) |
                                             (plan.layouts.feature_major ? ops::layout_bit(IoLayout::feature_major) : 0u)) + "u";
  const std::string type = "mlpcore::ops::SpecializedNetwork<mlpcore::ops::TileFamily::" + std::string(family_name(plan.family)) + ", " +
                           boolean(plan.f16_accumulation) + ",\n    " + policy_text(plan.policy) + ",\n    " + policy_text(plan.feature_major_policy) +
                           ",\n    " + policy_text(plan.large_batch_policy) + ",\n    mlpcore::ops::PerLayer<" + activations +
                           ">,\n    mlpcore::ops::KnownEdges<" + boolean(narrowable.input) + ", " + boolean(narrowable.output) + ">,\n    " +
                           layouts + ", " + widths + ">";
  // A namespace named after the type, so that several sources can share one translation unit (the tests).
  const std::string ns = "mlpcore_specialized_" + hex64(fnv1a64(type.data(), type.size()));
  // The kernels a program is built for are the host's choice (FusedPlan::large_batch_float32_io, say), so the
  // source names them: its key (specialized_source_key) then tells a kernel file of other kernels apart.
  std::string kernels;
  for (const SpecializedKernel& k : specialized_kernels(plan)) kernels += " " + k.name;
  for (const SpecializedKernel& k : small_batch_twins(plan)) kernels += " " + k.name + "(small batch)";
  return "// mlpcore: kernels specialized for " + plan.shape + " (" + family_name(plan.family) + ", " +
         (plan.f16_accumulation ? "float16" : "float32") + " accumulation)\n" +
         "// kernels:" + kernels + "\n"
         "#include \"ops/fused_mlp_specialized.h\"\n"
         "namespace " + ns + " {\nusing Network = " + type + ";\n}\n" +
         "MLPCORE_SPECIALIZED_KERNELS(" + ns + "::Network)\n";
}

std::vector<SpecializedKernel> specialized_kernels(const FusedPlan& plan) {
  std::vector<SpecializedKernel> out;
  for (const KernelSlot slot : kKernelSlots)
    for (const Io io : {Io::f32, Io::f16})
      if (has_kernel(plan, slot, io)) out.push_back({io, slot, plan.kernel_name(io, slot)});
  return out;
}

std::vector<SpecializedKernel> small_batch_twins(const FusedPlan& plan) {
  std::vector<SpecializedKernel> out = specialized_kernels(plan);
  std::erase_if(out, [&](const SpecializedKernel& k) { return !has_small_batch_twin(plan, k.slot, k.io); });
  for (SpecializedKernel& k : out) k.name = plan.small_batch_twin_name(k.io, k.slot);
  return out;
}

std::string kernel_source(const std::string& source, const SpecializedKernel& k) {
  return std::string("#define MLPCORE_SPECIALIZED_ONLY ") + (slot_layout(k.slot) == Layout::feature_major ? "feature_major" : "sample_major") + ", " +
         k.name + ", " + (k.io == Io::f16 ? "mlpcore::ops::half_t" : "float") + ", " + boolean(k.slot == KernelSlot::feature_major_large_batch) + "\n" +
         source;
}

std::string specialized_source_key(const std::string& source) {
  static const std::uint64_t headers = [] {
    std::uint64_t h = fnv1a64("mlpcore kernel headers", 22);
    for (const KernelHeader& k : kernel_headers()) {
      const std::string_view name = k.name, text = k.text();
      h = fnv1a64(name.data(), name.size(), h);
      h = fnv1a64(text.data(), text.size(), h);
    }
    return h;
  }();
  const std::uint64_t a = fnv1a64(source.data(), source.size(), headers);
  // A second, differently seeded pass: 128 bits, so distinct sources never share a key in practice.
  const std::uint64_t b = fnv1a64(source.data(), source.size(), headers ^ 0x9e3779b97f4a7c15ull);
  return hex64(a) + hex64(b);
}

}  // namespace mlpcore::detail
