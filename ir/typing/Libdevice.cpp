// The table of ptxjit.cuda.libdevice (ir/typing/Libdevice.def) and the typing of its calls.
#include "ir/typing/Libdevice.h"

#include "ir/typing/TypingInternal.h"

#include <array>

namespace ptxjit::ir {
namespace {

const ScalarType *typeOfLetter(char c) {
  switch (c) {
  case 'f':
    return types::float32();
  case 'd':
    return types::float64();
  case 'h':
    return types::int16();
  case 'i':
    return types::int32();
  case 'l':
    return types::int64();
  default: // 'v'
    return nullptr;
  }
}

LibdeviceFunction parse(const char *name, const char *ret, const char *params) {
  LibdeviceFunction f;
  f.name = name;
  f.returnType = typeOfLetter(ret[0]);
  for (const char *p = params; *p; ++p) {
    if (*p == ' ')
      continue;
    bool output = *p == '*';
    if (output)
      ++p;
    f.params.push_back({typeOfLetter(*p), output});
  }
  return f;
}

struct Table {
  std::vector<LibdeviceFunction> functions;
  std::vector<const LibdeviceFunction *> pointers;
  std::vector<const LibdeviceFunction *> byId; // indexed by BuiltinId
  Table() {
    struct Row {
      BuiltinId id;
      const char *name, *ret, *params;
    };
    static const Row rows[] = {
#define PTXJIT_LIBDEVICE(name, ret, params) {BuiltinId::Libdevice_##name, #name, ret, params},
#include "ir/typing/Libdevice.def"
#undef PTXJIT_LIBDEVICE
    };
    size_t maxId = 0;
    for (const Row &r : rows)
      maxId = std::max(maxId, static_cast<size_t>(r.id));
    functions.reserve(std::size(rows));
    byId.assign(maxId + 1, nullptr);
    for (const Row &r : rows) {
      functions.push_back(parse(r.name, r.ret, r.params));
      byId[static_cast<size_t>(r.id)] = &functions.back();
      pointers.push_back(&functions.back());
    }
  }
};

const Table &table() {
  static const Table t;
  return t;
}

} // namespace

std::vector<const ScalarType *> LibdeviceFunction::inputs() const {
  std::vector<const ScalarType *> in;
  for (const Param &p : params)
    if (!p.output)
      in.push_back(p.type);
  return in;
}

const Type *LibdeviceFunction::resultType() const {
  std::vector<const Type *> out;
  if (returnType)
    out.push_back(returnType);
  for (const Param &p : params)
    if (p.output)
      out.push_back(p.type);
  return out.size() == 1 ? out[0] : types::tuple(out);
}

std::string LibdeviceFunction::signature() const {
  std::string s = name + "(";
  bool first = true;
  for (const ScalarType *t : inputs()) {
    s += (first ? "" : ", ") + t->str();
    first = false;
  }
  return s + ") -> " + resultType()->str();
}

const LibdeviceFunction *libdeviceFunction(BuiltinId id) {
  const auto &byId = table().byId;
  size_t k = static_cast<size_t>(id);
  return k < byId.size() ? byId[k] : nullptr;
}

const std::vector<const LibdeviceFunction *> &libdeviceFunctions() { return table().pointers; }

namespace typing_detail {

const Type *libdeviceCallType(const Function &fn, CallInstr *i, const LibdeviceFunction &f) {
  const std::string &file = fn.filename;
  std::vector<const ScalarType *> in = f.inputs();
  auto bad = [&](const std::string &why) {
    std::string got;
    for (size_t k = 0; k < i->numArgs(); ++k)
      got += (k ? ", " : "") + i->arg(k)->type->str();
    raiseDiag(DiagCode::LibdeviceArgs, file, i->loc, {f.name, got, why});
  };
  if (!i->kwNames.empty())
    bad("libdevice functions take positional arguments only");
  if (i->numArgs() != in.size())
    bad("it takes " + std::to_string(in.size()) + " argument(s): " + f.signature());
  // As Numba's single-signature templates: any real number converts to the parameter's type.
  for (size_t k = 0; k < in.size(); ++k)
    if (!isRealNumber(i->arg(k)->type))
      bad("argument " + std::to_string(k + 1) + " must be a real number: " + f.signature());
  return f.resultType();
}

} // namespace typing_detail
} // namespace ptxjit::ir
