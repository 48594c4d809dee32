#pragma once
// The cuda backend's specialized kernels: a plan's source (engine/src/specialized_source.h) compiled by
// NVRTC for the GPU's sm_XX, or taken from the kernel cache or a file of `mlpcore compile`.
#include <cstddef>
#include <string>
#include <vector>

#include "engine/src/fused_plan.h"
#include "engine/src/kernel_file.h"
#include "mlpcore/network.h"

namespace mlpcore::detail {

class Nvrtc;
const Nvrtc& nvrtc();  // this process's, loaded once

struct SpecializedCode {
  std::vector<std::byte> cubin;
  std::string description;  // Network::kernel(): where it came from and how long that took
};

// The plan's kernels for sm_<arch>: from options.kernels_file when given (Error(kernel_file) if it is
// not this plan's), else from the kernel cache, else compiled by NVRTC (Error(device) if it fails).
SpecializedCode specialized_cuda_code(const FusedPlan& plan, int arch, const NetworkOptions& options);

// `mlpcore compile`: the kernel file of the plan's kernels for sm_<arch>, compiled now.
KernelFile compile_cuda_kernel_file(const FusedPlan& plan, int arch);

}  // namespace mlpcore::detail
