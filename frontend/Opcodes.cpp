#include "frontend/Opcodes.h"

#include "frontend/OpcodeTables.h"

#include <array>

namespace ptxjit::frontend {

namespace {

constexpr const char *kNames[] = {
#define PTXJIT_PY_OPCODE(name) #name,
#include "frontend/PyOpcodes.def"
#undef PTXJIT_PY_OPCODE
};
static_assert(sizeof(kNames) / sizeof(kNames[0]) == kNumPyOps);

/// Number -> opcode and opcode -> number/caches lookups for one version, built once.
struct VersionTables {
  std::array<std::optional<PyOp>, 256> byNumber{};
  std::array<std::optional<uint8_t>, kNumPyOps> numberOf{};
  std::array<uint8_t, kNumPyOps> caches{};
  std::span<const PyOpcodeEntry> entries;

  explicit VersionTables(std::span<const PyOpcodeEntry> rows) : entries(rows) {
    for (const PyOpcodeEntry &e : rows) {
      byNumber[e.number] = e.op;
      numberOf[static_cast<size_t>(e.op)] = e.number;
      caches[static_cast<size_t>(e.op)] = e.caches;
    }
  }
};

const VersionTables &tables(PyVersion v) {
  static const VersionTables t311({detail::kOpcodes311, detail::kNumOpcodes311});
  static const VersionTables t312({detail::kOpcodes312, detail::kNumOpcodes312});
  static const VersionTables t313({detail::kOpcodes313, detail::kNumOpcodes313});
  switch (v) {
  case PyVersion::Py311:
    return t311;
  case PyVersion::Py312:
    return t312;
  case PyVersion::Py313:
    return t313;
  }
  return t313;
}

} // namespace

const char *pyOpName(PyOp op) {
  size_t i = static_cast<size_t>(op);
  return i < kNumPyOps ? kNames[i] : "<invalid opcode>";
}

std::optional<PyOp> pyOpFromName(std::string_view name) {
  for (size_t i = 0; i < kNumPyOps; ++i)
    if (name == kNames[i])
      return static_cast<PyOp>(i);
  return std::nullopt;
}

std::span<const PyOpcodeEntry> pyOpcodeTable(PyVersion v) { return tables(v).entries; }

std::optional<PyOp> pyOpFromNumber(PyVersion v, uint8_t number) {
  return tables(v).byNumber[number];
}

std::optional<uint8_t> pyOpNumber(PyVersion v, PyOp op) {
  return tables(v).numberOf[static_cast<size_t>(op)];
}

int pyOpCacheEntries(PyVersion v, PyOp op) { return tables(v).caches[static_cast<size_t>(op)]; }

JumpKind pyOpJumpKind(PyOp op) {
  switch (op) {
  case PyOp::JUMP_FORWARD:
  case PyOp::JUMP_BACKWARD:
  case PyOp::JUMP_BACKWARD_NO_INTERRUPT:
    return JumpKind::Unconditional;
  case PyOp::POP_JUMP_IF_FALSE: // 3.12+ (forward only)
  case PyOp::POP_JUMP_IF_TRUE:
  case PyOp::POP_JUMP_IF_NONE:
  case PyOp::POP_JUMP_IF_NOT_NONE:
  case PyOp::POP_JUMP_FORWARD_IF_FALSE: // 3.11 has a forward and a backward form of each
  case PyOp::POP_JUMP_FORWARD_IF_TRUE:
  case PyOp::POP_JUMP_FORWARD_IF_NONE:
  case PyOp::POP_JUMP_FORWARD_IF_NOT_NONE:
  case PyOp::POP_JUMP_BACKWARD_IF_FALSE:
  case PyOp::POP_JUMP_BACKWARD_IF_TRUE:
  case PyOp::POP_JUMP_BACKWARD_IF_NONE:
  case PyOp::POP_JUMP_BACKWARD_IF_NOT_NONE:
  case PyOp::JUMP_IF_FALSE_OR_POP: // 3.11
  case PyOp::JUMP_IF_TRUE_OR_POP:
  case PyOp::FOR_ITER:
  case PyOp::SEND:
    return JumpKind::Conditional;
  default:
    return JumpKind::None;
  }
}

bool pyOpJumpsBackward(PyOp op) {
  switch (op) {
  case PyOp::JUMP_BACKWARD:
  case PyOp::JUMP_BACKWARD_NO_INTERRUPT:
  case PyOp::POP_JUMP_BACKWARD_IF_FALSE:
  case PyOp::POP_JUMP_BACKWARD_IF_TRUE:
  case PyOp::POP_JUMP_BACKWARD_IF_NONE:
  case PyOp::POP_JUMP_BACKWARD_IF_NOT_NONE:
    return true;
  default:
    return false;
  }
}

bool pyOpIsTerminator(PyOp op) {
  switch (op) {
  case PyOp::RETURN_VALUE:
  case PyOp::RETURN_CONST:
  case PyOp::RAISE_VARARGS:
  case PyOp::RERAISE:
    return true;
  default:
    return pyOpJumpKind(op) == JumpKind::Unconditional;
  }
}

} // namespace ptxjit::frontend
