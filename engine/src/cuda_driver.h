#pragma once
// The host's only contact with the CUDA driver, and the only host file that spells cu* names.
// libcuda is opened at run time, so mlpcore loads (and falls back) on machines without an NVIDIA driver.
#include <cstddef>
#include <string>

namespace mlpcore::detail {

class CudaDriver {
 public:
  // Loads `library` (default: libcuda.so.1, or $MLPCORE_CUDA_LIBRARY).
  explicit CudaDriver(const char* library = nullptr);
  ~CudaDriver();
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  const std::string& load_error() const { return load_error_; }

  int try_init() const;                       // the CUresult of cuInit(0)
  int try_device_count(int& count) const;
  std::string device_name(int index) const;
  int compute_capability(int index) const;    // major * 10 + minor

  // Each throws Error(device) naming the driver call, its error and the device.
  void* retain_context(int index) const;      // the device's primary context, as the runtime API uses
  void release_context(int index) const noexcept;
  void push(void* context) const;
  void pop() const noexcept;
  void* malloc(std::size_t bytes) const;
  void free(void* p) const noexcept;
  void copy(void* dst, const void* src, std::size_t bytes) const;  // unified addressing: any direction
  void* load_module(const void* image) const;
  void unload_module(void* module) const noexcept;
  void* function(void* module, const char* name) const;  // nullptr if the module has no such kernel
  void launch(void* function, unsigned grid, unsigned block, void** args, void* stream) const;

  std::string describe(int error, const char* call) const;

 private:
  void check(int error, const char* call) const;

  void* handle_ = nullptr;
  std::string load_error_;
  mutable int device_ = 0;
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

}  // namespace mlpcore::detail
