#include "compiler/Disposal.h"

#include "runtime/Fork.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

namespace ptxjit::compiler {
namespace {

/// The queue, guarded by gMutex. Both live as long as the process (never destroyed: the exit
/// handler runs before static destructors would). gMutex is a fork leaf lock (registered
/// below), so that a child finds the queue whole.
std::mutex gMutex;
std::deque<std::shared_ptr<void>> *gQueue = new std::deque<std::shared_ptr<void>>;

/// The thread serving the queue and what it waits on, guarded by gMutex. Never destroyed; the
/// child of a fork() gets a fresh one (forgetThreadInChild): the parent's thread is not there,
/// and its condition variables may count waiters that are not there either.
struct Disposer {
  std::condition_variable wake, idle;
  std::thread *thread = nullptr; ///< null until started; leaked (a joinable thread terminates)
  size_t busy = 0;               ///< items taken off the queue and not yet destroyed
  bool stopping = false;         ///< set at exit: drain the queue, then end
};

std::atomic<Disposer *> gDisposer{new Disposer};
Disposer &disposer() { return *gDisposer.load(std::memory_order_acquire); }

/// Held while the thread destroys an item: fork() waits for it (registered below), so that a
/// child never inherits a lock LLVM's destructors held at that moment (the target machine pool's).
std::mutex gDestroying;

void serve(Disposer &d) {
  std::unique_lock<std::mutex> lock(gMutex);
  for (;;) {
    d.wake.wait(lock, [&] { return !gQueue->empty() || d.stopping; });
    if (gQueue->empty())
      return; // stopping, everything destroyed
    std::shared_ptr<void> garbage = std::move(gQueue->front());
    gQueue->pop_front();
    ++d.busy;
    lock.unlock();
    {
      std::lock_guard<std::mutex> destroying(gDestroying);
      garbage.reset();
    }
    lock.lock();
    if (--d.busy == 0 && gQueue->empty())
      d.idle.notify_all();
  }
}

/// At exit: the thread destroys what is queued and ends, before LLVM's own statics go (they
/// were made before the first compile registered this handler, so their destructors run after
/// it).
void joinAtExit() {
  Disposer &d = disposer();
  std::thread *t = nullptr;
  {
    std::lock_guard<std::mutex> lock(gMutex);
    d.stopping = true;
    t = d.thread;
  }
  d.wake.notify_all();
  if (t && t->joinable())
    t->join();
}

/// fork()'s child handler. What the parent had queued stays queued for the child's own thread,
/// started by its first disposeLater; an item the parent's thread had taken but not begun to
/// destroy (fork waits for a destruction under way) is lost to the child, which only leaks it.
void forgetThreadInChild() { gDisposer.store(new Disposer, std::memory_order_release); }

[[maybe_unused]] const bool gForkHandlersRegistered = [] {
  runtime::onForkChild(forgetThreadInChild);
  runtime::registerForkLock(gMutex);
  runtime::registerForkLock(gDestroying);
  return true;
}();

std::once_flag gAtExit;

} // namespace

void disposeLater(std::shared_ptr<void> garbage) noexcept {
  if (!garbage)
    return;
  Disposer &d = disposer();
  try {
    std::unique_lock<std::mutex> lock(gMutex);
    if (!d.stopping) {
      if (!d.thread) {
        std::call_once(gAtExit, [] { std::atexit(joinAtExit); });
        d.thread = new std::thread(serve, std::ref(d));
      }
      gQueue->push_back(std::move(garbage));
      lock.unlock();
      d.wake.notify_one();
      return;
    }
  } catch (...) {
    // No thread or no memory for the queue: `garbage` is still ours.
  }
  garbage.reset();
}

void waitForDisposals() {
  Disposer &d = disposer();
  std::unique_lock<std::mutex> lock(gMutex);
  d.idle.wait(lock, [&] { return (gQueue->empty() && d.busy == 0) || !d.thread; });
}

} // namespace ptxjit::compiler
