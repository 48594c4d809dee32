#include "engine/src/file_io.h"

#include <cerrno>
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

// Writes all bytes to an open descriptor and closes it; false (errno set) on any failure, a short write
// to a full disk and a failing close included.
bool write_all_and_close(int fd, std::span<const std::byte> bytes) {
  const auto* p = reinterpret_cast<const char*>(bytes.data());
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int saved = n == 0 ? ENOSPC : errno;
      ::close(fd);
      errno = saved;
      return false;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return ::close(fd) == 0;
}

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw Error(ErrorCode::io, where, "", what + ": " + std::strerror(errno));
}

}  // namespace

void write_file_atomically(const fs::path& path, std::span<const std::byte> bytes) {
  const std::string where = path.string();
  std::error_code ec;
  const auto status = fs::status(path, ec);  // follows symbolic links
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    // A device or pipe (/dev/stdout, /dev/full, a FIFO) cannot be replaced: write into it.
    if (fs::is_directory(status)) throw Error(ErrorCode::io, where, "", "is a directory");
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail(where, "cannot open");
    if (!write_all_and_close(fd, bytes)) fail(where, "write failed");
    return;
  }
  // Through a symbolic link the file it names is replaced, not the link.
  const fs::path target = fs::weakly_canonical(path, ec);
  if (ec) throw Error(ErrorCode::io, where, "", "cannot resolve the path: " + ec.message());
  fs::path tmp = target;
  tmp += ".tmp-" + std::to_string(::getpid());
  const mode_t mode = fs::exists(status) ? static_cast<mode_t>(status.permissions()) & 07777 : 0666;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) fail(where, "cannot create " + tmp.string());
  if (!write_all_and_close(fd, bytes)) {
    const int saved = errno;
    fs::remove(tmp, ec);
    errno = saved;
    fail(where, "write failed");
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int saved = errno;
    fs::remove(tmp, ec);
    errno = saved;
    fail(where, "cannot replace");
  }
}

}  // namespace mlpcore
