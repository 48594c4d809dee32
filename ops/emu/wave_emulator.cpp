#include "ops/emu/wave_emulator.h"

#include <sys/mman.h>

#include <array>
#include <exception>
#include <memory>
#include <vector>

#include "ops/emu/fiber_context.h"

#if defined(__SANITIZE_ADDRESS__)
#define MLPCORE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MLPCORE_ASAN 1
#endif
#endif
#ifndef MLPCORE_ASAN
#define MLPCORE_ASAN 0
#endif
#if MLPCORE_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

namespace mlpcore::emu {
namespace {

constexpr std::size_t kStackBytes = 512 * 1024;  // lazily committed; sanitizer frames are large

enum class State { runnable, at_collective, at_barrier, done };

struct Stack {
  void* base = nullptr;
  Stack() {
    base = ::mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) throw EmulatorError("wave emulator: cannot allocate a fiber stack");
  }
  ~Stack() {
#if MLPCORE_ASAN
    __asan_unpoison_memory_region(base, kStackBytes);  // so that a later mapping here starts clean
#endif
    ::munmap(base, kStackBytes);
  }
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;
};

struct Fiber {
  FiberContext context;
  Dim3 thread;
  unsigned linear = 0;
  State state = State::runnable;
  const char* op_name = nullptr;
  CollectiveFn op = nullptr;
  const void* in = nullptr;
  void* out = nullptr;
  std::exception_ptr error;
  void* fake_stack = nullptr;  // AddressSanitizer's bookkeeping for this fiber
};

class BlockRunner;
thread_local BlockRunner* g_runner = nullptr;

class BlockRunner {
 public:
  BlockRunner(Dim3 grid, Dim3 block, unsigned wave, const std::function<void()>& body, ChipNumerics numerics)
      : grid_(grid), block_(block), wave_(wave), numerics_(numerics), body_(body), fibers_(block.count()) {
    for (std::size_t i = 0; i < fibers_.size(); ++i) stacks_.push_back(std::make_unique<Stack>());
  }

  void run_block(Dim3 block_index) {
    block_index_ = block_index;
    for (unsigned i = 0; i < fibers_.size(); ++i) {
      Fiber& f = fibers_[i];
      f = Fiber{};
      f.linear = i;
      f.thread = {i % block_.x, (i / block_.x) % block_.y, i / (block_.x * block_.y)};
#if MLPCORE_ASAN
      // The last fiber on this stack left its frames' redzones poisoned: it never returned.
      __asan_unpoison_memory_region(stacks_[i]->base, kStackBytes);
#endif
      make_fiber(f.context, stacks_[i]->base, kStackBytes, &BlockRunner::entry);
    }
    for (;;) {
      bool progressed = false;
      for (auto& f : fibers_) {
        if (f.state != State::runnable) continue;
        resume(f);
        progressed = true;
        if (f.error) std::rethrow_exception(f.error);
      }
      progressed |= complete_collectives();
      progressed |= release_barrier();
      if (all_done()) return;
      if (!progressed) throw EmulatorError("wave emulator: deadlock in block " + coords(block_index_) + ": " + describe_waiting());
    }
  }

  Fiber& current() {
    if (!current_) throw EmulatorError("wave emulator: device function called outside a running kernel");
    return *current_;
  }
  Dim3 grid() const { return grid_; }
  Dim3 block() const { return block_; }
  Dim3 block_index() const { return block_index_; }
  unsigned wave() const { return wave_; }
  const ChipNumerics& numerics() const { return numerics_; }

  // Called on a fiber: park it in `state` and return to the scheduler.
  void park(State state) {
    Fiber& f = *current_;
    f.state = state;
    switch_to_scheduler(f, false);
  }

 private:
  static void entry() {
    BlockRunner& r = *g_runner;
    Fiber& f = *r.current_;
#if MLPCORE_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &r.main_stack_bottom_, &r.main_stack_size_);
#endif
    try {
      r.body_();
    } catch (...) {
      f.error = std::current_exception();
    }
    f.state = State::done;
    r.switch_to_scheduler(f, true);
  }

  void resume(Fiber& f) {
    current_ = &f;
    g_runner = this;
#if MLPCORE_ASAN
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, stacks_[f.linear]->base, kStackBytes);
#endif
    switch_fiber(scheduler_, f.context);
#if MLPCORE_ASAN
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
    current_ = nullptr;
  }

  void switch_to_scheduler(Fiber& f, bool finished) {
#if MLPCORE_ASAN
    __sanitizer_start_switch_fiber(finished ? nullptr : &f.fake_stack, main_stack_bottom_, main_stack_size_);
#endif
    switch_fiber(f.context, scheduler_);
#if MLPCORE_ASAN
    __sanitizer_finish_switch_fiber(f.fake_stack, &main_stack_bottom_, &main_stack_size_);
#endif
    (void)finished;
  }

