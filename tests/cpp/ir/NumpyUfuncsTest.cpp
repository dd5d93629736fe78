// NumPy's ufuncs in kernels (ir/typing/NumpyUfuncs.h): the loop table and the resolution of a
// call that typing and codegen share (operands, loop, result type, refusals).
#include "ir/typing/NumpyUfuncs.h"

#include <gtest/gtest.h>

using namespace ptxjit::ir;

namespace {

const NumpyUfunc &ufunc(BuiltinId id) {
  const NumpyUfunc *u = numpyUfunc(id);
  EXPECT_NE(u, nullptr);
  return *u;
}

const ArrayType *arr(const ScalarType *dt, int ndim = 1, bool readonly = false) {
  return types::array(dt, ndim, Layout::C, readonly);
}

/// The loop a call resolves to, as "ff->f", or "error: ..." when it is refused.
std::string loopOf(BuiltinId id, const std::vector<const Type *> &args,
                   const std::vector<std::string> &kw = {}) {
  UfuncCall c = resolveUfuncCall(ufunc(id), args, kw);
  return c.error.empty() ? loopTypesStr(c.loop) : "error: " + c.error;
}

} // namespace

TEST(NumpyUfuncs, TableKeepsNumpysLoopsOverPtxjitsTypes) {
  const NumpyUfunc &sin = ufunc(BuiltinId::NpSin);
  EXPECT_EQ(sin.name, "sin");
  EXPECT_EQ(sin.nin, 1);
  std::vector<std::string> loops;
  for (const LoopTypes &l : sin.loops)
    loops.push_back(loopTypesStr(l));
  // g/G (long double) and O (object) are skipped.
  EXPECT_EQ(loops, (std::vector<std::string>{"e->e", "f->f", "d->d", "F->F", "D->D"}));
  EXPECT_EQ(loopTypesStr(ufunc(BuiltinId::NpAbsolute).loops.back()), "D->d");
  EXPECT_EQ(numpyUfunc(BuiltinId::MathSin), nullptr);
  EXPECT_GE(numpyUfuncs().size(), 60u);
}

TEST(NumpyUfuncs, LoopsAreNumpysChoice) {
  const ScalarType *f64 = types::float64(), *f32 = types::float32();
  // Integers of float ufuncs: int32 needs float64; int16 fits float32, uint8 float16.
  EXPECT_EQ(loopOf(BuiltinId::NpSin, {arr(types::int32()), arr(f64)}), "d->d");
  EXPECT_EQ(loopOf(BuiltinId::NpSin, {arr(types::int16()), arr(f64)}), "f->f");
  EXPECT_EQ(loopOf(BuiltinId::NpSin, {arr(types::uint8()), arr(f32)}), "e->e");
  EXPECT_EQ(loopOf(BuiltinId::NpSin, {arr(types::complex64()), arr(types::complex64())}), "F->F");
  // int64 with uint64 compares exactly (NumPy 1.25), other mixes promote.
  EXPECT_EQ(loopOf(BuiltinId::NpLess, {types::int64(), types::uint64()}), "qQ->?");
  EXPECT_EQ(loopOf(BuiltinId::NpLess, {types::uint64(), types::int64()}), "Qq->?");
  EXPECT_EQ(loopOf(BuiltinId::NpLess, {types::int8(), types::uint8()}), "hh->?");
  EXPECT_EQ(loopOf(BuiltinId::NpMaximum, {types::int64(), types::uint64()}), "dd->d");
  // Python scalars are weak (NEP 50).
  EXPECT_EQ(loopOf(BuiltinId::NpAdd, {arr(f32), types::weakFloat(), arr(f64)}), "ff->f");
  EXPECT_EQ(loopOf(BuiltinId::NpAdd, {arr(types::int32()), types::weakFloat(), arr(f64)}), "dd->d");
  EXPECT_EQ(loopOf(BuiltinId::NpAdd, {arr(types::int8()), types::weakInt(), arr(f64)}), "bb->b");
  EXPECT_EQ(loopOf(BuiltinId::NpAdd, {types::weakInt(), types::weakFloat()}), "dd->d");
  // Division of integers is float64; bool + bool is the bool loop.
  EXPECT_EQ(loopOf(BuiltinId::NpTrueDivide, {types::int8(), types::int8()}), "dd->d");
  EXPECT_EQ(loopOf(BuiltinId::NpAdd, {types::boolean(), types::boolean()}), "??->?");
  // The output array takes part: an int64 output keeps the int64 loop of power.
  EXPECT_EQ(loopOf(BuiltinId::NpPower, {arr(types::int64()), types::int64(), arr(f32)}), "qq->q");
}

