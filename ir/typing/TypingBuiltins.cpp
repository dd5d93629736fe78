// Typing rules for the builtins divmod, round, pow and print (see docs/language.md):
//   divmod(a, b)    -> (q, r), both of the type a // b has (complex is an error)
//   round(x)        -> int64 for a float or bool, x's type for an int
//   round(x, n)     -> x's type (a float stays a float; an int stays an int); n an int or None
//   pow(a, b)       -> the type of a ** b
//   pow(a, b, m)    -> the promoted int type of a, b, m (ints and bools only)
//   print(...)      -> None; numbers, None, string constants and tuples of those, and the dim3
//                      values cuda.threadIdx, cuda.blockIdx, cuda.blockDim and cuda.gridDim;
//                      the keywords sep= and end= take string constants (or None)
#include "ir/ConstantOf.h"
#include "ir/typing/TypingInternal.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace ptxjit::ir {

const ConstValue *constantValueOf(const Instr *i) {
  if (auto *c = dyn_cast<ConstInstr>(i))
    return &c->value;
  if (auto *g = dyn_cast<GlobalInstr>(i);
      g && g->value.kind == GlobalValue::Kind::Constant && g->value.dtype.empty())
    return &g->value.constant;
  return nullptr;
}


const Instr *onlyStoredValue(const Function &fn, int var) {
  const Instr *only = nullptr;
  int stores = 0;
  for (const auto &b : fn.blocks)
    for (const auto &ip : b->instrs)
      if (auto *st = dyn_cast<StoreLocalInstr>(ip.get()); st && st->var == var) {
        ++stores;
        only = st->operand(0);
      }
  return stores == 1 ? only : nullptr;
}

namespace {

/// constantStringOf (`bytes` false) and constantBytesOf (`bytes` true).
std::optional<std::string> constantTextOf(const Instr *i, const Function *fn, int depth,
                                          bool bytes) {
  if (!i || depth > 16)
    return std::nullopt;
  // A typed value of another type has no such value: answered before any search of the
  // function's stores (numeric comparisons ask too).
  if (const Type *t = i->type) {
    bool text = bytes ? t->kind() == TypeKind::Bytes
                      : t->kind() == TypeKind::String || t->kind() == TypeKind::StrLiteral;
    if (!text)
      return std::nullopt;
    if (auto *lit = dyn_cast<StringLiteralType>(t))
      return lit->value();
  }
  const ConstValue::Kind kind = bytes ? ConstValue::Kind::Bytes : ConstValue::Kind::String;
  if (const ConstValue *c = constantValueOf(i); c && c->kind == kind)
    return c->s;
  if (auto *ld = dyn_cast<LoadLocalInstr>(i); ld && fn) // s = "add"; ...; f(s)
    if (const Instr *only = onlyStoredValue(*fn, ld->var))
      return constantTextOf(only, fn, depth + 1, bytes);
  return std::nullopt;
}

} // namespace

std::optional<std::string> constantStringOf(const Instr *i, const Function *fn, int depth) {
  return constantTextOf(i, fn, depth, false);
}

std::optional<std::string> constantBytesOf(const Instr *i, const Function *fn, int depth) {
  return constantTextOf(i, fn, depth, true);
}

std::optional<double> floatOfPythonString(const std::string &s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
    ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
    --e;
  std::string body = s.substr(b, e - b);
  double sign = 1.0;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    sign = body[0] == '-' ? -1.0 : 1.0;
    body = body.substr(1);
  }
  std::string lower;
  for (char c : body)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "inf" || lower == "infinity")
    return sign * std::numeric_limits<double>::infinity();
  if (lower == "nan")
    return std::copysign(std::numeric_limits<double>::quiet_NaN(), sign);
  // digits[.digits][e[+-]digits] (or .digits): '_' only between two digits, as Python's grammar.
  std::string plain;
  size_t k = 0;
  auto isDigit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  auto run = [&]() {
    int n = 0;
    while (k < body.size()) {
      if (isDigit(body[k])) {
        plain += body[k++];
        ++n;
      } else if (body[k] == '_' && n > 0 && k + 1 < body.size() && isDigit(body[k + 1])) {
        ++k;
      } else {
        break;
      }
    }
    return n;
  };
  int digits = run();
  if (k < body.size() && body[k] == '.') {
    plain += body[k++];
    digits += run();
  }
  if (digits == 0)
    return std::nullopt;
  if (k < body.size() && (body[k] == 'e' || body[k] == 'E')) {
    plain += body[k++];
    if (k < body.size() && (body[k] == '+' || body[k] == '-'))
      plain += body[k++];
    if (run() == 0)
      return std::nullopt;
  }
  if (k != body.size())
    return std::nullopt;
  return sign * std::strtod(plain.c_str(), nullptr);
}

