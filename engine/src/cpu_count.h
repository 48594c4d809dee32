#pragma once
// How many threads the cpu backend runs: what the caller asks for, else MLPCORE_NUM_THREADS, else the CPUs
// this process may really use (its affinity mask and its cgroup's CPU quota, which containers set and
// std::thread::hardware_concurrency() ignores).
#include <optional>
#include <string>
#include <string_view>

#include "mlpcore/network.h"  // kMaxCpuThreads

namespace mlpcore::detail {

// The process's cgroup v2 path ("/user.slice/x.scope") from /proc/self/cgroup's "0::" line; nullopt
// without one (cgroup v1 only).
std::optional<std::string> cgroup2_path(std::string_view proc_self_cgroup);
// CPUs granted by a cgroup v2 cpu.max file ("$QUOTA $PERIOD" or "max $PERIOD"): quota / period rounded
// up; nullopt when unlimited or malformed.
std::optional<unsigned> cpus_from_cgroup2_cpu_max(std::string_view contents);
// The same from cgroup v1's cpu.cfs_quota_us (-1: unlimited) and cpu.cfs_period_us contents.
std::optional<unsigned> cpus_from_cgroup1_cfs(std::string_view quota_us, std::string_view period_us);

// MLPCORE_NUM_THREADS's value: a whole number from 1 to kMaxCpuThreads, else Error(invalid_argument).
unsigned parse_num_threads(std::string_view value);

// CPUs in this process's affinity mask, at most its cgroup CPU quota (v2, else v1); at least 1.
unsigned available_cpus();

// `requested` when non-zero (Error(invalid_argument) above kMaxCpuThreads), else MLPCORE_NUM_THREADS
// when set, else available_cpus().
unsigned cpu_threads(unsigned requested);

}  // namespace mlpcore::detail
