#pragma once
// Whether this process can read or write a buffer from the host: the host backends (cpu, emu-*) check
// the buffers they are given, so that a GPU device pointer (on most systems mapped without host access)
// or an unmapped one gets an error instead of a crash. Vendor-neutral: the kernel copies the bytes
// through a pipe and reports EFAULT where the host cannot touch them. Only a buffer's first and last
// bytes are probed. Device memory the host has mapped (large-BAR or coherent systems) passes.
#include <cstddef>

namespace mlpcore::detail {

enum class HostAccess { read, read_write };

// False if the first or last of `bytes` (>= 1) bytes at `p` cannot be read (for read_write: or
// written; a written byte gets its own value back), or the buffer would pass the end of the address
// space. True where the probe cannot run (no pipe).
bool host_can_access(const void* p, std::size_t bytes, HostAccess access);

}  // namespace mlpcore::detail
