// Generalized-ufunc layouts ("(m,n),(n,p)->(m,p)"): parsing, and binding the core dimensions of
// the operands of one call (NumPy's gufunc rules).
#pragma once

#include "ufunc/Broadcast.h"

#include <string>
#include <vector>

namespace ptxjit::ufunc {

/// A parsed layout: per input and per output, the names of its core dimensions.
struct GufuncLayout {
  std::vector<std::vector<std::string>> inputs;
  std::vector<std::vector<std::string>> outputs;
  std::string text; ///< the layout as given, whitespace removed

  /// The core dimension names of operand k (inputs first, then outputs).
  const std::vector<std::string> &operand(size_t k) const {
    return k < inputs.size() ? inputs[k] : outputs[k - inputs.size()];
  }
  size_t nin() const { return inputs.size(); }
  size_t nout() const { return outputs.size(); }
};

/// Parses "(n),(n)->()" / "(m,n),(n,p)->(m,p)" / "()->()" (whitespace ignored). Names are
/// identifiers (or integers, fixed sizes); at least one output. Throws std::invalid_argument
/// naming the layout and what is wrong (NumPy's "not a valid gufunc signature").
GufuncLayout parseLayout(const std::string &text);

/// The core dimensions of one call.
struct CoreBinding {
  /// Size of each named dimension.
  std::vector<std::pair<std::string, int64_t>> sizes;
  /// The broadcast loop shape.
  Shape loopShape;
  /// Per operand (inputs, then outputs): the core shape.
  std::vector<Shape> coreShapes;
};

/// Binds the core dimensions of `layout` from the input shapes and, where given, the output
/// shapes (empty optional: allocated by the caller from the result). Inputs need at least as
/// many dimensions as core dimensions; their trailing dimensions are the core ones, the
/// leading ones broadcast into the loop shape (with given outputs' leading dimensions, which
/// must equal it). One exception, numba-cuda's: an input without core dimensions of shape (1,)
/// next to another array input adds no loop dimension, so `(n),()` over shapes (4,) and (1,)
/// loops over () (NumPy: (1,)) unless an output given has loop dimensions (1,); operands may
/// then have leading dimensions of length 1 beyond the loop shape's. Throws
/// std::invalid_argument with NumPy's wording for a missing core
/// dimension, a size mismatch, an output core dimension no input binds, or loop dimensions
/// that do not broadcast.
CoreBinding bindCoreDims(const GufuncLayout &layout, const std::vector<Shape> &inputShapes,
                         const std::vector<const Shape *> &outputShapes);

} // namespace ptxjit::ufunc
