#pragma once
// The source of a model's specialized kernels: ops/fused_mlp_specialized.h instantiated for a plan. NVRTC
// compiles exactly this text (engine/src/nvrtc.cpp), `mlpcore compile` too, and the tests compile it for
// the wave emulator.
#include <cstdint>
#include <string>

#include "engine/src/fused_plan.h"

namespace mlpcore::detail {

// The plan must be KernelKind::specialized.
std::string specialized_source(const FusedPlan& plan);

// A hash of what a specialized kernel is built from: the source and every header it includes (embedded
// in this library, engine/src/kernel_headers.h); hex digits, equal for equal inputs.
std::string specialized_source_key(const std::string& source);

// FNV-1a, 64 bits, from `seed`: checksums of kernel files and cache entries.
std::uint64_t fnv1a64(const void* data, std::size_t size, std::uint64_t seed = 0xcbf29ce484222325ull);

}  // namespace mlpcore::detail
