// Typing of slices, views (their ndim, layout and read-only flag), assignment to views, and
// the iterator builtins enumerate() and zip().
#include "IRText.h"
#include "IrBuilder.h"

#include <gtest/gtest.h>

#include <functional>

using namespace ptxjit::ir;
using ptxjit::ir::test::arr1;
using ptxjit::ir::test::FnBuilder;
using ptxjit::ir::test::typeChecked;

namespace {

const ArrayType *arr(int nd, Layout l, bool ro = false, const ScalarType *dt = types::float64()) {
  return types::array(dt, nd, l, ro);
}

/// start:stop[:step] with parts from `parts` (null → None).
Instr *slice(FnBuilder &b, std::vector<Instr *> parts) {
  for (Instr *&p : parts)
    if (!p)
      p = b.cnone();
  return b.add<BuildSliceInstr>(std::move(parts));
}

/// Types `def k(a, i): a[<index>]` for an array type and returns the GetItem's type.
const Type *viewType(const ArrayType *a, const std::function<Instr *(FnBuilder &)> &index) {
  FnBuilder b("k", {"a", "i"});
  Instr *g = b.item(b.load("a"), index(b));
  b.ret();
  typeChecked(*b.fn, {a, types::int32()}, nullptr);
  return g->type;
}

void expectError(Function &fn, const std::vector<const Type *> &args, DiagCode code,
                 const std::vector<std::string> &parts, int line = -1) {
  try {
    inferTypes(fn, args, nullptr);
    ADD_FAILURE() << "expected " << diagName(code) << ", typing succeeded:\n" << fn.print();
  } catch (const CompileError &e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const std::string &p : parts)
      EXPECT_NE(e.message().find(p), std::string::npos) << e.message() << " lacks " << p;
    EXPECT_EQ(e.file(), "kernels.py");
    if (line >= 0) {
      EXPECT_EQ(e.loc().line, line);
    }
  }
}

TEST(TypingSlices, SliceTypesKnowWhetherTheyHaveAStep) {
  FnBuilder b("k", {"a", "i", "s"});
  Instr *two = slice(b, {b.load("i"), nullptr});
  Instr *none = slice(b, {nullptr, nullptr, nullptr});
  Instr *one = slice(b, {nullptr, nullptr, b.cint(1)});
  Instr *back = slice(b, {nullptr, nullptr, b.cint(-1)});
  Instr *dyn = slice(b, {b.cint(0), b.load("i"), b.load("s")});
  b.ret();
  typeChecked(*b.fn, {arr1(types::float32()), types::uint8(), types::int16()}, nullptr);
  EXPECT_EQ(two->type, types::slice(false));
  EXPECT_EQ(two->type->str(), "slice<a:b>");
  EXPECT_EQ(none->type, types::slice(false));
  EXPECT_EQ(one->type, types::slice(false));
  EXPECT_EQ(back->type, types::slice(true));
  EXPECT_EQ(back->type->str(), "slice<a:b:c>");
  EXPECT_EQ(dyn->type, types::slice(true));
  EXPECT_TRUE(cast<SliceType>(dyn->type)->hasStep());
}

TEST(TypingSlices, ViewsFollowNumbaLayoutRules) {
  auto s = [](std::vector<int> kinds) {
    // kinds: 0 → the int `i`, 1 → `1:3`, 2 → `::2`, 3 → `:`, 4 → `::-1`
    return [kinds](FnBuilder &b) -> Instr * {
      std::vector<Instr *> comps;
      for (int k : kinds) {
        switch (k) {
        case 0:
          comps.push_back(b.load("i"));
          break;
        case 1:
          comps.push_back(slice(b, {b.cint(1), b.cint(3)}));
          break;
        case 2:
          comps.push_back(slice(b, {nullptr, nullptr, b.cint(2)}));
          break;
        case 3:
          comps.push_back(slice(b, {nullptr, nullptr}));
          break;
        default:
          comps.push_back(slice(b, {nullptr, nullptr, b.cint(-1)}));
        }
      }
      return comps.size() == 1 ? comps[0] : b.tuple(comps);
    };
  };
  const Layout C = Layout::C, F = Layout::F, A = Layout::A;
  struct Case {
    const ArrayType *in;
    std::vector<int> index;
    const Type *out;
  } cases[] = {
      {arr(1, C), {1}, arr(1, C)},           // a[1:3]
      {arr(1, C), {3}, arr(1, C)},           // a[:]
      {arr(1, C), {2}, arr(1, A)},           // a[::2]
      {arr(1, C), {4}, arr(1, A)},           // a[::-1]
      {arr(1, A), {1}, arr(1, A)},           // strided stays strided
      {arr(2, C), {1}, arr(2, C)},           // rows 1..3
      {arr(2, C), {3, 0}, arr(1, A)},        // a[:, k]
      {arr(2, C), {1, 0}, arr(1, A)},        // a[1:3, 2]
      {arr(2, C), {0, 1}, arr(1, C)},        // a[i, 1:3]
      {arr(2, C), {0, 2}, arr(1, A)},        // a[i, ::2]
      {arr(2, C), {0, 0}, types::float64()}, // an element
      {arr(2, F), {3, 0}, arr(1, C)},        // a column of a Fortran array is contiguous
      {arr(2, F), {1, 0}, arr(1, C)},
      {arr(2, F), {3, 1}, arr(2, A)}, // a[:, 1:3]: only the innermost may be a slice
      {arr(2, C), {1, 3}, arr(2, A)}, // a[1:3, :] likewise (Numba's rule)
      {arr(2, F), {1}, arr(2, A)},    // fewer indices than dimensions
      {arr(2, F), {0, 3}, arr(1, A)}, // a row of a Fortran array
      {arr(3, C), {0, 1}, arr(2, C)}, // a[i, 1:3] keeps the last dimension whole
      {arr(3, C), {3, 3, 0}, arr(2, A)},
      {arr(3, C), {1, 2}, arr(3, A)},
      {arr(3, C, true), {0}, arr(2, C, true)}, // read-only is kept
      {arr(3, A, true), {1, 0, 4}, arr(2, A, true)},
  };
  for (const Case &c : cases) {
    std::string what = c.in->str() + " with kinds";
    for (int k : c.index)
      what += " " + std::to_string(k);
    EXPECT_EQ(viewType(c.in, s(c.index)), c.out)
        << what << " gave " << viewType(c.in, s(c.index))->str();
  }
}

