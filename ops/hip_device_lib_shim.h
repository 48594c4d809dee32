#pragma once
// Builds against HIP headers without the ROCm device libraries (-nogpulib, e.g. Debian's HIP 5.2 with
// clang-19, whose device libraries lack gfx11/gfx12): the headers' threadIdx/blockIdx/blockDim and device
// assert call these ockl functions. Weak, so the real ones win wherever the device libraries are linked.
#include <cstddef>
#include <cstdint>

#if defined(__HIP_DEVICE_COMPILE__)  // the device passes only; the host pass has nothing to resolve
extern "C" {
__device__ __attribute__((weak)) size_t __ockl_get_local_id(unsigned dim) {
  return dim == 0 ? __builtin_amdgcn_workitem_id_x() : dim == 1 ? __builtin_amdgcn_workitem_id_y()
       : dim == 2 ? __builtin_amdgcn_workitem_id_z() : 0;
}
__device__ __attribute__((weak)) size_t __ockl_get_group_id(unsigned dim) {
  return dim == 0 ? __builtin_amdgcn_workgroup_id_x() : dim == 1 ? __builtin_amdgcn_workgroup_id_y()
       : dim == 2 ? __builtin_amdgcn_workgroup_id_z() : 0;
}
__device__ __attribute__((weak)) size_t __ockl_get_local_size(unsigned dim) {
  return dim == 0 ? __builtin_amdgcn_workgroup_size_x() : dim == 1 ? __builtin_amdgcn_workgroup_size_y()
       : dim == 2 ? __builtin_amdgcn_workgroup_size_z() : 1;
}
__device__ __attribute__((weak)) size_t __ockl_get_num_groups(unsigned dim) {
  const auto* packet = static_cast<const uint32_t*>(__builtin_amdgcn_dispatch_ptr());
  const size_t grid = dim < 3 ? packet[3 + dim] : 1;  // grid_size_x/y/z of the HSA dispatch packet
  const size_t local = __ockl_get_local_size(dim);
  return (grid + local - 1) / local;
}
// Device assert prints through these; without the libraries the message is dropped and the trap remains.
__device__ __attribute__((weak)) uint64_t __ockl_fprintf_stderr_begin() { return 0; }
__device__ __attribute__((weak)) uint64_t __ockl_fprintf_append_string_n(uint64_t msg, const char*, uint64_t, uint32_t) { return msg; }
__device__ __attribute__((weak)) uint64_t __ockl_fprintf_append_args(uint64_t msg, uint32_t, uint64_t, uint64_t, uint64_t,
                                                                     uint64_t, uint64_t, uint64_t, uint64_t, uint32_t) {
  return msg;
}
}
#endif
