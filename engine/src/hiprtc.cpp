#include "engine/src/hiprtc.h"

namespace mlpcore::detail {

Hiprtc::Hiprtc(const char* library)
    : RuntimeCompiler(library, {"hiprtc", "hiprtc", "Code", "MLPCORE_HIPRTC_LIBRARY"},
                      {"libhiprtc.so.7", "libhiprtc.so.6", "/opt/rocm/lib/libhiprtc.so.7", "/opt/rocm/lib/libhiprtc.so.6"}) {}

const Hiprtc& hiprtc() {
  static const Hiprtc* const compiler = new Hiprtc;  // never unloaded, as NVRTC (engine/src/nvrtc.cpp)
  return *compiler;
}

CompiledCode Hiprtc::compile_code(const std::string& source, const std::string& target, Assembly) const {
  const std::string arch_option = "--offload-arch=" + target;
  const char* options[] = {arch_option.c_str(), "-std=c++20", "-O3"};
  Output out = compile(source, "hiprtc (" + target + ")", options);
  return {std::move(out.code), false, {}, std::move(out.log)};
}

}  // namespace mlpcore::detail
