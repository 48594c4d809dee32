#pragma once
// The host's only contact with the HIP runtime, and the only host file that spells hip* names.
// libamdhip64 is opened at run time, so mlpcore loads (and falls back to the CPU) on machines without it.
#include <cstddef>
#include <string>

namespace mlpcore::detail {

struct HipDevice {
  int index = 0;
  std::string arch_name;  // gcnArchName, e.g. "gfx1100:sramecc-:xnack-"
};

class HipRuntime {
 public:
  // Loads `library` (default: libamdhip64.so.6, .so.5, .so in turn, or $MLPCORE_HIP_LIBRARY).
  explicit HipRuntime(const char* library = nullptr);
  ~HipRuntime();
  HipRuntime(const HipRuntime&) = delete;
  HipRuntime& operator=(const HipRuntime&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  const std::string& load_error() const { return load_error_; }

  // Each throws Error(device) naming the HIP call, its error and the device.
  int device_count() const;
  int try_device_count(int& count) const;  // the hipError_t, 0 on success
  HipDevice device(int index) const;
  void set_device(int index) const;
  void* malloc(std::size_t bytes) const;
  void free(void* p) const noexcept;
  void copy(void* dst, const void* src, std::size_t bytes) const;  // any direction (hipMemcpyDefault)
  void* load_module(const void* image) const;
  void unload_module(void* module) const noexcept;
  void* function(void* module, const char* name) const;  // nullptr if the module has no such kernel
  void launch(void* function, unsigned grid, unsigned block, void** args, void* stream) const;
  void synchronize(void* stream) const;

  // "hipGetDeviceCount: hipErrorNoDevice (no ROCm-capable device is detected)" style text.
  std::string describe(int error, const char* call) const;

 private:
  void check(int error, const char* call) const;
  template <class F>
  F symbol(const char* name);

  void* handle_ = nullptr;
  std::string load_error_;
  mutable int device_ = 0;
  // hipError_t is an int-sized enum; hipStream_t, hipModule_t and hipFunction_t are pointers.
  int (*get_device_count_)(int*) = nullptr;
  int (*get_device_properties_)(void*, int) = nullptr;
  int (*set_device_)(int) = nullptr;
  int (*malloc_)(void**, std::size_t) = nullptr;
  int (*free_)(void*) = nullptr;
  int (*memcpy_)(void*, const void*, std::size_t, int) = nullptr;
  int (*module_load_data_)(void**, const void*) = nullptr;
  int (*module_unload_)(void*) = nullptr;
  int (*module_get_function_)(void**, void*, const char*) = nullptr;
  int (*module_launch_kernel_)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                               void**) = nullptr;
  int (*stream_synchronize_)(void*) = nullptr;
  const char* (*get_error_name_)(int) = nullptr;
  const char* (*get_error_string_)(int) = nullptr;
};

}  // namespace mlpcore::detail
