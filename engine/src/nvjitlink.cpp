#include "engine/src/nvjitlink.h"

#include <memory>
#include <string>
#include <vector>

#include "mlpcore/error.h"

namespace mlpcore::detail {
namespace {

constexpr int kSuccess = 0;    // NVJITLINK_SUCCESS
constexpr int kInputPtx = 2;   // NVJITLINK_INPUT_PTX

}  // namespace

// CUDA 12's libraries export an entry point only under the versioned name its header's inline wrapper
// calls (__nvJitLinkCreate_12_0, for every 12.x), CUDA 13's under that (_13_0) and the plain name too.
template <class F>
void NvJitLink::bind_entry(F& f, const char* name) {
  for (const std::string& n : {std::string(name), "__" + std::string(name) + "_13_0", "__" + std::string(name) + "_12_0"})
    if (lib_.loaded() && (f = lib_.find<F>(n.c_str()))) return;
  lib_.bind(f, name);  // none: closes the library, naming the entry point
}

NvJitLink::NvJitLink(int major, bool no_cache, const char* library)
    : soname_("libnvJitLink.so." + std::to_string(major)),
      lib_(library, "MLPCORE_NVJITLINK_LIBRARY", {soname_.c_str(), "libnvJitLink.so", "/usr/local/cuda/lib64/libnvJitLink.so"}),
      no_cache_(no_cache) {
  lib_.bind(version_, "nvJitLinkVersion");  // 12.3 and later
  bind_entry(create_, "nvJitLinkCreate");
  bind_entry(destroy_, "nvJitLinkDestroy");
  bind_entry(add_data_, "nvJitLinkAddData");
  bind_entry(complete_, "nvJitLinkComplete");
  bind_entry(get_cubin_size_, "nvJitLinkGetLinkedCubinSize");
  bind_entry(get_cubin_, "nvJitLinkGetLinkedCubin");
  bind_entry(get_error_log_size_, "nvJitLinkGetErrorLogSize");
  bind_entry(get_error_log_, "nvJitLinkGetErrorLog");
  bind_entry(get_info_log_size_, "nvJitLinkGetInfoLogSize");
  bind_entry(get_info_log_, "nvJitLinkGetInfoLog");
}

std::optional<std::pair<int, int>> NvJitLink::version_number() const {
  unsigned major = 0, minor = 0;
  if (!loaded() || version_(&major, &minor) != kSuccess) return std::nullopt;
  return std::pair{static_cast<int>(major), static_cast<int>(minor)};
}

CompiledCode NvJitLink::assemble(const std::string& ptx, const std::string& target, Assembly assembly) const {
  const std::string where = "nvJitLink (" + target + ")";
  if (!loaded()) throw Error(ErrorCode::device, where, "", "not loaded: " + lib_.error());
  const std::string arch_option = "-arch=" + target;
  std::vector<const char*> options = {arch_option.c_str(), "-Xptxas=-v"};
  if (assembly == Assembly::light) options.push_back("-Xptxas=-O1");
  // As NVRTC's --no-cache (engine/src/nvrtc.cpp): where a CUDA driver is installed, nvJitLink would
  // otherwise take the cubin from the driver's compute cache, without ptxas's report.
  if (no_cache_) options.push_back("-no-cache");
  void* handle = nullptr;
  if (const int r = create_(&handle, static_cast<unsigned>(options.size()), options.data()))
    throw Error(ErrorCode::device, where, "", "nvJitLinkCreate: result " + std::to_string(r));
  const auto destroy = [this](void* h) { destroy_(&h); };
  const std::unique_ptr<void, decltype(destroy)> owner(handle, destroy);
  const auto log = [&](int (*size_of)(void*, std::size_t*), int (*get)(void*, char*)) {
    std::size_t size = 0;
    std::string text;
    if (size_of(handle, &size) == kSuccess && size > 1) {
      text.resize(size);
      get(handle, text.data());
      text.resize(size - 1);
    }
    return text;
  };
  int r = add_data_(handle, kInputPtx, ptx.c_str(), ptx.size() + 1, "mlpcore_specialized.ptx");  // with its NUL, as NVRTC gives it
  const char* step = "nvJitLinkAddData";
  if (r == kSuccess) {
    step = "nvJitLinkComplete";
    r = complete_(handle);
  }
  if (r != kSuccess) throw Error(ErrorCode::device, where, "", std::string(step) + ": result " + std::to_string(r) + "\n" + log(get_error_log_size_, get_error_log_));
  CompiledCode out;
  std::size_t size = 0;
  if (get_cubin_size_(handle, &size) != kSuccess || size == 0) throw Error(ErrorCode::device, where, "", "nvJitLinkGetLinkedCubinSize: no code");
  out.code.resize(size);
  if (get_cubin_(handle, out.code.data()) != kSuccess) throw Error(ErrorCode::device, where, "", "nvJitLinkGetLinkedCubin failed");
  out.log = log(get_info_log_size_, get_info_log_);
  return out;
}

}  // namespace mlpcore::detail
