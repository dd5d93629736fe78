// Typing rules of NumPy's array reductions (ArrayReductions.h): NumPy's result types.
#include "ir/typing/ArrayReductions.h"

#include "ir/ConstantOf.h"
#include "ir/typing/CudaBuiltins.h"

#include <vector>

namespace ptxjit::ir {

namespace {

struct Entry {
  Reduction op;
  const char *name;
  bool method;
  BuiltinId function;
  BuiltinId methodId;
};

const Entry kEntries[] = {
#define PTXJIT_REDUCTION(id, name, method)                                                         \
  {Reduction::id, name, method != 0, BuiltinId::Np##id, BuiltinId::Arr##id},
#include "ir/typing/ArrayReductions.def"
#undef PTXJIT_REDUCTION
};

const Entry &entryOf(Reduction r) { return kEntries[static_cast<size_t>(r)]; }

bool isSumLike(Reduction r) {
  return r == Reduction::Sum || r == Reduction::Prod || r == Reduction::Nansum ||
         r == Reduction::Nanprod;
}
bool isMeanLike(Reduction r) {
  return r == Reduction::Mean || r == Reduction::Nanmean || r == Reduction::Average;
}
bool isVarLike(Reduction r) {
  return r == Reduction::Var || r == Reduction::Std || r == Reduction::Nanvar ||
         r == Reduction::Nanstd;
}
bool isArgLike(Reduction r) {
  return r == Reduction::Argmin || r == Reduction::Argmax || r == Reduction::Nanargmin ||
         r == Reduction::Nanargmax;
}

/// The parameters after the array, as NumPy names them.
std::vector<std::string> parametersOf(Reduction r) {
  if (isSumLike(r) || isMeanLike(r)) {
    if (r == Reduction::Average)
      return {"axis", "weights"};
    return {"axis", "dtype", "out"};
  }
  if (isVarLike(r))
    return {"axis", "dtype", "out", "ddof"};
  return {"axis", "out"};
}

bool isNoneConstant(const Instr *i) {
  const ConstValue *c = constantValueOf(i);
  return (c && c->kind == ConstValue::Kind::None) || (i->type && i->type->kind() == TypeKind::None);
}

/// NumPy's accumulator type of sum and prod: bools and signed ints below 64 bits give int64,
/// unsigned ints uint64; floats and complex keep their type.
const ScalarType *sumType(const ScalarType *t) {
  if (t->kind() == TypeKind::Bool || (t->kind() == TypeKind::Int && t->isSigned()))
    return types::int64();
  if (t->kind() == TypeKind::Int)
    return types::uint64();
  return t;
}

/// The real type of complex `t` (itself for others).
const ScalarType *realPart(const ScalarType *t) {
  return t->kind() == TypeKind::Complex ? types::floating(t->bits() / 2) : t;
}

/// float16 arithmetic runs in float32 (NumPy's float16 loops compute in float).
const ScalarType *widenHalf(const ScalarType *t) {
  return t == types::float16() ? types::float32() : t;
}

} // namespace

const char *reductionName(Reduction r) { return entryOf(r).name; }

bool reductionOf(BuiltinId id, Reduction &out) {
  for (const Entry &e : kEntries)
    if (e.function == id || (e.method && e.methodId == id)) {
      out = e.op;
      return true;
    }
  return false;
}

const char *reductionMethodPath(const std::string &attr) {
  for (const Entry &e : kEntries)
    if (e.method && attr == e.name)
      return builtinPath(e.methodId);
  return nullptr;
}

ReductionCall resolveReduction(const CallInstr *i, Reduction op) {
  ReductionCall c;
  const Entry &e = entryOf(op);
  const bool isMethod = i->builtin == e.methodId;
  auto refuse = [&](const std::string &why) {
    ReductionCall r;
    r.error = why;
    return r;
  };
  std::vector<std::string> names = parametersOf(op);
  if (!isMethod)
    names.insert(names.begin(), "a");
  std::vector<const Instr *> bound;
  std::string why;
  if (!bindCallArgs(i, names, bound, why))
    return refuse(why);
  const size_t first = isMethod ? 0 : 1; // where the keywords after the array start
  if (isMethod) {
    c.array = i->callee()->numOperands() ? i->callee()->operand(0) : nullptr;
  } else {
    c.array = bound[0];
  }
  if (!c.array || !c.array->type)
    return refuse("expected an array");
  c.arrayType = dyn_cast<ArrayType>(concretize(c.array->type));
  if (!c.arrayType)
    return refuse("it takes an array in kernels, not " + concretize(c.array->type)->str());
  const ScalarType *elem = c.arrayType->scalarDtype();
  if (!elem)
    return refuse(std::string("an array of ") +
                  (isa<RecordType>(c.arrayType->dtype()) ? "records" : "strings") +
                  " cannot be reduced");
  c.op = op;
  for (size_t k = first; k < bound.size(); ++k) {
    const Instr *a = bound[k];
    if (!a)
      continue;
    const std::string &name = names[k];
    if (name == "axis") {
      // A 1-d array reduced along its only axis gives the same scalar; any other axis would
      // give an array, which a kernel cannot allocate.
      if (isNoneConstant(a))
        continue;
      const ConstValue *v = constantValueOf(a);
      if (c.arrayType->ndim() == 1 && v && v->kind == ConstValue::Kind::Int &&
          (v->i == 0 || v->i == -1))
        continue;
      return refuse("axis= other than None (or 0 of a 1-d array) is not supported: the result "
                    "would be an array, which a kernel cannot allocate");
    }
    if (name == "out") {
      if (!isNoneConstant(a))
        return refuse("out= is not supported (the result is a scalar)");
      continue;
    }
    if (name == "weights") {
      if (!isNoneConstant(a))
        return refuse("weights= is not supported (numpy.average(a) is numpy.mean(a))");
      continue;
    }
    if (name == "dtype") {
      if (isNoneConstant(a))
        continue;
      auto *dt = dyn_cast<ScalarType>(constantDtype(a));
      if (!dt)
        return refuse("dtype must be a compile-time number type such as numpy.float64, not " +
                      a->type->str());
      c.compute = dt;
      continue;
    }
    if (name == "ddof") {
      const Type *t = a->type ? concretize(a->type) : nullptr;
      if (!t || !(t->kind() == TypeKind::Int || t->kind() == TypeKind::Bool))
        return refuse("ddof must be an integer, not " + (t ? t->str() : std::string("?")));
      c.ddof = a;
      continue;
    }
  }
  const ScalarType *given = c.compute;
  const bool integral = elem->kind() == TypeKind::Bool || elem->kind() == TypeKind::Int;
  if (isSumLike(op)) {
    c.result = given ? given : sumType(elem);
    c.compute = widenHalf(c.result);
  } else if (isMeanLike(op)) {
    c.result = given ? given : integral ? types::float64() : elem;
    c.compute = widenHalf(c.result);
  } else if (isVarLike(op)) {
    const ScalarType *t = given ? given : integral ? types::float64() : elem;
    c.result = realPart(t);
    c.compute = widenHalf(t);
  } else if (isArgLike(op) || op == Reduction::CountNonzero) {
    c.result = types::int64();
  } else if (op == Reduction::All || op == Reduction::Any) {
    c.result = types::boolean();
  } else { // min, max, amin, amax, nanmin, nanmax, ptp
    if (op == Reduction::Ptp && elem->kind() == TypeKind::Bool)
      return refuse("numpy.ptp of booleans is not supported (NumPy's boolean subtract)");
    c.result = elem;
  }
  return c;
}

} // namespace ptxjit::ir
