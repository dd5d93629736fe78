// The table of NumPy ufuncs (NumpyUfuncs.def) and the resolution of their calls in kernels.
#include "ir/typing/NumpyUfuncs.h"

#include "ir/typing/MathBuiltins.h"

#include <unordered_map>

namespace ptxjit::ir {

namespace {

/// The ptxjit type of NumPy type character `c`, or null for the types ptxjit lacks.
const ScalarType *typeOfChar(char c) {
  switch (c) {
  case '?':
    return types::boolean();
  case 'b':
    return types::int8();
  case 'B':
    return types::uint8();
  case 'h':
    return types::int16();
  case 'H':
    return types::uint16();
  case 'i':
    return types::int32();
  case 'I':
    return types::uint32();
  case 'l': // C long: 64 bits on the platforms ptxjit supports (Linux), as 'q'
  case 'q':
    return types::int64();
  case 'L':
  case 'Q':
    return types::uint64();
  case 'e':
    return types::float16();
  case 'f':
    return types::float32();
  case 'd':
    return types::float64();
  case 'F':
    return types::complex64();
  case 'D':
    return types::complex128();
  default: // g/G long double, O object, m/M datetimes
    return nullptr;
  }
}

char charOfType(const ScalarType *t) {
  switch (t->kind()) {
  case TypeKind::Bool:
    return '?';
  case TypeKind::Int: {
    const char *chars = t->isSigned() ? "bhiq" : "BHIQ";
    return chars[t->bits() == 8 ? 0 : t->bits() == 16 ? 1 : t->bits() == 32 ? 2 : 3];
  }
  case TypeKind::Float:
    return t->bits() == 16 ? 'e' : t->bits() == 32 ? 'f' : 'd';
  default:
    return t->bits() == 64 ? 'F' : 'D';
  }
}

/// The loops of NumPy's list `spec` ("ff->f dd->d ...") whose types ptxjit has, each once.
std::vector<LoopTypes> parseLoops(const std::string &spec) {
  std::vector<LoopTypes> loops;
  size_t pos = 0;
  while (pos < spec.size()) {
    size_t end = spec.find(' ', pos);
    if (end == std::string::npos)
      end = spec.size();
    std::string word = spec.substr(pos, end - pos);
    pos = end + 1;
    size_t arrow = word.find("->");
    if (word.empty() || arrow == std::string::npos)
      continue;
    LoopTypes l;
    bool ok = true;
    for (size_t k = 0; k < word.size() && ok; ++k) {
      if (k == arrow || k == arrow + 1)
        continue;
      const ScalarType *t = typeOfChar(word[k]);
      ok = t != nullptr;
      (k < arrow ? l.inputs : l.outputs).push_back(t);
    }
    bool seen = false;
    for (const LoopTypes &o : loops)
      seen = seen || (o.inputs == l.inputs && o.outputs == l.outputs);
    if (ok && !seen)
      loops.push_back(std::move(l));
  }
  return loops;
}

struct Table {
  std::vector<NumpyUfunc> ufuncs;
  std::unordered_map<BuiltinId, const NumpyUfunc *> byId;
  Table() {
    auto add = [&](BuiltinId id, int nin, UfuncResolver r, const char *loops) {
      NumpyUfunc u;
      u.id = id;
      std::string path = builtinPath(id);
      u.name = path.substr(path.find('.') + 1);
      u.nin = nin;
      u.resolver = r;
      u.loops = parseLoops(loops);
      ufuncs.push_back(std::move(u));
    };
#define PTXJIT_NP_UFUNC(id, nin, resolver, loops)                                                  \
  add(BuiltinId::id, nin, UfuncResolver::resolver, loops);
#include "ir/typing/NumpyUfuncs.def"
#undef PTXJIT_NP_UFUNC
    for (const NumpyUfunc &u : ufuncs)
      byId[u.id] = &u;
  }
};

const Table &table() {
  static const Table t;
  return t;
}

bool isRealScalar(const Type *t) {
  return t->isScalarNumber() && t->kind() != TypeKind::Complex &&
         t->kind() != TypeKind::WeakComplex;
}

} // namespace

const NumpyUfunc *numpyUfunc(BuiltinId id) {
  auto it = table().byId.find(id);
  return it == table().byId.end() ? nullptr : it->second;
}

std::vector<const NumpyUfunc *> numpyUfuncs() {
  std::vector<const NumpyUfunc *> out;
  for (const NumpyUfunc &u : table().ufuncs)
    out.push_back(&u);
  return out;
}

std::string loopTypesStr(const LoopTypes &l) {
  std::string s;
  for (const ScalarType *t : l.inputs)
    s += charOfType(t);
  s += "->";
  for (const ScalarType *t : l.outputs)
    s += charOfType(t);
  return s;
}

bool typedAsUfunc(const NumpyUfunc &u, const std::vector<const Type *> &args, size_t numKw) {
  const MathKind *k = mathKindOf(u.id);
  if (!k || *k == MathKind::Ufunc || numKw > 0 || args.size() != static_cast<size_t>(u.nin))
    return true;
  for (const Type *t : args)
    if (!t || !isRealScalar(t))
      return true;
  // NumPy 2's floor, ceil and trunc keep integers and bools in their own type (their integer
  // loops), where the math-function typing would give a float.
  const bool keepsInts =
      u.id == BuiltinId::NpFloor || u.id == BuiltinId::NpCeil || u.id == BuiltinId::NpTrunc;
  if (keepsInts && (args[0]->kind() == TypeKind::Int || args[0]->kind() == TypeKind::WeakInt ||
                    args[0]->kind() == TypeKind::Bool))
    return true;
  return false;
}

UfuncCall resolveUfuncCall(const NumpyUfunc &u, const std::vector<const Type *> &args,
                           const std::vector<std::string> &kwNames) {
  UfuncCall call;
  auto refuse = [&](std::string why) {
    UfuncCall r;
    r.error = std::move(why);
    return r;
  };
  const size_t nkw = std::min(kwNames.size(), args.size());
  const size_t npos = args.size() - nkw;
  const size_t nin = static_cast<size_t>(u.nin);
  int out = -1;
  for (size_t k = 0; k < nkw; ++k) {
    if (kwNames[k] != "out")
      return refuse("keyword argument '" + kwNames[k] + "' is not supported (only out=)");
    out = static_cast<int>(npos + k);
  }
  if (npos < nin || npos > nin + 1)
    return refuse("it takes " + std::to_string(nin) + " input" + (nin == 1 ? "" : "s") +
                  " and an optional output array, not " + std::to_string(npos) +
                  " positional arguments");
  if (npos == nin + 1) {
    if (out >= 0)
      return refuse("cannot specify 'out' as both a positional and keyword argument");
    out = static_cast<int>(nin);
  }
  // out=None is NumPy's spelling of no output.
  if (out >= 0 && args[out]->kind() == TypeKind::None)
    out = -1;
  const ArrayType *outType = nullptr;
  if (out >= 0) {
    outType = dyn_cast<ArrayType>(args[out]);
    if (!outType)
      return refuse("the output must be an array, not " + args[out]->str());
    if (outType->readonly())
      return refuse("the output array " + outType->str() + " is read-only");
    if (!outType->scalarDtype())
      return refuse("the output array " + outType->str() + " holds " +
                    (isa<RecordType>(outType->dtype()) ? "records" : "strings") + ", not numbers");
  }
  std::vector<InputType> inputs;
  bool anyArray = false;
  for (size_t k = 0; k < nin; ++k) {
    const Type *t = args[k];
    if (auto *a = dyn_cast<ArrayType>(t)) {
      anyArray = true;
      if (outType && a->ndim() > outType->ndim())
        return refuse("input " + std::to_string(k) + " has " + std::to_string(a->ndim()) +
                      " dimensions, more than the output array's " +
                      std::to_string(outType->ndim()) + ": it cannot broadcast onto the output");
      if (!a->scalarDtype())
        return refuse("input " + std::to_string(k) + " is " + t->str() + ", an array of " +
                      (isa<RecordType>(a->dtype()) ? "records" : "strings") + ", not of numbers");
      inputs.push_back(a->scalarDtype());
    } else if (t->isScalarNumber()) {
      inputs.push_back(t);
    } else {
      return refuse("input " + std::to_string(k) + " is " + t->str() +
                    ", not a number or an array");
    }
  }
  if (anyArray && !outType)
    return refuse("a kernel cannot allocate the result array: pass an output array, as in "
                  "numpy." +
                  u.name + "(x, out) or numpy." + u.name + "(x, out=out)");
  // Python scalars take NumPy's NEP 50 promotion with the other inputs (int32 array and 2.0:
  // float64; float32 array and 2.0: float32) before the loop search, as NumPy's promotion does.
  std::vector<const ScalarType *> concrete = lazyLoopTypes(inputs);
  bool allIntOrBool = true, allBool = true;
  for (const ScalarType *t : concrete) {
    allIntOrBool = allIntOrBool && (t->kind() == TypeKind::Int || t->kind() == TypeKind::Bool);
    allBool = allBool && t->kind() == TypeKind::Bool;
  }
  if (u.resolver == UfuncResolver::TrueDivide && allIntOrBool)
    for (const ScalarType *&t : concrete)
      t = types::float64();
  if (u.resolver == UfuncResolver::NoBool && allBool)
    return refuse("numpy boolean " + u.name + " is not supported, as in NumPy");
  std::vector<InputType> loopInputs(concrete.begin(), concrete.end());
  std::vector<const ScalarType *> outputs;
  if (outType)
    outputs.push_back(outType->scalarDtype());
  LoopMatch m = resolveLoop(loopInputs, u.loops, outputs, Casting::SameKind);
  if (m.loop < 0) {
    if (m.outputRefused)
      return refuse("ufunc '" + u.name + "' output cannot be cast from " + m.outputFrom->str() +
                    " to " + m.outputTo->str() + " with casting rule 'same_kind'");
    return refuse("ufunc '" + u.name + "' is not supported for the input types (" +
                  inputTypesStr(inputs) + ")");
  }
  for (size_t k = 0; k < nin; ++k)
    call.inputs.push_back(k);
  call.out = out;
  call.loop = u.loops[m.loop];
  call.result = outType ? static_cast<const Type *>(outType) : call.loop.outputs[0];
  return call;
}

} // namespace ptxjit::ir
