// ptxjit.cuda.libdevice (Numba's cuda.libdevice): NVIDIA's libdevice functions called by name
// from kernels. The table is ir/typing/Libdevice.def; typing here, lowering in
// codegen/LowerLibdevice.cpp, the CPU backend's versions in codegen/HostLibdevice.cpp.
#pragma once

#include "ir/IR.h"
#include "ir/Types.h"

#include <string>
#include <vector>

namespace ptxjit::ir {

/// One libdevice function: `__nv_<name>`, its return type (null for void) and parameters. An
/// output parameter is a pointer in the C signature; the Python call omits it and returns its
/// value.
struct LibdeviceFunction {
  struct Param {
    const ScalarType *type;
    bool output;
  };
  std::string name; ///< without the __nv_ prefix: "sinf"
  const ScalarType *returnType = nullptr;
  std::vector<Param> params;

  /// The parameters the Python call takes (the non-output ones).
  std::vector<const ScalarType *> inputs() const;
  /// What the Python call returns: the return value followed by the outputs; one alone is
  /// that type, several a tuple.
  const Type *resultType() const;
  /// "sincos(float64) -> UniTuple(float64 x 2)", for messages and docstrings.
  std::string signature() const;
};

/// The libdevice function of builtin `id`, or nullptr when `id` is not one.
const LibdeviceFunction *libdeviceFunction(BuiltinId id);

/// Every function of the table, in its order (for ptxjit.cuda.libdevice's listing).
const std::vector<const LibdeviceFunction *> &libdeviceFunctions();

} // namespace ptxjit::ir
