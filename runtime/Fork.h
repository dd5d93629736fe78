// Fork safety. fork() copies only the calling thread into the child: a lock that another thread
// holds at that moment stays held there for ever, and the threads ptxjit started (the device
// opener, the memory-pool warm-up, the CPU backend's workers) do not exist there. So:
//
//  - The process-wide locks under which ptxjit works for long or on shared tables (the compile
//    lock, the driver's loading, the type tables, ...) are registered here. pthread_atfork's
//    prepare handler takes every registered lock before fork() (waiting for a compile or a
//    driver load under way in another thread to finish) and releases them in the parent and the
//    child afterwards, so the child finds them free and the state they guard whole.
//  - Code that keeps a thread or other state that does not survive fork() registers a child
//    handler (onForkChild) that forgets it, so that nothing in the child waits for a thread that
//    is not there (at exit included).
//
// CUDA itself does not survive fork(): a child forked after the driver was loaded refuses every
// CUDA call (runtime/Driver.h, ForkedAfterInit) before it takes any lock of the CUDA runtime.
#pragma once

#include <mutex>

namespace ptxjit::runtime {

// The order in which the prepare handler takes registered locks, lowest first. A lock that some
// thread holds while it acquires another registered lock must have the lower rank: the compile
// lock is held while the compute capability is read, which may load the driver. Leaf locks
// (never held while another lock is acquired) take kForkLeaf and are taken last, in any order.
enum ForkLockRank : int {
  kForkCompile = 0,           // compiler::Compiler's compile lock
  kForkComputeCapability = 1, // runtime::deviceComputeCapability()'s cache
  kForkDriverLoad = 2,        // the driver's loading (runtime/Driver.cpp)
  kForkLeaf = 100,            // tables held for a lookup or an insertion only
};

// Registers `m`, which must live as long as the process (locks are never unregistered), to be
// taken before every fork() of this process (at `rank`) and released after it in both processes.
// Register a lock before it is first taken, and never while holding a registered lock (a fork
// under way holds the registry while it waits for the registered locks): from a static
// initializer, or where the lock's owner is built. Thread-safe; throws only std::bad_alloc.
void registerForkLock(std::mutex &m, int rank = kForkLeaf);

// Registers `handler` to run in the child after every fork() of this process, once the
// registered locks are released; handlers run in registration order. The same rule as for
// registerForkLock applies (register from a static initializer). A handler must not block or
// call the CUDA driver.
void onForkChild(void (*handler)());

} // namespace ptxjit::runtime
