// Broadcasting, loop simplification, type resolution and gufunc layouts of the ufunc layer.
#include "ufunc/Broadcast.h"
#include "ir/LoopResolution.h"
#include "ufunc/Layout.h"
#include "ufunc/Ufunc.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace ptxjit;
using namespace ptxjit::ufunc;
namespace t = ptxjit::ir::types;

TEST(Broadcast, ShapesFollowNumpyRules) {
  EXPECT_EQ(broadcastShapes({{2, 3}, {3}}), (Shape{2, 3}));
  EXPECT_EQ(broadcastShapes({{4, 1}, {1, 5}, {}}), (Shape{4, 5}));
  EXPECT_EQ(broadcastShapes({{0, 1}, {3}}), (Shape{0, 3}));
  EXPECT_EQ(broadcastShapes({}), Shape{});
  try {
    broadcastShapes({{2, 3}, {4}});
    FAIL() << "no error";
  } catch (const std::invalid_argument &e) {
    EXPECT_STREQ(e.what(), "operands could not be broadcast together with shapes (2,3) (4,) ");
  }
  EXPECT_EQ(shapeStr({}), "()");
  EXPECT_EQ(shapeStr({7}), "(7,)");
}

TEST(Broadcast, StridesAreZeroForStretchedDimensions) {
  EXPECT_EQ(broadcastStrides({3}, {8}, {2, 3}), (Strides{0, 8}));
  EXPECT_EQ(broadcastStrides({2, 1}, {8, 8}, {2, 5}), (Strides{8, 0}));
  EXPECT_EQ(contiguousStrides({2, 3}, 4, false), (Strides{12, 4}));
  EXPECT_EQ(contiguousStrides({2, 3}, 4, true), (Strides{4, 8}));
}

TEST(Broadcast, ContiguousOperandsMergeIntoOneFlatDimension) {
  LoopSpace s{{2, 3, 4},
              {contiguousStrides({2, 3, 4}, 4, false), contiguousStrides({2, 3, 4}, 8, false)}};
  LoopSpace r = simplifyLoop(s, 1);
  EXPECT_EQ(r.shape, (Shape{24}));
  EXPECT_EQ(r.strides[0], (Strides{4}));
  EXPECT_TRUE(isFlat(r, {4, 8}));
  // Fortran-ordered operands are walked in memory order and merge too.
  LoopSpace f{{2, 3}, {contiguousStrides({2, 3}, 8, true), contiguousStrides({2, 3}, 8, true)}};
  LoopSpace rf = simplifyLoop(f, 1);
  EXPECT_EQ(rf.shape, (Shape{6}));
  EXPECT_TRUE(isFlat(rf, {8, 8}));
}

TEST(Broadcast, BroadcastOperandsKeepTheGeneralPath) {
  LoopSpace s{{4, 5}, {Strides{0, 8}, Strides{40, 8}}};
  LoopSpace r = simplifyLoop(s, 1);
  EXPECT_EQ(r.shape, (Shape{4, 5}));
  EXPECT_FALSE(isFlat(r, {8, 8}));
  // Scalars (item size 0) do not prevent the flat path; length-1 dimensions vanish.
  LoopSpace one{{1, 5, 1}, {Strides{0, 0, 0}, Strides{40, 8, 8}}};
  LoopSpace r1 = simplifyLoop(one, 1);
  EXPECT_EQ(r1.shape, (Shape{5}));
  EXPECT_TRUE(isFlat(r1, {0, 8}));
  EXPECT_EQ(simplifyLoop({{3, 0}, {Strides{8, 8}}}, 0).shape, (Shape{0}));
  EXPECT_EQ(simplifyLoop({{}, {Strides{}}}, 0).shape, Shape{});
}

TEST(TypeResolution, FirstSafeLoopWinsAndPythonScalarsAreWeak) {
  std::vector<ir::LoopTypes> loops = {{{t::float32(), t::float32()}, {t::float32()}},
                                      {{t::float64(), t::float64()}, {t::float64()}},
                                      {{t::int64(), t::int64()}, {t::int64()}}};
  ir::InputType f32 = t::float32(), i32 = t::int32(), pyf = t::weakFloat(), pyi = t::weakInt();
  EXPECT_EQ(ir::resolveLoop({f32, f32}, loops, {}, ir::Casting::SameKind).loop, 0);
  // NEP 50: the Python float stays float32.
  EXPECT_EQ(ir::resolveLoop({f32, pyf}, loops, {}, ir::Casting::SameKind).loop, 0);
  // int32 → float64 is the first safe loop.
  EXPECT_EQ(ir::resolveLoop({i32, i32}, loops, {}, ir::Casting::SameKind).loop, 1);
  // All weak: int64 defaults, → the float64 loop.
  EXPECT_EQ(ir::resolveLoop({pyi, pyi}, loops, {}, ir::Casting::SameKind).loop, 1);
  EXPECT_EQ(ir::resolveLoop({t::complex64(), f32}, loops, {}, ir::Casting::SameKind).loop, -1);
  EXPECT_EQ(ir::inputTypesStr({f32, pyf}), "float32, float");
}

