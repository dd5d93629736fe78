// The values of a launch and how they are written into a kernel's parameters: one value struct
// (ArgValue) for every launcher — kernel launches and ufunc loops, whatever read the values —
// and one packer, which fills the slots of a PackingPlan (codegen/KernelABI.h) from them.
// Python-free: the bindings read Python objects into ArgValues; the ufunc layer builds them.
#pragma once

#include "codegen/KernelABI.h"

#include <cstdint>
#include <cstring>

namespace ptxjit::compiler {

/// The largest ndim an array argument may have.
constexpr int kMaxDims = 8;

/// One leaf of a launch: a scalar value, or an array's address and geometry.
struct ArgValue {
  enum class Kind : uint8_t { Bool, Int, UInt, Float, Complex, Array };
  /// User-provided so that `emplace_back()` does not zero the whole object first (value
  /// initialization of a class without one does); the members below keep their initializers.
  ArgValue() noexcept {}
  Kind kind = Kind::Int;
  bool b = false;
  int64_t i = 0;  ///< Kind::Int
  uint64_t u = 0; ///< Kind::UInt
  double re = 0;  ///< Kind::Float, and Kind::Complex's real part
  double im = 0;  ///< Kind::Complex's imaginary part
  // Arrays.
  int ndim = 0;
  uint64_t data = 0; ///< the address kernels use (element 0)
  // Only the first `ndim` entries are meaningful. Left uninitialized on purpose: zeroing
  // these 128 bytes for every argument of every launch (a `rep stos`) was the largest single
  // cost of reading launch arguments.
  int64_t shape[kMaxDims];
  int64_t strides[kMaxDims]; ///< bytes

  static ArgValue boolean(bool v);
  static ArgValue integer(int64_t v);
  static ArgValue unsignedInteger(uint64_t v);
  static ArgValue floating(double v);
  static ArgValue complexNumber(double re, double im);
  /// An array of `ndim` dimensions at `data` (shape and strides copied).
  static ArgValue array(uint64_t data, int ndim, const int64_t *shape, const int64_t *strides);
  /// The scalar stored at `src` as a value of type `t` (an element read from memory).
  static ArgValue load(const ir::ScalarType *t, const void *src);
};

/// Stores scalar `v` converted to `t` at `dst` in t's memory form (t->byteSize() bytes): NumPy's
/// casts (float → int truncates toward zero, saturating to int64 and wrapping to narrower
/// widths; NaN gives 0; x → bool is x != 0; complex → real drops the imaginary part; a real
/// value → complex has a zero imaginary part). Throws std::logic_error for an array `v`.
void storeScalar(const ArgValue &v, const ir::ScalarType *t, void *dst);

/// Writes scalar slot `s` (Source::Value, Real or Imag) of a plan from its leaf `v` at `dst`.
void packScalarSlot(const codegen::ParamSlot &s, const ArgValue &v, char *dst);

/// Writes slot `s` of a plan from its leaf `v` at `dst` (the slot's place in the buffer). Inline:
/// it runs once per slot of every launch; an array's slots are plain copies, and so are the
/// common scalars — a float into a float slot (a Python float fills a float64 slot and its
/// float32 copy), an int into an int64 — which need none of storeScalar's conversions.
inline void packSlot(const codegen::ParamSlot &s, const ArgValue &v, char *dst) {
  int64_t word;
  switch (s.source) {
  case codegen::ParamSlot::Source::Data:
    word = static_cast<int64_t>(v.data);
    break;
  case codegen::ParamSlot::Source::Shape:
    word = v.shape[s.dim];
    break;
  case codegen::ParamSlot::Source::Stride:
    word = v.strides[s.dim];
    break;
  case codegen::ParamSlot::Source::Address: // an integer leaf (Numba passes the address so)
    word = v.kind == ArgValue::Kind::UInt ? static_cast<int64_t>(v.u) : v.i;
    break;
  case codegen::ParamSlot::Source::Value:
    if (v.kind == ArgValue::Kind::Float && s.type->kind() == ir::TypeKind::Float) {
      if (s.type->bits() == 32) {
        float f = static_cast<float>(v.re);
        std::memcpy(dst, &f, sizeof f);
        return;
      }
      if (s.type->bits() == 64) {
        std::memcpy(dst, &v.re, sizeof v.re);
        return;
      }
      return packScalarSlot(s, v, dst); // float16, bfloat16
    }
    if (v.kind == ArgValue::Kind::Int && s.type->kind() == ir::TypeKind::Int &&
        s.type->bits() == 64) {
      word = v.i;
      break;
    }
    return packScalarSlot(s, v, dst);
  case codegen::ParamSlot::Source::Real:
  case codegen::ParamSlot::Source::Imag:
    return packScalarSlot(s, v, dst);
  }
  std::memcpy(dst, &word, sizeof word);
}

/// Writes every slot of `plan` into `buf` (plan.bufferSize() bytes) from `leaves`, one per
/// plan leaf, of ArgValue or a type derived from it.
template <typename Leaf>
void pack(const codegen::PackingPlan &plan, const Leaf *leaves, char *buf) {
  for (const codegen::ParamSlot &s : plan.slots)
    packSlot(s, leaves[s.leaf], buf + s.offset);
}

/// Points params[i] at slot i of `plan` in `buf` (the pointer form of a launch, and the host
/// entry's `args`).
inline void pointAtSlots(const codegen::PackingPlan &plan, char *buf, void **params) {
  for (const codegen::ParamSlot &s : plan.slots)
    *params++ = buf + s.offset;
}

} // namespace ptxjit::compiler
