#include "engine/src/specialize.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>

#include "engine/src/kernel_cache.h"
#include "engine/src/specialized_source.h"
#include "mlpcore/error.h"

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

// Says once per process why no kernel is specialized (the machine's reason), or for every network why
// its own was not (a compile failure, a network too large).
void specialization_notice(const std::string& backend, const FusedPlan& plan, const std::string& why, bool machine_reason) {
  const auto say = [&] {
    std::fprintf(stderr, "mlpcore: %s runs %s on the kernels built into mlpcore (%s), not on one specialized for it: %s\n", backend.c_str(),
                 plan.shape.c_str(), plan.describe().c_str(), why.c_str());
  };
  if (!machine_reason) return say();
  static std::once_flag once;
  std::call_once(once, say);
}

bool fits(const CompiledCode& code) { return code.reports_spills && code.spill_bytes <= kMaxSpillBytes; }

// The index in `kernels` (specialized_kernels) of the kernel whose code small-batch twin `twin` is: the
// one of its slot and I/O type.
std::size_t kernel_of(const std::vector<SpecializedKernel>& kernels, const SpecializedKernel& twin) {
  return static_cast<std::size_t>(
      std::ranges::find_if(kernels, [&](const SpecializedKernel& k) { return k.slot == twin.slot && k.io == twin.io; }) - kernels.begin());
}

// The code, described: the plan, where the code came from (`from`: ", from the kernel cache in 2 ms"),
// and its twins that fell back (small_batch_twin_note), read before the modules move.
SpecializedCode described(const FusedPlan& plan, std::vector<std::vector<std::byte>> modules, const std::string& from) {
  std::string description = plan.describe() + from + small_batch_twin_note(plan, modules);
  return {std::move(modules), std::move(description)};
}

// The kernel file of the plan's kernels (compile_kernel_file), its source built already: each kernel's
// module, then its small-batch twin's (small_batch_twins).
KernelFile compile_kernels(const FusedPlan& plan, const std::string& source, const std::string& target, const KernelCompiler& compiler) {
  const std::vector<SpecializedKernel> kernels = specialized_kernels(plan), twins = small_batch_twins(plan);
  std::vector<std::vector<std::byte>> modules(kernels.size() + twins.size());
  std::vector<std::exception_ptr> failed(kernels.size());
  {
    std::vector<std::jthread> threads;
    for (std::size_t i = 0; i < kernels.size(); ++i)
      threads.emplace_back([&, i] {
        try {
          CompiledCode c = compile_kernel(plan, source, kernels[i], target, compiler);
          for (std::size_t t = 0; t < twins.size(); ++t)
            if (kernel_of(kernels, twins[t]) == i) modules[kernels.size() + t] = small_batch_twin(c, target, compiler).code;
          modules[i] = std::move(c.code);
        } catch (...) {
          failed[i] = std::current_exception();
        }
      });
  }
  for (const std::exception_ptr& e : failed)
    if (e) std::rethrow_exception(e);
  return {target, specialized_source_key(source), compiler.code_version(), plan.describe(), std::move(modules)};
}

}  // namespace

std::vector<const void*> module_images(const SpecializedCode& code, std::vector<const void*> built_in) {
  if (code.modules.empty()) return built_in;
  std::vector<const void*> images;
  for (const std::vector<std::byte>& m : code.modules) images.push_back(m.data());
  return images;
}

CompiledCode small_batch_twin(const CompiledCode& kernel, const std::string& target, const KernelCompiler& compiler) {
  std::optional<CompiledCode> twin = compiler.assemble_unbounded(kernel, target);
  return twin && fits(*twin) ? std::move(*twin) : kernel;
}

std::string small_batch_twin_note(const FusedPlan& plan, const std::vector<std::vector<std::byte>>& modules) {
  const std::vector<SpecializedKernel> kernels = specialized_kernels(plan), twins = small_batch_twins(plan);
  if (modules.size() != kernels.size() + twins.size()) return "";
  std::size_t kernels_code = 0;
  for (std::size_t t = 0; t < twins.size(); ++t)
    if (modules[kernel_of(kernels, twins[t])] == modules[kernels.size() + t]) ++kernels_code;
  if (kernels_code == 0) return "";
  return ", " + std::to_string(kernels_code) + " of " + std::to_string(twins.size()) + " small-batch twins fell back to their kernel's code";
}

