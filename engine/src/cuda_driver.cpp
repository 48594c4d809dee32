#include "engine/src/cuda_driver.h"

#include <cstdint>

#include "mlpcore/error.h"

namespace mlpcore::detail {
namespace {

constexpr int kSuccess = 0;
constexpr int kErrorNotFound = 500;  // CUDA_ERROR_NOT_FOUND
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76, kMultiprocessorCount = 16;  // CUdevice_attribute

unsigned long long address(const void* p) { return static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)); }

}  // namespace

CudaDriver::CudaDriver(const char* library) : lib_(library, "MLPCORE_CUDA_LIBRARY", {"libcuda.so.1"}) {
  lib_.bind(init_, "cuInit");
  lib_.bind(device_get_count_, "cuDeviceGetCount");
  lib_.bind(device_get_, "cuDeviceGet");
  lib_.bind(device_get_attribute_, "cuDeviceGetAttribute");
  lib_.bind(device_get_name_, "cuDeviceGetName");
  lib_.bind(primary_ctx_retain_, "cuDevicePrimaryCtxRetain");
  lib_.bind(primary_ctx_release_, "cuDevicePrimaryCtxRelease_v2");
  lib_.bind(ctx_push_, "cuCtxPushCurrent_v2");
  lib_.bind(ctx_pop_, "cuCtxPopCurrent_v2");
  lib_.bind(mem_alloc_, "cuMemAlloc_v2");
  lib_.bind(mem_free_, "cuMemFree_v2");
  lib_.bind(memcpy_, "cuMemcpy");
  lib_.bind(module_load_data_, "cuModuleLoadData");
  lib_.bind(module_unload_, "cuModuleUnload");
  lib_.bind(module_get_function_, "cuModuleGetFunction");
  lib_.bind(launch_kernel_, "cuLaunchKernel");
  lib_.bind(get_error_name_, "cuGetErrorName");
  lib_.bind(get_error_string_, "cuGetErrorString");
}

std::string CudaDriver::describe(int error, const char* call) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (get_error_name_) get_error_name_(error, &name);
  if (get_error_string_) get_error_string_(error, &text);
  std::string s = std::string(call) + ": " + (name ? name : "CUresult " + std::to_string(error));
  if (text) s += std::string(" (") + text + ")";
  return s;
}

void CudaDriver::check(int error, const char* call, int device) const {
  if (error != kSuccess) throw Error(ErrorCode::device, "cuda device " + std::to_string(device), "", describe(error, call));
}

int CudaDriver::try_init() const { return init_(0); }

int CudaDriver::try_device_count(int& count) const {
  count = 0;
  return device_get_count_(&count);
}

int CudaDriver::device_handle(int index) const {
  int device = 0;
  check(device_get_(&device, index), "cuDeviceGet", index);
  return device;
}

std::string CudaDriver::device_name(int index) const {
  char name[256] = {};
  check(device_get_name_(name, sizeof name - 1, device_handle(index)), "cuDeviceGetName", index);
  return name;
}

int CudaDriver::compute_capability(int index) const {
  const int device = device_handle(index);
  int major = 0, minor = 0;
  check(device_get_attribute_(&major, kComputeCapabilityMajor, device), "cuDeviceGetAttribute", index);
  check(device_get_attribute_(&minor, kComputeCapabilityMinor, device), "cuDeviceGetAttribute", index);
  return major * 10 + minor;
}

int CudaDriver::multiprocessors(int index) const {
  int count = 0;
  check(device_get_attribute_(&count, kMultiprocessorCount, device_handle(index)), "cuDeviceGetAttribute", index);
  return count;
}

CudaOnDevice::CudaOnDevice(const CudaDriver& driver, int device) : d_(driver), device_(device), handle_(driver.device_handle(device)) {
  check(d_.primary_ctx_retain_(&context_, handle_), "cuDevicePrimaryCtxRetain");
}

CudaOnDevice::~CudaOnDevice() { d_.primary_ctx_release_(handle_); }

// Our context current on the calling thread for a scope, then the caller's again.
class CudaOnDevice::Current {
 public:
  explicit Current(const CudaOnDevice& d) : d_(d.d_) { d.check(d_.ctx_push_(d.context_), "cuCtxPushCurrent"); }
  ~Current() {
    void* ours = nullptr;
    d_.ctx_pop_(&ours);
  }
  Current(const Current&) = delete;
  Current& operator=(const Current&) = delete;

 private:
  const CudaDriver& d_;
};

void* CudaOnDevice::malloc(std::size_t bytes) const {
  Current current(*this);
  unsigned long long p = 0;
  check(d_.mem_alloc_(&p, bytes), "cuMemAlloc");
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p));
}

void CudaOnDevice::free(void* p) const noexcept {
  if (!p) return;
  try {
    Current current(*this);
    d_.mem_free_(address(p));
  } catch (const Error&) {  // the context is gone: so are its allocations
  }
}

void CudaOnDevice::copy(void* dst, const void* src, std::size_t bytes) const {
  Current current(*this);
  check(d_.memcpy_(address(dst), address(src), bytes), "cuMemcpy");
}

void* CudaOnDevice::load_module(const void* image) const {
  Current current(*this);
  void* module = nullptr;
  check(d_.module_load_data_(&module, image), "cuModuleLoadData");
  return module;
}

void CudaOnDevice::unload_module(void* module) const noexcept {
  if (!module) return;
  try {
    Current current(*this);
    d_.module_unload_(module);
  } catch (const Error&) {  // as free
  }
}

void* CudaOnDevice::function(void* module, const char* name) const {
  Current current(*this);
  void* f = nullptr;
  const int error = d_.module_get_function_(&f, module, name);
  if (error == kErrorNotFound) return nullptr;
  check(error, "cuModuleGetFunction");
  return f;
}

void CudaOnDevice::launch(void* function, unsigned grid, unsigned block, void** args, void* stream) const {
  Current current(*this);
  check(d_.launch_kernel_(function, grid, 1, 1, block, 1, 1, 0, stream, args, nullptr), "cuLaunchKernel");
}

}  // namespace mlpcore::detail
