#pragma once
// What the hip backend found on this machine, and why it cannot run when it cannot.
#include <memory>
#include <span>
#include <string>

#include "mlpcore/model.h"
#include "mlpcore/network.h"

#include "engine/src/amd_arch.h"
#include "engine/src/code_objects.h"

namespace mlpcore::detail {

class HipRuntime;

struct HipProbe {
  bool available = false;
  std::string reason;       // when !available
  std::string description;  // when available
  int device = 0;
  std::string processor;    // e.g. "gfx1100"
  Arch arch = Arch::unknown;
  const EmbeddedCodeObject* object = nullptr;
};

HipProbe probe_hip(const HipRuntime& runtime, std::span<const EmbeddedCodeObject> objects);
const HipProbe& hip_probe();  // this process's, probed once

class BackendNetwork;
class RuntimeCompiler;
// The hip backend on a given runtime, probe and run-time compiler (tests use stand-ins).
std::unique_ptr<BackendNetwork> create_hip_network(const Model& model, const NetworkOptions& options, const HipRuntime& runtime, const HipProbe& probe,
                                                   const RuntimeCompiler& compiler);
// This process's: the HIP runtime and hiprtc, loaded once.
std::unique_ptr<BackendNetwork> create_hip_network(const Model& model, const NetworkOptions& options);

}  // namespace mlpcore::detail
