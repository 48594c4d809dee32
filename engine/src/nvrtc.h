#pragma once
// NVRTC, CUDA's run-time compiler, loaded at run time like the driver (no link dependency): it compiles
// a model's specialized kernels (engine/src/specialized_source.h) to a cubin with the kernel headers
// embedded in this library. The only host file that spells nvrtc* names.
#include <cstddef>
#include <string>
#include <vector>

#include "engine/src/dynamic_library.h"

namespace mlpcore::detail {

class Nvrtc {
 public:
  // Loads `library` (default: $MLPCORE_NVRTC_LIBRARY, else libnvrtc.so.13 or .12, else the CUDA
  // toolkit's in /usr/local/cuda).
  explicit Nvrtc(const char* library = nullptr);

  bool loaded() const { return lib_.loaded(); }
  const std::string& load_error() const { return lib_.error(); }
  std::string version() const;  // "NVRTC 13.0"

  struct Output {
    std::vector<std::byte> cubin;
    std::string ptx;
    std::string log;  // ptxas's report per kernel: registers, stack frame, spill stores and loads
  };
  // `source` compiled for sm_<arch> (major * 10 + minor) into a cubin. Throws Error(device) with the
  // compiler's log when it fails.
  Output compile(const std::string& source, int arch) const;

 private:
  std::string describe(int result) const;

  DynamicLibrary lib_;
  int (*version_)(int*, int*) = nullptr;
  const char* (*get_error_string_)(int) = nullptr;
  int (*create_program_)(void**, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*destroy_program_)(void**) = nullptr;
  int (*compile_program_)(void*, int, const char* const*) = nullptr;
  int (*get_program_log_size_)(void*, std::size_t*) = nullptr;
  int (*get_program_log_)(void*, char*) = nullptr;
  int (*get_cubin_size_)(void*, std::size_t*) = nullptr;
  int (*get_cubin_)(void*, char*) = nullptr;
  int (*get_ptx_size_)(void*, std::size_t*) = nullptr;
  int (*get_ptx_)(void*, char*) = nullptr;
};

}  // namespace mlpcore::detail
