#pragma once
// The source of a model's specialized kernels: ops/fused_mlp_specialized.h instantiated for a plan. NVRTC
// compiles exactly this text (engine/src/nvrtc.cpp), `mlpcore compile` too, one program per kernel
// (kernel_source), and the tests compile it for the wave emulator.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/src/backend.h"
#include "engine/src/fused_plan.h"

namespace mlpcore::detail {

// The plan must be KernelKind::specialized.
std::string specialized_source(const FusedPlan& plan);

// One kernel of a specialized plan.
struct SpecializedKernel {
  Io io;
  KernelSlot slot;
  std::string name;  // plan.kernel_name(io, slot), or a small-batch twin's plan.small_batch_twin_name(io, slot)
};

// The plan's kernels: float32 and float16 I/O, in each layout it serves, and the feature-major twins for
// large batches where it has them.
std::vector<SpecializedKernel> specialized_kernels(const FusedPlan& plan);

// The small-batch twins (has_small_batch_twin) of the kernels of specialized_kernels(plan), in that order,
// named as FusedPlan::small_batch_twin_name says. A specialized kernel's twin is its code assembled again,
// with the kernel's name: a kernel file holds the twins' modules after the kernels'. A run-time-shaped
// kernel's is another kernel of the library's.
std::vector<SpecializedKernel> small_batch_twins(const FusedPlan& plan);

// `source` (specialized_source) building kernel k only. A run-time compiler optimizes a program's kernels
// one after another, about a second each, so each kernel is a program of its own and they compile at once.
std::string kernel_source(const std::string& source, const SpecializedKernel& k);

// A hash of what a specialized kernel is built from: the source and every header it includes (embedded
// in this library, engine/src/kernel_headers.h); hex digits, equal for equal inputs.
std::string specialized_source_key(const std::string& source);

// FNV-1a, 64 bits, from `seed`: checksums of kernel files and cache entries.
std::uint64_t fnv1a64(const void* data, std::size_t size, std::uint64_t seed = 0xcbf29ce484222325ull);

}  // namespace mlpcore::detail