namespace typing_detail {
namespace {

/// "int64, float32": the call's positional argument types.
std::string positionalStr(const CallInstr *i, size_t npos) {
  std::string s;
  for (size_t k = 0; k < npos; ++k) {
    const Type *t = i->arg(k)->type;
    s += (k ? ", " : "") + (t ? t->str() : std::string("?"));
  }
  return s;
}

bool containsString(const Type *t) {
  if (t->kind() == TypeKind::String)
    return true;
  if (auto *tt = dyn_cast<TupleType>(t))
    for (const Type *e : tt->elements())
      if (containsString(e))
        return true;
  return false;
}

} // namespace

void Typer::checkPrintable(CallInstr *call, const Instr *src, const Type *t) {
  if (t->isScalarNumber() || t->kind() == TypeKind::None)
    return;
  if (dim3Symbol(t) >= 0) // cuda.threadIdx and the other dim3 values print as (x, y, z)
    return;
  if (t->kind() == TypeKind::String) {
    // Strings have no run-time form: the text must be known where print() is compiled.
    const ConstValue *c = src ? constantValueOf(src) : nullptr;
    if (!c || c->kind != ConstValue::Kind::String)
      fail(DiagCode::UnsupportedConstruct, call,
           {"print() of a string that is not a constant written in the call"});
    if (c->s.find('\0') != std::string::npos)
      fail(DiagCode::UnsupportedConstruct, call, {"print() of a string with a NUL character"});
    return;
  }
  if (auto *tt = dyn_cast<TupleType>(t)) {
    if (src && constantValueOf(src))
      return; // a constant tuple: numbers, None and strings, all printable
    auto *bt = src ? dyn_cast<BuildTupleInstr>(src) : nullptr;
    for (size_t k = 0; k < tt->size(); ++k) {
      const Type *et = tt->elements()[k];
      if (!bt && containsString(et))
        fail(DiagCode::UnsupportedConstruct, call,
             {"print() of a tuple holding strings that is not built in the call"});
      checkPrintable(call, bt && k < bt->numOperands() ? bt->operand(k) : nullptr, et);
    }
    return;
  }
  fail(DiagCode::UnsupportedConstruct, call, {"print() of a value of type " + t->str()});
}

const Type *Typer::typeArithPrintBuiltin(CallInstr *i, BuiltinId id,
                                         const std::vector<const Type *> &args) {
  if (id != BuiltinId::Divmod && id != BuiltinId::Round && id != BuiltinId::Pow &&
      id != BuiltinId::Print)
    return nullptr;
  i->builtin = id;
  const size_t nkw = std::min(i->kwNames.size(), args.size());
  const size_t npos = args.size() - nkw;
  const std::string name = std::string(builtinPath(id)).substr(std::string("builtins.").size());
  auto bad = [&]() { fail(DiagCode::CallArgs, i, {name, positionalStr(i, args.size())}); };

  if (id == BuiltinId::Print) {
    for (size_t k = 0; k < nkw; ++k) {
      const std::string &kw = i->kwNames[k];
      if (kw != "sep" && kw != "end")
        fail(DiagCode::UnsupportedConstruct, i, {"print() with the keyword argument '" + kw + "'"});
      const ConstValue *c = constantValueOf(i->arg(npos + k));
      if (!c || (c->kind != ConstValue::Kind::String && c->kind != ConstValue::Kind::None))
        fail(DiagCode::UnsupportedConstruct, i,
             {"print(" + kw + "=...) with a value that is not a string constant"});
      if (c->s.find('\0') != std::string::npos)
        fail(DiagCode::UnsupportedConstruct, i, {"print() of a string with a NUL character"});
    }
    for (size_t k = 0; k < npos; ++k)
      checkPrintable(i, i->arg(k), args[k]);
    return types::none();
  }

  if (nkw)
    fail(DiagCode::CallArgs, i, {name, "keyword arguments"});
  const size_t n = args.size();
  switch (id) {
  case BuiltinId::Divmod: {
    if (n != 2 || !isRealNumber(args[0]) || !isRealNumber(args[1]))
      bad();
    const Type *p = promote(args[0], args[1]);
    if (!p)
      bad();
    const Type *e = p->kind() == TypeKind::Bool ? types::int64() : concretize(p);
    return types::tuple({e, e});
  }
  case BuiltinId::Round: {
    if (n < 1 || n > 2 || !isRealNumber(args[0]))
      bad(); // complex numbers have no round() in Python either
    const bool digits = n == 2 && args[1]->kind() != TypeKind::None;
    if (digits && !isIntOrBool(args[1]))
      bad();
    const Type *x = args[0];
    if (x->kind() == TypeKind::Bool)
      return types::int64();
    if (isIntLike(x))
      return concretize(x);
    return digits ? concretize(x) : types::int64(); // a float
  }
  case BuiltinId::Pow: {
    if (n == 2) {
      if (!args[0]->isScalarNumber() || !args[1]->isScalarNumber())
        bad();
      const Type *p = promote(args[0], args[1]);
      if (!p)
        bad();
      return p->kind() == TypeKind::Bool ? types::int64() : p; // as a ** b
    }
    if (n != 3)
      bad();
    for (const Type *t : args)
      if (!isIntOrBool(t))
        bad(); // Python: pow() 3rd argument not allowed unless all arguments are integers
    const Type *p = promote(promote(args[0], args[1]), args[2]);
    if (!p || !isIntOrBool(p))
      bad(); // e.g. int64 with uint64 (promotes to float64)
    return p->kind() == TypeKind::Bool ? types::int64() : concretize(p);
  }
  default:
    break;
  }
  return nullptr;
}

} // namespace typing_detail
} // namespace ptxjit::ir
