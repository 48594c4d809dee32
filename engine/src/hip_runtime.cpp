#include "engine/src/hip_runtime.h"

#include <cstring>
#include <vector>

#include "mlpcore/error.h"

namespace mlpcore::detail {
namespace {

constexpr int kHipSuccess = 0;
constexpr int kHipMemcpyDefault = 4;
constexpr int kHipErrorNotFound = 500;  // hipModuleGetFunction: no such kernel

// gcnArchName (char[256]) in hipDeviceProp_t, from the struct definitions in HIP's headers (x86-64):
// hipDeviceProp_tR0600 of ROCm 6's and 7's hip_runtime_api.h (1472 bytes), and the legacy struct of
// ROCm 5's hip_runtime_api.h (792 bytes in 5.2; hipDeviceProp_tR0000 in ROCm 6's hip_deprecated.h).
constexpr std::size_t kArchNameOffsetR0600 = 1160, kArchNameOffsetLegacy = 396, kArchNameSize = 256;
constexpr std::size_t kPropertiesBytes = 4096;  // either struct, with room for fields a release appends

}  // namespace

HipRuntime::HipRuntime(const char* library)
    : lib_(library, "MLPCORE_HIP_LIBRARY", {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"}) {
  lib_.bind(get_device_count_, "hipGetDeviceCount");
  // ROCm >= 6 still exports the unversioned name too, for the legacy struct.
  get_device_properties_ = lib_.find<decltype(get_device_properties_)>("hipGetDevicePropertiesR0600");
  arch_name_offset_ = get_device_properties_ ? kArchNameOffsetR0600 : kArchNameOffsetLegacy;
  if (!get_device_properties_) lib_.bind(get_device_properties_, "hipGetDeviceProperties");
  lib_.bind(get_device_, "hipGetDevice");
  lib_.bind(set_device_, "hipSetDevice");
  lib_.bind(malloc_, "hipMalloc");
  lib_.bind(free_, "hipFree");
  lib_.bind(memcpy_, "hipMemcpy");
  lib_.bind(module_load_data_, "hipModuleLoadData");
  lib_.bind(module_unload_, "hipModuleUnload");
  lib_.bind(module_get_function_, "hipModuleGetFunction");
  lib_.bind(module_launch_kernel_, "hipModuleLaunchKernel");
  lib_.bind(get_error_name_, "hipGetErrorName");
  lib_.bind(get_error_string_, "hipGetErrorString");
}

std::string HipRuntime::describe(int error, const char* call) const {
  std::string s = std::string(call) + ": ";
  const std::string name = get_error_name_ ? get_error_name_(error) : "error " + std::to_string(error);
  s += name;
  if (get_error_string_ && name != get_error_string_(error)) s += std::string(" (") + get_error_string_(error) + ")";
  return s;
}

void HipRuntime::check(int error, const char* call, int device) const {
  if (error != kHipSuccess) throw Error(ErrorCode::device, "hip device " + std::to_string(device), "", describe(error, call));
}

int HipRuntime::try_device_count(int& count) const {
  count = 0;
  return get_device_count_(&count);
}

std::string HipRuntime::arch_name(int device) const {
  std::vector<char> props(kPropertiesBytes, '\0');
  check(get_device_properties_(props.data(), device), "hipGetDeviceProperties", device);
  const char* name = props.data() + arch_name_offset_;
  return {name, ::strnlen(name, kArchNameSize)};
}

// `device` current on the calling thread for a scope, then the caller's device again.
class HipOnDevice::Current {
 public:
  explicit Current(const HipOnDevice& d) : rt_(d.rt_) {
    d.check(rt_.get_device_(&previous_), "hipGetDevice");
    if (previous_ == d.device_) return;
    d.check(rt_.set_device_(d.device_), "hipSetDevice");
    restore_ = true;
  }
  ~Current() {
    if (restore_) rt_.set_device_(previous_);
  }
  Current(const Current&) = delete;
  Current& operator=(const Current&) = delete;

 private:
  const HipRuntime& rt_;
  int previous_ = 0;
  bool restore_ = false;
};

void* HipOnDevice::malloc(std::size_t bytes) const {
  Current current(*this);
  void* p = nullptr;
  check(rt_.malloc_(&p, bytes), "hipMalloc");
  return p;
}

void HipOnDevice::free(void* p) const noexcept {
  if (!p) return;
  try {
    Current current(*this);
    rt_.free_(p);
  } catch (const Error&) {  // the device cannot be made current: leave the memory to its teardown
  }
}

void HipOnDevice::copy(void* dst, const void* src, std::size_t bytes) const {
  Current current(*this);
  check(rt_.memcpy_(dst, src, bytes, kHipMemcpyDefault), "hipMemcpy");
}

void* HipOnDevice::load_module(const void* image) const {
  Current current(*this);
  void* module = nullptr;
  check(rt_.module_load_data_(&module, image), "hipModuleLoadData");
  return module;
}

void HipOnDevice::unload_module(void* module) const noexcept {
  if (!module) return;
  try {
    Current current(*this);
    rt_.module_unload_(module);
  } catch (const Error&) {  // as free
  }
}

void* HipOnDevice::function(void* module, const char* name) const {
  Current current(*this);
  void* f = nullptr;
  const int error = rt_.module_get_function_(&f, module, name);
  if (error == kHipErrorNotFound) return nullptr;
  check(error, "hipModuleGetFunction");
  return f;
}

void HipOnDevice::launch(void* function, unsigned grid, unsigned block, void** args, void* stream) const {
  Current current(*this);
  check(rt_.module_launch_kernel_(function, grid, 1, 1, block, 1, 1, 0, stream, args, nullptr), "hipModuleLaunchKernel");
}

}  // namespace mlpcore::detail
