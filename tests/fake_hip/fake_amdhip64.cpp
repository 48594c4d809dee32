// A stand-in for libamdhip64 with the entry points mlpcore calls, so the hip backend's host logic
// (probing, code-object choice, uploads, launches, error reporting) runs without an AMD GPU.
// Controlled through the environment at each call:
//   FAKE_HIP_DEVICES  device count (default 1)     FAKE_HIP_ARCH  gcnArchName (default gfx1100)
//   FAKE_HIP_FAIL     the name of one call that fails
// and it records the kernels requested and the last launch for the test to read.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool fails(const char* call) {
  const char* f = std::getenv("FAKE_HIP_FAIL");
  return f && std::strcmp(f, call) == 0;
}

std::vector<std::string> functions;  // a kernel handle is an index into this, plus one

}  // namespace

extern "C" {

char fake_hip_last_launched[128];
unsigned fake_hip_last_grid, fake_hip_last_block, fake_hip_launches, fake_hip_mallocs;
void* fake_hip_last_stream;

int hipGetDeviceCount(int* count) {
  const char* n = std::getenv("FAKE_HIP_DEVICES");
  *count = n ? std::atoi(n) : 1;
  return *count > 0 ? 0 : 100;  // hipErrorNoDevice
}

int hipGetDeviceProperties(void* props, int) {
  auto* bytes = static_cast<char*>(props);
  std::strcpy(bytes, "Fake Radeon");  // the marketing name comes first, as in the real struct
  const char* arch = std::getenv("FAKE_HIP_ARCH");
  std::strcpy(bytes + 396, arch ? arch : "gfx1100");
  return 0;
}

int hipSetDevice(int) { return fails("hipSetDevice") ? 101 : 0; }

int hipMalloc(void** p, std::size_t bytes) {
  if (fails("hipMalloc")) return 2;  // hipErrorOutOfMemory
  ++fake_hip_mallocs;
  *p = std::calloc(1, bytes);
  return 0;
}

int hipFree(void* p) {
  std::free(p);
  return 0;
}

int hipMemcpy(void* dst, const void* src, std::size_t bytes, int) {
  if (fails("hipMemcpy")) return 1;
  std::memmove(dst, src, bytes);
  return 0;
}

int hipModuleLoadData(void** module, const void* image) {
  if (fails("hipModuleLoadData") || std::memcmp(image, "\x7f" "ELF", 4) != 0) return 200;  // hipErrorInvalidImage
  *module = const_cast<void*>(image);
  return 0;
}

int hipModuleUnload(void*) { return 0; }

int hipModuleGetFunction(void** function, void*, const char* name) {
  if (fails("hipModuleGetFunction")) return 500;  // hipErrorNotFound
  functions.emplace_back(name);
  *function = reinterpret_cast<void*>(functions.size());
  return 0;
}

int hipModuleLaunchKernel(void* function, unsigned gx, unsigned, unsigned, unsigned bx, unsigned, unsigned, unsigned, void* stream, void**, void**) {
  const std::string& name = functions.at(reinterpret_cast<std::size_t>(function) - 1);
  std::strncpy(fake_hip_last_launched, name.c_str(), sizeof fake_hip_last_launched - 1);
  fake_hip_last_stream = stream;
  fake_hip_last_grid = gx;
  fake_hip_last_block = bx;
  ++fake_hip_launches;
  return fails("hipModuleLaunchKernel") ? 719 : 0;  // hipErrorLaunchFailure
}

int hipStreamSynchronize(void*) { return 0; }

const char* hipGetErrorName(int error) {
  switch (error) {
    case 1: return "hipErrorInvalidValue";
    case 2: return "hipErrorOutOfMemory";
    case 100: return "hipErrorNoDevice";
    case 101: return "hipErrorInvalidDevice";
    case 200: return "hipErrorInvalidImage";
    case 500: return "hipErrorNotFound";
    case 719: return "hipErrorLaunchFailure";
    default: return "hipErrorUnknown";
  }
}

const char* hipGetErrorString(int error) { return error == 0 ? "no error" : "fake failure"; }
}
