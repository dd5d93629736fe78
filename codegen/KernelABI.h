// The kernel ABI, written once: how the arguments of a kernel entry become its flattened
// parameters. Every entry follows it — user kernels (lowerKernel), ufunc loop kernels
// (codegen/UfuncKernels.h) and device functions compiled alone (lowerDeviceFunction) — and so
// does every launcher: a specialization builds its PackingPlan once from its parameter types,
// and launches fill the plan's slots (compiler/Packing.h) without looking at types again.
//
// Arguments are first split into leaves, in order: each scalar and each array is one leaf,
// tuples contribute their elements' leaves. Each parameter slot then says which leaf it comes
// from and which part of it (the value, a complex part, the data pointer, one shape or stride
// entry), and where it lies in the packed buffer: slots are laid out as CUDA lays out a
// kernel's parameters, each aligned to its size, in order.
//
//   scalar T      one slot of T (bool as one byte; complex as two slots, real then imaginary)
//   array ndim N  ptr data, i64 shape[N], i64 strides[N] (bytes); a 0-d array: data alone
//   tuple         its elements' slots, in order
//   pointer       (CPointer(T), voidptr) one 8-byte slot holding the address
//   record        (a record scalar, passed by reference as numba-cuda does) ptr data: the
//                 address of its bytes, which the launcher copies to the device (and back)
//   Python float  (a top-level weak float) the double, then its float32 copy: the launcher
//                 rounds it once, and float32 code uses the copy (useFloat32Copies, EmitPTX)
//
// CUDA entries take exactly these parameters; host entries are `void entry(void **args, const
// HostThreadCtx *ctx)` with args[i] pointing at slot i (the float32 copies unread), so one
// packed buffer serves both backends.
#pragma once

#include "ir/Diagnostics.h"
#include "ir/Types.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ptxjit::codegen {

/// One leaf of the arguments: a scalar or an array, with the parameter type it is passed as.
struct ArgLeaf {
  int arg = 0;                    ///< the top-level argument it belongs to
  const ir::Type *type = nullptr; ///< a ScalarType, ArrayType, PointerType or RecordType
};

/// One flattened kernel parameter.
struct ParamSlot {
  enum class Source : uint8_t {
    Value,   ///< the scalar converted to `type` (bool as one byte)
    Real,    ///< the real part of a complex scalar, as `type` (float32/float64)
    Imag,    ///< the imaginary part
    Data,    ///< the array's data pointer
    Shape,   ///< shape[dim] as int64
    Stride,  ///< strides[dim] in bytes as int64
    Address, ///< a pointer parameter: the leaf's integer value is the address
  };
  Source source = Source::Value;
  int leaf = 0; ///< index into PackingPlan::leaves
  int dim = 0;  ///< Shape/Stride only
  /// Value/Real/Imag: the scalar type stored; null for Data/Shape/Stride/Address.
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
/// float32 (the float32 copy); other weak types are passed as their concrete type. Throws
/// ir::CompileError(UnsupportedConstruct) at `file`/`loc` for a type that cannot be a kernel
/// parameter (a range, a slice, a symbol, ...).
PackingPlan buildPackingPlan(const std::vector<const ir::Type *> &argTypes,
                             const std::string &file = "<arguments>", ir::SourceLoc loc = {});

} // namespace ptxjit::codegen
