#include "engine/src/host_memory.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace mlpcore::detail {
namespace {

class Pipe {
 public:
  Pipe() {
    if (::pipe2(fd_, O_CLOEXEC) != 0) fd_[0] = fd_[1] = -1;
  }
  ~Pipe() {
    for (const int fd : fd_)
      if (fd >= 0) ::close(fd);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;

  bool open() const { return fd_[0] >= 0; }

  // The byte at `p` into the pipe and back: write() reads it, read() stores it. EFAULT where the host
  // cannot (the kernel checks the page's permissions; nothing faults in this process).
  bool round_trip(const char* p, HostAccess access) const {
    if (retry([&] { return ::write(fd_[1], p, 1); }) != 1) return false;
    char sink = 0;
    char* back = access == HostAccess::read_write ? const_cast<char*>(p) : &sink;
    if (retry([&] { return ::read(fd_[0], back, 1); }) == 1) return true;
    retry([&] { return ::read(fd_[0], &sink, 1); });  // empty the pipe for the next probe
    return false;
  }

 private:
  template <class Call>
  static ssize_t retry(Call call) {
    ssize_t n;
    do n = call();
    while (n < 0 && errno == EINTR);
    return n;
  }

  int fd_[2];
};

}  // namespace

bool host_can_access(const void* p, std::size_t bytes, HostAccess access) {
  const Pipe pipe;
  if (!pipe.open()) return true;
  const char* first = static_cast<const char*>(p);
  return pipe.round_trip(first, access) && pipe.round_trip(first + (bytes - 1), access);
}

}  // namespace mlpcore::detail
