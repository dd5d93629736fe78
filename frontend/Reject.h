// Up-front rejection of Python constructs the kernel language does not support, reported in
// the user's terms ("try/except is not supported in kernels") at the construct's line,
// before the stack simulation would trip over their opcodes one by one.
#pragma once

#include "frontend/Bytecode.h"

namespace ptxjit::frontend {

/// Throws CompileError(UnsupportedConstruct) for the first unsupported construct of the
/// function, in this order: generator/coroutine/async generator (co_flags), *args/**kwargs
/// parameters, then the construct whose instruction comes first in the bytecode: try/except
/// and try/finally (a non-empty exception table), with statements, comprehensions, lambdas
/// and nested functions, generator expressions, set literals, f-strings, import,
/// global/nonlocal assignment, del, bare raise and raise-from. Returns normally when there is
/// none (list and dict literals are rejected by the stack simulation, which tells them from the
/// displays star calls are built of; opcodes it cannot translate are reported as
/// UnsupportedOpcode).
void rejectUnsupportedConstructs(const BytecodeView &view);

} // namespace ptxjit::frontend
