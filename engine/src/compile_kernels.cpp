// mlpcore::compile_kernels: a model's specialized kernels compiled ahead of time into a kernel file.
#include <chrono>
#include <cstdio>

#include "engine/src/cuda_specialize.h"
#include "engine/src/file_io.h"
#include "engine/src/fused_plan.h"
#include "mlpcore/error.h"
#include "mlpcore/network.h"

namespace mlpcore {
namespace {

// "sm_90" -> 90; the tensor-core kernels need sm_80 or newer.
int nvidia_arch(std::string_view target) {
  const auto bad = [&](const std::string& why) -> int {
    throw Error(ErrorCode::invalid_argument, "compile", "target", "'" + std::string(target) + "': " + why);
  };
  if (target.starts_with("gfx"))
    return bad("AMD targets are not compiled ahead of time yet (no hiprtc or ROCm compiler support in mlpcore compile); the hip backend runs its built-in kernels");
  if (!target.starts_with("sm_") || target.size() < 5 || target.size() > 6) return bad("expected sm_80, sm_86, sm_89, sm_90 or newer");
  int arch = 0;
  for (const char c : target.substr(3)) {
    if (c < '0' || c > '9') return bad("expected sm_ and the compute capability's digits, as sm_90");
    arch = 10 * arch + (c - '0');
  }
  if (arch < 80) return bad("the tensor-core kernels need sm_80 or newer");
  return arch;
}

}  // namespace

std::string compile_kernels(const Model& model, std::string_view backend, std::string_view target, const std::filesystem::path& path) {
  model.validate("model");
  if (backend != "cuda" && backend != "cuda-f16acc")
    throw Error(ErrorCode::invalid_argument, "compile", "backend", "'" + std::string(backend) + "': kernels are compiled for cuda or cuda-f16acc");
  const int arch = nvidia_arch(target);
  const std::string name(backend);
  const detail::FusedPlan plan = detail::plan_fused(model, name.c_str(), {ops::TileFamily::nvidia, true, backend == "cuda-f16acc"});
  if (plan.kind != detail::KernelKind::specialized)
    throw Error(ErrorCode::unsupported_model, "compile", "model",
                plan.shape + ": " + plan.not_specialized + "; it runs on the built-in kernels, which need no kernel file");
  const auto start = std::chrono::steady_clock::now();
  const detail::KernelFile k = detail::compile_cuda_kernel_file(plan, arch);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_file_atomically(path, detail::encode_kernel_file(k));
  char took[32];
  std::snprintf(took, sizeof took, "%.2f s", seconds);
  return plan.describe() + ", compiled by " + k.compiler + " for " + k.target + " in " + took + " (" + std::to_string(k.code.size()) + " bytes)";
}

}  // namespace mlpcore
