// Typing rules of the math-like builtins (math.*, numpy.* scalar functions,
// NumPy scalar types as casts); see ir/typing/MathBuiltins.def.
#include "ir/typing/MathBuiltins.h"
#include "ir/typing/TypingInternal.h"

namespace ptxjit::ir::typing_detail {

const Type *mathCallType(BuiltinId id, MathKind kind,
                         const std::vector<const Type *> &args) {
  const size_t n = args.size();
  auto allReal = [&]() {
    for (const Type *t : args)
      if (!isRealNumber(t))
        return false;
    return true;
  };
  switch (kind) {
  case MathKind::Constant:
    return nullptr;
  case MathKind::Unary:
  case MathKind::Degrees:
  case MathKind::Radians:
    if (n != 1 || !allReal())
      return nullptr;
    return mathFloatResult(args);
  case MathKind::Binary:
    if (n != 2 || !allReal())
      return nullptr;
    return mathFloatResult(args);
  case MathKind::Log:
    if (n < 1 || n > 2 || !allReal())
      return nullptr;
    return mathFloatResult(args);
  case MathKind::ToInt:
    if (n != 1 || !allReal())
      return nullptr;
    // numba-cuda's math.trunc/ceil/floor of a bfloat16 are its htrunc/hceil/hfloor: bfloat16.
    return args[0] == types::bfloat16() ? args[0] : types::int64();
  case MathKind::Predicate:
    if (id == BuiltinId::NpIsnat) // NumPy's: datetimes and timedeltas only
      return n == 1 && (args[0]->kind() == TypeKind::Datetime ||
                        args[0]->kind() == TypeKind::Timedelta)
                 ? types::boolean()
                 : nullptr;
    if (n != 1 || !allReal())
      return nullptr;
    return types::boolean();
  case MathKind::Frexp:
    if (n != 1 || !allReal())
      return nullptr;
    return types::tuple({mathFloatResult(args), types::int64()});
  case MathKind::Ldexp:
    if (n != 2 || !isRealNumber(args[0]) || !isIntOrBool(args[1]))
      return nullptr;
    return mathFloatResult({args[0]});
  case MathKind::Modf: {
    if (n != 1 || !allReal())
      return nullptr;
    const Type *f = mathFloatResult(args);
    return types::tuple({f, f});
  }
  case MathKind::Abs:
    if (n != 1 || !args[0]->isScalarNumber())
      return nullptr;
    if (isComplexLike(args[0]))
      return concretize(args[0]) == types::complex64() ? types::float32()
                                                       : types::float64();
    return args[0]->kind() == TypeKind::Bool ? types::boolean()
                                             : concretize(args[0]);
  case MathKind::CUnary:
  case MathKind::CPredicate:
  case MathKind::Phase:
  case MathKind::Polar:
    if (n != 1 || !args[0]->isScalarNumber())
      return nullptr;
    if (kind == MathKind::CUnary)
      return mathComplexResult(args);
    if (kind == MathKind::CPredicate)
      return types::boolean();
    if (kind == MathKind::Phase)
      return mathComplexResult(args) == types::complex64() ? types::float32()
                                                           : types::float64();
    {
      const Type *f = mathComplexResult(args) == types::complex64()
                          ? types::float32()
                          : types::float64();
      return types::tuple({f, f});
    }
  case MathKind::CLog:
    if (n < 1 || n > 2)
      return nullptr;
    for (const Type *t : args)
      if (!t->isScalarNumber())
        return nullptr;
    return mathComplexResult(args);
  case MathKind::Rect:
    if (n != 2 || !allReal())
      return nullptr;
    return types::complex128();
  case MathKind::MakeComplex:
    if (n < 1 || n > 2)
      return nullptr;
    for (const Type *t : args)
      if (!t->isScalarNumber() || (n == 2 && isComplexLike(t)))
        return nullptr;
    return types::complex128();
  case MathKind::Conjugate:
  case MathKind::BitCount:
    return nullptr; // typed by typeNumberMethodCall (needs the object)
  case MathKind::Ufunc:
    return nullptr; // typed by resolveUfuncCall (NumpyUfuncs.h)
  case MathKind::Cast: {
    const ScalarType *to = mathCastType(id);
    if (n > 1 || !to || (n == 1 && !args[0]->isScalarNumber()))
      return nullptr;
    if (n == 1 && isComplexLike(args[0]) && to->kind() != TypeKind::Complex)
      return nullptr;
    return to;
  }
  }
  return nullptr;
}

const Type *numberAttrType(const Type *t, const std::string &attr,
                           BuiltinId &builtin) {
  if (!t->isScalarNumber())
    return nullptr;
  if (attr == "conjugate") {
    builtin = BuiltinId::NumberConjugate;
    return types::symbol("number.conjugate");
  }
  if (attr == "bit_count" && isIntLike(t) && t->kind() != TypeKind::Bool) {
    builtin = BuiltinId::NumberBitCount;
    return types::symbol("number.bit_count");
  }
  if (attr != "real" && attr != "imag")
    return nullptr;
  const Type *c = concretize(t);
  if (c == types::complex64())
    return types::float32();
  if (c == types::complex128())
    return types::float64();
  return c->kind() == TypeKind::Bool ? types::int64() : c;
}

} // namespace ptxjit::ir::typing_detail
