#include "engine/src/host_memory.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace mlpcore::detail {
namespace {

template <class Call>
ssize_t retried(Call call) {
  ssize_t n;
  do n = call();
  while (n < 0 && errno == EINTR);
  return n;
}

// Each calling thread's pipe (two descriptors, closed with the thread), kept for its calls: a probe
// costs three system calls (with getpid), not seven. Non-blocking, so that emptying it returns once it is empty. A
// forked child opens its own: it would share its parent's, and read the parent's bytes.
class ProbePipe {
 public:
  ~ProbePipe() { close(); }

  // Whether the pipe is open for process `pid`, opening it if not.
  bool open_for(pid_t pid) {
    if (pid_ == pid) return fd_[0] >= 0;
    close();
    pid_ = pid;
    if (::pipe2(fd_, O_CLOEXEC | O_NONBLOCK) != 0) fd_[0] = fd_[1] = -1;
    return fd_[0] >= 0;
  }

  // The bytes at `a` and `b` into the pipe and back: writev() reads them, readv() stores them (for
  // read_write: each gets its own value back). The kernel checks the pages and answers EFAULT, or
  // copies fewer bytes, where the host cannot; nothing faults in this process. Any other failure leaves
  // the question open: true.
  bool round_trip(char* a, char* b, HostAccess access) const {
    const iovec out[2] = {{a, 1}, {b, 1}};
    const ssize_t written = retried([&] { return ::writev(fd_[1], out, 2); });
    if (written < 0) return errno != EFAULT;
    const bool store = written == 2 && access == HostAccess::read_write;
    char sink[2];
    iovec back[2] = {{store ? a : sink, 1}, {store ? b : sink + 1, 1}};
    const ssize_t stored = retried([&] { return ::readv(fd_[0], back, static_cast<int>(written)); });
    const bool open_question = stored < 0 && errno != EFAULT;
    if (stored != written)  // a store failed: empty the pipe of what it left
      while (retried([&] { return ::read(fd_[0], sink, sizeof sink); }) > 0) {
      }
    if (written < 2) return false;
    return stored == 2 || open_question;
  }

 private:
  void close() {
    for (int& fd : fd_) {
      if (fd >= 0) ::close(fd);
      fd = -1;
    }
  }

  pid_t pid_ = 0;
  int fd_[2] = {-1, -1};
};

}  // namespace

bool host_can_access(const void* p, std::size_t bytes, HostAccess access) {
  const auto first = reinterpret_cast<std::uintptr_t>(p);
  if (first > UINTPTR_MAX - (bytes - 1)) return false;  // past the end of the address space
  thread_local ProbePipe pipe;
  if (!pipe.open_for(::getpid())) return true;
  char* a = const_cast<char*>(static_cast<const char*>(p));
  return pipe.round_trip(a, a + (bytes - 1), access);
}

}  // namespace mlpcore::detail