// NumPy skips a loop whose output cannot be cast to the output array given: int64 inputs with
// an int64 `out` take the int64 loop, not the float64 one before it.
TEST(TypeResolution, OutputArraysTakePartInTheChoice) {
  std::vector<ir::LoopTypes> loops = {{{t::float32(), t::float32()}, {t::float32()}},
                                      {{t::float64(), t::float64()}, {t::float64()}},
                                      {{t::int64(), t::int64()}, {t::int64()}}};
  ir::InputType i64 = t::int64();
  EXPECT_EQ(ir::resolveLoop({i64, i64}, loops, {}, ir::Casting::SameKind).loop, 1);
  EXPECT_EQ(ir::resolveLoop({i64, i64}, loops, {t::int64()}, ir::Casting::SameKind).loop, 2);
  // float64 → float32 is same_kind: the first loop taking the inputs stays.
  EXPECT_EQ(ir::resolveLoop({i64, i64}, loops, {t::float32()}, ir::Casting::SameKind).loop, 1);
  // Without a loop whose output casts, the first refused cast is reported.
  ir::LoopMatch m =
      ir::resolveLoop({t::float64(), t::float64()}, loops, {t::int32()}, ir::Casting::SameKind);
  EXPECT_EQ(m.loop, -1);
  EXPECT_TRUE(m.outputRefused);
  EXPECT_EQ(m.outputFrom, t::float64());
  EXPECT_EQ(m.outputTo, t::int32());
  // Casting::No (gufuncs): only the same dtype.
  EXPECT_EQ(ir::resolveLoop({i64, i64}, loops, {t::float32()}, ir::Casting::No).loop, -1);
}

// Gufuncs' second try (Ufunc::resolve): inputs may narrow within their kind, as numba-cuda
// casts them (the loop's type casts safely to the input's), but not change kind.
TEST(TypeResolution, NarrowingStaysWithinAKind) {
  std::vector<ir::LoopTypes> loops = {{{t::int32(), t::float32()}, {t::float32()}}};
  ir::InputType i64 = t::int64(), f64 = t::float64(), pyi = t::weakInt();
  auto pick = [&](std::vector<ir::InputType> in, bool narrowing) {
    return ir::resolveLoop(in, loops, {}, ir::Casting::No, narrowing).loop;
  };
  EXPECT_EQ(pick({i64, f64}, false), -1);
  EXPECT_EQ(pick({i64, f64}, true), 0);
  EXPECT_EQ(pick({t::int16(), f64}, true), 0);       // a safe cast and a narrowing
  EXPECT_EQ(pick({pyi, t::weakFloat()}, false), -1); // all weak: int64, float64
  EXPECT_EQ(pick({pyi, t::weakFloat()}, true), 0);
  EXPECT_EQ(pick({f64, f64}, true), -1);             // float for int: another kind
  EXPECT_EQ(pick({i64, t::complex128()}, true), -1); // complex for float
  EXPECT_EQ(pick({i64, t::int64()}, true), -1);      // int64 for float32: not within a kind
  EXPECT_EQ(pick({t::uint64(), f64}, true), -1);     // numba-cuda's rule refuses it too
}

TEST(TypeResolution, LazyLoopsPromoteWeakScalars) {
  ir::InputType f32 = t::float32(), i32 = t::int32(), pyf = t::weakFloat(), pyi = t::weakInt();
  EXPECT_EQ(ir::lazyLoopTypes({f32, pyf}),
            (std::vector<const ir::ScalarType *>{t::float32(), t::float32()}));
  EXPECT_EQ(ir::lazyLoopTypes({i32, pyf}),
            (std::vector<const ir::ScalarType *>{t::int32(), t::float64()}));
  EXPECT_EQ(ir::lazyLoopTypes({i32, pyi}),
            (std::vector<const ir::ScalarType *>{t::int32(), t::int32()}));
  EXPECT_EQ(ir::lazyLoopTypes({pyi}), (std::vector<const ir::ScalarType *>{t::int64()}));
}