TEST(TypingSlices, SliceErrors) {
  FnBuilder zero("k", {"a"});
  zero.line = 9;
  zero.item(zero.load("a"), slice(zero, {nullptr, nullptr, zero.cint(0)}));
  zero.ret();
  expectError(*zero.fn, {arr(1, Layout::C)}, DiagCode::SliceStepZero, {"step", "zero"}, 9);

  FnBuilder flt("k", {"a", "x"});
  flt.line = 4;
  flt.item(flt.load("a"), slice(flt, {flt.load("x"), nullptr}));
  flt.ret();
  expectError(*flt.fn, {arr(1, Layout::C), types::float32()}, DiagCode::SliceBound,
              {"integers or None", "float32"}, 4);

  FnBuilder bl("k", {"a", "p"});
  bl.item(bl.load("a"), slice(bl, {nullptr, bl.load("p")}));
  bl.ret();
  expectError(*bl.fn, {arr(1, Layout::C), types::boolean()}, DiagCode::SliceBound, {"bool"});

  FnBuilder many("k", {"a", "i"});
  many.item(many.load("a"), many.tuple({many.load("i"), slice(many, {nullptr, nullptr})}));
  many.ret();
  expectError(*many.fn, {arr(1, Layout::C), types::int64()}, DiagCode::IndexTypes,
              {"array(float64, 1d, C)", "too many indices"});

  FnBuilder scalar("k", {"x"});
  scalar.item(scalar.load("x"), slice(scalar, {scalar.cint(1), nullptr}));
  scalar.ret();
  expectError(*scalar.fn, {types::int32()}, DiagCode::IndexTypes, {"int32", "slice<a:b>"});

  FnBuilder tup("k", {"a"});
  tup.item(tup.attr(tup.load("a"), "shape"), slice(tup, {tup.cint(1), nullptr}));
  tup.ret();
  expectError(*tup.fn, {arr(2, Layout::C)}, DiagCode::IndexTypes, {"UniTuple(int64 x 2)"});

  FnBuilder ro("k", {"a"});
  ro.line = 6;
  ro.setItem(ro.item(ro.load("a"), slice(ro, {ro.cint(1), nullptr})), ro.cint(0), ro.cfloat(1));
  ro.ret();
  expectError(*ro.fn, {arr(1, Layout::C, true)}, DiagCode::ReadonlyArray, {"readonly"}, 6);
}

