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

// Writes a regular file (new, or through a symbolic link the file it names) to "<file>.tmp-<pid>" and
// renames that over it, so an existing file survives any failure and keeps its permissions. A device or
// pipe (/dev/stdout, /dev/full) is written in place. Every write is checked: errors name the path and why.
void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes);

}  // namespace mlpcore
