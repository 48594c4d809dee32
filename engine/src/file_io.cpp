#include "engine/src/file_io.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <system_error>
#include <unistd.h>

#include "mlpcore/error.h"

namespace mlpcore {

std::vector<std::byte> read_file(const std::filesystem::path& path, std::uint64_t max_bytes) {
  const std::string where = path.string();
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw Error(ErrorCode::io, where, "", "no such file");
  if (!std::filesystem::is_regular_file(status)) throw Error(ErrorCode::io, where, "", "not a regular file");
  const auto size = std::filesystem::file_size(path, ec);
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

void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  const std::string where = path.string();
  std::filesystem::path tmp = path;
  tmp += ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(ErrorCode::io, where, "", std::string("cannot create: ") + std::strerror(errno));
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      throw Error(ErrorCode::io, where, "", "write failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw Error(ErrorCode::io, where, "", "cannot replace: " + ec.message());
  }
}

}  // namespace mlpcore