TEST(Layout, ParsesGufuncSignatures) {
  GufuncLayout l = parseLayout("(m, n),(n,p) -> (m,p)");
  EXPECT_EQ(l.text, "(m,n),(n,p)->(m,p)");
  ASSERT_EQ(l.nin(), 2u);
  ASSERT_EQ(l.nout(), 1u);
  EXPECT_EQ(l.inputs[1], (std::vector<std::string>{"n", "p"}));
  GufuncLayout s = parseLayout("(),(n)->(),(3)");
  EXPECT_TRUE(s.inputs[0].empty());
  EXPECT_EQ(s.outputs[1], (std::vector<std::string>{"3"}));
  for (const char *bad :
       {"(n)", "(n)->", "->(n)", "(n,)->()", "(n)->(n", "n->()", "(n)->()x", "(1a)->()"})
    EXPECT_THROW(parseLayout(bad), std::invalid_argument) << bad;
}

TEST(Layout, BindsCoreDimensionsAndBroadcastsLoops) {
  GufuncLayout l = parseLayout("(m,n),(n,p)->(m,p)");
  CoreBinding cb = bindCoreDims(l, {{5, 2, 3}, {3, 4}}, {nullptr});
  EXPECT_EQ(cb.loopShape, (Shape{5}));
  EXPECT_EQ(cb.coreShapes[2], (Shape{2, 4}));
  EXPECT_THROW(bindCoreDims(l, {{2, 3}, {4, 4}}, {nullptr}), std::invalid_argument);
  EXPECT_THROW(bindCoreDims(l, {{3}, {3, 4}}, {nullptr}), std::invalid_argument);
  GufuncLayout free = parseLayout("(n)->(q)");
  EXPECT_THROW(bindCoreDims(free, {{3}}, {nullptr}), std::invalid_argument);
  Shape given{2, 7};
  EXPECT_EQ(bindCoreDims(free, {{2, 3}}, {&given}).coreShapes[1], (Shape{7}));
  Shape wrongLoop{2, 7};
  EXPECT_THROW(bindCoreDims(free, {{3, 3}}, {&wrongLoop}), std::invalid_argument);
}

// numba-cuda's old-style scalar: a (1,) array for a `()` input next to another array input adds
// no loop dimension (NumPy's (1,) stays available to an output given with it).
TEST(Layout, OldStyleScalarsAddNoLoopDimension) {
  GufuncLayout l = parseLayout("(n),()->(n)");
  EXPECT_EQ(bindCoreDims(l, {{4}, {1}}, {nullptr}).loopShape, Shape{});
  Shape flat{4}, numpy{1, 4}, wrong{2, 4};
  EXPECT_EQ(bindCoreDims(l, {{4}, {1}}, {&flat}).loopShape, Shape{});
  EXPECT_EQ(bindCoreDims(l, {{4}, {1}}, {&numpy}).loopShape, (Shape{1}));
  EXPECT_THROW(bindCoreDims(l, {{4}, {1}}, {&wrong}), std::invalid_argument);
  EXPECT_EQ(bindCoreDims(l, {{2, 4}, {1}}, {nullptr}).loopShape, (Shape{2}));
  EXPECT_EQ(bindCoreDims(l, {{1, 4}, {1}}, {nullptr}).loopShape, (Shape{1}));
  // Without another array input the (1,) stays: a scalar, or another old-style scalar.
  GufuncLayout s = parseLayout("(),()->()");
  EXPECT_EQ(bindCoreDims(s, {{1}, {}}, {nullptr}).loopShape, (Shape{1}));
  EXPECT_EQ(bindCoreDims(s, {{}, {1}}, {nullptr}).loopShape, (Shape{1}));
  EXPECT_EQ(bindCoreDims(s, {{1}, {1}}, {nullptr}).loopShape, (Shape{1}));
  EXPECT_EQ(bindCoreDims(s, {{3}, {1}}, {nullptr}).loopShape, (Shape{3}));
}

TEST(Ufunc, AxesAndExecutionModes) {
  EXPECT_EQ(normalizeAxes({-1, 0}, 3), (std::vector<int>{0, 2}));
  EXPECT_THROW(normalizeAxes({3}, 3), AxisError);
  EXPECT_THROW(normalizeAxes({1, -2}, 3), std::invalid_argument);
  EXPECT_EQ(execMode(Target::Cuda, codegen::Backend::Host), ExecMode::Parallel);
  EXPECT_EQ(execMode(Target::Cuda, codegen::Backend::CUDA), ExecMode::Device);
  EXPECT_EQ(execMode(Target::Cpu, codegen::Backend::CUDA), ExecMode::Serial);
}
