// A stand-in for libcuda with the entry points mlpcore calls: two sm_90 devices, their primary contexts,
// and a context stack per host thread as the driver keeps. It counts each call on memory, a module or a
// kernel of another device than the current context's, and the primary contexts' retains.
#include <algorithm>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <vector>

constexpr int kDevices = 2;

extern "C" {
unsigned fake_cuda_wrong_context, fake_cuda_launches;
int fake_cuda_retained[kDevices];
}

namespace {

constexpr int kInvalidContext = 201;  // CUDA_ERROR_INVALID_CONTEXT

std::mutex mutex;  // guards everything below but `stack`
thread_local std::vector<void*> stack;
int contexts[kDevices];  // a context is a pointer to one of these

std::list<int> modules, functions;  // a module or kernel handle points at its device
std::map<unsigned long long, std::pair<std::size_t, int>> allocations;  // address -> bytes, device

int current() { return stack.empty() ? -1 : static_cast<int>(static_cast<int*>(stack.back()) - contexts); }

bool on_current(int device) { return device == current(); }

int wrong() {
  ++fake_cuda_wrong_context;  // under `mutex`
  return kInvalidContext;
}

}  // namespace

extern "C" {

int cuInit(unsigned) { return 0; }

int cuDeviceGetCount(int* count) {
  *count = kDevices;
  return 0;
}

int cuDeviceGet(int* device, int ordinal) {
  *device = ordinal;
  return ordinal >= 0 && ordinal < kDevices ? 0 : 101;  // CUDA_ERROR_INVALID_DEVICE
}

int cuDeviceGetAttribute(int* value, int attribute, int) {
  *value = attribute == 75 ? 9 : attribute == 16 ? 132 : 0;  // compute capability 9.0, 132 multiprocessors
  return 0;
}

int cuDeviceGetName(char* name, int length, int) {
  std::strncpy(name, "Fake H100", static_cast<std::size_t>(length));
  return 0;
}

int cuDevicePrimaryCtxRetain(void** context, int device) {
  std::lock_guard lock(mutex);
  ++fake_cuda_retained[device];
  *context = &contexts[device];
  return 0;
}

int cuDevicePrimaryCtxRelease_v2(int device) {
  std::lock_guard lock(mutex);
  --fake_cuda_retained[device];
  return 0;
}

int cuCtxPushCurrent_v2(void* context) {
  stack.push_back(context);
  return 0;
}

int cuCtxPopCurrent_v2(void** context) {
  if (stack.empty()) return kInvalidContext;
  *context = stack.back();
  stack.pop_back();
  return 0;
}

int cuMemAlloc_v2(unsigned long long* p, std::size_t bytes) {
  if (current() < 0) return kInvalidContext;
  std::lock_guard lock(mutex);
  *p = reinterpret_cast<unsigned long long>(new char[bytes]());
  allocations[*p] = {bytes, current()};
  return 0;
}

int cuMemFree_v2(unsigned long long p) {
  std::lock_guard lock(mutex);
  const auto it = allocations.find(p);
  if (it == allocations.end()) return 1;  // CUDA_ERROR_INVALID_VALUE
  if (!on_current(it->second.second)) return wrong();
  delete[] reinterpret_cast<char*>(p);
  allocations.erase(it);
  return 0;
}

int cuMemcpy(unsigned long long dst, unsigned long long src, std::size_t bytes) {
  std::lock_guard lock(mutex);
  for (const unsigned long long p : {dst, src}) {
    auto it = allocations.upper_bound(p);
    if (it != allocations.begin() && p < (--it)->first + it->second.first && !on_current(it->second.second)) return wrong();
  }
  std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  return 0;
}

int cuModuleLoadData(void** module, const void*) {
  if (current() < 0) return kInvalidContext;
  std::lock_guard lock(mutex);
  *module = &modules.emplace_back(current());
  return 0;
}

int cuModuleUnload(void* module) {
  std::lock_guard lock(mutex);
  const auto it = std::find_if(modules.begin(), modules.end(), [&](const int& m) { return &m == module; });
  if (it == modules.end()) return 400;  // CUDA_ERROR_INVALID_HANDLE
  if (!on_current(*it)) return wrong();
  modules.erase(it);
  return 0;
}

int cuModuleGetFunction(void** function, void* module, const char*) {
  std::lock_guard lock(mutex);
  const int device = *static_cast<int*>(module);
  if (!on_current(device)) return wrong();
  *function = &functions.emplace_back(device);
  return 0;
}

int cuLaunchKernel(void* function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**, void**) {
  std::lock_guard lock(mutex);
  if (!on_current(*static_cast<int*>(function))) return wrong();
  ++fake_cuda_launches;
  return 0;
}

int cuGetErrorName(int error, const char** name) {
  *name = error == kInvalidContext ? "CUDA_ERROR_INVALID_CONTEXT" : "CUDA_ERROR_UNKNOWN";
  return 0;
}

int cuGetErrorString(int, const char** text) {
  *text = "fake failure";
  return 0;
}

// The calling thread's context stack depth, for the test.
int fake_cuda_stack_depth() { return static_cast<int>(stack.size()); }
}
