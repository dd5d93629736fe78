// The compile-time constant an IR value denotes, for rules that need a value and not only a
// type (print's string arguments and `sep`/`end` keywords).
#pragma once

#include "ir/IR.h"

#include <optional>
#include <string>
#include <vector>

namespace ptxjit::ir {

/// The constant `i` denotes when it is a Const instruction or a Global frozen as a Python
/// constant (not a NumPy scalar); null otherwise. The pointer lives as long as `i`.
const ConstValue *constantValueOf(const Instr *i);

/// The value stored into local `var` of `fn` when exactly one StoreLocal assigns it (`n = 16;
/// ...; use(n)`), else null. A parameter's one store is of its ArgInstr.
const Instr *onlyStoredValue(const Function &fn, int var);

/// The string `i` denotes at compile time: a string constant (constantValueOf), a value typed
/// as a string literal a caller passed (types::stringLiteral), or, given `fn`, a local of `fn`
/// assigned exactly once from one of those; nullopt otherwise.
std::optional<std::string> constantStringOf(const Instr *i, const Function *fn = nullptr,
                                            int depth = 0);

/// The bytes `i` denotes at compile time: a bytes constant (constantValueOf) or, given `fn`, a
/// local of `fn` assigned exactly once from one; nullopt otherwise.
std::optional<std::string> constantBytesOf(const Instr *i, const Function *fn = nullptr,
                                           int depth = 0);

/// The code points of UTF-8 text `s` (a str constant of the snapshot).
std::vector<uint32_t> utf8CodePoints(const std::string &s);

/// The `cs->count()` code units a store of `v` into an element of type `cs` writes, when `v`
/// denotes a constant of the kind `cs` takes (str for U<n>, bytes for S<n>, as numba casts):
/// its bytes or code points, cut to the length or padded with zeros as NumPy assigns; nullopt
/// otherwise (TypingStrings.cpp).
std::optional<std::vector<uint32_t>> charSeqConstantUnits(const Instr *v, const CharSeqType *cs,
                                                          const Function *fn);

/// Python's float(s) of a string: a decimal literal (underscores between digits allowed),
/// "inf", "infinity" or "nan" in any case, each with an optional sign and surrounded by
/// whitespace; nullopt when Python would raise ValueError.
std::optional<double> floatOfPythonString(const std::string &s);

} // namespace ptxjit::ir
