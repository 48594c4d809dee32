#pragma once
// A fixed set of worker threads, started once and reused: run() hands out the indices 0..count-1 of one
// parallel loop to the workers and the calling thread. Any number of threads may call run() at once; their
// loops share the workers, first come first served, and each caller works on its own loop meanwhile, so a
// caller never waits on a busy pool without making progress.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mlpcore::detail {

class ThreadPool {
 public:
  // threads: the threads a run() uses, the caller included (threads - 1 workers).
  explicit ThreadPool(unsigned threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned threads() const noexcept { return static_cast<unsigned>(workers_.size()) + 1; }

  // Calls task(i) once for every i < count, then returns; rethrows the first exception a task threw.
  void run(std::size_t count, const std::function<void(std::size_t)>& task);

 private:
  struct Loop {
    const std::function<void(std::size_t)>* task;
    std::size_t count;
    std::size_t next = 0;      // the next index to hand out
    std::size_t finished = 0;  // indices done; the Loop is not touched by workers once it equals count
    std::exception_ptr error;
  };

  void work();
  void stop();  // wakes and joins every worker
  // Takes the next index of `loop` (the lock held); the loop leaves the queue with its last index.
  std::size_t claim(Loop& loop);
  // Runs one index without the lock, then counts it done under it.
  void execute(Loop& loop, std::size_t index, std::unique_lock<std::mutex>& lock);

  std::mutex mutex_;
  std::condition_variable work_ready_, loop_done_;
  std::deque<Loop*> queue_;  // loops with indices left to hand out
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace mlpcore::detail
