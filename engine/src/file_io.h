#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

namespace mlpcore {

// Reads a whole regular file of at most max_bytes. Refuses directories, devices and pipes (which could
// block forever) and oversized files before allocating; errors name the path.
std::vector<std::byte> read_file(const std::filesystem::path& path, std::uint64_t max_bytes);

// Writes a regular file (new, or through symbolic links the file they name) to a unique temporary file
// beside it, synced, and renames that over it: an existing file survives any failure and keeps its
// permissions; a file this process may not write is refused. A device or pipe (/dev/full, a FIFO) is
// written in place, and the process's own descriptors (/dev/stdout, /dev/fd/N) are written directly.
// Every write is checked: errors name the path and why.
void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes);

}  // namespace mlpcore