TEST(TypingSlices, AssigningToViews) {
  // a[1:] = 0.0, img[y] = 1, a[:, k] = v, a[1:] = b[:-1], img[:] = row, img[:] = col (2-d).
  FnBuilder b("k", {"a", "img", "v", "y"});
  b.setItem(b.load("a"), slice(b, {b.cint(1), nullptr}), b.cfloat(0.0));
  b.setItem(b.load("img"), b.load("y"), b.cint(1));
  b.setItem(b.load("img"), b.tuple({slice(b, {nullptr, nullptr}), b.load("y")}), b.load("v"));
  b.setItem(b.load("a"), slice(b, {b.cint(1), nullptr}),
            b.item(b.load("v"), slice(b, {nullptr, b.cint(-1)})));
  b.setItem(b.load("img"), slice(b, {nullptr, nullptr}), b.load("a"));
  b.setItem(b.load("img"), slice(b, {nullptr, nullptr}), b.load("img"));
  b.ret();
  EXPECT_NO_THROW(typeChecked(*b.fn,
                              {arr(1, Layout::C, false, types::int16()), arr(2, Layout::F),
                               arr(1, Layout::A, true, types::float32()), types::uint32()},
                              nullptr));

  // An array of more dimensions than the view, and complex into a real view.
  FnBuilder big("k", {"a", "img"});
  big.setItem(big.load("a"), slice(big, {nullptr, nullptr}), big.load("img"));
  big.ret();
  expectError(*big.fn, {arr(1, Layout::C), arr(2, Layout::C)}, DiagCode::SetItemTypes,
              {"array(float64, 2d, C)"});
  FnBuilder cx("k", {"a", "z"});
  cx.setItem(cx.load("a"), slice(cx, {nullptr, nullptr}), cx.load("z"));
  cx.ret();
  expectError(*cx.fn, {arr(1, Layout::C), arr(1, Layout::C, false, types::complex64())},
              DiagCode::SetItemTypes, {"complex64"});
  FnBuilder cs("k", {"a"});
  cs.setItem(cs.load("a"), slice(cs, {nullptr, nullptr}),
             cs.add<ConstInstr>(ConstValue::complexNum({0.0, 1.0})));
  cs.ret();
  expectError(*cs.fn, {arr(2, Layout::C)}, DiagCode::SetItemTypes, {"Literal[complex]"});
}

TEST(TypingIter, EnumerateAndZipYieldTuples) {
  FnBuilder b("k", {"a", "m", "n"});
  Instr *en = b.call(b.sym("enumerate", "builtins.enumerate"), {b.load("a")});
  Instr *enIter = b.add<GetIterInstr>(en);
  Instr *enNext = b.add<IterNextInstr>(enIter);
  Instr *rng = b.call(b.sym("range", "builtins.range"), {b.load("n")});
  Instr *zp = b.call(b.sym("zip", "builtins.zip"), {b.load("a"), b.load("m"), rng});
  Instr *zpNext = b.add<IterNextInstr>(b.add<GetIterInstr>(zp));
  Instr *nested = b.call(b.sym("enumerate", "builtins.enumerate"), {zp, b.cint(5)}, {"start"});
  Instr *nestedNext = b.add<IterNextInstr>(b.add<GetIterInstr>(nested));
  Instr *valid = b.add<IterValidInstr>(enIter);
  b.ret();
  auto *m = arr(2, Layout::C, false, types::int8());
  typeChecked(*b.fn, {arr1(types::float32()), m, types::int32()}, nullptr);
  EXPECT_EQ(en->builtin, BuiltinId::Enumerate);
  EXPECT_EQ(zp->builtin, BuiltinId::Zip);
  auto *enT = cast<IteratorType>(en->type);
  EXPECT_EQ(enT->iterKind(), IterKind::Enumerate);
  EXPECT_EQ(enIter->type, en->type); // iter() of an iterator is itself
  EXPECT_EQ(enNext->type, types::tuple({types::int64(), types::float32()}));
  EXPECT_EQ(zpNext->type, types::tuple({types::float32(), arr(1, Layout::C, false, types::int8()),
                                        types::int64()}));
  EXPECT_EQ(cast<IteratorType>(zp->type)->sources().size(), 3u);
  EXPECT_EQ(nestedNext->type, types::tuple({types::int64(), zpNext->type}));
  EXPECT_EQ(valid->type, types::boolean());
}

TEST(TypingIter, EnumerateAndZipErrors) {
  auto call = [](const char *name, const char *path, std::vector<std::string> argNames,
                 std::vector<const Type *> argTypes, std::vector<std::string> kw, DiagCode code,
                 std::vector<std::string> parts) {
    FnBuilder b("k", argNames);
    b.line = 3;
    std::vector<Instr *> args;
    for (const std::string &a : argNames)
      args.push_back(b.load(a));
    b.call(b.sym(name, path), args, kw);
    b.ret();
    expectError(*b.fn, argTypes, code, parts, 3);
  };
  auto *a = arr1(types::float32());
  call("enumerate", "builtins.enumerate", {}, {}, {}, DiagCode::CallArgs, {"enumerate"});
  call("enumerate", "builtins.enumerate", {"a", "x"}, {a, types::float64()}, {}, DiagCode::CallArgs,
       {"start must be an integer"});
  call("enumerate", "builtins.enumerate", {"a", "x"}, {a, types::int64()}, {"begin"},
       DiagCode::CallArgs, {"enumerate(iterable[, start])"});
  call("enumerate", "builtins.enumerate", {"x"}, {types::float64()}, {}, DiagCode::NotIterable,
       {"float64"});
  call("zip", "builtins.zip", {"a", "x"}, {a, types::float32()}, {}, DiagCode::NotIterable,
       {"float32"});
  call("zip", "builtins.zip", {"a", "s"}, {a, types::boolean()}, {"strict"}, DiagCode::CallArgs,
       {"strict"});
}

} // namespace
