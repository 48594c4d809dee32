#include <tuple>

#include "engine/src/backend.h"
#include "engine/src/cpu_kernels.h"
#include "engine/src/cuda_backend.h"
#include "engine/src/hip_backend.h"

namespace mlpcore::detail {
namespace {

// float16 operands carry 2^-11..2^-10 relative rounding per layer input (round toward zero for
// activations); through up to 8 layers with O(1) activations the error stays below 1e-2 of max(1, |r|)
// (observed in tests/fused_backend_test.cpp: at most 2e-3).
constexpr double kFp16Tolerance = 1e-2;
// Accumulating in float16 adds a rounding of 2^-11 relative to each partial sum (one per 16 inputs, per
// layer), and float16 results: 3e-2 covers the tests' networks (observed in tests/fused_backend_test.cpp:
// at most 1.4e-3 on the emulator, 1.1e-3 on an H100).
constexpr double kF16AccTolerance = 3e-2;

// A backend whose construction needs only the model (every one but cpu).
template <std::unique_ptr<BackendNetwork> (*Create)(const Model&)>
Backend::Factory model_only() {
  return [](const Model& model, const NetworkOptions&) { return Create(model); };
}

}  // namespace

std::vector<Backend> all_backends() {
  std::vector<Backend> backends;
  // The GPU backends first: "auto" takes the first available one that can run the model.
  const HipProbe& hip = hip_probe();
  backends.push_back({{"hip", hip.available ? hip.description : "AMD GPUs (RDNA3, RDNA4, CDNA) through HIP", hip.available, hip.reason,
                       kFp16Tolerance},
                      hip.available ? Backend::Factory([](const Model& m, const NetworkOptions& o) { return create_hip_network(m, o); }) : nullptr});
  const CudaProbe& cuda = cuda_probe();
  backends.push_back({{"cuda", cuda.available ? cuda.description : "NVIDIA GPUs (sm_80 and newer) through CUDA", cuda.available, cuda.reason,
                       kFp16Tolerance},
                      cuda.available ? Backend::Factory(create_cuda_network) : nullptr});
  // float32 math with float32 accumulation: relative error ~1e-6 per layer; 1e-4 leaves room for deep,
  // wide networks and for activations that amplify (exponential).
  backends.push_back({{"cpu", std::string("CPU, float32, ") + best_cpu_kernels().isa + " kernels", true, "", 1e-4}, create_cpu_network});
  // Opt-in precision variants: listed after cpu, so "auto" never picks them.
  backends.push_back({{"cuda-f16acc", "as cuda, accumulating in float16 (tiny-cuda-nn's numerics) in specialized and compiled-in kernels and in the run-time-shaped ones 32-112 wide with ReLU hidden layers: faster, float16-precision results",
                       cuda.available, cuda.reason, kF16AccTolerance},
                      cuda.available ? Backend::Factory(create_cuda_f16acc_network) : nullptr});
  // The GPU kernels on the wave emulator: float16 operands, float32 accumulation (see kFp16Tolerance).
  for (const auto& [name, what, create] : {std::tuple{"emu-rdna3", "RDNA3 (gfx11)", model_only<create_emu_rdna3_network>()},
                                           std::tuple{"emu-rdna4", "RDNA4 (gfx12)", model_only<create_emu_rdna4_network>()},
                                           std::tuple{"emu-cdna", "CDNA3 (gfx942 MFMA, subnormals kept)", model_only<create_emu_cdna_network>()},
                                           std::tuple{"emu-cdna2", "CDNA2 (gfx90a MFMA, subnormals flushed to zero)", model_only<create_emu_cdna2_network>()},
                                           std::tuple{"emu-nvidia", "NVIDIA sm_80+ (mma.sync)", model_only<create_emu_nvidia_network>()}})
    backends.push_back({{name, std::string(what) + " fused kernel on the wave emulator (slow; bit-faithful where the chip documents its numerics)", true, "", kFp16Tolerance}, create});
  backends.push_back({{"emu-nvidia-f16acc", "NVIDIA sm_80+ (mma.sync) as cuda-f16acc on the wave emulator (slow)", true, "",
                       kF16AccTolerance},
                      model_only<create_emu_nvidia_f16acc_network>()});
  return backends;
}

}  // namespace mlpcore::detail
