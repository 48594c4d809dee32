#include "engine/src/hip_runtime.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "mlpcore/error.h"

namespace mlpcore::detail {
namespace {

constexpr int kHipSuccess = 0;
constexpr int kHipMemcpyDefault = 4;
constexpr int kHipErrorNotFound = 500;  // hipModuleGetFunction: no such kernel

}  // namespace

template <class F>
F HipRuntime::symbol(const char* name) {
  void* p = ::dlsym(handle_, name);
  if (!p && load_error_.empty()) load_error_ = std::string("the HIP runtime has no ") + name;
  return reinterpret_cast<F>(p);
}

HipRuntime::HipRuntime(const char* library) {
  std::vector<std::string> candidates;
  if (library) candidates.push_back(library);
  else if (const char* env = std::getenv("MLPCORE_HIP_LIBRARY")) candidates.push_back(env);
  else candidates = {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
  for (const auto& name : candidates) {
    handle_ = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_) break;
    const char* why = ::dlerror();
    load_error_ += (load_error_.empty() ? "" : "; ") + std::string(why ? why : name + ": cannot load");
  }
  if (!handle_) return;
  load_error_.clear();
  get_device_count_ = symbol<decltype(get_device_count_)>("hipGetDeviceCount");
  get_device_properties_ = symbol<decltype(get_device_properties_)>("hipGetDeviceProperties");
  set_device_ = symbol<decltype(set_device_)>("hipSetDevice");
  malloc_ = symbol<decltype(malloc_)>("hipMalloc");
  free_ = symbol<decltype(free_)>("hipFree");
  memcpy_ = symbol<decltype(memcpy_)>("hipMemcpy");
  module_load_data_ = symbol<decltype(module_load_data_)>("hipModuleLoadData");
  module_unload_ = symbol<decltype(module_unload_)>("hipModuleUnload");
  module_get_function_ = symbol<decltype(module_get_function_)>("hipModuleGetFunction");
  module_launch_kernel_ = symbol<decltype(module_launch_kernel_)>("hipModuleLaunchKernel");
  stream_synchronize_ = symbol<decltype(stream_synchronize_)>("hipStreamSynchronize");
  get_error_name_ = symbol<decltype(get_error_name_)>("hipGetErrorName");
  get_error_string_ = symbol<decltype(get_error_string_)>("hipGetErrorString");
  if (!load_error_.empty()) {
    ::dlclose(handle_);
    handle_ = nullptr;
  }
}

HipRuntime::~HipRuntime() {
  if (handle_) ::dlclose(handle_);
}

std::string HipRuntime::describe(int error, const char* call) const {
  std::string s = std::string(call) + ": ";
  const std::string name = get_error_name_ ? get_error_name_(error) : "error " + std::to_string(error);
  s += name;
  if (get_error_string_ && name != get_error_string_(error)) s += std::string(" (") + get_error_string_(error) + ")";
  return s;
}

void HipRuntime::check(int error, const char* call) const {
  if (error != kHipSuccess)
    throw Error(ErrorCode::device, "hip device " + std::to_string(device_), "", describe(error, call));
}

int HipRuntime::device_count() const {
  int n = 0;
  check(try_device_count(n), "hipGetDeviceCount");
  return n;
}

int HipRuntime::try_device_count(int& count) const {
  count = 0;
  return get_device_count_(&count);
}

HipDevice HipRuntime::device(int index) const {
  // hipDeviceProp_t grew between ROCm 5 and 6; give it ample room and find gcnArchName by its content
  // (the one "gfx<hex>" string in the struct) instead of trusting one header's offset.
  std::vector<char> props(64 * 1024, '\0');
  check(get_device_properties_(props.data(), index), "hipGetDeviceProperties");
  HipDevice d{index, ""};
  for (std::size_t i = 0; i + 4 < props.size(); ++i) {
    if (std::memcmp(&props[i], "gfx", 3) != 0 || (i > 0 && props[i - 1] != '\0')) continue;
    const std::size_t len = ::strnlen(&props[i], 256);
    if (len < 256) {
      d.arch_name.assign(&props[i], len);
      break;
    }
  }
  return d;
}

void HipRuntime::set_device(int index) const {
  check(set_device_(index), "hipSetDevice");
  device_ = index;
}

void* HipRuntime::malloc(std::size_t bytes) const {
  void* p = nullptr;
  check(malloc_(&p, bytes), "hipMalloc");
  return p;
}

void HipRuntime::free(void* p) const noexcept {
  if (p) free_(p);
}

void HipRuntime::copy(void* dst, const void* src, std::size_t bytes) const { check(memcpy_(dst, src, bytes, kHipMemcpyDefault), "hipMemcpy"); }

void* HipRuntime::load_module(const void* image) const {
  void* module = nullptr;
  check(module_load_data_(&module, image), "hipModuleLoadData");
  return module;
}

void HipRuntime::unload_module(void* module) const noexcept {
  if (module) module_unload_(module);
}

void* HipRuntime::function(void* module, const char* name) const {
  void* f = nullptr;
  const int error = module_get_function_(&f, module, name);
  if (error == kHipErrorNotFound) return nullptr;
  check(error, "hipModuleGetFunction");
  return f;
}

void HipRuntime::launch(void* function, unsigned grid, unsigned block, void** args, void* stream) const {
  check(module_launch_kernel_(function, grid, 1, 1, block, 1, 1, 0, stream, args, nullptr), "hipModuleLaunchKernel");
}

void HipRuntime::synchronize(void* stream) const { check(stream_synchronize_(stream), "hipStreamSynchronize"); }

}  // namespace mlpcore::detail
