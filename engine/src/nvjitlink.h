#pragma once
// nvJitLink, the CUDA toolkit's linker library, used here as ptxas alone: PTX that NVRTC compiled, assembled
// again for one sm_XX without compiling its source again (NVVM takes about 4 times as long as ptxas on
// mlpcore's kernels). Loaded at run time like NVRTC. The only host file that spells nvJitLink* names.
#include <optional>
#include <string>
#include <utility>

#include "engine/src/dynamic_library.h"
#include "engine/src/runtime_compiler.h"

namespace mlpcore::detail {

class NvJitLink {
 public:
  // Loads `library` (default: $MLPCORE_NVJITLINK_LIBRARY, else libnvJitLink.so.<major>, else
  // libnvJitLink.so or the CUDA toolkit's in /usr/local/cuda). With `no_cache` it passes -no-cache
  // (nvJitLink 12.9 and later; the caller knows the version it wants).
  NvJitLink(int major, bool no_cache, const char* library = nullptr);

  bool loaded() const { return lib_.loaded(); }
  std::optional<std::pair<int, int>> version_number() const;  // {major, minor}, where the library says

  // `ptx` assembled for `target` ("sm_90") by ptxas, as `assembly` says (light: -O1), with ptxas's report
  // (-v) in the log. Throws Error(device) with nvJitLink's log when it fails.
  CompiledCode assemble(const std::string& ptx, const std::string& target, Assembly assembly) const;

 private:
  template <class F>
  void bind_entry(F& f, const char* name);

  std::string soname_;  // libnvJitLink.so.<major>, before lib_ that opens it
  DynamicLibrary lib_;
  bool no_cache_ = false;
  int (*version_)(unsigned*, unsigned*) = nullptr;
  int (*create_)(void**, unsigned, const char**) = nullptr;
  int (*destroy_)(void**) = nullptr;
  int (*add_data_)(void*, int, const void*, std::size_t, const char*) = nullptr;
  int (*complete_)(void*) = nullptr;
  int (*get_cubin_size_)(void*, std::size_t*) = nullptr;
  int (*get_cubin_)(void*, void*) = nullptr;
  int (*get_error_log_size_)(void*, std::size_t*) = nullptr;
  int (*get_error_log_)(void*, char*) = nullptr;
  int (*get_info_log_size_)(void*, std::size_t*) = nullptr;
  int (*get_info_log_)(void*, char*) = nullptr;
};

}  // namespace mlpcore::detail
