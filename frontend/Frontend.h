// The frontend's entry point: a CodeSnapshot (a plain C++ copy of a Python function) to
// untyped IR. The steps (bytecode view, CFG, rejection of unsupported constructs, stack
// simulation) live in Bytecode.h, Cfg.h, Reject.h and IRBuilder.h.
#pragma once

#include "frontend/CodeSnapshot.h"
#include "ir/IR.h"

#include <memory>

namespace ptxjit::frontend {

/// Decodes `code` (CPython 3.11, 3.12 or 3.13 bytecode, per code.version) and returns the
/// untyped IR of the function: every instruction carries its SourceLoc; parameters are the
/// first variables; unreachable code is dropped. Throws ir::CompileError naming
/// `code.filename` and the line: UnsupportedConstruct for Python the kernel language
/// rejects (try, with, generators, comprehensions, lambda, import, global/del, *args, ...),
/// UnsupportedOpcode for any other instruction it cannot translate, Internal for malformed
/// bytecode.
std::unique_ptr<ir::Function> buildFunction(const CodeSnapshot &code, ir::FunctionKind kind);

} // namespace ptxjit::frontend