CompiledCode compile_kernel(const FusedPlan& plan, const std::string& source, const SpecializedKernel& kernel, const std::string& target,
                            const KernelCompiler& compiler) {
  const Assembly assembly = ops::assembled_light(plan.policy_of(kernel.slot), kernel.io == Io::f16) ? Assembly::light : Assembly::full;
  const std::string own = kernel_source(source, kernel);
  CompiledCode c = compiler.compile_code(own, target, assembly);
  const bool bounded = plan.policy_of(kernel.slot).min_blocks > 0;
  if (bounded && c.reports_spills && !fits(c) && assembly == Assembly::full && !c.local_arrays) {
    CompiledCode light = compiler.assemble_again(own, c, target, Assembly::light);
    if (fits(light)) return light;
  }
  FusedPlan again = plan;
  ops::FusedPolicy& policy = again.policy_of(kernel.slot);
  if (c.local_arrays) policy.compiler_unrolls_tiles = false;
  if (!fits(c)) policy.min_blocks = 0;
  // The source builds twins where its two policies differ (ops::SpecializedNetwork): without twins they stay equal.
  if (!plan.large_batch_kernels) again.large_batch_policy = again.feature_major_policy;
  if (again == plan) return c;
  return compiler.compile_code(kernel_source(specialized_source(again), kernel), target, assembly);
}

KernelFile compile_kernel_file(const FusedPlan& plan, const std::string& target, const KernelCompiler& compiler) {
  return compile_kernels(plan, specialized_source(plan), target, compiler);
}

SpecializedCode specialized_code(const FusedPlan& plan, const std::string& target, const NetworkOptions& options, const KernelCompiler& compiler) {
  const auto start = Clock::now();
  const std::string source = specialized_source(plan), key = specialized_source_key(source);
  if (!options.kernels_file.empty()) {
    KernelFile k = read_kernel_file(options.kernels_file);
    check_kernel_file_matches(k, options.kernels_file, key, target, plan.describe());
    return described(plan, std::move(k.modules), ", loaded from " + options.kernels_file + " in " + seconds_since(start));
  }
  const KernelCache cache(options.kernel_cache);
  // An entry compiled with everything the compiler can use serves any process; one compiled with less
  // (NVRTC without nvJitLink) only processes that have no more, so that installing nvJitLink compiles again.
  std::optional<KernelFile> cached = cache.load(key, target, compiler.version());
  if (!cached && compiler.code_version() != compiler.version()) cached = cache.load(key, target, compiler.code_version());
  if (cached) return described(plan, std::move(cached->modules), ", from the kernel cache in " + seconds_since(start));
  KernelFile k = compile_kernels(plan, source, target, compiler);
  const std::string from = ", compiled by " + k.compiler + " for " + target + " in " + seconds_since(start);
  const std::string problem = cache.store(k);
  SpecializedCode code = described(plan, std::move(k.modules), from);
  if (!problem.empty()) code.description += " (not cached: " + problem + ")";
  return code;
}

KernelChoice choose_kernels(const Model& model, const std::string& backend, PlanRequest request, const std::string& target,
                            const NetworkOptions& options, const RuntimeCompiler& compiler) {
  const bool from_file = !options.kernels_file.empty();
  PlanRequest built_in = request;
  built_in.specialize = false;
  request.specialize = options.specialize && (from_file || compiler.loaded());
  request.layouts = options.layouts;
  KernelChoice c{plan_fused(model, backend.c_str(), request), {}};
  if (c.plan.kind == KernelKind::specialized) {
    try {
      c.code = specialized_code(c.plan, target, options, compiler);
      return c;
    } catch (const Error& e) {
      if (from_file) throw;  // the user's file is wrong: say so rather than run something else
      c.plan = plan_fused(model, backend.c_str(), built_in);
      if (options.notices) specialization_notice(backend, c.plan, e.what(), false);
    }
  } else if (!c.plan.not_specialized.empty()) {
    if (from_file) throw Error(ErrorCode::kernel_file, options.kernels_file, "", "this network runs the built-in kernels: " + c.plan.not_specialized);
    if (options.notices) specialization_notice(backend, c.plan, c.plan.not_specialized, false);
  } else if (options.specialize && options.notices) {
    specialization_notice(backend, c.plan,
                          "no " + std::string(compiler.product()) + " (" + compiler.load_error() +
                              "); `mlpcore compile --target " + target + "` builds one ahead of time",
                          true);
  }
  c.code.description = c.plan.describe();
  return c;
}

}  // namespace mlpcore::detail
