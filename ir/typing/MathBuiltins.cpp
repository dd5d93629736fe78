// Tables for the math-like builtins (see MathBuiltins.h).
#include "ir/typing/MathBuiltins.h"

#include "ir/Types.h"

#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

namespace ptxjit::ir {

const MathKind *mathKindOf(BuiltinId id) {
  static const std::unordered_map<BuiltinId, MathKind> table = {
#define PTXJIT_MATH_BUILTIN(id, path, kind, fn) {BuiltinId::id, MathKind::kind},
#include "ir/typing/MathBuiltins.def"
#undef PTXJIT_MATH_BUILTIN
  };
  auto it = table.find(id);
  return it == table.end() ? nullptr : &it->second;
}

const ScalarType *mathCastType(BuiltinId id) {
  const MathKind *k = mathKindOf(id);
  if (!k || *k != MathKind::Cast)
    return nullptr;
  std::string path = builtinPath(id);
  return types::scalarByName(path.substr(path.find('.') + 1));
}

std::optional<bool> isInstanceOf(const Type *value, const Type *cls, std::string &why) {
  const Type *v = concretize(value); // a literal is its default type, as Numba types it
  switch (v->kind()) {
  case TypeKind::Int:
  case TypeKind::Float:
  case TypeKind::Complex:
  case TypeKind::Bool:
  case TypeKind::Tuple:
  case TypeKind::Array:
  case TypeKind::None:
  case TypeKind::String:
  case TypeKind::StrLiteral:
  case TypeKind::CharSeq:
    break;
  default:
    why = "isinstance() does not support values of type " + v->str();
    return std::nullopt;
  }
  std::vector<const Type *> classes{cls};
  if (auto *t = dyn_cast<TupleType>(cls))
    classes = t->elements();
  bool result = false;
  for (const Type *c : classes) {
    auto *sym = dyn_cast<SymbolType>(c);
    if (!sym) {
      why = "isinstance()'s second argument must be a class or a tuple of classes, not " + c->str();
      return std::nullopt;
    }
    const std::string &path = sym->path();
    if (path == "builtins.tuple") {
      result = result || v->kind() == TypeKind::Tuple;
      continue;
    }
    if (path == "builtins.str") {
      TypeKind k = v->kind();
      result =
          result || k == TypeKind::String || k == TypeKind::StrLiteral || k == TypeKind::CharSeq;
      continue;
    }
    const Type *exact = path == "builtins.int"       ? types::int64()
                        : path == "builtins.float"   ? types::float64()
                        : path == "builtins.complex" ? types::complex128()
                        : path == "builtins.bool"    ? types::boolean()
                                                     : mathCastType(builtinByPath(path));
    if (!exact) {
      why = "isinstance() does not support the class " + path.substr(path.find('.') + 1) +
            " (classes: int, float, complex, bool, tuple, str and NumPy's scalar types)";
      return std::nullopt;
    }
    result = result || v == exact;
  }
  return result;
}

double mathConstantValue(BuiltinId id) {
  std::string path = builtinPath(id);
  std::string name = path.substr(path.find('.') + 1);
  const double pi = 3.141592653589793238462643383279502884;
  if (name == "pi")
    return pi;
  if (name == "tau")
    return 2 * pi;
  if (name == "e")
    return 2.718281828459045235360287471352662498;
  if (name == "inf")
    return std::numeric_limits<double>::infinity();
  return std::numeric_limits<double>::quiet_NaN();
}

// The widest of float16/float32 when every argument is one of them or weak and at least one
// is (NumPy's float16 and float32 loops), else float64 (ints and bools convert to float64 as
// in Numba).
const Type *mathFloatResult(const std::vector<const Type *> &args) {
  const Type *narrow = nullptr;
  for (const Type *t : args) {
    if (t == types::float16() || t == types::bfloat16() || t == types::float32()) {
      // float16 with bfloat16: float32 holds both.
      if (!narrow || narrow == t)
        narrow = t;
      else
        narrow = types::float32();
    } else if (t->kind() != TypeKind::WeakInt && t->kind() != TypeKind::WeakFloat) {
      return types::float64();
    }
  }
  return narrow ? narrow : types::float64();
}

const Type *mathComplexResult(const std::vector<const Type *> &args) {
  bool any64 = false;
  for (const Type *t : args) {
    if (t == types::complex64() || t == types::float32() || t == types::float16() ||
        t == types::bfloat16())
      any64 = true;
    else if (t->kind() != TypeKind::WeakInt &&
             t->kind() != TypeKind::WeakFloat &&
             t->kind() != TypeKind::WeakComplex)
      return types::complex128();
  }
  return any64 ? types::complex64() : types::complex128();
}

} // namespace ptxjit::ir
