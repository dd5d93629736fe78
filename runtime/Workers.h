// The process's parked worker threads: the CPU backend runs a launch's blocks on them
// (runtime/HostGrid.h), and large copies of pageable host memory go through pinned memory with
// them (runtime/PinnedRing.h).
#pragma once

#include <functional>

namespace ptxjit::runtime {

class Workers {
public:
  // The process's workers, started on first use: PTXJIT_HOST_THREADS - 1 of them when that is set
  // (a whole number >= 1), else one fewer than the hardware's threads; fewer (possibly none) when
  // the system refuses to start more. Never destroyed (joining from a static destructor could
  // deadlock, e.g. exit() called inside a kernel; parked workers are harmless). A forked child
  // has none of its parent's threads and starts its own. Thread-safe.
  static Workers &get();

  // The number of workers (not counting a run's caller).
  unsigned count() const noexcept;

  // Calls task(lane) for every lane in [0, lanes) and returns when every call has returned:
  // lane 0 on the calling thread, lanes 1 .. count() on as many workers, any further lanes on
  // the calling thread after its first. One run at a time: a second caller waits for the first
  // run to end. `task` must not throw (the process terminates) and must not call run() itself
  // (it would wait for its own run).
  void run(unsigned lanes, const std::function<void(unsigned lane)> &task);

  Workers(const Workers &) = delete;
  Workers &operator=(const Workers &) = delete;

private:
  struct State;
  explicit Workers(unsigned workers);
  ~Workers() = delete;
  State *state_;
};

} // namespace ptxjit::runtime
