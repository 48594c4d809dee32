#pragma once
// Device memory and modules of a GPU runtime on its device (HipOnDevice, CudaOnDevice) that free
// themselves, and uploads of host vectors.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

namespace mlpcore::detail {

template <class Runtime>
class DeviceBuffer {
 public:
  DeviceBuffer(const Runtime& rt, std::size_t bytes) : rt_(&rt), p_(rt.malloc(std::max<std::size_t>(bytes, 4))) {}
  ~DeviceBuffer() { rt_->free(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return p_; }

 private:
  const Runtime* rt_;
  void* p_;
};

template <class Runtime>
struct ModuleUnload {
  const Runtime* rt;
  void operator()(void* module) const noexcept { rt->unload_module(module); }
};
template <class Runtime>
using DeviceModule = std::unique_ptr<void, ModuleUnload<Runtime>>;

template <class Runtime>
DeviceModule<Runtime> load_module(const Runtime& rt, const void* image) {
  return {rt.load_module(image), ModuleUnload<Runtime>{&rt}};
}

template <class Runtime>
std::vector<DeviceModule<Runtime>> load_modules(const Runtime& rt, const std::vector<const void*>& images) {
  std::vector<DeviceModule<Runtime>> modules;
  for (const void* image : images) modules.push_back(load_module(rt, image));
  return modules;
}

template <class Runtime, class T>
std::unique_ptr<DeviceBuffer<Runtime>> upload(const Runtime& rt, const std::vector<T>& v) {
  auto b = std::make_unique<DeviceBuffer<Runtime>>(rt, v.size() * sizeof(T));
  rt.copy(b->get(), v.data(), v.size() * sizeof(T));
  return b;
}

}  // namespace mlpcore::detail
