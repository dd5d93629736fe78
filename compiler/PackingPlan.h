// How the arguments of a launch become the flattened kernel parameters of the kernel ABI
// (codegen/Codegen.h): built once per specialization from its argument types, then followed by
// the bindings at every launch without looking at types again.
//
// Arguments are first split into leaves, in order: each scalar and each array is one leaf,
// tuples contribute their elements' leaves. Each parameter slot then says which leaf it comes
// from and which part of it (the value, a complex part, the data pointer, one shape or stride
// entry), and where it goes in the packed buffer.
#pragma once

#include "ir/Types.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ptxjit::compiler {

/// One leaf of the arguments: a scalar or an array, with the parameter type it is passed as.
struct ArgLeaf {
  int arg = 0;                    ///< the top-level argument it belongs to
  const ir::Type *type = nullptr; ///< a ScalarType or ArrayType
};

/// One flattened kernel parameter.
struct ParamSlot {
  enum class Source : uint8_t {
    Value,  ///< the scalar converted to `type` (bool as one byte)
    Real,   ///< the real part of a complex scalar, as `type` (float32/float64)
    Imag,   ///< the imaginary part
    Data,   ///< the array's data pointer
    Shape,  ///< shape[dim] as int64
    Stride, ///< strides[dim] in bytes as int64
  };
  Source source = Source::Value;
  int leaf = 0; ///< index into PackingPlan::leaves
  int dim = 0;  ///< Shape/Stride only
  /// Value/Real/Imag: the scalar type stored; null for Data/Shape/Stride.
  const ir::ScalarType *type = nullptr;
  uint32_t offset = 0; ///< byte offset in the packed buffer (aligned to size)
  uint32_t size = 0;   ///< bytes
};

struct PackingPlan {
  std::vector<ArgLeaf> leaves;
  std::vector<ParamSlot> slots; ///< in kernel parameter order
  size_t paramBytes = 0;        ///< the end of the last slot: the kernel parameters' size

  /// Bytes of a buffer for all slots: paramBytes rounded up to a multiple of 8.
  size_t bufferSize() const { return (paramBytes + 7) / 8 * 8; }

  /// "f32@0 <- leaf0; ptr@8 <- leaf1.data; i64@16 <- leaf1.shape[0]; ..." (tests, debugging).
  std::string str() const;
};

/// The plan for kernel parameters of types `argTypes` (scalars, arrays, tuples of those).
/// A top-level weak float (a Python float argument) is passed twice, as float64 and then as
/// float32 (the kernel ABI's float32 copy, see codegen/Codegen.h); other weak types are
/// passed as their concrete type. Throws ir::CompileError(Internal) for a type that cannot be
/// a kernel argument.
PackingPlan buildPackingPlan(const std::vector<const ir::Type *> &argTypes);

} // namespace ptxjit::compiler
