#pragma once
// What the cuda backend found on this machine, and why it cannot run when it cannot.
#include <memory>
#include <span>
#include <string>

#include "engine/src/code_objects.h"
#include "mlpcore/model.h"
#include "mlpcore/network.h"

namespace mlpcore::detail {

class CudaDriver;
class BackendNetwork;

struct CudaProbe {
  bool available = false;
  std::string reason;       // when !available
  std::string description;  // when available
  int device = 0;
  int arch = 0;  // compute capability, major * 10 + minor
  // The built-in kernels (when available): assembled by ptxas at -O3 and at -O1 (ops::assembled_light).
  const EmbeddedCodeObject* fatbin = nullptr;
  const EmbeddedCodeObject* light_fatbin = nullptr;
};

CudaProbe probe_cuda(const CudaDriver& driver, std::span<const EmbeddedCodeObject> objects);
const CudaProbe& cuda_probe();  // this process's, probed once
// float32 accumulation
std::unique_ptr<BackendNetwork> create_cuda_network(const Model& model, const NetworkOptions& options);
// float16 accumulation in specialized and compiled-in kernels, and in the run-time-shaped ones that have it
// (ops::runtime_f16_accumulation)
std::unique_ptr<BackendNetwork> create_cuda_f16acc_network(const Model& model, const NetworkOptions& options);

}  // namespace mlpcore::detail
