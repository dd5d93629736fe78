// What a compile no longer needs, destroyed on a thread of its own. A compile ends with LLVM
// freeing its module, the module's context and code generation's pass manager: 3% of a small
// kernel's warm compile on the compiling thread, which the caller (cuda.jit, a first launch)
// waits for. Handed to the disposal thread instead, they are freed while the caller goes on.
#pragma once

#include <memory>

namespace ptxjit::compiler {

/// Destroys `garbage` (its last reference) on the disposal thread, in the order handed over,
/// and returns at once; the thread starts on first use and is joined at exit, after it has
/// destroyed everything queued. Where no thread can be started, destroys it here. Across fork()
/// (runtime/Fork.h): fork waits for a destruction under way; the child destroys what the
/// parent had queued on a thread of its own once it hands something over. `garbage` must not
/// need Python or the compile lock to be destroyed. Thread-safe; never throws (nothing is
/// destroyed twice, and a failure to queue destroys here).
void disposeLater(std::shared_ptr<void> garbage) noexcept;

/// Returns once everything handed to disposeLater before the call is destroyed (tests).
void waitForDisposals();

} // namespace ptxjit::compiler
