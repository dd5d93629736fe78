// Typing of NumPy's fixed-length strings in kernels: elements of `S<n>` and `U<n>` arrays and
// record fields (Numba's CharSeq and UnicodeCharSeq). Kernels store string constants into them
// (numba's casts: bytes into S, str into U, truncated or zero-filled to the length, as NumPy
// assigns), copy one element into another of the same type, and compare an element with a
// constant or another element of its kind.
#include "ir/ConstantOf.h"
#include "ir/typing/TypingInternal.h"

namespace ptxjit::ir {

std::vector<uint32_t> utf8CodePoints(const std::string &s) {
  // The snapshot holds str constants as valid UTF-8 (lone surrogates are refused there), so
  // every sequence is well formed; a malformed byte is taken as its own value regardless.
  std::vector<uint32_t> out;
  for (size_t k = 0; k < s.size();) {
    auto b = static_cast<unsigned char>(s[k]);
    int extra = b >= 0xf0 ? 3 : b >= 0xe0 ? 2 : b >= 0xc0 ? 1 : 0;
    uint32_t cp = extra == 3 ? b & 0x07u : extra == 2 ? b & 0x0fu : extra == 1 ? b & 0x1fu : b;
    if (extra && k + static_cast<size_t>(extra) >= s.size()) { // cut short
      out.push_back(b);
      ++k;
      continue;
    }
    for (int e = 1; e <= extra; ++e)
      cp = (cp << 6) | (static_cast<unsigned char>(s[k + e]) & 0x3fu);
    out.push_back(cp);
    k += static_cast<size_t>(extra) + 1;
  }
  return out;
}

std::optional<std::vector<uint32_t>> charSeqConstantUnits(const Instr *v, const CharSeqType *cs,
                                                          const Function *fn) {
  std::vector<uint32_t> units;
  if (cs->isUnicode()) {
    std::optional<std::string> s = constantStringOf(v, fn);
    if (!s)
      return std::nullopt;
    units = utf8CodePoints(*s);
  } else {
    std::optional<std::string> b = constantBytesOf(v, fn);
    if (!b)
      return std::nullopt;
    for (unsigned char ch : *b)
      units.push_back(ch);
  }
  units.resize(static_cast<size_t>(cs->count()), 0); // NumPy truncates, or pads with zeros
  return units;
}

} // namespace ptxjit::ir

namespace ptxjit::ir::typing_detail {

void Typer::checkCharSeqStore(Instr *at, const CharSeqType *cs, const Instr *value,
                              const std::string &container, const std::string &index) {
  const Type *v = value->type;
  if (v == cs || charSeqConstantUnits(value, cs, &fn_))
    return;
  bool isStr = v->kind() == TypeKind::String || v->kind() == TypeKind::StrLiteral;
  bool isBytes = v->kind() == TypeKind::Bytes;
  std::string n = std::to_string(cs->count());
  std::string why;
  if (isStr && !cs->isUnicode())
    why = "a str; " + cs->str() + " elements (NumPy's S" + n +
          ") take bytes constants such as b'abc', as in numba";
  else if (isBytes && cs->isUnicode())
    why = "bytes; " + cs->str() + " elements (NumPy's U" + n +
          ") take str constants such as 'abc', as in numba";
  else if (isStr || isBytes)
    why = "the string is not a compile-time constant, and kernels store only constant " +
          std::string("strings into ") + cs->str() + " elements";
  else if (isa<CharSeqType>(v))
    why = "an element of another string type: numba copies only between elements of one type";
  else
    why = cs->str() + " elements take " + (cs->isUnicode() ? "str" : "bytes") +
          " constants and elements of their own type";
  fail(DiagCode::StringStore, at, {container, index, v->str(), why});
}

const Type *Typer::typeCharSeqCompare(CompareInstr *i, const Type *a, const Type *b) {
  // numba's charseq_eq / charseq_ne: an S element with another S element or a bytes constant,
  // a U element with another U element or a str constant.
  auto kindOf = [&](const Instr *op, const Type *t) -> int { // 1 bytes, 2 str, 0 neither
    if (auto *cs = dyn_cast<CharSeqType>(t))
      return cs->isUnicode() ? 2 : 1;
    if (constantStringOf(op, &fn_))
      return 2;
    if (constantBytesOf(op, &fn_))
      return 1;
    return 0;
  };
  int ka = kindOf(i->operand(0), a), kb = kindOf(i->operand(1), b);
  const char *why = nullptr;
  if (i->cmp != CmpOp::Eq && i->cmp != CmpOp::Ne)
    why = " (strings in kernels compare only with == and !=)";
  else if (ka == 0 || kb == 0)
    why = " (an S or U element compares with an element or a constant string)";
  else if (ka != kb)
    why = " (S elements compare with bytes, U elements with str, as in numba)";
  if (why)
    fail(DiagCode::OperatorTypes, i, {cmpOpName(i->cmp), a->str(), b->str() + why});
  return types::boolean();
}

} // namespace ptxjit::ir::typing_detail
