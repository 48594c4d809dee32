#include "engine/src/cuda_specialize.h"

#include <chrono>
#include <cstdio>

#include "engine/src/kernel_cache.h"
#include "engine/src/nvrtc.h"
#include "engine/src/specialized_source.h"

namespace mlpcore::detail {
namespace {

using Clock = std::chrono::steady_clock;

std::string seconds_since(Clock::time_point start) {
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  char text[32];
  if (s < 1.0)
    std::snprintf(text, sizeof text, "%.1f ms", 1e3 * s);
  else
    std::snprintf(text, sizeof text, "%.2f s", s);
  return text;
}

std::string target_of(int arch) { return "sm_" + std::to_string(arch); }

}  // namespace

const Nvrtc& nvrtc() {
  // Never unloaded: NVRTC keeps allocations (its C++ runtime's exception pool) that dlclose at exit
  // would orphan, and a process that compiled once may compile again until it ends.
  static const Nvrtc* const compiler = new Nvrtc;
  return *compiler;
}

KernelFile compile_cuda_kernel_file(const FusedPlan& plan, int arch) {
  const std::string source = specialized_source(plan);
  return {target_of(arch), specialized_source_key(source), nvrtc().version(), plan.describe(), nvrtc().compile(source, arch).cubin};
}

SpecializedCode specialized_cuda_code(const FusedPlan& plan, int arch, const NetworkOptions& options) {
  const auto start = Clock::now();
  const std::string target = target_of(arch);
  if (!options.kernels_file.empty()) {
    KernelFile k = read_kernel_file(options.kernels_file);
    check_kernel_file_matches(k, options.kernels_file, specialized_source_key(specialized_source(plan)), target, plan.describe());
    return {std::move(k.code), plan.describe() + ", loaded from " + options.kernels_file + " in " + seconds_since(start)};
  }
  const KernelCache cache(options.kernel_cache);
  const std::string source = specialized_source(plan);
  const std::string key = specialized_source_key(source);
  const std::string compiler = nvrtc().version();
  if (std::optional<KernelFile> cached = cache.load(key, target, compiler))
    return {std::move(cached->code), plan.describe() + ", from the kernel cache in " + seconds_since(start)};
  KernelFile k{target, key, compiler, plan.describe(), nvrtc().compile(source, arch).cubin};
  std::string description = plan.describe() + ", compiled by " + compiler + " for " + target + " in " + seconds_since(start);
  if (const std::string problem = cache.store(k); !problem.empty()) {
    description += " (not cached: " + problem + ")";
  }
  return {std::move(k.code), std::move(description)};
}

}  // namespace mlpcore::detail
