// The compiler's background threads: work a compile hands off so that its caller (cuda.jit, a
// first launch) does not wait for it.
//  - What a compile no longer needs (disposeLater): LLVM freeing its module, the module's context
//    and code generation's pass manager is 3% of a small kernel's warm compile on the compiling
//    thread.
//  - What a compile will need (runLater): the pass pipelines emitPTX runs, built while the
//    compiling thread types, lowers and optimizes (codegen::startPtxPipelines). Starting a
//    thread for each compile instead costs the compiling thread about 50 µs where threads are
//    slow to start (a virtual machine), 2.5% of a small kernel's compile.
// Each kind has a thread of its own, so that a build, which a compile waits for, never waits
// behind the disposal of a large module.
#pragma once

#include <functional>
#include <memory>

namespace ptxjit::compiler {

/// Destroys `garbage` (its last reference) on the disposal thread, in the order handed over,
/// and returns at once. Where no thread can be started, or once the process is exiting,
/// destroys it here. `garbage` must not need Python or the compile lock to
/// be destroyed. Thread-safe; never throws (a failure to queue destroys here).
void disposeLater(std::shared_ptr<void> garbage) noexcept;

/// Runs `task` once on the build thread, after the tasks handed over before it, and returns at
/// once; where no thread can be started, or once the process is exiting, runs it here.
/// `task` must not throw, and must not need Python or the compile lock (the compiling thread
/// may wait for it while holding that lock). Thread-safe; never throws. Its signature is
/// codegen::TaskRunner's.
void runLater(std::function<void()> task) noexcept;

/// Returns once everything handed over before the call has been run or destroyed (tests).
void waitForBackground();

// Each thread starts on first use and is joined at exit, after it has done everything queued.
// Across fork() (runtime/Fork.h): fork waits for a task under way; the child does what the
// parent had queued on threads of its own once it hands something over.

} // namespace ptxjit::compiler
