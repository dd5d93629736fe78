#include "runtime/Workers.h"

#include "runtime/Fork.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace ptxjit::runtime {

struct Workers::State {
  std::mutex runMutex; // one run at a time
  std::mutex mutex;    // guards the fields below
  // One per worker, so that a run wakes only the workers it needs (a staging wave needs three of
  // the fifteen on a 16-thread host).
  std::unique_ptr<std::condition_variable[]> wake;
  std::condition_variable done;
  const std::function<void(unsigned)> *task = nullptr;
  uint64_t generation = 0;
  unsigned helpers = 0;
  unsigned pending = 0;
  std::vector<std::thread> threads;

  explicit State(unsigned workers) : wake(new std::condition_variable[workers]) {}

  // Worker `index` (lane index + 1) runs the task of every run that asks for that many helpers.
  void loop(unsigned index) {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      wake[index].wait(lock, [&] { return generation != seen && index < helpers; });
      seen = generation;
      const std::function<void(unsigned)> *t = task;
      lock.unlock();
      (*t)(index + 1);
      lock.lock();
      if (--pending == 0)
        done.notify_all();
    }
  }
};

namespace {

unsigned configuredParallelism() {
  if (const char *env = std::getenv("PTXJIT_HOST_THREADS"); env && *env) {
    char *end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end && *end == '\0' && v >= 1)
      return static_cast<unsigned>(std::min<long>(v, 1024));
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? hw : 1;
}

std::atomic<Workers *> gWorkers{nullptr};
std::mutex *gWorkersMutex = new std::mutex;

// After fork() the child has none of the parent's workers: it starts its own.
void forgetWorkersInChild() {
  gWorkers.store(nullptr, std::memory_order_relaxed); // the parent's are unusable here (leaked)
  gWorkersMutex = new std::mutex;                     // the old one may have been held at fork
}

// Registered at static initialization (runtime/Fork.h).
[[maybe_unused]] const bool gForkHandlerRegistered = [] {
  onForkChild(forgetWorkersInChild);
  return true;
}();

} // namespace

Workers::Workers(unsigned workers) : state_(new State(workers)) {
  state_->threads.reserve(workers);
  for (unsigned i = 0; i < workers; ++i) {
    try {
      state_->threads.emplace_back([s = state_, i] { s->loop(i); });
    } catch (const std::system_error &) {
      break; // run with the workers that did start (possibly none)
    }
  }
}

Workers &Workers::get() {
  if (Workers *w = gWorkers.load(std::memory_order_acquire)) [[likely]]
    return *w;
  std::lock_guard<std::mutex> lock(*gWorkersMutex);
  if (Workers *w = gWorkers.load(std::memory_order_acquire))
    return *w;
  auto *w = new Workers(configuredParallelism() - 1);
  gWorkers.store(w, std::memory_order_release);
  return *w;
}

unsigned Workers::count() const noexcept { return static_cast<unsigned>(state_->threads.size()); }

void Workers::run(unsigned lanes, const std::function<void(unsigned)> &task) {
  State &s = *state_;
  const unsigned helpers = lanes ? std::min(lanes - 1, count()) : 0;
  if (helpers == 0) {
    for (unsigned lane = 0; lane < lanes; ++lane)
      task(lane);
    return;
  }
  std::lock_guard<std::mutex> runLock(s.runMutex);
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.task = &task;
    s.helpers = helpers;
    s.pending = helpers;
    ++s.generation;
  }
  for (unsigned i = 0; i < helpers; ++i)
    s.wake[i].notify_one();
  task(0);
  for (unsigned lane = helpers + 1; lane < lanes; ++lane)
    task(lane);
  std::unique_lock<std::mutex> lock(s.mutex);
  s.done.wait(lock, [&] { return s.pending == 0; });
  s.task = nullptr;
}

} // namespace ptxjit::runtime
