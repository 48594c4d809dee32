#include "engine/src/amdgpu_clang.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/src/file_io.h"
#include "engine/src/kernel_headers.h"
#include "mlpcore/error.h"

extern char** environ;

namespace mlpcore::detail {
namespace {

namespace fs = std::filesystem;

bool executable(const fs::path& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p); }

fs::path on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && executable(fs::path(dir) / name)) return fs::path(dir) / name;
  return {};
}

struct Ran {
  int status = -1;     // the exit code; -1 when it did not run or was killed
  std::string output;  // stdout and stderr
};

// Runs `argv` (no shell) with stdout and stderr into `log`, and waits for it.
Ran run(const std::vector<std::string>& argv, const fs::path& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  Ran r;
  if (spawned != 0) return r.output = "cannot run " + argv[0] + ": " + std::strerror(spawned), r;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.status = WEXITSTATUS(status);
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  r.output = text.str();
  return r;
}

// A private temporary folder, removed with its contents when this goes.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::string pattern = (fs::temp_directory_path() / "mlpcore-compile-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw Error(ErrorCode::io, pattern, "", std::string("cannot create a temporary folder: ") + std::strerror(errno));
    path_ = pattern;
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_text(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  write_file_atomically(path, std::as_bytes(std::span(text.data(), text.size())));
}

// The headers the source includes by a path (ops/..., mlpcore/...); the standard library is clang's own.
void write_kernel_headers(const fs::path& folder) {
  for (const KernelHeader& h : kernel_headers())
    if (std::string_view(h.name).find('/') != std::string_view::npos) write_text(folder / h.name, h.text());
}

std::vector<std::string> compile_command(const fs::path& clang, const std::string& target, const std::vector<std::string>& flags,
                                         const fs::path& folder, const fs::path& source, const fs::path& output) {
  std::vector<std::string> argv = {clang.string(), "-x", "hip", "--offload-arch=" + target, "--cuda-device-only", "--no-gpu-bundle-output",
                                   "-std=c++20", "-O3", "-I" + folder.string()};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-o", output.string(), source.string()});
  return argv;
}

}  // namespace

AmdgpuClang::AmdgpuClang(fs::path path) {
  std::vector<fs::path> tried;
  const auto consider = [&](const fs::path& p) {
    if (p.empty() || !path_.empty()) return;
    tried.push_back(p);
    if (executable(p)) path_ = p;
  };
  consider(path);
  if (const char* env = std::getenv("MLPCORE_AMDGPU_CLANG")) consider(env);
#ifdef MLPCORE_BUILD_HIP_CLANG
  consider(MLPCORE_BUILD_HIP_CLANG);
#endif
  const char* rocm = std::getenv("ROCM_PATH");
  consider(fs::path(rocm ? rocm : "/opt/rocm") / "llvm/bin/amdclang++");
  for (const char* name : {"amdclang++", "clang++-20", "clang++-19", "clang++-18", "clang++-17"}) {
    if (!path_.empty()) break;
    consider(on_path(name));
    if (path_.empty()) tried.push_back(std::string(name) + " on $PATH");
  }
  if (path_.empty())
    for (const fs::path& p : tried) not_found_ += (not_found_.empty() ? "" : ", ") + p.string();
}

const AmdgpuClang::Identity& AmdgpuClang::identity() const {
  std::call_once(probed_, [&] {
    const TemporaryFolder folder;
    const Ran r = run({path_.string(), "--version"}, folder.path() / "version.txt");
    std::string first = r.output.substr(0, r.output.find('\n'));
    identity_.version = first.find("version") == std::string::npos ? "clang (unknown version)" : first;
    // As cmake/MlpcoreAmdgpu.cmake probes: a kernel that needs the device libraries, for a processor
    // every clang with the AMDGPU target and every ROCm knows.
    const fs::path probe = folder.path() / "device_libs_probe.hip", out = folder.path() / "device_libs_probe.co";
    write_text(probe, "#include <hip/hip_runtime.h>\n__global__ void probe(float* x) { x[threadIdx.x] = __expf(x[threadIdx.x]); }\n");
    if (run(compile_command(path_, "gfx900", {}, folder.path(), probe, out), folder.path() / "probe.txt").status != 0)
      identity_.flags = {"-nogpulib", "-DMLPCORE_HIP_NO_DEVICE_LIBS=1"};
  });
  return identity_;
}

std::string AmdgpuClang::version() const {
  if (!found()) return "clang (not found)";
  std::string how;
  for (const std::string& f : identity().flags) how += " " + f;
  return identity().version + " (" + path_.string() + (how.empty() ? "" : "," + how) + ")";
}

CompiledCode AmdgpuClang::compile_code(const std::string& source, const std::string& target, Assembly) const {
  const std::string where = "clang (" + target + ")";
  if (!found()) throw Error(ErrorCode::device, where, "", "no clang with the AMDGPU target found (tried " + not_found_ + ")");
  const TemporaryFolder folder;
  write_kernel_headers(folder.path());
  const fs::path src = folder.path() / "mlpcore_specialized.hip", out = folder.path() / (target + ".co");
  write_text(src, source);
  const Ran r = run(compile_command(path_, target, identity().flags, folder.path(), src, out), folder.path() / "log.txt");
  if (r.status != 0) throw Error(ErrorCode::device, where, "", path_.string() + " failed (exit " + std::to_string(r.status) + "):\n" + r.output);
  return {read_file(out, 256u << 20), false, {}, r.output};
}

}  // namespace mlpcore::detail
