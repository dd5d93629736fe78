// Lowering of NumPy's fixed-length strings (S<n> and U<n> elements; see CharSeqType): a
// constant stored into an element becomes one store of its n code units, cut to the length or
// padded with zeros as NumPy assigns; an element copied into one of the same type is a load
// and a store of its code units. Both backends share this code.
#include "codegen/Lowering.h"

#include "ir/ConstantOf.h"

namespace ptxjit::codegen::detail {

using namespace ir;

void FunctionLowerer::storeCharSeq(llvm::Value *addr, const CharSeqType *cs, uint64_t align,
                                   const Instr *value, llvm::Value *v, const Type *vt,
                                   SourceLoc at) {
  llvm::Align a(align);
  if (std::optional<std::vector<uint32_t>> units = charSeqConstantUnits(value, cs, &fn)) {
    llvm::Constant *c = nullptr;
    if (cs->isUnicode()) {
      c = llvm::ConstantDataArray::get(M.ctx, llvm::ArrayRef<uint32_t>(*units));
    } else {
      std::vector<uint8_t> bytes(units->begin(), units->end());
      c = llvm::ConstantDataArray::get(M.ctx, llvm::ArrayRef<uint8_t>(bytes));
    }
    B.CreateAlignedStore(c, addr, a);
    return;
  }
  if (concretize(vt) == cs) { // an element of the same type, read before
    B.CreateAlignedStore(v, addr, a);
    return;
  }
  internal(at, "storing " + vt->str() + " into a " + cs->str() + " element");
}

llvm::Value *FunctionLowerer::charSeqEqual(const Instr *lhs, const Instr *rhs, SourceLoc at) {
  // numba compares len(a) == len(b) (a string element's length ends at its last nonzero code
  // unit) and then the code units below it. That is the same as comparing both sides padded
  // with zeros to the longer one, except for a constant ending in NUL, whose length counts it:
  // no element equals it.
  struct Side {
    llvm::Value *value = nullptr; ///< an element's code units ([n x iK])
    std::vector<uint32_t> units;  ///< a constant's
    int64_t n = 0;
  };
  bool unicode = false;
  auto side = [&](const Instr *op) -> std::optional<Side> {
    Side s;
    if (auto *cs = dyn_cast<CharSeqType>(concretize(typeOf(op, at)))) {
      s.value = valueOf(op, at);
      s.n = cs->count();
      unicode = cs->isUnicode();
      return s;
    }
    if (std::optional<std::string> str = constantStringOf(op, &fn))
      s.units = utf8CodePoints(*str);
    else if (std::optional<std::string> b = constantBytesOf(op, &fn))
      s.units.assign(b->begin(), b->end());
    else
      internal(at, "comparing a string element with " + typeOf(op, at)->str());
    if (!s.units.empty() && s.units.back() == 0)
      return std::nullopt; // ends in NUL: equal to no element
    s.n = static_cast<int64_t>(s.units.size());
    return s;
  };
  std::optional<Side> l = side(lhs), r = side(rhs);
  if (!l || !r)
    return B.getFalse();
  llvm::Type *unit = unicode ? B.getInt32Ty() : B.getInt8Ty();
  auto unitAt = [&](const Side &s, int64_t k) -> llvm::Value * {
    if (k >= s.n)
      return llvm::ConstantInt::get(unit, 0);
    if (s.value)
      return B.CreateExtractValue(s.value, unsigned(k));
    return llvm::ConstantInt::get(unit, s.units[static_cast<size_t>(k)]);
  };
  llvm::Value *eq = B.getTrue();
  for (int64_t k = 0, n = std::max(l->n, r->n); k < n; ++k)
    eq = B.CreateAnd(eq, B.CreateICmpEQ(unitAt(*l, k), unitAt(*r, k)));
  return eq;
}

} // namespace ptxjit::codegen::detail
