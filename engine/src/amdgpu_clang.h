#pragma once
// A clang with the AMDGPU target found on this machine, as `mlpcore compile` uses it for AMD GPUs where
// hiprtc is missing: the specialized source and the embedded kernel headers written to a private
// temporary folder, compiled there as HIP device code, the folder removed. Device libraries as the
// library's own build chose them (cmake/MlpcoreAmdgpu.cmake): ROCm's where this clang finds them, else
// -nogpulib with ops/hip_device_lib_shim.h.
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "engine/src/runtime_compiler.h"

namespace mlpcore::detail {

class AmdgpuClang final : public KernelCompiler {
 public:
  // `path`, else $MLPCORE_AMDGPU_CLANG, else the clang this library's AMD code objects were built with
  // (if still there), else ROCm's amdclang++ ($ROCM_PATH or /opt/rocm), else clang++-20..17 on $PATH.
  explicit AmdgpuClang(std::filesystem::path path = {});

  bool found() const { return !path_.empty(); }
  const std::string& not_found() const { return not_found_; }  // which places were tried
  // "clang version 19.1.7 (/usr/bin/clang++-19, -nogpulib and mlpcore's device-library shim)": the kernel
  // cache's key, known before anything is compiled.
  std::string version() const override;
  // target: "gfx1100"; throws Error(device) with clang's messages when it fails.
  CompiledCode compile_code(const std::string& source, const std::string& target, Assembly assembly) const override;

 private:
  // What this clang is: its version line, and the device-library flags it needs (none where it finds
  // ROCm's, else the shim's). Both probed once, together, on first use.
  struct Identity {
    std::string version;
    std::vector<std::string> flags;
  };
  const Identity& identity() const;

  std::filesystem::path path_;
  std::string not_found_;
  mutable std::once_flag probed_;
  mutable Identity identity_;
};

}  // namespace mlpcore::detail