  bool complete_collectives() {
    bool any = false;
    for (std::size_t first = 0; first < fibers_.size(); first += wave_) {
      const std::size_t end = std::min<std::size_t>(first + wave_, fibers_.size());
      const Fiber* waiting = nullptr;
      bool all_there = true;
      for (std::size_t i = first; i < end; ++i) {
        if (fibers_[i].state == State::at_collective) waiting = &fibers_[i];
        else all_there = false;
      }
      if (!waiting) continue;
      if (end - first != wave_)
        throw EmulatorError(std::string("wave emulator: ") + waiting->op_name + " in a partial wave of " + std::to_string(end - first) +
                            " lanes (block size is not a multiple of the wave size " + std::to_string(wave_) + ")");
      for (std::size_t i = first; i < end; ++i) {
        const Fiber& f = fibers_[i];
        if (f.state == State::done)
          throw EmulatorError(std::string("wave emulator: lane ") + std::to_string(i - first) + " returned while its wave waits at " +
                              waiting->op_name + ": cross-lane operations need every lane of the wave");
      }
      if (!all_there) continue;  // some lanes are still running or at a barrier
      std::array<const void*, 64> in{};
      std::array<void*, 64> out{};
      for (std::size_t i = first; i < end; ++i) {
        const Fiber& f = fibers_[i];
        if (f.op != waiting->op)
          throw EmulatorError(std::string("wave emulator: lanes of one wave reached different cross-lane operations (") + f.op_name +
                              ", " + waiting->op_name + ")");
        in[i - first] = f.in;
        out[i - first] = f.out;
      }
      waiting->op({in.data(), wave_}, {out.data(), wave_});
      for (std::size_t i = first; i < end; ++i) fibers_[i].state = State::runnable;
      any = true;
    }
    return any;
  }

  bool release_barrier() {
    bool someone = false;
    for (const auto& f : fibers_) {
      if (f.state == State::runnable || f.state == State::at_collective) return false;
      someone |= f.state == State::at_barrier;
    }
    for (auto& f : fibers_)
      if (f.state == State::at_barrier) f.state = State::runnable;
    return someone;
  }

  bool all_done() const {
    for (const auto& f : fibers_)
      if (f.state != State::done) return false;
    return true;
  }

  static std::string coords(Dim3 d) { return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")"; }

  std::string describe_waiting() const {
    std::string s;
    for (const auto& f : fibers_) {
      if (f.state == State::done) continue;
      s += "thread " + std::to_string(f.linear) + (f.state == State::at_barrier ? " at barrier; " : std::string(" at ") + f.op_name + "; ");
      if (s.size() > 400) return s + "...";
    }
    return s;
  }

  Dim3 grid_, block_, block_index_;
  unsigned wave_;
  ChipNumerics numerics_;
  const std::function<void()>& body_;
  std::vector<Fiber> fibers_;
  std::vector<std::unique_ptr<Stack>> stacks_;
  FiberContext scheduler_;
  Fiber* current_ = nullptr;
  const void* main_stack_bottom_ = nullptr;
  std::size_t main_stack_size_ = 0;
};

BlockRunner& runner() {
  if (!g_runner) throw EmulatorError("wave emulator: device function called outside emu::launch");
  return *g_runner;
}

}  // namespace

void launch(Dim3 grid, Dim3 block, unsigned wave_size, const std::function<void()>& body, ChipNumerics numerics) {
  if (wave_size != 32 && wave_size != 64) throw EmulatorError("wave emulator: wave size must be 32 or 64");
  if (block.count() == 0 || block.count() > 1024 || grid.count() == 0)
    throw EmulatorError("wave emulator: block must have 1..1024 threads and the grid at least one block");
  if (g_runner) throw EmulatorError("wave emulator: launch from inside a kernel");
  BlockRunner r(grid, block, wave_size, body, numerics);
  struct Reset {
    ~Reset() { g_runner = nullptr; }
  } reset;
  g_runner = &r;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) r.run_block({x, y, z});
}

Dim3 thread_idx() { return runner().current().thread; }
Dim3 block_idx() { return runner().block_index(); }
Dim3 block_dim() { return runner().block(); }
Dim3 grid_dim() { return runner().grid(); }
unsigned lane_id() { return runner().current().linear % runner().wave(); }
unsigned wave_size() { return runner().wave(); }
const ChipNumerics& chip_numerics() { return runner().numerics(); }

void barrier() { runner().park(State::at_barrier); }

void wave_barrier() {
  wave_collective("wave barrier", [](std::span<const void* const>, std::span<void* const>) {}, nullptr, nullptr);
}

void trap(const char* why) { throw EmulatorError(std::string("device trap: ") + why); }

namespace {
struct UniformValue {
  unsigned value;
  bool agreed;
};
}  // namespace

unsigned wave_uniform(unsigned v) {
  UniformValue out{};
  wave_collective(
      "wave-uniform value",
      [](std::span<const void* const> in, std::span<void* const> outs) {
        const unsigned first = *static_cast<const unsigned*>(in[0]);
        bool agreed = true;
        for (const void* lane : in) agreed = agreed && *static_cast<const unsigned*>(lane) == first;
        for (void* lane : outs) *static_cast<UniformValue*>(lane) = {first, agreed};
      },
      &v, &out);
  if (!out.agreed) trap("a value read as warp-uniform differs between the wave's lanes");
  return out.value;
}

void wave_collective(const char* name, CollectiveFn execute, const void* in, void* out) {
  BlockRunner& r = runner();
  Fiber& f = r.current();
  f.op_name = name;
  f.op = execute;
  f.in = in;
  f.out = out;
  r.park(State::at_collective);
}

}  // namespace mlpcore::emu
