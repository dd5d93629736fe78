#include "runtime/DriverJobs.h"

#include "runtime/Fork.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <system_error>
#include <thread>

namespace ptxjit::runtime {
namespace {

constexpr int kJobs = static_cast<int>(DriverJob::Count);

// Never destroyed: the exit handler joins the threads.
struct Threads {
  struct Slot {
    std::mutex mutex; // held to start or join the thread; the thread never takes it
    std::thread thread;
  } slots[kJobs];
  std::mutex atexitMutex;
  bool atexitRegistered = false;
};
std::atomic<Threads *> gThreads{new Threads};

Threads::Slot &slotOf(DriverJob job) {
  return gThreads.load(std::memory_order_acquire)->slots[static_cast<int>(job)];
}

void joinAll() {
  for (int j = 0; j < kJobs; ++j)
    joinDriverJob(static_cast<DriverJob>(j));
}

// The parent's threads are not in the child, so the exit handler must not join them there. The
// old state is leaked (destroying a joinable std::thread would terminate the process); the exit
// handler the parent registered stays registered in the child and finds nothing to join.
void forgetInChild() {
  auto *fresh = new Threads;
  fresh->atexitRegistered = true;
  gThreads.store(fresh, std::memory_order_release);
}

[[maybe_unused]] const bool gForkHandlerRegistered = [] {
  onForkChild(forgetInChild);
  return true;
}();

} // namespace

bool startDriverJob(DriverJob job, std::function<void()> work) {
  Threads &all = *gThreads.load(std::memory_order_acquire);
  Threads::Slot &slot = all.slots[static_cast<int>(job)];
  std::lock_guard<std::mutex> lock(slot.mutex);
  if (slot.thread.joinable())
    slot.thread.join();
  {
    std::lock_guard<std::mutex> atexitLock(all.atexitMutex);
    if (!all.atexitRegistered) {
      std::atexit(joinAll);
      all.atexitRegistered = true;
    }
  }
  try {
    slot.thread = std::thread(std::move(work));
  } catch (const std::system_error &) {
    return false;
  }
  return true;
}

void joinDriverJob(DriverJob job) {
  Threads::Slot &slot = slotOf(job);
  std::lock_guard<std::mutex> lock(slot.mutex);
  if (slot.thread.joinable())
    slot.thread.join();
}

} // namespace ptxjit::runtime
