// A stand-in for hiprtc (libhiprtc.so.6) with the entry points mlpcore calls, so the hip backend's
// run-time specialization (compile, kernel cache, fallback on failure) runs without ROCm. Its "code
// object" is an ELF magic followed by the source, which the stand-in HIP runtime loads.
//   FAKE_HIPRTC_FAIL  set: every compile fails, with a log
// It counts compiles and records the last one's options for the test to read (mlpcore compiles a
// network's kernels on several threads at once).
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace {

struct Program {
  std::string source, log, code;
};
std::mutex mutex;

}  // namespace

extern "C" {

unsigned fake_hiprtc_compiles = 0;
char fake_hiprtc_last_options[256];

int hiprtcVersion(int* major, int* minor) {
  *major = 6;
  *minor = 2;
  return 0;
}
const char* hiprtcGetErrorString(int result) { return result == 6 ? "HIPRTC_ERROR_COMPILATION" : "HIPRTC_ERROR (fake)"; }
int hiprtcCreateProgram(void** program, const char* source, const char*, int, const char* const*, const char* const*) {
  *program = new Program{source, "", ""};
  return 0;
}
int hiprtcDestroyProgram(void** program) {
  delete static_cast<Program*>(*program);
  *program = nullptr;
  return 0;
}
int hiprtcCompileProgram(void* program, int count, const char* const* options) {
  auto* p = static_cast<Program*>(program);
  std::string joined;
  for (int i = 0; i < count; ++i) joined += (i ? " " : "") + std::string(options[i]);
  {
    const std::lock_guard lock(mutex);
    ++fake_hiprtc_compiles;
    std::strncpy(fake_hiprtc_last_options, joined.c_str(), sizeof fake_hiprtc_last_options - 1);
  }
  if (std::getenv("FAKE_HIPRTC_FAIL")) {
    p->log = "mlpcore_specialized.cu:1:1: error: fake failure";
    return 6;  // HIPRTC_ERROR_COMPILATION
  }
  p->code = "\x7f" "ELF" + p->source;
  return 0;
}
int hiprtcGetProgramLogSize(void* program, std::size_t* size) {
  *size = static_cast<Program*>(program)->log.size() + 1;
  return 0;
}
int hiprtcGetProgramLog(void* program, char* log) {
  const std::string& l = static_cast<Program*>(program)->log;
  std::memcpy(log, l.c_str(), l.size() + 1);
  return 0;
}
int hiprtcGetCodeSize(void* program, std::size_t* size) {
  *size = static_cast<Program*>(program)->code.size();
  return 0;
}
int hiprtcGetCode(void* program, char* code) {
  const std::string& c = static_cast<Program*>(program)->code;
  std::memcpy(code, c.data(), c.size());
  return 0;
}

}  // extern "C"
