// Typed IR of the kernels the codegen tests share, written as text.
#pragma once

#include "TypedIR.h"
#include "ir/IRParser.h"
#include "ir/Verify.h"

#include <algorithm>

namespace ptxjit::codegen::test {

/// Typed IR written as text (ir/IRParser.h), with each "$name" replaced by its value, and
/// verified. The file name is "kernels.py", as TypedBuilder's.
inline std::unique_ptr<Function>
typedText(std::string text, std::vector<std::pair<std::string, std::string>> values) {
  // Longer names first, so that "$RES" is not taken for "$R" followed by "ES".
  std::sort(values.begin(), values.end(),
            [](const auto &a, const auto &b) { return a.first.size() > b.first.size(); });
  for (const auto &[name, value] : values)
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at))
      text.replace(at, name.size(), value);
  std::unique_ptr<Function> fn = parseFunction(text);
  fn->filename = "kernels.py";
  fn->firstLine = 1;
  verify(*fn);
  return fn;
}

/// def saxpy(a, x, y, out):
///     i = cuda.grid(1)
///     if i < x.size:
///         out[i] = a * x[i] + y[i]
inline std::unique_ptr<Function> makeSaxpy(const ScalarType *dt = types::float32(),
                                           Layout layout = Layout::C) {
  return typedText(R"(
function saxpy(a: $D, x: $A, y: $A, out: $A) kernel -> void
  var a : $D
  var x : $A
  var y : $A
  var out : $A
  var i : int64
bb0:
  %0 = Global cuda [symbol cuda] : Symbol(cuda)
  %1 = GetAttr %0 .grid : Symbol(cuda.grid)
  %2 = Const 1 : Literal[int]
  %3 = Call %1(%2) : int64 {cuda.grid}
  StoreLocal i, %3
  %5 = LoadLocal x : $A
  %6 = GetAttr %5 .size : int64 {array.size}
  %7 = LoadLocal i : int64
  %8 = Compare < %7, %6 : bool
  Branch %8, bb1, bb2
bb1:
  %10 = LoadLocal i : int64
  %11 = LoadLocal x : $A
  %12 = GetItem %11[%10] : $D
  %13 = LoadLocal a : $D
  %14 = BinOp * %13, %12 : $D
  %15 = LoadLocal i : int64
  %16 = LoadLocal y : $A
  %17 = GetItem %16[%15] : $D
  %18 = BinOp + %14, %17 : $D
  %19 = LoadLocal i : int64
  %20 = LoadLocal out : $A
  SetItem %20[%19] = %18
  Jump bb2
bb2:
  Return
)",
                   {{"$D", dt->str()}, {"$A", arr(dt, 1, layout)->str()}});
}

/// def elementwise(a, b, out):  out[cuda.grid(1)] = a[i] <op> b[i]   (computed in `result`,
/// stored into `outType` arrays)
inline std::unique_ptr<Function> makeElementwise(BinaryOp op, const ScalarType *lt,
                                                 const ScalarType *rt, const Type *result,
                                                 const ScalarType *outType) {
  return typedText(R"(
function elementwise(a: $LA, b: $RA, out: $OA) kernel -> void
  var a : $LA
  var b : $RA
  var out : $OA
  var i : int64
bb0:
  %0 = Global cuda [symbol cuda] : Symbol(cuda)
  %1 = GetAttr %0 .grid : Symbol(cuda.grid)
  %2 = Const 1 : Literal[int]
  %3 = Call %1(%2) : int64 {cuda.grid}
  StoreLocal i, %3
  %5 = LoadLocal out : $OA
  %6 = GetAttr %5 .size : int64 {array.size}
  %7 = LoadLocal i : int64
  %8 = Compare < %7, %6 : bool
  Branch %8, bb1, bb2
bb1:
  %10 = LoadLocal i : int64
  %11 = LoadLocal a : $LA
  %12 = GetItem %11[%10] : $L
  %13 = LoadLocal i : int64
  %14 = LoadLocal b : $RA
  %15 = GetItem %14[%13] : $R
  %16 = BinOp $OP %12, %15 : $RES
  %17 = LoadLocal i : int64
  %18 = LoadLocal out : $OA
  SetItem %18[%17] = %16
  Jump bb2
bb2:
  Return
)",
                   {{"$LA", arr(lt)->str()},
                    {"$RA", arr(rt)->str()},
                    {"$OA", arr(outType)->str()},
                    {"$L", lt->str()},
                    {"$R", rt->str()},
                    {"$OP", binaryOpName(op)},
                    {"$RES", result->str()}});
}

} // namespace ptxjit::codegen::test
