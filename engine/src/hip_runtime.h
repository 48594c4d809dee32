#pragma once
// The host's only contact with the HIP runtime, and the only host file that spells hip* names.
#include <cstddef>
#include <string>

#include "engine/src/dynamic_library.h"

namespace mlpcore::detail {

class HipRuntime {
 public:
  // Loads `library` (default: $MLPCORE_HIP_LIBRARY, else libamdhip64.so.7, .so.6, .so.5, .so in turn).
  explicit HipRuntime(const char* library = nullptr);

  bool loaded() const { return lib_.loaded(); }
  const std::string& load_error() const { return lib_.error(); }

  int try_device_count(int& count) const;  // the hipError_t, 0 on success
  std::string arch_name(int device) const;  // gcnArchName, e.g. "gfx1100:sramecc-:xnack-"; throws Error(device)

  // "hipGetDeviceCount: hipErrorNoDevice (no ROCm-capable device is detected)" style text.
  std::string describe(int error, const char* call) const;

 private:
  friend class HipOnDevice;
  void check(int error, const char* call, int device) const;

  DynamicLibrary lib_;
  // hipError_t is an int-sized enum; hipStream_t, hipModule_t and hipFunction_t are pointers.
  int (*get_device_count_)(int*) = nullptr;
  int (*get_device_properties_)(void*, int) = nullptr;  // hipGetDevicePropertiesR0600, else the legacy one
  std::size_t arch_name_offset_ = 0;                    // of gcnArchName in its hipDeviceProp_t
  int (*get_device_)(int*) = nullptr;
  int (*set_device_)(int) = nullptr;
  int (*malloc_)(void**, std::size_t) = nullptr;
  int (*free_)(void*) = nullptr;
  int (*memcpy_)(void*, const void*, std::size_t, int) = nullptr;
  int (*module_load_data_)(void**, const void*) = nullptr;
  int (*module_unload_)(void*) = nullptr;
  int (*module_get_function_)(void**, void*, const char*) = nullptr;
  int (*module_launch_kernel_)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                               void**) = nullptr;
  const char* (*get_error_name_)(int) = nullptr;
  const char* (*get_error_string_)(int) = nullptr;
};

// The runtime's calls on one device, for what lives there (a network's module and buffers). The
// current device is per host thread and the caller's own: each call makes `device` current on the
// calling thread, and the caller's device again after. Errors (Error(device)) name the device.
class HipOnDevice {
 public:
  HipOnDevice(const HipRuntime& rt, int device) : rt_(rt), device_(device) {}

  void* malloc(std::size_t bytes) const;
  void free(void* p) const noexcept;
  void copy(void* dst, const void* src, std::size_t bytes) const;  // any direction (hipMemcpyDefault)
  void* load_module(const void* image) const;
  void unload_module(void* module) const noexcept;
  void* function(void* module, const char* name) const;  // nullptr if the module has no such kernel
  void launch(void* function, unsigned grid, unsigned block, void** args, void* stream) const;

 private:
  class Current;
  void check(int error, const char* call) const { rt_.check(error, call, device_); }

  const HipRuntime& rt_;
  int device_;
};

}  // namespace mlpcore::detail
