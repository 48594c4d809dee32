// mlpcore::compile_kernels: a model's specialized kernels compiled ahead of time into a kernel file.
#include <chrono>
#include <cstdio>

#include "engine/src/amd_arch.h"
#include "engine/src/amdgpu_clang.h"
#include "engine/src/file_io.h"
#include "engine/src/fused_plan.h"
#include "engine/src/hiprtc.h"
#include "engine/src/nvrtc.h"
#include "engine/src/specialize.h"
#include "mlpcore/error.h"
#include "mlpcore/network.h"

namespace mlpcore {
namespace {

[[noreturn]] void bad_target(std::string_view target, const std::string& why) {
  throw Error(ErrorCode::invalid_argument, "compile", "target", "'" + std::string(target) + "': " + why);
}

// "sm_90": the tensor-core kernels need sm_80 or newer.
void check_nvidia_target(std::string_view target) {
  if (!target.starts_with("sm_") || target.size() < 5 || target.size() > 6) bad_target(target, "expected sm_80, sm_86, sm_89, sm_90 or newer, or an AMD gfx target");
  int arch = 0;
  for (const char c : target.substr(3)) {
    if (c < '0' || c > '9') bad_target(target, "expected sm_ and the compute capability's digits, as sm_90");
    arch = 10 * arch + (c - '0');
  }
  if (arch < 80) bad_target(target, "the tensor-core kernels need sm_80 or newer");
}

// "gfx1100": an AMD processor with matrix cores, and its tile family.
ops::TileFamily amd_family(std::string_view target) {
  const auto processor = detail::processor_of(target);
  if (!processor || *processor != target) bad_target(target, "expected an AMD processor name such as gfx1100, gfx1201, gfx90a or gfx942");
  switch (detail::arch_family(target)) {
    case detail::Arch::gfx11: return ops::TileFamily::rdna3;
    case detail::Arch::gfx12: return ops::TileFamily::rdna4;
    case detail::Arch::gfx9: return ops::TileFamily::cdna;
    case detail::Arch::unknown: break;
  }
  bad_target(target, "no matrix-core kernels for it (RDNA3 gfx11xx, RDNA4 gfx12xx, CDNA gfx908/gfx90a/gfx94x/gfx950)");
}

// The first of `compilers` that builds the plan; Error(device) with every one's reason when none does.
detail::KernelFile compile_with_first(const detail::FusedPlan& plan, const std::string& target,
                                      std::initializer_list<std::pair<const detail::KernelCompiler*, std::string>> compilers) {
  std::string reasons;
  for (const auto& [compiler, unavailable] : compilers) {
    if (!unavailable.empty()) {
      reasons += "\n  " + unavailable;
      continue;
    }
    try {
      return detail::compile_kernel_file(plan, target, *compiler);
    } catch (const Error& e) {
      reasons += "\n  " + std::string(e.what());
    }
  }
  throw Error(ErrorCode::device, "compile", "target", target + ": no compiler built the kernels:" + reasons);
}

}  // namespace

std::string compile_kernels(const Model& model, std::string_view backend, std::string_view target, const std::filesystem::path& path,
                            NetworkOptions::Layouts layouts) {
  model.validate("model");
  const std::string name(backend), arch(target);
  const bool amd = target.starts_with("gfx");
  if (amd ? backend != "hip" : backend != "cuda" && backend != "cuda-f16acc")
    throw Error(ErrorCode::invalid_argument, "compile", "backend",
                "'" + name + "': kernels for " + arch + " are compiled for " + (amd ? "hip" : "cuda or cuda-f16acc"));
  const ops::TileFamily family = amd ? amd_family(target) : (check_nvidia_target(target), ops::TileFamily::nvidia);
  if (!layouts.sample_major && !layouts.feature_major)
    throw Error(ErrorCode::invalid_argument, "compile", "layouts", "names no layout (sample_major, feature_major or both)");
  const detail::FusedPlan plan = detail::plan_fused(model, name.c_str(), {family, true, backend == "cuda-f16acc", layouts});
  if (plan.kind != detail::KernelKind::specialized)
    throw Error(ErrorCode::unsupported_model, "compile", "model",
                plan.shape + ": " + plan.not_specialized + "; it runs on the built-in kernels, which need no kernel file");
  const auto start = std::chrono::steady_clock::now();
  detail::KernelFile k;
  if (amd) {
    const detail::Hiprtc& rtc = detail::hiprtc();
    const detail::AmdgpuClang clang;
    k = compile_with_first(plan, arch,
                           {{&rtc, rtc.loaded() ? "" : "no hiprtc: " + rtc.load_error()},
                            {&clang, clang.found() ? "" : "no clang with the AMDGPU target (tried " + clang.not_found() + ")"}});
  } else {
    const detail::Nvrtc& rtc = detail::nvrtc();
    k = compile_with_first(plan, arch, {{&rtc, rtc.loaded() ? "" : "no NVRTC: " + rtc.load_error()}});
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_file_atomically(path, detail::encode_kernel_file(k));
  char took[32];
  std::snprintf(took, sizeof took, "%.2f s", seconds);
  std::size_t bytes = 0;
  for (const auto& code : k.modules) bytes += code.size();
  return plan.describe() + ", compiled by " + k.compiler + " for " + k.target + " in " + took + " (" + std::to_string(k.modules.size()) +
         " kernels, " + std::to_string(bytes) + " bytes)" + detail::small_batch_twin_note(plan, k.modules);
}

}  // namespace mlpcore
