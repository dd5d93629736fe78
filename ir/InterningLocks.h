// The locks of ir's process-wide interning tables (types, named tuples), for the compiler to
// register with runtime::registerForkLock (runtime/Fork.h): ir does not depend on the runtime.
// Both are leaf locks, held only to look a type up or insert it.
#pragma once

#include <mutex>

namespace ptxjit::ir {

/// The lock of the table of interned types (ir/Types.cpp).
std::mutex &typeTableLock();

/// The lock of the table of named tuple types (ir/NamedTuples.cpp).
std::mutex &namedTupleTableLock();

} // namespace ptxjit::ir