TEST(NumpyUfuncs, OperandsAndResultTypes) {
  const ArrayType *out = arr(types::float32(), 2);
  UfuncCall c = resolveUfuncCall(ufunc(BuiltinId::NpHypot),
                                 {arr(types::float64()), types::float32(), out}, {"out"});
  ASSERT_TRUE(c.error.empty()) << c.error;
  EXPECT_EQ(c.inputs, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(c.out, 2);
  EXPECT_EQ(c.result, out);
  c = resolveUfuncCall(ufunc(BuiltinId::NpEqual), {types::int8(), types::uint8()}, {});
  EXPECT_EQ(c.out, -1);
  EXPECT_EQ(c.result, types::boolean());
  // out=None is no output.
  c = resolveUfuncCall(ufunc(BuiltinId::NpCos), {types::float32(), types::none()}, {"out"});
  EXPECT_EQ(c.result, types::float32());
}

TEST(NumpyUfuncs, WhichCallsAreTypedAsUfuncs) {
  const NumpyUfunc &sin = ufunc(BuiltinId::NpSin);
  EXPECT_FALSE(typedAsUfunc(sin, {types::int32()}, 0)); // the math builtin's float64
  EXPECT_FALSE(typedAsUfunc(sin, {types::weakFloat()}, 0));
  EXPECT_TRUE(typedAsUfunc(sin, {types::complex64()}, 0));
  EXPECT_TRUE(typedAsUfunc(sin, {arr(types::float32())}, 0));
  EXPECT_TRUE(typedAsUfunc(sin, {types::float32(), arr(types::float32())}, 0));
  EXPECT_TRUE(typedAsUfunc(sin, {types::float32(), arr(types::float32())}, 1));
  EXPECT_TRUE(typedAsUfunc(ufunc(BuiltinId::NpEqual), {types::int32(), types::int32()}, 0));
}

TEST(NumpyUfuncs, RefusalsSayWhy) {
  auto err = [](BuiltinId id, const std::vector<const Type *> &args,
                const std::vector<std::string> &kw = {}) {
    return resolveUfuncCall(ufunc(id), args, kw).error;
  };
  const ScalarType *f64 = types::float64();
  EXPECT_NE(err(BuiltinId::NpSin, {arr(f64)}).find("a kernel cannot allocate the result array"),
            std::string::npos);
  EXPECT_EQ(err(BuiltinId::NpSin, {arr(types::int32()), arr(types::int32())}),
            "ufunc 'sin' output cannot be cast from float64 to int32 with casting rule "
            "'same_kind'");
  EXPECT_EQ(err(BuiltinId::NpBitwiseAnd, {arr(f64), types::weakInt(), arr(f64)}),
            "ufunc 'bitwise_and' is not supported for the input types (float64, int)");
  EXPECT_NE(err(BuiltinId::NpSin, {arr(f64, 2), arr(f64, 1)}).find("more than the output"),
            std::string::npos);
  EXPECT_NE(err(BuiltinId::NpSin, {arr(f64), arr(f64, 1, true)}).find("is read-only"),
            std::string::npos);
  EXPECT_NE(err(BuiltinId::NpSin, {arr(f64), arr(f64), arr(f64)}, {"out"}).find("both"),
            std::string::npos);
  EXPECT_NE(err(BuiltinId::NpSin, {arr(f64), arr(f64)}, {"where"}).find("'where'"),
            std::string::npos);
  EXPECT_NE(err(BuiltinId::NpSin, {f64, f64}).find("must be an array"), std::string::npos);
  EXPECT_NE(err(BuiltinId::NpAdd, {f64}).find("takes 2 inputs"), std::string::npos);
  EXPECT_NE(err(BuiltinId::NpSin, {types::tuple({f64}), arr(f64)}).find("not a number"),
            std::string::npos);
  EXPECT_NE(err(BuiltinId::NpNegative, {types::boolean()}).find("numpy boolean negative"),
            std::string::npos);
  // Only all-bool inputs are refused.
  EXPECT_EQ(loopOf(BuiltinId::NpSubtract, {types::boolean(), types::int8()}), "bb->b");
}
