#include "compiler/Packing.h"

#include "ir/BFloat16.h"
#include "ir/Half.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace ptxjit::compiler {
namespace {

template <typename T> void put(void *dst, T v) { std::memcpy(dst, &v, sizeof(T)); }
template <typename T> T get(const void *src) {
  T v;
  std::memcpy(&v, src, sizeof(T));
  return v;
}

/// `v` as a value of C++ type T, as NumPy casts it.
template <typename T> T valueAs(const ArgValue &v) {
  switch (v.kind) {
  case ArgValue::Kind::Bool:
    return static_cast<T>(v.b);
  case ArgValue::Kind::Int:
    return static_cast<T>(v.i);
  case ArgValue::Kind::UInt:
    return static_cast<T>(v.u);
  case ArgValue::Kind::Float:
  case ArgValue::Kind::Complex:
  case ArgValue::Kind::Array:
    break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v.re);
  } else {
    // float → int as kernels convert (codegen's castScalar): truncate toward zero, NaN → 0,
    // saturate to T's range (±inf included). Comparing against the limits as doubles is exact:
    // -2**(N-1) and 2**N are powers of two.
    double x = v.re;
    if (std::isnan(x))
      return 0;
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
    constexpr double hiExclusive =
        2.0 * static_cast<double>(std::numeric_limits<T>::max() / 2 + 1); // 2**(bits - signed)
    if (x <= lo)
      return std::numeric_limits<T>::min();
    if (x >= hiExclusive)
      return std::numeric_limits<T>::max();
    return static_cast<T>(x);
  }
}

bool truthOf(const ArgValue &v) {
  switch (v.kind) {
  case ArgValue::Kind::Bool:
    return v.b;
  case ArgValue::Kind::Int:
    return v.i != 0;
  case ArgValue::Kind::UInt:
    return v.u != 0;
  case ArgValue::Kind::Float:
    return v.re != 0;
  case ArgValue::Kind::Complex:
    return v.re != 0 || v.im != 0;
  case ArgValue::Kind::Array:
    break;
  }
  return false;
}

/// Stores a float value of `bits` (32 or 64).
void putFloat(void *dst, int bits, double v) {
  if (bits == 32)
    put<float>(dst, static_cast<float>(v));
  else
    put<double>(dst, v);
}

} // namespace

ArgValue ArgValue::boolean(bool v) {
  ArgValue a;
  a.kind = Kind::Bool;
  a.b = v;
  return a;
}

ArgValue ArgValue::integer(int64_t v) {
  ArgValue a;
  a.kind = Kind::Int;
  a.i = v;
  return a;
}

ArgValue ArgValue::unsignedInteger(uint64_t v) {
  ArgValue a;
  a.kind = Kind::UInt;
  a.u = v;
  return a;
}

ArgValue ArgValue::floating(double v) {
  ArgValue a;
  a.kind = Kind::Float;
  a.re = v;
  return a;
}

ArgValue ArgValue::complexNumber(double re, double im) {
  ArgValue a;
  a.kind = Kind::Complex;
  a.re = re;
  a.im = im;
  return a;
}

ArgValue ArgValue::array(uint64_t data, int ndim, const int64_t *shape, const int64_t *strides) {
  if (ndim < 0 || ndim > kMaxDims)
    throw std::invalid_argument("arrays of more than " + std::to_string(kMaxDims) +
                                " dimensions are not supported");
  ArgValue a;
  a.kind = Kind::Array;
  a.data = data;
  a.ndim = ndim;
  for (int d = 0; d < ndim; ++d) {
    a.shape[d] = shape[d];
    a.strides[d] = strides[d];
  }
  return a;
}

ArgValue ArgValue::load(const ir::ScalarType *t, const void *src) {
  switch (t->kind()) {
  case ir::TypeKind::Bool:
    return boolean(get<uint8_t>(src) != 0);
  case ir::TypeKind::Int:
    switch (t->bits()) {
    case 8:
      return t->isSigned() ? integer(get<int8_t>(src)) : unsignedInteger(get<uint8_t>(src));
    case 16:
      return t->isSigned() ? integer(get<int16_t>(src)) : unsignedInteger(get<uint16_t>(src));
    case 32:
      return t->isSigned() ? integer(get<int32_t>(src)) : unsignedInteger(get<uint32_t>(src));
    default:
      return t->isSigned() ? integer(get<int64_t>(src)) : unsignedInteger(get<uint64_t>(src));
    }
  case ir::TypeKind::Float:
    switch (t->bits()) {
    case 16:
      if (t->isBFloat16())
        return floating(ir::bf16ToFloat(get<uint16_t>(src)));
      return floating(ir::halfToDouble(get<uint16_t>(src)));
    case 32:
      return floating(get<float>(src));
    default:
      return floating(get<double>(src));
    }
  case ir::TypeKind::Complex: {
    const char *p = static_cast<const char *>(src);
    if (t->bits() == 64)
      return complexNumber(get<float>(p), get<float>(p + 4));
    return complexNumber(get<double>(p), get<double>(p + 8));
  }
  case ir::TypeKind::Datetime: // an int64 count of the unit
  case ir::TypeKind::Timedelta:
    return integer(get<int64_t>(src));
  default:
    throw std::logic_error("ArgValue::load: not a scalar type: " + t->str());
  }
}

void storeScalar(const ArgValue &v, const ir::ScalarType *t, void *dst) {
  if (v.kind == ArgValue::Kind::Array)
    throw std::logic_error("storeScalar: an array is not a scalar value");
  switch (t->kind()) {
  case ir::TypeKind::Bool:
    put<uint8_t>(dst, truthOf(v) ? 1 : 0);
    return;
  case ir::TypeKind::Int:
    switch (t->bits()) {
    case 8:
      return t->isSigned() ? put(dst, valueAs<int8_t>(v)) : put(dst, valueAs<uint8_t>(v));
    case 16:
      return t->isSigned() ? put(dst, valueAs<int16_t>(v)) : put(dst, valueAs<uint16_t>(v));
    case 32:
      return t->isSigned() ? put(dst, valueAs<int32_t>(v)) : put(dst, valueAs<uint32_t>(v));
    default:
      return t->isSigned() ? put(dst, valueAs<int64_t>(v)) : put(dst, valueAs<uint64_t>(v));
    }
  case ir::TypeKind::Float:
    if (t->isBFloat16())
      return put(dst, ir::bf16FromDouble(valueAs<double>(v)));
    if (t->bits() == 16)
      return put(dst, ir::halfFromDouble(valueAs<double>(v)));
    if (t->bits() == 32)
      return put(dst, valueAs<float>(v));
    return put(dst, valueAs<double>(v));
  case ir::TypeKind::Complex: {
    int part = t->bits() / 2;
    if (part == 32)
      put(dst, valueAs<float>(v));
    else
      put(dst, valueAs<double>(v));
    putFloat(static_cast<char *>(dst) + part / 8, part,
             v.kind == ArgValue::Kind::Complex ? v.im : 0.0);
    return;
  }
  case ir::TypeKind::Datetime: // an int64 count of the unit
  case ir::TypeKind::Timedelta:
    return put(dst, valueAs<int64_t>(v));
  default:
    throw std::logic_error("storeScalar: not a scalar type: " + t->str());
  }
}

void packScalarSlot(const codegen::ParamSlot &s, const ArgValue &v, char *dst) {
  if (s.source == codegen::ParamSlot::Source::Imag)
    return putFloat(dst, s.type->bits(), v.kind == ArgValue::Kind::Complex ? v.im : 0.0);
  storeScalar(v, s.type, dst);
}

} // namespace ptxjit::compiler
