#include "engine/src/thread_pool.h"

#include <algorithm>

namespace mlpcore::detail {

ThreadPool::ThreadPool(unsigned threads) {
  try {
    for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
  } catch (...) {
    stop();  // the destructor does not run for a half-built pool: join what started
    throw;
  }
}

ThreadPool::~ThreadPool() { stop(); }

void ThreadPool::stop() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (auto& w : workers_) w.join();
}

std::size_t ThreadPool::claim(Loop& loop) {
  const std::size_t index = loop.next++;
  if (loop.next == loop.count) queue_.erase(std::find(queue_.begin(), queue_.end(), &loop));
  return index;
}

void ThreadPool::execute(Loop& loop, std::size_t index, std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  std::exception_ptr error;
  try {
    (*loop.task)(index);
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  if (error && !loop.error) loop.error = error;
  if (++loop.finished == loop.count) loop_done_.notify_all();
}

void ThreadPool::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Loop& loop = *queue_.front();
    execute(loop, claim(loop), lock);
  }
}

void ThreadPool::run(std::size_t count, const std::function<void(std::size_t)>& task) {
  if (count == 0) return;
  if (workers_.empty() || count == 1) {
    for (std::size_t i = 0; i < count; ++i) task(i);
    return;
  }
  Loop loop{&task, count, 0, 0, nullptr};
  std::unique_lock lock(mutex_);
  queue_.push_back(&loop);
  work_ready_.notify_all();
  while (loop.next < loop.count) execute(loop, claim(loop), lock);
  loop_done_.wait(lock, [&] { return loop.finished == loop.count; });
  if (loop.error) std::rethrow_exception(loop.error);
}

}  // namespace mlpcore::detail
