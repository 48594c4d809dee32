#include "engine/src/backend.h"

namespace mlpcore::detail {

std::vector<Backend> all_backends() {
  std::vector<Backend> backends;
  // GPU backends come first once they exist; until then they are listed with the reason they cannot run.
  backends.push_back({{"hip", "AMD GPUs (RDNA3, RDNA4, CDNA) through HIP", false,
                       "not implemented in this version of mlpcore", 0.0},
                      nullptr});
  backends.push_back({{"cuda", "NVIDIA GPUs (sm_80 and newer) through CUDA", false,
                       "not implemented in this version of mlpcore", 0.0},
                      nullptr});
  // float32 math with float32 accumulation: relative error ~1e-6 per layer; 1e-4 leaves room for deep,
  // wide networks and for activations that amplify (exponential).
  backends.push_back({{"cpu", "CPU reference (Eigen, float32)", true, "", 1e-4}, create_cpu_network});
  return backends;
}

}  // namespace mlpcore::detail
