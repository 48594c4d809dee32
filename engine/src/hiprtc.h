#pragma once
// hiprtc, HIP's run-time compiler (engine/src/runtime_compiler.h): a model's specialized kernels to an AMD
// code object for one gfx processor. The only host file that spells hiprtc* names.
#include <string>

#include "engine/src/runtime_compiler.h"

namespace mlpcore::detail {

class Hiprtc final : public RuntimeCompiler {
 public:
  // Loads `library` (default: $MLPCORE_HIPRTC_LIBRARY, else ROCm >= 6's libhiprtc.so.7 or .6, on the
  // library path or in /opt/rocm/lib). ROCm 5 kept hiprtc inside libamdhip64.so.5; it is used only when
  // named, because HIP 5.2's aborts the process when asked for a target its compiler does not know (gfx11).
  explicit Hiprtc(const char* library = nullptr);

  // target: "gfx1100"; throws Error(device) with the log when it fails.
  CompiledCode compile_code(const std::string& source, const std::string& target, Assembly assembly) const override;
};

// This process's, loaded once.
const Hiprtc& hiprtc();

}  // namespace mlpcore::detail
