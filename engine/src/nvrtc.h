#pragma once
// NVRTC, CUDA's run-time compiler (engine/src/runtime_compiler.h): a model's specialized kernels to a cubin
// for one sm_XX. The only host file that spells nvrtc* names.
#include <mutex>
#include <optional>
#include <string>

#include "engine/src/nvjitlink.h"
#include "engine/src/runtime_compiler.h"

namespace mlpcore::detail {

class Nvrtc final : public RuntimeCompiler {
 public:
  // Loads `library` (default: $MLPCORE_NVRTC_LIBRARY, else libnvrtc.so.13 or .12, else the CUDA
  // toolkit's in /usr/local/cuda).
  explicit Nvrtc(const char* library = nullptr);

  // target: "sm_90"; the cubin, with its PTX and ptxas's report per kernel.
  CompiledCode compile_code(const std::string& source, const std::string& target, Assembly assembly) const override;
  // With nvJitLink of NVRTC's own version (its ptxas is NVRTC's), ptxas alone on `compiled`'s PTX: code
  // of the registers and spills compile_code would give, in a cubin nvJitLink links. Else, or where
  // nvJitLink fails, compiled again.
  CompiledCode assemble_again(const std::string& source, const CompiledCode& compiled, const std::string& target, Assembly assembly) const override;
  // With nvJitLink of NVRTC's version, ptxas alone on `compiled`'s PTX without its .minnctapersm, at -O3;
  // none without nvJitLink, where it fails, or for PTX without the directive.
  std::optional<CompiledCode> assemble_unbounded(const CompiledCode& compiled, const std::string& target) const override;
  // Whether nvJitLink of NVRTC's version loads: on first need, since loading it takes tens of
  // milliseconds and a kernel cache hit needs none.
  bool assembles_alone() const;
  // version(), " without nvJitLink" after it where assembles_alone() is false.
  std::string code_version() const override;

 private:
  mutable std::once_flag jit_link_once_;
  mutable std::optional<NvJitLink> jit_link_;  // loaded, of NVRTC's version, or empty
  int (*get_ptx_size_)(void*, std::size_t*) = nullptr;
  int (*get_ptx_)(void*, char*) = nullptr;
  bool takes_no_cache_ = false;  // NVRTC 12.9 and later
};

// This process's, loaded once.
const Nvrtc& nvrtc();

}  // namespace mlpcore::detail
