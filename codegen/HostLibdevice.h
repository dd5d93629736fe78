// The CPU backend's libdevice: host versions of the __nv_* functions that
// ptxjit.cuda.libdevice offers (ir/typing/Libdevice.def). Lowering emits the same call to
// __nv_<name> on both backends; on CUDA it is linked from NVIDIA's libdevice bitcode, on the
// host the JIT resolves it to the function registered here (codegen/HostJIT.cpp). Each host
// version follows the CUDA Math API's definition of the function: the correctly rounded ones
// return what the host's libm or IEEE arithmetic returns in the same rounding mode (the _rd, _ru,
// _rz variants switch the host's rounding mode around the operation), and the approximate
// __nv_fast_* return the precise result.
#pragma once

#include <vector>

namespace ptxjit::codegen {

struct HostSymbol {
  const char *name; ///< the libdevice name, "__nv_sinf"
  void *address;    ///< a host function with the C signature of the LLVM declaration
};

/// One entry per line of ir/typing/Libdevice.def, in its order; built once, thread-safe.
const std::vector<HostSymbol> &hostLibdeviceSymbols();

} // namespace ptxjit::codegen
