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
  // "clang version 19.1.7 (/usr/bin/clang++-19, -nogpulib and mlpcore's device-library shim)"
  std::string version() const override;
  // target: "gfx1100"; throws Error(device) with clang's messages when it fails.
  std::vector<std::byte> compile_code(const std::string& source, const std::string& target) const override;

 private:
  // The device-library flags for `target`, probed once: none, or the shim's.
  const std::vector<std::string>& device_library_flags(const std::filesystem::path& folder, const std::string& target) const;

  std::filesystem::path path_;
  std::string not_found_;
  mutable std::once_flag probed_;
  mutable std::vector<std::string> flags_;
};

}  // namespace mlpcore::detail
