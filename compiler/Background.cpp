#include "compiler/Background.h"

#include "runtime/Fork.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace ptxjit::compiler {
namespace {

/// The queue of tasks, guarded by gMutex. Both live as long as the process (never destroyed:
/// the exit handler runs before static destructors would). gMutex is a fork leaf lock
/// (registered below), so that a child finds the queue whole.
std::mutex gMutex;
std::deque<std::function<void()>> *gQueue = new std::deque<std::function<void()>>;

/// The thread serving the queue and what it waits on, guarded by gMutex. Never destroyed; the
/// child of a fork() gets a fresh one (forgetThreadInChild): the parent's thread is not there,
/// and its condition variables may count waiters that are not there either.
struct Worker {
  std::condition_variable wake, idle;
  std::thread *thread = nullptr; ///< null until started; leaked (a joinable thread terminates)
  size_t busy = 0;               ///< tasks taken off the queue and not yet done
  bool stopping = false;         ///< set at exit: drain the queue, then end
};

std::atomic<Worker *> gWorker{new Worker};
Worker &worker() { return *gWorker.load(std::memory_order_acquire); }

/// Held while the thread runs a task: fork() waits for it (registered below), so that a child
/// never inherits a lock LLVM held at that moment (the target machine pool's, LLVM's own).
std::mutex gRunning;

void serve(Worker &w) {
  std::unique_lock<std::mutex> lock(gMutex);
  for (;;) {
    w.wake.wait(lock, [&] { return !gQueue->empty() || w.stopping; });
    if (gQueue->empty())
      return; // stopping, everything done
    std::function<void()> task = std::move(gQueue->front());
    gQueue->pop_front();
    ++w.busy;
    lock.unlock();
    {
      std::lock_guard<std::mutex> running(gRunning);
      task();
      task = nullptr; // what it holds (a disposal's garbage) goes under the lock too
    }
    lock.lock();
    if (--w.busy == 0 && gQueue->empty())
      w.idle.notify_all();
  }
}

/// At exit: the thread does what is queued and ends, before LLVM's own statics go (they were
/// made before the first compile registered this handler, so their destructors run after it).
void joinAtExit() {
  Worker &w = worker();
  std::thread *t = nullptr;
  {
    std::lock_guard<std::mutex> lock(gMutex);
    w.stopping = true;
    t = w.thread;
  }
  w.wake.notify_all();
  if (t && t->joinable())
    t->join();
}

/// fork()'s child handler. What the parent had queued stays queued for the child's own thread,
/// started by the child's first hand-over; a task the parent's thread had taken but not begun
/// (fork waits for a task under way) is lost to the child: a disposal only leaks its garbage,
/// and no compile waits for a build (fork holds the compile lock, under which compiles wait).
void forgetThreadInChild() { gWorker.store(new Worker, std::memory_order_release); }

[[maybe_unused]] const bool gForkHandlersRegistered = [] {
  runtime::onForkChild(forgetThreadInChild);
  runtime::registerForkLock(gMutex);
  runtime::registerForkLock(gRunning);
  return true;
}();

std::once_flag gAtExit;

/// Queues `task` for the thread (started here on first use); false, `task` untouched, where it
/// cannot (no thread, no memory, or the process is exiting).
bool enqueue(std::function<void()> &task) noexcept {
  Worker &w = worker();
  try {
    std::unique_lock<std::mutex> lock(gMutex);
    if (w.stopping)
      return false;
    if (!w.thread) {
      std::call_once(gAtExit, [] { std::atexit(joinAtExit); });
      w.thread = new std::thread(serve, std::ref(w));
    }
    gQueue->push_back(std::move(task));
    lock.unlock();
    w.wake.notify_one();
    return true;
  } catch (...) {
    return false; // push_back moves only once it has room: `task` is still ours
  }
}

} // namespace

void disposeLater(std::shared_ptr<void> garbage) noexcept {
  if (!garbage)
    return;
  try {
    std::function<void()> task = [garbage]() mutable { garbage.reset(); };
    garbage.reset(); // the task holds the reference now
    if (!enqueue(task))
      task();
  } catch (...) {
    // No memory for the task: `garbage` is destroyed here, on leaving.
  }
}

void runLater(std::function<void()> task) noexcept {
  if (task && !enqueue(task))
    task();
}

void waitForBackground() {
  Worker &w = worker();
  std::unique_lock<std::mutex> lock(gMutex);
  w.idle.wait(lock, [&] { return (gQueue->empty() && w.busy == 0) || !w.thread; });
}

} // namespace ptxjit::compiler
