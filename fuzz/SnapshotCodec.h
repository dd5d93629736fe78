// A compact byte encoding of a code snapshot plus the argument types to type it with: the
// fuzzing input of fuzz_frontend (issue 19, item 3). Every byte string decodes to some input
// (missing bytes read as zeros, out-of-range choices wrap), so libFuzzer's mutations of the
// encoded test kernels (co_code bytes, constants, names, counts, flags) all reach the frontend.
#pragma once

#include "frontend/CodeSnapshot.h"
#include "ir/IR.h"
#include "ir/Types.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ptxjit::fuzz {

/// What one fuzzing input asks for: build `snapshot` as `kind`, then type it with `argTypes`.
struct FuzzInput {
  frontend::CodeSnapshot snapshot;
  ir::FunctionKind kind = ir::FunctionKind::Kernel;
  std::vector<const ir::Type *> argTypes;
};

/// The argument types an input can name, by index (scalars and arrays of the kernel language).
const std::vector<const ir::Type *> &argTypeTable();

/// Decodes any byte string (never throws; nesting and counts are bounded so that decoding is
/// cheap). Positions are not encoded: each code unit gets line firstLine + its index / 8.
FuzzInput decodeInput(const uint8_t *data, size_t size);

/// The encoding of `in` (argument types not in argTypeTable() are written as float64 arrays):
/// decodeInput(encodeInput(in)) gives `in` back, positions apart.
std::string encodeInput(const FuzzInput &in);

} // namespace ptxjit::fuzz
