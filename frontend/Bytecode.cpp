#include "frontend/Bytecode.h"

namespace ptxjit::frontend {

namespace {

std::string offsetText(int off) { return "offset " + std::to_string(off); }

ir::SourceLoc toLoc(const Position &p) {
  ir::SourceLoc l;
  l.line = p.line;
  l.endLine = p.endLine > 0 ? p.endLine : p.line;
  l.col = p.col >= 0 ? p.col : 0;
  l.endCol = p.endCol >= 0 ? p.endCol : 0;
  return l;
}

} // namespace

BytecodeView::BytecodeView(const CodeSnapshot &code) : code_(&code) {
  decode();
  resolveJumps();
}

void BytecodeView::decode() {
  const std::vector<uint8_t> &bytes = code_->code;
  ir::SourceLoc fnLoc;
  fnLoc.line = code_->firstLine;
  if (bytes.size() % 2 != 0)
    ir::raiseDiag(ir::DiagCode::MalformedCode, code_->filename, fnLoc,
                  {"bytecode of " + code_->qualname + " has an odd length"});
  const size_t units = bytes.size() / 2;
  byStart_.assign(units, -1);
  byOffset_.assign(units, -1);

  uint32_t ext = 0;    // EXTENDED_ARG bits collected so far
  int extStart = -1;   // code unit of the first pending EXTENDED_ARG, or -1
  int numPrefixes = 0; // pending EXTENDED_ARG count (at most 3 fit a 32-bit operand)
  for (size_t u = 0; u < units;) {
    const uint8_t number = bytes[2 * u];
    const uint8_t rawArg = bytes[2 * u + 1];
    std::optional<PyOp> op = pyOpFromNumber(version(), number);
    if (!op)
      ir::raiseDiag(ir::DiagCode::MalformedCode, code_->filename, fnLoc,
                    {"unknown opcode " + std::to_string(number) + " for Python " +
                     pyVersionName(version()) + " at " + offsetText(static_cast<int>(2 * u))});
    if (*op == PyOp::EXTENDED_ARG) {
      // EXTENDED_ARG contributes the next higher 8 bits of the following instruction's
      // operand; it has no caches in any version.
      if (extStart < 0)
        extStart = static_cast<int>(u);
      if (++numPrefixes > 3)
        ir::raiseDiag(
            ir::DiagCode::MalformedCode, code_->filename, fnLoc,
            {"more than three EXTENDED_ARG prefixes at " + offsetText(static_cast<int>(2 * u))});
      ext = (ext << 8) | rawArg;
      ++u;
      continue;
    }
    Instruction in;
    in.op = *op;
    in.opcode = number;
    in.arg = (ext << 8) | rawArg;
    in.index = InstrIndex(static_cast<int>(instrs_.size()));
    in.offset = ByteOffset(static_cast<int>(2 * u));
    in.start = ByteOffset(2 * (extStart >= 0 ? extStart : static_cast<int>(u)));
    in.caches = pyOpCacheEntries(version(), *op);
    if (u < code_->positions.size())
      in.pos = code_->positions[u];
    if (u + 1 + static_cast<size_t>(in.caches) > units)
      ir::raiseDiag(
          ir::DiagCode::MalformedCode, code_->filename, toLoc(in.pos),
          {std::string("truncated ") + pyOpName(in.op) + " at " + offsetText(in.offset.value)});
    byStart_[static_cast<size_t>(in.start.value / 2)] = in.index.value;
    byOffset_[u] = in.index.value;
    instrs_.push_back(in);
    ext = 0;
    extStart = -1;
    numPrefixes = 0;
    u += 1 + static_cast<size_t>(in.caches);
  }
  if (extStart >= 0)
    ir::raiseDiag(ir::DiagCode::MalformedCode, code_->filename, fnLoc,
                  {"EXTENDED_ARG at the end of the bytecode"});
}

void BytecodeView::resolveJumps() {
  for (Instruction &in : instrs_) {
    if (pyOpJumpKind(in.op) == JumpKind::None)
      continue;
    // Since 3.11 every jump operand is relative and counts code units (2 bytes) from the
    // instruction after the jump and its inline caches: forward for most jumps, backward for
    // JUMP_BACKWARD, JUMP_BACKWARD_NO_INTERRUPT and 3.11's POP_JUMP_BACKWARD_IF_*. The
    // cache count matters: 3.13 gave JUMP_BACKWARD, POP_JUMP_IF_* and FOR_ITER one cache
    // entry each, 3.12 none to the jumps and 3.11 none at all.
    const long long delta = 2LL * in.arg;
    const long long dest =
        pyOpJumpsBackward(in.op) ? in.end().value - delta : in.end().value + delta;
    if (dest < 0 || dest >= static_cast<long long>(code_->code.size()))
      malformed(in.index, std::string(pyOpName(in.op)) + " jumps outside the code");
    in.jumpOffset = ByteOffset(static_cast<int>(dest));
    std::optional<InstrIndex> t = indexAtStart(*in.jumpOffset);
    if (!t)
      malformed(in.index,
                std::string(pyOpName(in.op)) + " jumps into the middle of an instruction");
    if (in.op == PyOp::FOR_ITER) {
      // Where an exhausted FOR_ITER goes. Verified by tracing the executed offsets of a
      // loop with each interpreter (tests/fixtures/make_bytecode_fixtures.py records them for
      // for_iter_probe; ForIterExitMatchesExecution checks this code against them).
      switch (version()) {
      case PyVersion::Py311:
        // 3.11 pops the iterator and jumps to the target itself (the code after the loop).
        break;
      case PyVersion::Py312:
        // 3.12's target is an END_FOR (which would pop the iterator and the value), but the
        // exhausted FOR_ITER pops the iterator itself and jumps one unit further, over the
        // END_FOR: `dis` shows "to END_FOR", execution continues after it.
        if (!contains(t->next()) || at(*t).op != PyOp::END_FOR)
          malformed(in.index, "FOR_ITER does not jump to an END_FOR");
        t = t->next();
        break;
      case PyVersion::Py313:
        // 3.13's target is END_FOR followed by POP_TOP (together they pop the value and the
        // iterator); the exhausted FOR_ITER pops the iterator and skips both.
        if (!contains(t->next().next()) || at(*t).op != PyOp::END_FOR ||
            at(t->next()).op != PyOp::POP_TOP)
          malformed(in.index, "FOR_ITER does not jump to END_FOR, POP_TOP");
        t = t->next().next();
        break;
      }
    }
    in.target = t;
  }
}

std::optional<InstrIndex> BytecodeView::indexAtStart(ByteOffset off) const {
  if (off.value < 0 || off.value % 2 != 0 || static_cast<size_t>(off.value / 2) >= byStart_.size())
    return std::nullopt;
  int i = byStart_[static_cast<size_t>(off.value / 2)];
  return i < 0 ? std::nullopt : std::optional<InstrIndex>(InstrIndex(i));
}

std::optional<InstrIndex> BytecodeView::indexAtOffset(ByteOffset off) const {
  if (off.value < 0 || off.value % 2 != 0 || static_cast<size_t>(off.value / 2) >= byOffset_.size())
    return std::nullopt;
  int i = byOffset_[static_cast<size_t>(off.value / 2)];
  return i < 0 ? std::nullopt : std::optional<InstrIndex>(InstrIndex(i));
}

std::vector<ExceptionTableEntry> BytecodeView::exceptionTable() const {
  // Format (CPython 3.11+, Objects/exception_handling_notes.txt): each entry is four
  // varints (start, length, target in code units; depth << 1 | lasti). A varint is big-endian
  // 6-bit groups, bit 6 (0x40) meaning "more follows"; bit 7 (0x80) marks an entry's first
  // byte.
  const std::vector<uint8_t> &t = code_->exceptionTable;
  std::vector<ExceptionTableEntry> out;
  size_t p = 0;
  auto varint = [&]() -> long long {
    long long v = 0;
    for (int n = 0;; ++n) {
      if (p >= t.size() || n > 5) {
        ir::SourceLoc l;
        l.line = code_->firstLine;
        ir::raiseDiag(ir::DiagCode::MalformedCode, code_->filename, l,
                      {"malformed exception table"});
      }
      uint8_t b = t[p++];
      v = (v << 6) | (b & 63);
      if (!(b & 64))
        return v;
    }
  };
  while (p < t.size()) {
    ExceptionTableEntry e;
    long long start = varint(), length = varint(), target = varint(), dl = varint();
    e.start = ByteOffset(static_cast<int>(2 * start));
    e.end = ByteOffset(static_cast<int>(2 * (start + length)));
    e.target = ByteOffset(static_cast<int>(2 * target));
    e.depth = static_cast<int>(dl >> 1);
    e.lasti = (dl & 1) != 0;
    out.push_back(e);
  }
  return out;
}

ir::SourceLoc BytecodeView::loc(InstrIndex i) const {
  for (int k = i.value; k >= 0; --k) {
    if (!contains(InstrIndex(k)))
      continue;
    const Position &p = instrs_[static_cast<size_t>(k)].pos;
    if (p.line > 0) {
      ir::SourceLoc l = toLoc(p);
      if (k != i.value) // borrowed line only: the columns belong to another instruction
        l.col = l.endCol = 0, l.endLine = l.line;
      return l;
    }
  }
  ir::SourceLoc l;
  l.line = l.endLine = code_->firstLine;
  return l;
}

void BytecodeView::raise(ir::DiagCode code, InstrIndex i,
                         std::initializer_list<std::string> args) const {
  ir::raiseDiag(code, code_->filename, loc(i), args);
}

std::string BytecodeView::where(InstrIndex i) const {
  if (!contains(i))
    return "";
  return " (" + std::string(pyOpName(at(i).op)) + " at " + offsetText(at(i).offset.value) + " in " +
         code_->qualname + ")";
}

void BytecodeView::internalError(InstrIndex i, const std::string &what) const {
  ir::raiseDiag(ir::DiagCode::Internal, code_->filename, loc(i), {what + where(i)});
}

void BytecodeView::malformed(InstrIndex i, const std::string &what) const {
  ir::raiseDiag(ir::DiagCode::MalformedCode, code_->filename, loc(i), {what + where(i)});
}

const ir::ConstValue &BytecodeView::constant(const Instruction &in) const {
  if (in.arg >= code_->consts.size())
    malformed(in.index, "constant index out of range");
  return code_->consts[in.arg];
}

const std::string &BytecodeView::name(const Instruction &in) const {
  if (in.arg >= code_->names.size())
    malformed(in.index, "name index out of range");
  return code_->names[in.arg];
}

GlobalOperand BytecodeView::loadGlobal(const Instruction &in) const {
  uint32_t idx = in.arg;
  bool pushNull = false;
  switch (version()) {
  case PyVersion::Py311:
  case PyVersion::Py312:
  case PyVersion::Py313:
    // 3.11 folded the old PUSH_NULL before a global callee into LOAD_GLOBAL's low bit.
    idx = in.arg >> 1;
    pushNull = (in.arg & 1) != 0;
    break;
  }
  if (idx >= code_->names.size())
    malformed(in.index, "name index out of range");
  return {&code_->names[idx], pushNull};
}

AttrOperand BytecodeView::loadAttr(const Instruction &in) const {
  uint32_t idx = in.arg;
  bool method = false;
  if (in.op == PyOp::LOAD_METHOD) {
    method = true; // 3.11 only: a separate opcode, plain name index
  } else {
    switch (version()) {
    case PyVersion::Py311:
      break; // plain name index
    case PyVersion::Py312:
    case PyVersion::Py313:
      // 3.12 merged LOAD_METHOD into LOAD_ATTR: low bit set = method form.
      idx = in.arg >> 1;
      method = (in.arg & 1) != 0;
      break;
    }
  }
  if (idx >= code_->names.size())
    malformed(in.index, "name index out of range");
  return {&code_->names[idx], method};
}

const std::string &BytecodeView::localName(uint32_t slot) const {
  if (slot >= code_->localsPlusNames.size()) {
    ir::SourceLoc l;
    l.line = code_->firstLine;
    ir::raiseDiag(ir::DiagCode::MalformedCode, code_->filename, l,
                  {"local slot " + std::to_string(slot) + " out of range in " + code_->qualname});
  }
  return code_->localsPlusNames[slot];
}

std::pair<uint32_t, uint32_t> BytecodeView::fastPair(const Instruction &in) const {
  // 3.13 superinstructions pack two 4-bit slot numbers: the high nibble is acted on first.
  return {in.arg >> 4, in.arg & 15};
}

CompareOperand BytecodeView::compareOp(const Instruction &in) const {
  static constexpr ir::CmpOp kCmp[] = {ir::CmpOp::Lt, ir::CmpOp::Le, ir::CmpOp::Eq,
                                       ir::CmpOp::Ne, ir::CmpOp::Gt, ir::CmpOp::Ge};
  uint32_t idx = 0;
  bool toBool = false;
  switch (version()) {
  case PyVersion::Py311:
    idx = in.arg; // the index into dis.cmp_op
    break;
  case PyVersion::Py312:
    idx = in.arg >> 4; // low 4 bits: a mask the specializer uses
    break;
  case PyVersion::Py313:
    idx = in.arg >> 5;           // low 4 bits: the specializer's mask
    toBool = (in.arg & 16) != 0; // bit 4: the result is coerced to bool (fused TO_BOOL)
    break;
  }
  if (idx >= 6)
    malformed(in.index, "bad COMPARE_OP operand " + std::to_string(in.arg));
  return {kCmp[idx], toBool};
}

ir::CmpOp BytecodeView::isOrContainsOp(const Instruction &in) const {
  if (in.arg > 1)
    malformed(in.index, "bad operand " + std::to_string(in.arg));
  if (in.op == PyOp::IS_OP)
    return in.arg ? ir::CmpOp::IsNot : ir::CmpOp::Is;
  return in.arg ? ir::CmpOp::NotIn : ir::CmpOp::In;
}

BinaryOperand BytecodeView::binaryOp(const Instruction &in) const {
  // The NB_* numbering (Include/opcode.h, dis._nb_ops), the same in 3.11, 3.12 and 3.13.
  static constexpr ir::BinaryOp kOps[] = {
      ir::BinaryOp::Add,    ir::BinaryOp::And,    ir::BinaryOp::FloorDiv, ir::BinaryOp::LShift,
      ir::BinaryOp::MatMul, ir::BinaryOp::Mul,    ir::BinaryOp::Mod,      ir::BinaryOp::Or,
      ir::BinaryOp::Pow,    ir::BinaryOp::RShift, ir::BinaryOp::Sub,      ir::BinaryOp::TrueDiv,
      ir::BinaryOp::Xor};
  constexpr uint32_t n = sizeof(kOps) / sizeof(kOps[0]);
  if (in.arg >= 2 * n)
    malformed(in.index, "bad BINARY_OP operand " + std::to_string(in.arg));
  return {kOps[in.arg % n], in.arg >= n};
}

std::vector<std::string> BytecodeView::kwNames(const ir::ConstValue &c, InstrIndex at) const {
  if (c.kind != ir::ConstValue::Kind::Tuple)
    malformed(at, "keyword names are not a tuple");
  std::vector<std::string> out;
  for (const ir::ConstValue &e : c.elems) {
    if (e.kind != ir::ConstValue::Kind::String)
      malformed(at, "keyword name is not a string");
    out.push_back(e.s);
  }
  return out;
}

} // namespace ptxjit::frontend
