// An immutable, decoded view of a CodeSnapshot's bytecode (CPython 3.11, 3.12 or 3.13; the
// version comes from CodeSnapshot::version, so one build decodes all three).
//
// The view hides the encoding details the rest of the frontend should not care about:
// EXTENDED_ARG prefixes are folded into the instruction's argument, inline CACHE code units
// are skipped, and every jump exposes its destination as an instruction index (relative jump
// arithmetic and FOR_ITER's version-specific exit are resolved here). Operand helpers decode
// the version-specific operand encodings (LOAD_GLOBAL's and LOAD_ATTR's flag bits,
// COMPARE_OP's shifted operator, the packed LOAD_FAST_LOAD_FAST pairs, ...).
#pragma once

#include "frontend/CodeSnapshot.h"
#include "frontend/Opcodes.h"
#include "ir/Diagnostics.h"
#include "ir/IR.h"

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ptxjit::frontend {

/// A byte offset into co_code (what `dis` prints as an instruction's offset).
struct ByteOffset {
  int value = 0;
  constexpr ByteOffset() = default;
  constexpr explicit ByteOffset(int v) : value(v) {}
  auto operator<=>(const ByteOffset &) const = default;
};

/// The position of an instruction in the decoded sequence (EXTENDED_ARG and CACHE units do
/// not count): 0, 1, 2, ...
struct InstrIndex {
  int value = 0;
  constexpr InstrIndex() = default;
  constexpr explicit InstrIndex(int v) : value(v) {}
  auto operator<=>(const InstrIndex &) const = default;
  InstrIndex next() const { return InstrIndex(value + 1); }
};

/// One decoded instruction.
struct Instruction {
  PyOp op = PyOp::NOP;
  uint8_t opcode = 0; ///< CPython's number for `op` in this version
  uint32_t arg = 0;   ///< the operand with EXTENDED_ARG prefixes folded in
  InstrIndex index;   ///< position in the view
  ByteOffset offset;  ///< offset of the opcode itself (after any EXTENDED_ARG prefixes)
  ByteOffset start;   ///< offset of the first EXTENDED_ARG prefix; == offset without one.
                      ///< Jumps that reach this instruction land here.
  int caches = 0;     ///< inline CACHE code units after the instruction
  Position pos;       ///< CodeSnapshot::positions[offset / 2]
  /// For jumps: where CPython's operand points (what `dis` shows as the target).
  std::optional<ByteOffset> jumpOffset;
  /// For jumps: the instruction control actually reaches when the jump is taken. Equal to
  /// the instruction at jumpOffset except for FOR_ITER in 3.12/3.13 (see Bytecode.cpp).
  std::optional<InstrIndex> target;

  /// The offset just past the instruction and its caches (where execution falls through).
  ByteOffset end() const { return ByteOffset(offset.value + 2 + 2 * caches); }
};

/// LOAD_GLOBAL's operand.
struct GlobalOperand {
  const std::string *name = nullptr; ///< co_names entry
  bool pushNull = false;             ///< 3.11+: also push NULL for a call
};

/// LOAD_ATTR's (and 3.11 LOAD_METHOD's) operand.
struct AttrOperand {
  const std::string *name = nullptr; ///< co_names entry
  bool method = false;               ///< method form: pushes a (callable, self-or-NULL) pair
};

/// COMPARE_OP's operand.
struct CompareOperand {
  ir::CmpOp cmp = ir::CmpOp::Lt;
  bool toBool = false; ///< 3.13: the result is converted to bool (the fused TO_BOOL)
};

/// BINARY_OP's operand.
struct BinaryOperand {
  ir::BinaryOp op = ir::BinaryOp::Add;
  bool inplace = false; ///< augmented assignment (`+=`)
};

/// One entry of co_exceptiontable (3.11+): instructions in [start, end) jump to `target`
/// on an exception.
struct ExceptionTableEntry {
  ByteOffset start;
  ByteOffset end;
  ByteOffset target;
  int depth = 0;
  bool lasti = false;
};

class BytecodeView {
public:
  /// Decodes `code.code`. `code` must outlive the view. Throws ir::CompileError (Internal)
  /// for malformed bytecode: a truncated instruction, an opcode the version does not have,
  /// a jump outside the code or into the middle of an instruction.
  explicit BytecodeView(const CodeSnapshot &code);

  const CodeSnapshot &snapshot() const { return *code_; }
  PyVersion version() const { return code_->version; }

  size_t size() const { return instrs_.size(); }
  bool empty() const { return instrs_.empty(); }
  const Instruction &at(InstrIndex i) const { return instrs_.at(static_cast<size_t>(i.value)); }
  const Instruction &operator[](InstrIndex i) const { return at(i); }
  std::vector<Instruction>::const_iterator begin() const { return instrs_.begin(); }
  std::vector<Instruction>::const_iterator end() const { return instrs_.end(); }
  /// True when `i` indexes an instruction of the view.
  bool contains(InstrIndex i) const {
    return i.value >= 0 && static_cast<size_t>(i.value) < size();
  }

  /// The instruction whose `start` (first EXTENDED_ARG prefix, else opcode) is at `off`.
  std::optional<InstrIndex> indexAtStart(ByteOffset off) const;
  /// The instruction whose opcode is at `off` (what `dis` reports as the offset).
  std::optional<InstrIndex> indexAtOffset(ByteOffset off) const;

  /// The decoded co_exceptiontable. Throws Internal when it is malformed.
  std::vector<ExceptionTableEntry> exceptionTable() const;

  /// The source location of instruction `i` for IR and diagnostics: its position, or, when
  /// that has no line (CPython leaves artificial instructions without one), the nearest
  /// earlier instruction that has one, else the function's first line.
  ir::SourceLoc loc(InstrIndex i) const;
  /// Throws CompileError(code, args) located at instruction `i` of this function.
  [[noreturn]] void raise(ir::DiagCode code, InstrIndex i,
                          std::initializer_list<std::string> args) const;
  /// Throws CompileError(Internal, what) located at instruction `i`.
  [[noreturn]] void internalError(InstrIndex i, const std::string &what) const;
  /// Throws CompileError(MalformedCode, what) located at instruction `i`: the code object is
  /// not one CPython's compiler makes (an operand out of range, a jump outside the code, a
  /// stack that underflows), an UnsupportedError for the user.
  [[noreturn]] void malformed(InstrIndex i, const std::string &what) const;

  // ---- operand helpers (each throws MalformedCode when the operand is out of range) ----

  /// LOAD_CONST / RETURN_CONST / KW_NAMES: the co_consts entry.
  const ir::ConstValue &constant(const Instruction &in) const;
  /// A co_names entry (STORE_ATTR, IMPORT_NAME, STORE_GLOBAL, ...: operand = index).
  const std::string &name(const Instruction &in) const;
  /// LOAD_GLOBAL: 3.11+ keep the "push NULL" flag in the low bit (name index = arg >> 1).
  GlobalOperand loadGlobal(const Instruction &in) const;
  /// LOAD_ATTR: 3.12+ keep the method flag in the low bit; 3.11 LOAD_ATTR is plain and its
  /// method form is the separate LOAD_METHOD opcode.
  AttrOperand loadAttr(const Instruction &in) const;
  /// The name of fast-locals slot `slot` (CodeSnapshot::localsPlusNames).
  const std::string &localName(uint32_t slot) const;
  /// LOAD_FAST / STORE_FAST / DELETE_FAST / LOAD_DEREF ...: the slot's name.
  const std::string &localName(const Instruction &in) const { return localName(in.arg); }
  /// 3.13 LOAD_FAST_LOAD_FAST / STORE_FAST_LOAD_FAST / STORE_FAST_STORE_FAST: the two slots,
  /// first = arg >> 4 (acted on first), second = arg & 15.
  std::pair<uint32_t, uint32_t> fastPair(const Instruction &in) const;
  /// COMPARE_OP: 3.11 operand = index into dis.cmp_op; 3.12 = index << 4 (low bits are
  /// specialization hints); 3.13 = index << 5, bit 4 = convert the result to bool.
  CompareOperand compareOp(const Instruction &in) const;
  /// IS_OP (0 `is`, 1 `is not`) and CONTAINS_OP (0 `in`, 1 `not in`).
  ir::CmpOp isOrContainsOp(const Instruction &in) const;
  /// BINARY_OP: NB_* operand (0..12 binary, 13..25 the in-place forms).
  BinaryOperand binaryOp(const Instruction &in) const;
  /// KW_NAMES (3.11/3.12) operand, or the constant tuple CALL_KW (3.13) pops: the keyword
  /// names of the next call. Throws Internal unless `c` is a tuple of strings.
  std::vector<std::string> kwNames(const ir::ConstValue &c, InstrIndex at) const;
  /// CALL_INTRINSIC_1's intrinsic number that means unary `+` (3.12+).
  static constexpr uint32_t kIntrinsicUnaryPositive = 5;
  /// CALL_INTRINSIC_1's intrinsic number that turns a list into a tuple (3.12+; 3.11's
  /// LIST_TO_TUPLE): `(a, *t)` and the positional arguments of `f(a, *t)`.
  static constexpr uint32_t kIntrinsicListToTuple = 6;

private:
  /// " (LOAD_CONST at offset 12 in f)": instruction `i` for messages; empty when out of range.
  std::string where(InstrIndex i) const;
  const CodeSnapshot *code_;
  std::vector<Instruction> instrs_;
  std::vector<int> byStart_;  ///< code unit -> instruction index whose start is there, or -1
  std::vector<int> byOffset_; ///< code unit -> instruction index whose opcode is there, or -1

  void decode();
  void resolveJumps();
};

} // namespace ptxjit::frontend
