// The table of cuda.bf16 and cuda.fp16 (ir/typing/LowFloat.def) and the typing of their calls.
#include "ir/typing/LowFloat.h"

#include "ir/typing/TypingInternal.h"

#include <algorithm>
#include <vector>

namespace ptxjit::ir {
namespace {

enum class Other : uint8_t {
  None,
  Int8,
  UInt8,
  Int16,
  UInt16,
  Int32,
  UInt32,
  Int64,
  UInt64,
  Float32,
  Float64
};

const ScalarType *typeOf(Other o) {
  switch (o) {
  case Other::None:
    return nullptr;
  case Other::Int8:
    return types::int8();
  case Other::UInt8:
    return types::uint8();
  case Other::Int16:
    return types::int16();
  case Other::UInt16:
    return types::uint16();
  case Other::Int32:
    return types::int32();
  case Other::UInt32:
    return types::uint32();
  case Other::Int64:
    return types::int64();
  case Other::UInt64:
    return types::uint64();
  case Other::Float32:
    return types::float32();
  case Other::Float64:
    return types::float64();
  }
  return nullptr;
}

struct Table {
  std::vector<const LowFloatFunction *> byId; // indexed by BuiltinId
  std::vector<LowFloatFunction> functions;
  Table() {
    struct Row {
      BuiltinId id;
      bool bfloat;
      LowFloatOp op;
      Other other;
      Rounding rounding;
    };
    static const Row rows[] = {
#define PTXJIT_BF16(name, op, other, rounding)                                                     \
  {BuiltinId::Bf16_##name, true, LowFloatOp::op, Other::other, Rounding::rounding},
#define PTXJIT_FP16(id, name, op, other, rounding)                                                 \
  {BuiltinId::Fp16_##id, false, LowFloatOp::op, Other::other, Rounding::rounding},
#include "ir/typing/LowFloat.def"
#undef PTXJIT_FP16
#undef PTXJIT_BF16
    };
    size_t maxId = 0;
    for (const Row &r : rows)
      maxId = std::max(maxId, static_cast<size_t>(r.id));
    functions.reserve(std::size(rows));
    byId.assign(maxId + 1, nullptr);
    for (const Row &r : rows) {
      functions.push_back(
          {r.op, r.bfloat ? types::bfloat16() : types::float16(), typeOf(r.other), r.rounding});
      byId[static_cast<size_t>(r.id)] = &functions.back();
    }
  }
};

const Table &table() {
  static const Table t;
  return t;
}

} // namespace

int LowFloatFunction::arity() const {
  switch (op) {
  case LowFloatOp::Fma:
  case LowFloatOp::FmaSat:
  case LowFloatOp::FmaRelu:
    return 3;
  case LowFloatOp::Add:
  case LowFloatOp::Sub:
  case LowFloatOp::Mul:
  case LowFloatOp::Div:
  case LowFloatOp::AddRn:
  case LowFloatOp::SubRn:
  case LowFloatOp::MulRn:
  case LowFloatOp::AddSat:
  case LowFloatOp::SubSat:
  case LowFloatOp::MulSat:
  case LowFloatOp::Max:
  case LowFloatOp::Min:
  case LowFloatOp::MaxNan:
  case LowFloatOp::MinNan:
    return 2;
  default:
    return op >= LowFloatOp::Eq && op <= LowFloatOp::Ltu ? 2 : 1;
  }
}

std::vector<const ScalarType *> LowFloatFunction::params() const {
  if (op == LowFloatOp::From || op == LowFloatOp::FromBits)
    return {other};
  return std::vector<const ScalarType *>(static_cast<size_t>(arity()), elem);
}

const ScalarType *LowFloatFunction::result() const {
  if ((op >= LowFloatOp::Eq && op <= LowFloatOp::Ltu) || op == LowFloatOp::IsNan)
    return types::boolean();
  if (op == LowFloatOp::IsInf)
    return types::int32();
  if (op == LowFloatOp::To || op == LowFloatOp::AsBits)
    return other;
  return elem;
}

const LowFloatFunction *lowFloatFunction(BuiltinId id) {
  const auto &byId = table().byId;
  size_t k = static_cast<size_t>(id);
  return k < byId.size() ? byId[k] : nullptr;
}

namespace typing_detail {

const Type *lowFloatCallType(const Function &fn, CallInstr *i, const LowFloatFunction &f) {
  std::vector<const ScalarType *> params = f.params();
  auto bad = [&](const std::string &why) {
    raiseDiag(DiagCode::CallArgs, fn.filename, i->loc,
              {builtinPath(i->builtin), argListStr(i) + "; " + why});
  };
  if (!i->kwNames.empty())
    bad("keyword arguments are not supported");
  std::string sig = "(" + typeListStr({params.begin(), params.end()}) + ")";
  if (i->numArgs() != params.size())
    bad("it takes " + std::to_string(params.size()) + " argument" +
        (params.size() == 1 ? "" : "s") + " " + sig);
  for (size_t k = 0; k < params.size(); ++k)
    if (!isRealNumber(i->arg(k)->type))
      bad("the arguments must be real numbers (converted to " + sig + ")");
  return f.result();
}

} // namespace typing_detail
} // namespace ptxjit::ir
