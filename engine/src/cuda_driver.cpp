#include "engine/src/cuda_driver.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>

#include "mlpcore/error.h"

namespace mlpcore::detail {
namespace {

constexpr int kSuccess = 0;
constexpr int kErrorNotFound = 500;  // CUDA_ERROR_NOT_FOUND
constexpr int kComputeCapabilityMajor = 75, kComputeCapabilityMinor = 76;  // CUdevice_attribute

template <class F>
F symbol(void* handle, const char* name, std::string& error) {
  void* p = ::dlsym(handle, name);
  if (!p && error.empty()) error = std::string("the CUDA driver has no ") + name;
  return reinterpret_cast<F>(p);
}

unsigned long long address(const void* p) { return static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(p)); }

}  // namespace

CudaDriver::CudaDriver(const char* library) {
  const char* env = std::getenv("MLPCORE_CUDA_LIBRARY");
  const std::string name = library ? library : env ? env : "libcuda.so.1";
  handle_ = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* why = ::dlerror();
    load_error_ = why ? why : name + ": cannot load";
    return;
  }
  auto& e = load_error_;
  init_ = symbol<decltype(init_)>(handle_, "cuInit", e);
  device_get_count_ = symbol<decltype(device_get_count_)>(handle_, "cuDeviceGetCount", e);
  device_get_ = symbol<decltype(device_get_)>(handle_, "cuDeviceGet", e);
  device_get_attribute_ = symbol<decltype(device_get_attribute_)>(handle_, "cuDeviceGetAttribute", e);
  device_get_name_ = symbol<decltype(device_get_name_)>(handle_, "cuDeviceGetName", e);
  primary_ctx_retain_ = symbol<decltype(primary_ctx_retain_)>(handle_, "cuDevicePrimaryCtxRetain", e);
  primary_ctx_release_ = symbol<decltype(primary_ctx_release_)>(handle_, "cuDevicePrimaryCtxRelease_v2", e);
  ctx_push_ = symbol<decltype(ctx_push_)>(handle_, "cuCtxPushCurrent_v2", e);
  ctx_pop_ = symbol<decltype(ctx_pop_)>(handle_, "cuCtxPopCurrent_v2", e);
  mem_alloc_ = symbol<decltype(mem_alloc_)>(handle_, "cuMemAlloc_v2", e);
  mem_free_ = symbol<decltype(mem_free_)>(handle_, "cuMemFree_v2", e);
  memcpy_ = symbol<decltype(memcpy_)>(handle_, "cuMemcpy", e);
  module_load_data_ = symbol<decltype(module_load_data_)>(handle_, "cuModuleLoadData", e);
  module_unload_ = symbol<decltype(module_unload_)>(handle_, "cuModuleUnload", e);
  module_get_function_ = symbol<decltype(module_get_function_)>(handle_, "cuModuleGetFunction", e);
  launch_kernel_ = symbol<decltype(launch_kernel_)>(handle_, "cuLaunchKernel", e);
  get_error_name_ = symbol<decltype(get_error_name_)>(handle_, "cuGetErrorName", e);
  get_error_string_ = symbol<decltype(get_error_string_)>(handle_, "cuGetErrorString", e);
  if (!load_error_.empty()) {
    ::dlclose(handle_);
    handle_ = nullptr;
  }
}

CudaDriver::~CudaDriver() {
  if (handle_) ::dlclose(handle_);
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

void CudaDriver::check(int error, const char* call) const {
  if (error != kSuccess) throw Error(ErrorCode::device, "cuda device " + std::to_string(device_), "", describe(error, call));
}

int CudaDriver::try_init() const { return init_(0); }

int CudaDriver::try_device_count(int& count) const {
  count = 0;
  return device_get_count_(&count);
}

std::string CudaDriver::device_name(int index) const {
  char name[256] = {};
  int device = 0;
  check(device_get_(&device, index), "cuDeviceGet");
  check(device_get_name_(name, sizeof name - 1, device), "cuDeviceGetName");
  return name;
}

int CudaDriver::compute_capability(int index) const {
  int device = 0, major = 0, minor = 0;
  check(device_get_(&device, index), "cuDeviceGet");
  check(device_get_attribute_(&major, kComputeCapabilityMajor, device), "cuDeviceGetAttribute");
  check(device_get_attribute_(&minor, kComputeCapabilityMinor, device), "cuDeviceGetAttribute");
  return major * 10 + minor;
}

void* CudaDriver::retain_context(int index) const {
  device_ = index;
  int device = 0;
  check(device_get_(&device, index), "cuDeviceGet");
  void* context = nullptr;
  check(primary_ctx_retain_(&context, device), "cuDevicePrimaryCtxRetain");
  return context;
}

void CudaDriver::release_context(int index) const noexcept {
  int device = 0;
  if (device_get_(&device, index) == kSuccess) primary_ctx_release_(device);
}

void CudaDriver::push(void* context) const { check(ctx_push_(context), "cuCtxPushCurrent"); }

void CudaDriver::pop() const noexcept {
  void* ignored = nullptr;
  ctx_pop_(&ignored);
}

void* CudaDriver::malloc(std::size_t bytes) const {
  unsigned long long p = 0;
  check(mem_alloc_(&p, bytes), "cuMemAlloc");
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(p));
}

void CudaDriver::free(void* p) const noexcept {
  if (p) mem_free_(address(p));
}

void CudaDriver::copy(void* dst, const void* src, std::size_t bytes) const { check(memcpy_(address(dst), address(src), bytes), "cuMemcpy"); }

void* CudaDriver::load_module(const void* image) const {
  void* module = nullptr;
  check(module_load_data_(&module, image), "cuModuleLoadData");
  return module;
}

void CudaDriver::unload_module(void* module) const noexcept {
  if (module) module_unload_(module);
}

void* CudaDriver::function(void* module, const char* name) const {
  void* f = nullptr;
  const int error = module_get_function_(&f, module, name);
  if (error == kErrorNotFound) return nullptr;
  check(error, "cuModuleGetFunction");
  return f;
}

void CudaDriver::launch(void* function, unsigned grid, unsigned block, void** args, void* stream) const {
  check(launch_kernel_(function, grid, 1, 1, block, 1, 1, 0, stream, args, nullptr), "cuLaunchKernel");
}

}  // namespace mlpcore::detail
