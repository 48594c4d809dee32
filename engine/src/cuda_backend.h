#pragma once
// What the cuda backend found on this machine, and why it cannot run when it cannot.
#include <memory>
#include <span>
#include <string>

#include "engine/src/code_objects.h"
#include "mlpcore/model.h"

namespace mlpcore::detail {

class CudaDriver;
class BackendNetwork;

struct CudaProbe {
  bool available = false;
  std::string reason;       // when !available
  std::string description;  // when available
  int device = 0;
  const EmbeddedCodeObject* fatbin = nullptr;
};

CudaProbe probe_cuda(const CudaDriver& driver, std::span<const EmbeddedCodeObject> objects);
const CudaProbe& cuda_probe();  // this process's, probed once
std::unique_ptr<BackendNetwork> create_cuda_network(const Model& model);         // float32 accumulation
std::unique_ptr<BackendNetwork> create_cuda_f16acc_network(const Model& model);  // float16 accumulation

}  // namespace mlpcore::detail
