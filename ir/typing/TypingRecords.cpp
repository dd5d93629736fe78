// Typing rules for records (NumPy structured dtypes, Numba's Record): field reads `r.x`,
// `r['x']` and `r[0]` (a field by position), field writes through SetAttr and SetItem, whole
// records stored into arrays and fields, and the field views of record arrays (`a.x`).
#include "ir/typing/TypingInternal.h"

namespace ptxjit::ir::typing_detail {

const std::string *constantString(const Instr *i) {
  const ConstValue *v = nullptr;
  if (auto *c = dyn_cast<ConstInstr>(i))
    v = &c->value;
  else if (auto *g = dyn_cast<GlobalInstr>(i); g && g->value.kind == GlobalValue::Kind::Constant)
    v = &g->value.constant;
  return v && v->kind == ConstValue::Kind::String ? &v->s : nullptr;
}

} // namespace ptxjit::ir::typing_detail

namespace ptxjit::ir {

const RecordField *selectedRecordField(const RecordType *r, const Instr *index) {
  if (const std::string *name = typing_detail::constantString(index))
    return r->field(*name);
  const ConstValue *v = nullptr;
  if (auto *c = dyn_cast<ConstInstr>(index))
    v = &c->value;
  else if (auto *g = dyn_cast<GlobalInstr>(index);
           g && g->value.kind == GlobalValue::Kind::Constant)
    v = &g->value.constant;
  if (!v || v->kind != ConstValue::Kind::Int || v->isUnsigned || v->i < 0 ||
      v->i >= static_cast<int64_t>(r->fields().size()))
    return nullptr;
  return &r->fields()[static_cast<size_t>(v->i)];
}

} // namespace ptxjit::ir

namespace ptxjit::ir::typing_detail {

const Type *recordFieldValueType(const Type *fieldType, bool readonly) {
  if (auto *n = dyn_cast<NestedArrayType>(fieldType))
    return types::array(n->dtype(), static_cast<int>(n->shape().size()), Layout::C, readonly);
  if (auto *r = dyn_cast<RecordType>(fieldType); r && readonly)
    return types::readonlyRecord(r);
  return fieldType;
}

const RecordField &Typer::recordField(Instr *at, const RecordType *r, const std::string &name) {
  const RecordField *f = r->field(name);
  if (!f)
    fail(DiagCode::NoRecordField, at, {r->str(), name});
  // Numba's check on targets with strict alignment (CUDA): a field's offset must suit its
  // scalars' natural alignment (the record's start is assumed aligned).
  if (const ScalarType *s = alignmentScalar(f->type); s && f->offset % naturalAlignment(s) != 0)
    fail(DiagCode::UnalignedRecordField, at, {r->str(), name, s->str()});
  if (auto *nested = dyn_cast<RecordType>(f->type); nested && f->offset % nested->maxAlignment())
    fail(DiagCode::UnalignedRecordField, at, {r->str(), name, nested->str()});
  return *f;
}

const RecordField *Typer::recordKey(Instr *at, const RecordType *r, const Instr *index) {
  if (const RecordField *f = selectedRecordField(r, index))
    return &recordField(at, r, f->name); // the checks
  if (const std::string *name = constantString(index))
    fail(DiagCode::NoRecordField, at, {r->str(), *name});
  int64_t k = 0;
  if (constantInt(index, k))
    fail(DiagCode::IndexTypes, at,
         {r->str(), "field index " + std::to_string(k) + " (it has " +
                        std::to_string(r->fields().size()) + " fields)"});
  return nullptr;
}

void Typer::checkRecordStore(Instr *at, const Type *target, const Instr *value, const Type *v,
                             const std::string &container, const std::string &index) {
  if (auto *cs = dyn_cast<CharSeqType>(target))
    return checkCharSeqStore(at, cs, value, container, index);
  bool ok = false;
  if (auto *s = dyn_cast<ScalarType>(target))
    ok = v->isScalarNumber() && (!isComplexLike(v) || s->kind() == TypeKind::Complex);
  else if (auto *n = dyn_cast<NestedArrayType>(target)) {
    // The whole nested array: a number broadcast into it, or an array copied with NumPy's
    // broadcasting (as assignment to an array view).
    const Type *elem = v;
    if (auto *src = dyn_cast<ArrayType>(v)) {
      elem = src->scalarDtype();
      ok = elem && src->ndim() <= static_cast<int>(n->shape().size());
    } else {
      ok = v->isScalarNumber();
    }
    ok = ok && (!isComplexLike(elem) || n->dtype()->kind() == TypeKind::Complex);
  } else if (auto *r = dyn_cast<RecordType>(target)) {
    auto *src = dyn_cast<RecordType>(v); // a record of the same dtype: its bytes are copied
    ok = src && src->writable() == r->writable();
  }
  if (!ok)
    fail(DiagCode::SetItemTypes, at, {container, index, v->str()});
}

const Type *Typer::recordArrayField(Instr *at, const ArrayType *arr, const std::string &name) {
  auto *r = cast<RecordType>(arr->dtype());
  const RecordField &f = recordField(at, r, name);
  if (isa<RecordType>(f.type))
    fail(DiagCode::UnsupportedConstruct, at,
         {"the view of the record field '" + name + "' across an array of records"});
  int nd = arr->ndim();
  if (auto *cs = dyn_cast<CharSeqType>(f.type)) // a["y"] of a U12 field: its strings
    return types::array(cs, nd, Layout::A, arr->readonly());
  const ScalarType *dt = alignmentScalar(f.type);
  if (auto *n = dyn_cast<NestedArrayType>(f.type))
    nd += static_cast<int>(n->shape().size());
  return types::array(dt, nd, Layout::A, arr->readonly());
}

const Type *Typer::typeSetAttr(SetAttrInstr *i) {
  const Type *t = i->operand(0)->type;
  const Type *v = i->operand(1)->type;
  auto *r = dyn_cast<RecordType>(t);
  if (!r)
    fail(DiagCode::UnsupportedConstruct, i,
         {"assigning attribute '" + i->attr + "' of " + t->str() +
          " (only the fields of records can be assigned)"});
  const RecordField &f = recordField(i, r, i->attr);
  if (r->readonly())
    fail(DiagCode::ReadonlyArray, i, {t->str() + " (an element of a read-only array)"});
  checkRecordStore(i, f.type, i->operand(1), v, t->str(), "'" + i->attr + "'");
  return types::void_();
}

} // namespace ptxjit::ir::typing_detail
