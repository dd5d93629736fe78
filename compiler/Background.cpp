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

/// The thread serving a lane's queue and what it waits on, guarded by the lane's mutex. Never
/// destroyed; the child of a fork() gets a fresh one (forgetThreadsInChild): the parent's thread
/// is not there, and its condition variables may count waiters that are not there either.
struct Worker {
  std::condition_variable wake, idle;
  std::thread *thread = nullptr; ///< null until started; leaked (a joinable thread terminates)
  size_t busy = 0;               ///< tasks taken off the queue and not yet done
  bool stopping = false;         ///< set at exit: drain the queue, then end
};

/// One thread and its queue of tasks, run in the order handed over. Lanes live as long as the
/// process (never destroyed: the exit handler runs before static destructors would).
struct Lane {
  /// Guards the queue and the worker; a fork leaf lock (registered below), so that a child
  /// finds the queue whole.
  std::mutex mutex;
  std::deque<std::function<void()>> queue;
  std::atomic<Worker *> worker{new Worker};
  /// Held while the thread runs a task: fork() waits for it (registered below), so that a
  /// child never inherits a lock LLVM held at that moment (the target machine pool's, LLVM's
  /// own).
  std::mutex running;

  Worker &current() { return *worker.load(std::memory_order_acquire); }
};

/// Two lanes, so that a build (which a compile will wait for) never waits behind a disposal of
/// a large module, which may take milliseconds.
Lane &disposals() {
  static Lane *lane = new Lane;
  return *lane;
}
Lane &builds() {
  static Lane *lane = new Lane;
  return *lane;
}

void serve(Lane &lane, Worker &w) {
  std::unique_lock<std::mutex> lock(lane.mutex);
  for (;;) {
    w.wake.wait(lock, [&] { return !lane.queue.empty() || w.stopping; });
    if (lane.queue.empty())
      return; // stopping, everything done
    std::function<void()> task = std::move(lane.queue.front());
    lane.queue.pop_front();
    ++w.busy;
    lock.unlock();
    {
      std::lock_guard<std::mutex> running(lane.running);
      task();
      task = nullptr; // what it holds (a disposal's garbage) goes under the lock too
    }
    lock.lock();
    if (--w.busy == 0 && lane.queue.empty())
      w.idle.notify_all();
  }
}

/// At exit: each thread does what is queued and ends, before LLVM's own statics go (they were
/// made before the first compile registered this handler, so their destructors run after it).
void joinAtExit() {
  for (Lane *lane : {&builds(), &disposals()}) {
    Worker &w = lane->current();
    std::thread *t = nullptr;
    {
      std::lock_guard<std::mutex> lock(lane->mutex);
      w.stopping = true;
      t = w.thread;
    }
    w.wake.notify_all();
    if (t && t->joinable())
      t->join();
  }
}

/// fork()'s child handler. What the parent had queued stays queued for the child's own threads,
/// started by the child's first hand-over to each lane; a task the parent's thread had taken but
/// not begun (fork waits for a task under way) is lost to the child: a disposal only leaks its
/// garbage, and no compile waits for a build (fork holds the compile lock, under which compiles
/// wait).
void forgetThreadsInChild() {
  for (Lane *lane : {&builds(), &disposals()})
    lane->worker.store(new Worker, std::memory_order_release);
}

[[maybe_unused]] const bool gForkHandlersRegistered = [] {
  runtime::onForkChild(forgetThreadsInChild);
  for (Lane *lane : {&builds(), &disposals()}) {
    runtime::registerForkLock(lane->mutex);
    runtime::registerForkLock(lane->running);
  }
  return true;
}();

std::once_flag gAtExit;

/// Queues `task` on `lane` (its thread started here on first use); false, `task` untouched,
/// where it cannot (no thread, no memory, or the process is exiting).
bool enqueue(Lane &lane, std::function<void()> &task) noexcept {
  Worker &w = lane.current();
  try {
    std::unique_lock<std::mutex> lock(lane.mutex);
    if (w.stopping)
      return false;
    if (!w.thread) {
      std::call_once(gAtExit, [] { std::atexit(joinAtExit); });
      w.thread = new std::thread(serve, std::ref(lane), std::ref(w));
    }
    lane.queue.push_back(std::move(task));
    lock.unlock();
    w.wake.notify_one();
    return true;
  } catch (...) {
    return false; // push_back moves only once it has room: `task` is still ours
  }
}

void waitFor(Lane &lane) {
  Worker &w = lane.current();
  std::unique_lock<std::mutex> lock(lane.mutex);
  w.idle.wait(lock, [&] { return (lane.queue.empty() && w.busy == 0) || !w.thread; });
}

} // namespace

void disposeLater(std::shared_ptr<void> garbage) noexcept {
  if (!garbage)
    return;
  try {
    std::function<void()> task = [garbage]() mutable { garbage.reset(); };
    garbage.reset(); // the task holds the reference now
    if (!enqueue(disposals(), task))
      task();
  } catch (...) {
    // No memory for the task: `garbage` is destroyed here, on leaving.
  }
}

void runLater(std::function<void()> task) noexcept {
  if (task && !enqueue(builds(), task))
    task();
}

void waitForBackground() {
  waitFor(builds());
  waitFor(disposals());
}

} // namespace ptxjit::compiler
