#include "engine/src/cpu_count.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "mlpcore/error.h"

namespace mlpcore::detail {
namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

template <class Int>
std::optional<Int> parse_whole(std::string_view s) {
  s = trim(s);
  Int value{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

std::optional<unsigned> cpus_from_quota(std::int64_t quota, std::int64_t period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  return static_cast<unsigned>(std::min<std::int64_t>((quota + period - 1) / period, kMaxCpuThreads));
}

std::optional<std::string> read_small_file(const char* path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

unsigned affinity_cpus() {
  // The mask grows until it holds every CPU the kernel knows (sched_getaffinity fails with EINVAL below).
  for (int cpus = 1024; cpus <= (1 << 20); cpus *= 2) {
    const std::size_t bytes = CPU_ALLOC_SIZE(cpus);
    const std::unique_ptr<cpu_set_t, void (*)(cpu_set_t*)> set(CPU_ALLOC(cpus), [](cpu_set_t* s) { CPU_FREE(s); });
    if (!set) break;
    if (sched_getaffinity(0, bytes, set.get()) == 0) return std::max(1, CPU_COUNT_S(bytes, set.get()));
    if (errno != EINVAL) break;
  }
  return 1;
}

// cgroup v2: the process's own cgroup and every one above it may set a quota; the smallest applies.
std::optional<unsigned> cgroup2_cpus() {
  const auto self = read_small_file("/proc/self/cgroup");
  std::filesystem::path dir = "/sys/fs/cgroup";
  if (const auto own = self ? cgroup2_path(*self) : std::nullopt; own && *own != "/") dir += *own;
  std::optional<unsigned> cpus;
  for (bool found_any = false;; dir = dir.parent_path()) {
    if (const auto max = read_small_file((dir / "cpu.max").c_str())) {
      found_any = true;
      if (const auto here = cpus_from_cgroup2_cpu_max(*max)) cpus = cpus ? std::min(*cpus, *here) : *here;
    }
    if (dir == "/sys/fs/cgroup" || dir == dir.parent_path()) return found_any ? cpus : std::nullopt;
  }
}

std::optional<unsigned> cgroup_cpus() {
  if (const auto v2 = cgroup2_cpus()) return v2;
  if (std::filesystem::exists("/sys/fs/cgroup/cgroup.controllers")) return std::nullopt;  // v2, no quota
  for (const char* dir : {"/sys/fs/cgroup/cpu/", "/sys/fs/cgroup/cpu,cpuacct/"}) {
    const auto quota = read_small_file((std::string(dir) + "cpu.cfs_quota_us").c_str());
    const auto period = read_small_file((std::string(dir) + "cpu.cfs_period_us").c_str());
    if (quota && period) return cpus_from_cgroup1_cfs(*quota, *period);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> cgroup2_path(std::string_view proc_self_cgroup) {
  while (!proc_self_cgroup.empty()) {
    const auto eol = proc_self_cgroup.find('\n');
    const std::string_view line = proc_self_cgroup.substr(0, eol);
    if (line.starts_with("0::/")) return std::string(trim(line.substr(3)));
    if (eol == std::string_view::npos) break;
    proc_self_cgroup.remove_prefix(eol + 1);
  }
  return std::nullopt;
}

std::optional<unsigned> cpus_from_cgroup2_cpu_max(std::string_view contents) {
  contents = trim(contents);
  const auto space = contents.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto quota = parse_whole<std::int64_t>(contents.substr(0, space));
  const auto period = parse_whole<std::int64_t>(contents.substr(space + 1));
  if (!quota || !period) return std::nullopt;  // "max": no quota
  return cpus_from_quota(*quota, *period);
}

std::optional<unsigned> cpus_from_cgroup1_cfs(std::string_view quota_us, std::string_view period_us) {
  const auto quota = parse_whole<std::int64_t>(quota_us);
  const auto period = parse_whole<std::int64_t>(period_us);
  if (!quota || !period) return std::nullopt;
  return cpus_from_quota(*quota, *period);
}

unsigned parse_num_threads(std::string_view value) {
  const auto threads = parse_whole<unsigned>(value);
  if (!threads || *threads < 1 || *threads > kMaxCpuThreads)
    throw Error(ErrorCode::invalid_argument, "MLPCORE_NUM_THREADS='" + std::string(value) + "'", "",
                "expected a whole number from 1 to " + std::to_string(kMaxCpuThreads));
  return *threads;
}

unsigned available_cpus() {
  const unsigned cpus = affinity_cpus();
  const auto quota = cgroup_cpus();
  return quota ? std::max(1u, std::min(cpus, *quota)) : cpus;
}

unsigned cpu_threads(unsigned requested) {
  if (requested > kMaxCpuThreads)
    throw Error(ErrorCode::invalid_argument, "threads", "", std::to_string(requested) + " is more than " + std::to_string(kMaxCpuThreads));
  if (requested != 0) return requested;
  if (const char* env = std::getenv("MLPCORE_NUM_THREADS")) return parse_num_threads(env);
  return available_cpus();
}

}  // namespace mlpcore::detail
