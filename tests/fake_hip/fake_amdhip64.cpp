// A stand-in for libamdhip64 with the entry points mlpcore calls, so the hip backend's host logic
// (probing, code-object choice, uploads, launches, error reporting) runs without an AMD GPU.
// Controlled through the environment at each call:
//   FAKE_HIP_DEVICES  device count (default 1)     FAKE_HIP_ARCH  gcnArchName (default gfx1100)
//   FAKE_HIP_FAIL     the name of one call that fails, on every device or only on FAKE_HIP_FAIL_DEVICE
// It records the kernels requested and the last launch for the test to read. Like HIP it keeps a
// current device per host thread, and counts (and fails) each call on memory, a module or a kernel
// of another device than the calling thread's current one.
// Built twice: as ROCm >= 6 (hipGetDevicePropertiesR0600 and the legacy entry point) and, with
// FAKE_HIP_ROCM5, as ROCm 5 (the legacy entry point only).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace {

constexpr int kInvalidDevice = 101;  // hipErrorInvalidDevice

std::mutex mutex;  // guards everything below but `current`
thread_local int current = 0;

struct Module {
  const void* image;
  int device;
};
struct Function {
  std::string name;
  int device;
};
struct Allocation {
  std::size_t bytes;
  int device;
};
std::list<Module> modules;
std::list<Function> functions;  // a kernel handle is a Function*
std::map<const char*, Allocation> allocations;

int device_count() {
  const char* n = std::getenv("FAKE_HIP_DEVICES");
  return n ? std::atoi(n) : 1;
}

bool fails(const char* call) {
  const char* f = std::getenv("FAKE_HIP_FAIL");
  const char* on = std::getenv("FAKE_HIP_FAIL_DEVICE");
  if (!f || std::strcmp(f, call) != 0 || (on && std::atoi(on) != current)) return false;
  std::this_thread::sleep_for(std::chrono::microseconds(20));  // widens the window for a caller's races
  return true;
}

// The device of the allocation holding `p`, or -1 for host memory.
int device_of(const void* p) {
  const auto* c = static_cast<const char*>(p);
  auto it = allocations.upper_bound(c);
  if (it == allocations.begin()) return -1;
  --it;
  return c < it->first + it->second.bytes ? it->second.device : -1;
}

void write_properties(char* props, std::size_t arch_offset) {
  std::strcpy(props, "Fake Radeon");  // name[256] comes first in either layout
  const char* arch = std::getenv("FAKE_HIP_ARCH");
  std::strcpy(props + arch_offset, arch ? arch : "gfx1100");
}

}  // namespace

extern "C" {

char fake_hip_last_launched[128];
char fake_hip_last_properties[64];  // the hipGetDeviceProperties entry point called last
unsigned fake_hip_last_grid, fake_hip_last_block, fake_hip_launches, fake_hip_mallocs, fake_hip_wrong_device;
void* fake_hip_last_stream;

int hipGetDeviceCount(int* count) {
  *count = device_count();
  return *count > 0 ? 0 : 100;  // hipErrorNoDevice
}

// hipDeviceProp_t of ROCm 5 (hipDeviceProp_tR0000 in ROCm 6): gcnArchName at byte 396.
int hipGetDeviceProperties(void* props, int) {
  std::strcpy(fake_hip_last_properties, "hipGetDeviceProperties");
  write_properties(static_cast<char*>(props), 396);
  return 0;
}

#ifndef FAKE_HIP_ROCM5
// hipDeviceProp_tR0600: gcnArchName at byte 1160.
int hipGetDevicePropertiesR0600(void* props, int) {
  std::strcpy(fake_hip_last_properties, "hipGetDevicePropertiesR0600");
  write_properties(static_cast<char*>(props), 1160);
  return 0;
}
#endif

int hipGetDevice(int* device) {
  if (fails("hipGetDevice")) return 1;
  *device = current;
  return 0;
}

int hipSetDevice(int device) {
  if (fails("hipSetDevice") || device < 0 || device >= device_count()) return kInvalidDevice;
  current = device;
  return 0;
}

int hipMalloc(void** p, std::size_t bytes) {
  if (fails("hipMalloc")) return 2;  // hipErrorOutOfMemory
  std::lock_guard lock(mutex);
  ++fake_hip_mallocs;
  *p = std::calloc(1, bytes);
  allocations[static_cast<char*>(*p)] = {bytes, current};
  return 0;
}

int hipFree(void* p) {
  std::lock_guard lock(mutex);
  const auto it = allocations.find(static_cast<char*>(p));
  if (it == allocations.end()) return 1;  // hipErrorInvalidValue
  if (it->second.device != current) return ++fake_hip_wrong_device, kInvalidDevice;
  allocations.erase(it);
  std::free(p);
  return 0;
}

int hipMemcpy(void* dst, const void* src, std::size_t bytes, int) {
  if (fails("hipMemcpy")) return 1;
  std::lock_guard lock(mutex);
  for (const void* p : {static_cast<const void*>(dst), src}) {
    const int device = device_of(p);
    if (device >= 0 && device != current) return ++fake_hip_wrong_device, kInvalidDevice;
  }
  std::memmove(dst, src, bytes);
  return 0;
}

int hipModuleLoadData(void** module, const void* image) {
  if (fails("hipModuleLoadData") || std::memcmp(image, "\x7f" "ELF", 4) != 0) return 200;  // hipErrorInvalidImage
  std::lock_guard lock(mutex);
  *module = &modules.emplace_back(Module{image, current});
  return 0;
}

int hipModuleUnload(void* module) {
  std::lock_guard lock(mutex);
  const auto it = std::find_if(modules.begin(), modules.end(), [&](const Module& m) { return &m == module; });
  if (it == modules.end()) return 400;  // hipErrorInvalidHandle
  if (it->device != current) return ++fake_hip_wrong_device, kInvalidDevice;
  modules.erase(it);
  return 0;
}

int hipModuleGetFunction(void** function, void* module, const char* name) {
  if (fails("hipModuleGetFunction")) return 500;  // hipErrorNotFound
  std::lock_guard lock(mutex);
  const int device = static_cast<Module*>(module)->device;
  if (device != current) return ++fake_hip_wrong_device, kInvalidDevice;
  *function = &functions.emplace_back(Function{name, device});
  return 0;
}

int hipModuleLaunchKernel(void* function, unsigned gx, unsigned, unsigned, unsigned bx, unsigned, unsigned, unsigned, void* stream, void**, void**) {
  std::lock_guard lock(mutex);
  const auto& f = *static_cast<const Function*>(function);
  if (f.device != current) return ++fake_hip_wrong_device, kInvalidDevice;
  std::strncpy(fake_hip_last_launched, f.name.c_str(), sizeof fake_hip_last_launched - 1);
  fake_hip_last_stream = stream;
  fake_hip_last_grid = gx;
  fake_hip_last_block = bx;
  ++fake_hip_launches;
  return fails("hipModuleLaunchKernel") ? 719 : 0;  // hipErrorLaunchFailure
}

const char* hipGetErrorName(int error) {
  switch (error) {
    case 1: return "hipErrorInvalidValue";
    case 2: return "hipErrorOutOfMemory";
    case 100: return "hipErrorNoDevice";
    case 101: return "hipErrorInvalidDevice";
    case 200: return "hipErrorInvalidImage";
    case 400: return "hipErrorInvalidHandle";
    case 500: return "hipErrorNotFound";
    case 719: return "hipErrorLaunchFailure";
    default: return "hipErrorUnknown";
  }
}

const char* hipGetErrorString(int error) { return error == 0 ? "no error" : "fake failure"; }
}
