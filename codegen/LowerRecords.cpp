// Lowering of records (NumPy structured dtypes). A record value is the address of its bytes
// (an array element, a kernel argument's device copy, an element of a local or shared array):
// a field is the memory at that address plus its offset. Scalars are loaded and stored with
// the alignment the record's layout guarantees (RecordType::fieldAlignment), nested arrays
// become C-contiguous array views of their bytes, nested records their addresses, and whole
// records are copied byte for byte.
#include "codegen/Lowering.h"

#include "ir/typing/Typing.h"

namespace ptxjit::codegen::detail {

using namespace ir;

llvm::Value *FunctionLowerer::recordFieldAddress(llvm::Value *rec, const RecordField &f) {
  return B.CreateInBoundsGEP(B.getInt8Ty(), rec, B.getInt64(f.offset), "field." + f.name);
}

llvm::Value *FunctionLowerer::loadRecordField(llvm::Value *rec, const RecordType *r,
                                              const RecordField &f, const Type *res, SourceLoc at) {
  llvm::Value *addr = recordFieldAddress(rec, f);
  if (auto *s = dyn_cast<ScalarType>(f.type))
    return convert(loadScalar(B, addr, s, r->fieldAlignment(f.offset, s)), s, res, at);
  if (auto *n = dyn_cast<NestedArrayType>(f.type)) {
    std::vector<llvm::Value *> dims;
    for (int64_t d : n->shape())
      dims.push_back(B.getInt64(d));
    return cudaArrayValue(addr, dims, n->dtype()->byteSize());
  }
  if (auto *cs = dyn_cast<CharSeqType>(f.type)) // a string: its code units
    return B.CreateAlignedLoad(
        M.memType(cs), addr,
        llvm::Align(static_cast<uint64_t>(r->fieldAlignment(f.offset, alignmentScalar(cs)))),
        "str");
  return addr; // a nested record
}

void FunctionLowerer::storeRecordField(llvm::Value *rec, const RecordType *r, const RecordField &f,
                                       const Instr *value, llvm::Value *v, const Type *vt,
                                       SourceLoc at) {
  llvm::Value *addr = recordFieldAddress(rec, f);
  if (auto *cs = dyn_cast<CharSeqType>(f.type)) {
    uint64_t align = static_cast<uint64_t>(r->fieldAlignment(f.offset, alignmentScalar(cs)));
    storeCharSeq(addr, cs, align, value, v, vt, at);
    return;
  }
  if (auto *s = dyn_cast<ScalarType>(f.type)) {
    if (!isa<ScalarType>(concretize(vt)))
      internal(at, "storing " + vt->str() + " into the field " + f.name + " of " + r->str());
    storeScalar(B, addr, convert(v, vt, s, at), s, r->fieldAlignment(f.offset, s));
    return;
  }
  if (auto *n = dyn_cast<NestedArrayType>(f.type)) {
    // The whole nested array: a number broadcast, or an array copied (as a view assignment).
    std::vector<llvm::Value *> dims;
    for (int64_t d : n->shape())
      dims.push_back(B.getInt64(d));
    llvm::Value *view = cudaArrayValue(addr, dims, n->dtype()->byteSize());
    assignToView(view, types::array(n->dtype(), static_cast<int>(dims.size()), Layout::C), v, vt,
                 at);
    return;
  }
  copyRecord(addr, v, cast<RecordType>(f.type));
}

void FunctionLowerer::copyRecord(llvm::Value *dst, llvm::Value *src, const RecordType *r) {
  // memmove: `a[i] = a[i]` and overlapping nested records stay correct.
  llvm::Align align(static_cast<uint64_t>(r->baseAlignment()));
  B.CreateMemMove(dst, align, src, align, B.getInt64(r->size()));
}

llvm::Value *FunctionLowerer::recordArrayFieldView(llvm::Value *arr, const ArrayType *aty,
                                                   const RecordField &f, SourceLoc at) {
  // The field in every element: the same shape and strides, the data moved by the offset; a
  // nested array's dimensions follow, with their C strides.
  std::vector<int64_t> inner;
  int64_t elemSize = 0;
  if (auto *n = dyn_cast<NestedArrayType>(f.type)) {
    inner = n->shape();
    elemSize = n->dtype()->byteSize();
  } else if (auto *s = dyn_cast<ScalarType>(f.type)) {
    elemSize = s->byteSize();
  } else if (auto *cs = dyn_cast<CharSeqType>(f.type)) {
    elemSize = cs->byteSize();
  } else {
    internal(at, "a view of the record field " + f.name + " of " + aty->str());
  }
  int nd = aty->ndim(), k = static_cast<int>(inner.size());
  llvm::Value *out = llvm::PoisonValue::get(M.arrayType(nd + k));
  llvm::Value *data = B.CreateExtractValue(arr, 0);
  out = B.CreateInsertValue(out, recordFieldAddress(data, f), 0);
  for (int d = 0; d < nd; ++d) {
    out = B.CreateInsertValue(out, B.CreateExtractValue(arr, {1u, unsigned(d)}), {1u, unsigned(d)});
    out = B.CreateInsertValue(out, B.CreateExtractValue(arr, {2u, unsigned(d)}), {2u, unsigned(d)});
  }
  int64_t stride = elemSize;
  for (int d = k - 1; d >= 0; --d) {
    out = B.CreateInsertValue(out, B.getInt64(inner[d]), {1u, unsigned(nd + d)});
    out = B.CreateInsertValue(out, B.getInt64(stride), {2u, unsigned(nd + d)});
    stride *= inner[d];
  }
  return out;
}

const RecordField &FunctionLowerer::fieldOf(const RecordType *r, const Instr *index, SourceLoc at) {
  const RecordField *f = selectedRecordField(r, index);
  if (!f)
    internal(at, "a record field index that typing did not check, on " + r->str());
  return *f;
}

const RecordField &FunctionLowerer::fieldNamed(const RecordType *r, const std::string &name,
                                               SourceLoc at) {
  const RecordField *f = r->field(name);
  if (!f)
    fail(at, DiagCode::NoRecordField, {r->str(), name});
  return *f;
}

void FunctionLowerer::lowerSetAttr(const SetAttrInstr &i) {
  SourceLoc at = i.loc;
  auto *r = dyn_cast<RecordType>(concretize(typeOf(i.operand(0), at)));
  if (!r)
    internal(at, "attribute assignment on " + typeOf(i.operand(0), at)->str());
  storeRecordField(valueOf(i.operand(0), at), r, fieldNamed(r, i.attr, at), i.operand(1),
                   valueOf(i.operand(1), at), typeOf(i.operand(1), at), at);
}

} // namespace ptxjit::codegen::detail
