// NumPy's array reductions in kernels (ir/typing/ArrayReductions.h): np.sum(a), a.min(),
// np.nanmean(a), np.count_nonzero(a), ... One thread walks the array's elements in C order
// (any ndim and layout) with accumulators in entry-block allocas; the arithmetic runs in the
// call's compute type (float16 in float32, rounded back where NumPy stores float16 values).
//
// The order is sequential, as numba-cuda's: NumPy sums blocks of 8 elements pairwise, so for
// arrays of more than 8 elements a float sum, mean, var or std can differ from NumPy's in the
// last bits. NaN semantics and ties are NumPy's: min/max propagate NaN (of equal values the later
// one is kept, as NumPy's minimum.reduce keeps it); nanmin/nanmax ignore NaN (fmin.reduce: of
// equal values the earlier) and give NaN when all are; argmin/argmax give the first minimum, or
// the first NaN; nansum/nanprod count NaN as 0/1, nanmean/nanvar divide by the count of the
// others (NaN when there are none).
#include "codegen/Lowering.h"

namespace ptxjit::codegen::detail {

using namespace ir;

namespace {

bool isNanForm(Reduction r) {
  switch (r) {
  case Reduction::Nansum:
  case Reduction::Nanprod:
  case Reduction::Nanmean:
  case Reduction::Nanvar:
  case Reduction::Nanstd:
  case Reduction::Nanmin:
  case Reduction::Nanmax:
  case Reduction::Nanargmin:
  case Reduction::Nanargmax:
    return true;
  default:
    return false;
  }
}

} // namespace

llvm::Value *FunctionLowerer::lowerReduction(const CallInstr &i, Reduction r) {
  SourceLoc at = i.loc;
  ReductionCall c = resolveReduction(&i, r);
  if (!c.error.empty())
    internal(at, std::string("numpy.") + reductionName(r) + ": " + c.error);
  const ArrayType *aty = c.arrayType;
  const ScalarType *et = aty->scalarDtype();
  const ScalarType *res = c.result;
  const int nd = aty->ndim();
  llvm::Value *arr = convert(valueOf(c.array, at), typeOf(c.array, at), aty, at);
  std::vector<llvm::Value *> shape;
  for (int d = 0; d < nd; ++d)
    shape.push_back(B.CreateExtractValue(arr, {1u, unsigned(d)}));
  llvm::Value *size = arraySize(arr, nd);
  const bool nanForm = isNanForm(r);
  auto *i64 = B.getInt64Ty();
  auto *i1 = B.getInt1Ty();

  // ---- helpers ----
  auto slot = [&](llvm::Type *ty, llvm::Value *init, const char *name) {
    llvm::AllocaInst *a = entryAlloca(ty, name);
    B.CreateStore(init, a);
    return a;
  };
  auto load = [&](llvm::AllocaInst *a) { return B.CreateLoad(a->getAllocatedType(), a); };
  auto isNan = [&](llvm::Value *v, const ScalarType *t) -> llvm::Value * {
    if (t->kind() == TypeKind::Float)
      return B.CreateFCmpUNO(v, v);
    if (t->kind() == TypeKind::Complex) {
      llvm::Value *re = B.CreateExtractValue(v, 0), *im = B.CreateExtractValue(v, 1);
      return B.CreateOr(B.CreateFCmpUNO(re, re), B.CreateFCmpUNO(im, im));
    }
    return B.getFalse();
  };
  auto zero = [&](const ScalarType *t) { return llvm::Constant::getNullValue(repr(t, at)); };
  auto one = [&](const ScalarType *t) { return castScalar(B, B.getTrue(), types::boolean(), t); };
  // v (of compute type `t`) rounded to `storage` and back: float16 values NumPy keeps.
  auto roundTo = [&](llvm::Value *v, const ScalarType *t, const ScalarType *storage) {
    if (storage == t)
      return v;
    return castScalar(B, castScalar(B, v, t, storage), storage, t);
  };
  auto arith = [&](BinaryOp op, llvm::Value *a, llvm::Value *b, const ScalarType *t) {
    return binaryValues(op, a, t, b, t, t, at);
  };
  // a / n for a count n (i64) in float or complex type `t`: NumPy's true division, never
  // raising (0 / 0 is NaN as NumPy gives it with a warning).
  auto divideByCount = [&](llvm::Value *a, llvm::Value *n, const ScalarType *t) -> llvm::Value * {
    if (t->kind() == TypeKind::Complex) {
      const ScalarType *part = types::floating(t->bits() / 2);
      llvm::Value *d = castScalar(B, n, types::int64(), part);
      llvm::Value *out = llvm::PoisonValue::get(repr(t, at));
      out = B.CreateInsertValue(out, B.CreateFDiv(B.CreateExtractValue(a, 0), d), 0);
      return B.CreateInsertValue(out, B.CreateFDiv(B.CreateExtractValue(a, 1), d), 1);
    }
    if (t->kind() == TypeKind::Float)
      return B.CreateFDiv(a, castScalar(B, n, types::int64(), t));
    // An integer dtype= (np.mean(a, dtype=np.int32)): divided in float64, then cast.
    llvm::Value *q = B.CreateFDiv(castScalar(B, a, t, types::float64()),
                                  castScalar(B, n, types::int64(), types::float64()));
    return castScalar(B, q, types::float64(), t);
  };
  // The element loop: body(value of dtype et, flat C-order index).
  auto forEach = [&](const std::function<void(llvm::Value *, llvm::Value *)> &body) {
    emitLoopNest(shape, [&](const std::vector<llvm::Value *> &k) {
      llvm::Value *flat = B.getInt64(0);
      for (int d = 0; d < nd; ++d)
        flat = B.CreateAdd(B.CreateMul(flat, shape[d]), k[d]);
      body(loadScalar(B, elementAddress(arr, aty, k), et), flat);
    });
  };
  // valueErrorIf: in a ufunc loop kernel (which cannot raise) the result is then the
  // accumulator's initial value.
  auto result = [&](llvm::Value *v, const ScalarType *t) {
    return convert(v, t, typeOf(&i, at), at);
  };

  switch (r) {
  case Reduction::All:
  case Reduction::Any: {
    const bool all = r == Reduction::All;
    llvm::AllocaInst *acc = slot(i1, B.getInt1(all), "reduce.acc");
    forEach([&](llvm::Value *v, llvm::Value *) {
      llvm::Value *t = truth(v, et, at);
      B.CreateStore(all ? B.CreateAnd(load(acc), t) : B.CreateOr(load(acc), t), acc);
    });
    return result(load(acc), types::boolean());
  }
  case Reduction::CountNonzero: {
    llvm::AllocaInst *acc = slot(i64, B.getInt64(0), "reduce.count");
    forEach([&](llvm::Value *v, llvm::Value *) {
      B.CreateStore(B.CreateAdd(load(acc), B.CreateZExt(truth(v, et, at), i64)), acc);
    });
    return result(load(acc), types::int64());
  }
  case Reduction::Sum:
  case Reduction::Nansum:
  case Reduction::Prod:
  case Reduction::Nanprod: {
    const ScalarType *ct = c.compute;
    const bool product = r == Reduction::Prod || r == Reduction::Nanprod;
    llvm::AllocaInst *acc = slot(repr(ct, at), product ? one(ct) : zero(ct), "reduce.acc");
    forEach([&](llvm::Value *v, llvm::Value *) {
      llvm::Value *x = castScalar(B, v, et, ct);
      llvm::Value *next = arith(product ? BinaryOp::Mul : BinaryOp::Add, load(acc), x, ct);
      if (nanForm)
        next = B.CreateSelect(isNan(v, et), load(acc), next);
      B.CreateStore(next, acc);
    });
    return result(castScalar(B, load(acc), ct, res), res);
  }
  case Reduction::Mean:
  case Reduction::Average:
  case Reduction::Nanmean:
  case Reduction::Var:
  case Reduction::Std:
  case Reduction::Nanvar:
  case Reduction::Nanstd: {
    const ScalarType *ct = c.compute;
    const bool variance =
        r != Reduction::Mean && r != Reduction::Average && r != Reduction::Nanmean;
    // float16 results compute in float32, rounded to float16 where NumPy stores float16 values:
    // the mean and each difference and square of var (mean's float32 sum is not rounded).
    const ScalarType *storage = res == types::float16() && ct == types::float32() ? res : ct;
    llvm::AllocaInst *sum = slot(repr(ct, at), zero(ct), "reduce.sum");
    llvm::AllocaInst *count = slot(i64, nanForm ? B.getInt64(0) : size, "reduce.n");
    forEach([&](llvm::Value *v, llvm::Value *) {
      llvm::Value *next = arith(BinaryOp::Add, load(sum), castScalar(B, v, et, ct), ct);
      if (nanForm) {
        llvm::Value *nan = isNan(v, et);
        next = B.CreateSelect(nan, load(sum), next);
        B.CreateStore(B.CreateSelect(nan, load(count), B.CreateAdd(load(count), B.getInt64(1))),
                      count);
      }
      B.CreateStore(next, sum);
    });
    llvm::Value *n = load(count);
    llvm::Value *total = variance ? roundTo(load(sum), ct, storage) : load(sum);
    llvm::Value *mean = roundTo(divideByCount(total, n, ct), ct, storage);
    if (!variance)
      return result(castScalar(B, mean, ct, res), res);
    // The variance: the mean of the squared magnitudes of the differences from the mean.
    const ScalarType *rt = ct->kind() == TypeKind::Complex ? types::floating(ct->bits() / 2) : ct;
    const ScalarType *rstorage = storage == types::float16() ? types::float16() : rt;
    llvm::AllocaInst *ssd = slot(repr(rt, at), zero(rt), "reduce.ssd");
    forEach([&](llvm::Value *v, llvm::Value *) {
      llvm::Value *d =
          roundTo(arith(BinaryOp::Sub, castScalar(B, v, et, ct), mean, ct), ct, storage);
      llvm::Value *sq;
      if (ct->kind() == TypeKind::Complex) {
        llvm::Value *re = B.CreateExtractValue(d, 0), *im = B.CreateExtractValue(d, 1);
        sq = arith(BinaryOp::Add, arith(BinaryOp::Mul, re, re, rt),
                   arith(BinaryOp::Mul, im, im, rt), rt);
      } else {
        sq = arith(BinaryOp::Mul, d, d, rt);
      }
      llvm::Value *next = arith(BinaryOp::Add, load(ssd), roundTo(sq, rt, rstorage), rt);
      if (nanForm)
        next = B.CreateSelect(isNan(v, et), load(ssd), next);
      B.CreateStore(next, ssd);
    });
    // NumPy divides by max(n - ddof, 0).
    if (c.ddof) {
      llvm::Value *ddof = convert(valueOf(c.ddof, at), typeOf(c.ddof, at), types::int64(), at);
      n = B.CreateSub(n, ddof);
      n = B.CreateSelect(B.CreateICmpSLT(n, B.getInt64(0)), B.getInt64(0), n);
    }
    llvm::Value *var =
        roundTo(divideByCount(roundTo(load(ssd), rt, rstorage), n, rt), rt, rstorage);
    if (r == Reduction::Std || r == Reduction::Nanstd) {
      if (rt->kind() != TypeKind::Float)
        var = castScalar(B, var, rt, types::float64());
      const ScalarType *ft = rt->kind() == TypeKind::Float ? rt : types::float64();
      var = castScalar(B, mathCall(MathFn::Sqrt, {var}), ft, rt);
    }
    return result(castScalar(B, var, rt, res), res);
  }
  case Reduction::Min:
  case Reduction::Max:
  case Reduction::Amin:
  case Reduction::Amax:
  case Reduction::Nanmin:
  case Reduction::Nanmax:
  case Reduction::Ptp: {
    const bool ptp = r == Reduction::Ptp;
    const bool isMax = r == Reduction::Max || r == Reduction::Amax || r == Reduction::Nanmax;
    llvm::AllocaInst *have = slot(i1, B.getFalse(), "reduce.have");
    llvm::AllocaInst *lo = slot(repr(et, at), zero(et), "reduce.min");
    llvm::AllocaInst *hi = slot(repr(et, at), zero(et), "reduce.max");
    // The accumulator after meeting x: NumPy's minimum/maximum.reduce (NaN propagates, the
    // later of equal values) or, for the nan forms, fmin/fmax.reduce (NaN ignored, the earlier).
    auto step = [&](llvm::Value *acc, llvm::Value *x, bool wantMax) -> llvm::Value * {
      if (et->kind() == TypeKind::Float) {
        llvm::Value *keep =
            nanForm ? B.CreateOr(wantMax ? B.CreateFCmpOGE(acc, x) : B.CreateFCmpOLE(acc, x),
                                 B.CreateFCmpUNO(x, x))
                    : B.CreateOr(wantMax ? B.CreateFCmpOGT(acc, x) : B.CreateFCmpOLT(acc, x),
                                 B.CreateFCmpUNO(acc, acc));
        return B.CreateSelect(keep, acc, x);
      }
      return ufuncMinMax(wantMax, nanForm, acc, x, et);
    };
    forEach([&](llvm::Value *v, llvm::Value *) {
      llvm::Value *h = load(have);
      if (ptp || !isMax)
        B.CreateStore(B.CreateSelect(h, step(load(lo), v, false), v), lo);
      if (ptp || isMax)
        B.CreateStore(B.CreateSelect(h, step(load(hi), v, true), v), hi);
      B.CreateStore(B.getTrue(), have);
    });
    const char *ufunc = nanForm ? (isMax ? "fmax" : "fmin") : isMax || ptp ? "maximum" : "minimum";
    valueErrorIf(B.CreateNot(load(have)),
                 std::string("zero-size array to reduction operation ") + ufunc +
                     " which has no identity",
                 at);
    if (ptp)
      return result(arith(BinaryOp::Sub, load(hi), load(lo), et), et);
    return result(load(isMax ? hi : lo), et);
  }
  case Reduction::Argmin:
  case Reduction::Argmax:
  case Reduction::Nanargmin:
  case Reduction::Nanargmax: {
    const bool isMax = r == Reduction::Argmax || r == Reduction::Nanargmax;
    llvm::AllocaInst *have = slot(i1, B.getFalse(), "reduce.have");
    llvm::AllocaInst *acc = slot(repr(et, at), zero(et), "reduce.acc");
    llvm::AllocaInst *idx = slot(i64, B.getInt64(0), "reduce.idx");
    // x strictly better than acc in NumPy's order (complex: lexicographic).
    auto better = [&](llvm::Value *x, llvm::Value *a) -> llvm::Value * {
      switch (et->kind()) {
      case TypeKind::Bool:
        return isMax ? B.CreateAnd(x, B.CreateNot(a)) : B.CreateAnd(a, B.CreateNot(x));
      case TypeKind::Int:
        if (et->isSigned())
          return isMax ? B.CreateICmpSGT(x, a) : B.CreateICmpSLT(x, a);
        return isMax ? B.CreateICmpUGT(x, a) : B.CreateICmpULT(x, a);
      case TypeKind::Float:
        return isMax ? B.CreateFCmpOGT(x, a) : B.CreateFCmpOLT(x, a);
      default: {
        llvm::Value *xr = B.CreateExtractValue(x, 0), *xi = B.CreateExtractValue(x, 1);
        llvm::Value *ar = B.CreateExtractValue(a, 0), *ai = B.CreateExtractValue(a, 1);
        llvm::Value *re = isMax ? B.CreateFCmpOGT(xr, ar) : B.CreateFCmpOLT(xr, ar);
        llvm::Value *im = isMax ? B.CreateFCmpOGT(xi, ai) : B.CreateFCmpOLT(xi, ai);
        return B.CreateOr(re, B.CreateAnd(B.CreateFCmpOEQ(xr, ar), im));
      }
      }
    };
    forEach([&](llvm::Value *v, llvm::Value *k) {
      llvm::Value *h = load(have), *a = load(acc);
      llvm::Value *take;
      if (nanForm) // NaN never taken
        take = B.CreateAnd(B.CreateNot(isNan(v, et)), B.CreateOr(B.CreateNot(h), better(v, a)));
      else // the first NaN is kept once met
        take = B.CreateOr(B.CreateNot(h), B.CreateAnd(B.CreateNot(isNan(a, et)),
                                                      B.CreateOr(isNan(v, et), better(v, a))));
      B.CreateStore(B.CreateSelect(take, v, a), acc);
      B.CreateStore(B.CreateSelect(take, k, load(idx)), idx);
      B.CreateStore(B.CreateOr(h, take), have);
    });
    std::string name = reductionName(r);
    if (nanForm) {
      valueErrorIf(B.CreateICmpEQ(size, B.getInt64(0)),
                   "attempt to get " + name.substr(3) + " of an empty sequence", at);
      valueErrorIf(B.CreateNot(load(have)), "All-NaN slice encountered", at);
    } else {
      valueErrorIf(B.CreateNot(load(have)), "attempt to get " + name + " of an empty sequence", at);
    }
    return result(load(idx), types::int64());
  }
  }
  internal(at, std::string("reduction ") + reductionName(r));
}

} // namespace ptxjit::codegen::detail
