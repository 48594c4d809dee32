#include "engine/src/file_io.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string_view>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

#include "mlpcore/error.h"

namespace mlpcore {

namespace fs = std::filesystem;

namespace {

// The process's umask, read from /proc/self/status: umask() itself can only be read by changing it, which
// would race with other threads creating files. 022 where /proc does not say.
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("Umask:")) return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
  return 022;
}

}  // namespace

std::vector<std::byte> read_file(const fs::path& path, std::uint64_t max_bytes) {
  const std::string where = path.string();
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) throw Error(ErrorCode::io, where, "", "no such file");
  if (!fs::is_regular_file(status)) throw Error(ErrorCode::io, where, "", "not a regular file");
  const auto size = fs::file_size(path, ec);
  if (ec) throw Error(ErrorCode::io, where, "", "cannot read its size: " + ec.message());
  if (size > max_bytes)
    throw Error(ErrorCode::file_too_large, where, "", std::to_string(size) + " bytes exceed the limit of " + std::to_string(max_bytes));

  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::io, where, "", std::string("cannot open: ") + std::strerror(errno));
  std::vector<std::byte> bytes(static_cast<std::size_t>(size));
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (static_cast<std::uint64_t>(in.gcount()) != size) throw Error(ErrorCode::io, where, "", "file changed size while being read");
  return bytes;
}

namespace {

// Writes all bytes to an open descriptor; false (errno set) on any failure, a short write to a full disk
// included.
bool write_all(int fd, std::span<const std::byte> bytes) {
  const auto* p = reinterpret_cast<const char*>(bytes.data());
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

[[noreturn]] void fail(const std::string& where, const std::string& what, int error = errno) {
  throw Error(ErrorCode::io, where, "", what + ": " + std::strerror(error));
}

// The descriptor a path names when it is one of this process's own (/dev/stdout, /dev/fd/1,
// /proc/self/fd/1, ...): reopening it would start at offset 0 of whatever it points to, and replacing it
// would replace that file. -1 for any other path.
int own_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (!path.starts_with(prefix)) continue;
    int fd = -1;
    const auto digits = std::string_view(path).substr(prefix.size());
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
    if (ec == std::errc() && end == digits.data() + digits.size()) return fd;
  }
  return -1;
}

// Where a write through `path` lands: the file a symbolic link names, even a link to a file not yet there.
fs::path write_target(const fs::path& path, const std::string& where) {
  std::error_code ec;
  fs::path target = path;
  for (int hops = 0; fs::is_symlink(fs::symlink_status(target, ec)); ++hops) {
    if (hops == 40) throw Error(ErrorCode::io, where, "", "too many levels of symbolic links");
    const fs::path next = fs::read_symlink(target, ec);
    if (ec) fail(where, "cannot read the link", ec.value());
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  return target;
}

}  // namespace

void write_file_atomically(const fs::path& path, std::span<const std::byte> bytes) {
  const std::string where = path.string();
  if (const int fd = own_descriptor(path.lexically_normal().string()); fd >= 0) {
    if (!write_all(fd, bytes)) fail(where, "write failed");
    return;
  }
  std::error_code ec;
  const auto status = fs::status(path, ec);  // follows symbolic links
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    // A device or pipe (/dev/full, a FIFO) cannot be replaced: write into it.
    if (fs::is_directory(status)) throw Error(ErrorCode::io, where, "", "is a directory");
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail(where, "cannot open");
    const bool written = write_all(fd, bytes);
    const int error = errno;
    if (::close(fd) != 0 || !written) fail(where, "write failed", written ? errno : error);
    return;
  }
  const fs::path target = write_target(path, where);
  if (fs::exists(status) && ::access(target.c_str(), W_OK) != 0) fail(where, "cannot replace it");
  // A hidden, unique name beside the target (same file system, so the rename is atomic).
  fs::path tmp = target;
  tmp.replace_filename(".tmp-XXXXXX-");
  tmp += target.filename();
  std::string tmp_name = tmp.string();
  const int suffix = static_cast<int>(target.filename().string().size() + 1);
  const int fd = ::mkostemps(tmp_name.data(), suffix, O_CLOEXEC);
  if (fd < 0) fail(where, "cannot create a temporary file in " + target.parent_path().string());
  // Data on disk before the rename, so a crash leaves the old file or the new one, never a torn one.
  const mode_t mode = fs::exists(status) ? static_cast<mode_t>(status.permissions()) & 07777 : 0666 & ~current_umask();
  const bool written = ::fchmod(fd, mode) == 0 && write_all(fd, bytes) && ::fsync(fd) == 0;
  const int error = errno;
  if (::close(fd) != 0 || !written || ::rename(tmp_name.c_str(), target.c_str()) != 0) {
    const int saved = written ? errno : error;
    ::unlink(tmp_name.c_str());
    fail(where, "write failed", saved);
  }
  const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  if (const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir_fd >= 0) {
    ::fsync(dir_fd);  // the rename itself; best effort, some file systems refuse it
    ::close(dir_fd);
  }
}

}  // namespace mlpcore
