// CPython opcodes, version-independent: our own enum of every real opcode of CPython 3.11,
// 3.12 and 3.13 by name (PyOpcodes.def), and per-version tables mapping CPython's opcode
// numbers to it together with the number of inline CACHE code units that follow each
// instruction. The numbers and cache counts come from each version's `dis` module.
#pragma once

#include "frontend/CodeSnapshot.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ptxjit::frontend {

/// A CPython opcode by name, in CPython's spelling (PyOp::LOAD_FAST).
enum class PyOp : uint8_t {
#define PTXJIT_PY_OPCODE(name) name,
#include "frontend/PyOpcodes.def"
#undef PTXJIT_PY_OPCODE
};

/// Number of PyOp values.
constexpr size_t kNumPyOps = 0
#define PTXJIT_PY_OPCODE(name) +1
#include "frontend/PyOpcodes.def"
#undef PTXJIT_PY_OPCODE
    ;

/// CPython's name of the opcode ("LOAD_FAST").
const char *pyOpName(PyOp op);
/// The opcode named `name` (any version); std::nullopt for an unknown name.
std::optional<PyOp> pyOpFromName(std::string_view name);

/// One row of a version's opcode table.
struct PyOpcodeEntry {
  uint8_t number; ///< CPython's opcode number in that version
  PyOp op;
  uint8_t caches; ///< inline CACHE code units after the instruction
};

/// Every real opcode of version `v`, by increasing number.
std::span<const PyOpcodeEntry> pyOpcodeTable(PyVersion v);
/// The opcode CPython `v` numbers `number`; std::nullopt for an unused number.
std::optional<PyOp> pyOpFromNumber(PyVersion v, uint8_t number);
/// CPython `v`'s number for `op`; std::nullopt when `v` has no such opcode.
std::optional<uint8_t> pyOpNumber(PyVersion v, PyOp op);
/// Inline CACHE code units that follow `op` in version `v` (0 when `v` lacks `op`).
int pyOpCacheEntries(PyVersion v, PyOp op);

/// How an instruction transfers control (the same classification in every version).
enum class JumpKind : uint8_t {
  None,          ///< falls through to the next instruction
  Unconditional, ///< always goes to its target
  Conditional,   ///< goes to its target or falls through
};
/// The jump kind of `op` (FOR_ITER and SEND are conditional).
JumpKind pyOpJumpKind(PyOp op);
/// True for the jumps whose operand counts backwards from the next instruction.
bool pyOpJumpsBackward(PyOp op);
/// True for instructions after which control never falls through: unconditional jumps,
/// returns, raises.
bool pyOpIsTerminator(PyOp op);

} // namespace ptxjit::frontend
