#pragma once
// The host's only contact with the CUDA driver, and the only host file that spells cu* names.
#include <cstddef>
#include <string>

#include "engine/src/dynamic_library.h"

namespace mlpcore::detail {

class CudaDriver {
 public:
  // Loads `library` (default: $MLPCORE_CUDA_LIBRARY, else libcuda.so.1).
  explicit CudaDriver(const char* library = nullptr);

  bool loaded() const { return lib_.loaded(); }
  const std::string& load_error() const { return lib_.error(); }

  int try_init() const;                     // the CUresult of cuInit(0)
  int try_device_count(int& count) const;
  // Each throws Error(device) naming the driver call, its error and the device.
  std::string device_name(int index) const;
  int compute_capability(int index) const;  // major * 10 + minor
  int multiprocessors(int index) const;

  std::string describe(int error, const char* call) const;

 private:
  friend class CudaOnDevice;
  void check(int error, const char* call, int device) const;
  int device_handle(int index) const;  // the CUdevice

  DynamicLibrary lib_;
  int (*init_)(unsigned) = nullptr;
  int (*device_get_count_)(int*) = nullptr;
  int (*device_get_)(int*, int) = nullptr;
  int (*device_get_attribute_)(int*, int, int) = nullptr;
  int (*device_get_name_)(char*, int, int) = nullptr;
  int (*primary_ctx_retain_)(void**, int) = nullptr;
  int (*primary_ctx_release_)(int) = nullptr;
  int (*ctx_push_)(void*) = nullptr;
  int (*ctx_pop_)(void**) = nullptr;
  int (*mem_alloc_)(unsigned long long*, std::size_t) = nullptr;
  int (*mem_free_)(unsigned long long) = nullptr;
  int (*memcpy_)(unsigned long long, unsigned long long, std::size_t) = nullptr;
  int (*module_load_data_)(void**, const void*) = nullptr;
  int (*module_unload_)(void*) = nullptr;
  int (*module_get_function_)(void**, void*, const char*) = nullptr;
  int (*launch_kernel_)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**) = nullptr;
  int (*get_error_name_)(int, const char**) = nullptr;
  int (*get_error_string_)(int, const char**) = nullptr;
};

// The driver's calls on one device's primary context (the one the CUDA runtime and PyTorch use, so
// their streams and buffers work with ours), retained while this lives. The current context is per
// host thread and the caller's own: each call pushes ours on the calling thread and pops it after.
// Errors (Error(device)) name the device.
class CudaOnDevice {
 public:
  CudaOnDevice(const CudaDriver& driver, int device);
  ~CudaOnDevice();
  CudaOnDevice(const CudaOnDevice&) = delete;
  CudaOnDevice& operator=(const CudaOnDevice&) = delete;

  void* malloc(std::size_t bytes) const;
  void free(void* p) const noexcept;
  void copy(void* dst, const void* src, std::size_t bytes) const;  // unified addressing: any direction
  void* load_module(const void* image) const;
  void unload_module(void* module) const noexcept;
  void* function(void* module, const char* name) const;  // nullptr if the module has no such kernel
  void launch(void* function, unsigned grid, unsigned block, void** args, void* stream) const;

 private:
  class Current;
  void check(int error, const char* call) const { d_.check(error, call, device_); }

  const CudaDriver& d_;
  int device_;
  int handle_;  // the CUdevice
  void* context_ = nullptr;
};

}  // namespace mlpcore::detail
