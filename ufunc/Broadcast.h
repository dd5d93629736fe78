// NumPy broadcasting for ufuncs: the broadcast shape of the operands, their strides over it
// (zero for broadcast dimensions), and the simplification of the iteration space (dimensions of
// length 1 dropped, dimensions ordered by memory, adjacent dimensions that are contiguous for
// every operand merged) that lets most calls take the flat fast path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ptxjit::ufunc {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;

/// NumPy's spelling of a shape: "(2,3)", "(4,)", "()".
std::string shapeStr(const Shape &s);

/// The broadcast of `shapes` by NumPy's rules (right-aligned; a dimension of 1 stretches).
/// Throws std::invalid_argument("operands could not be broadcast together with shapes (2,3)
/// (4,) ") (NumPy's wording) when they do not broadcast.
Shape broadcastShapes(const std::vector<Shape> &shapes);

/// The strides of an operand of shape `s` and strides `st` viewed with shape `target` (which
/// s broadcasts to): leading new dimensions and stretched dimensions of 1 get stride 0.
Strides broadcastStrides(const Shape &s, const Strides &st, const Shape &target);

/// The product of the dimensions (1 for a 0-d shape).
int64_t shapeSize(const Shape &s);

/// Contiguous strides in bytes for `shape` (C or Fortran order).
Strides contiguousStrides(const Shape &shape, int64_t itemsize, bool fortran);

/// An iteration space: a shape and, per operand, its strides (bytes) over it.
struct LoopSpace {
  Shape shape;
  std::vector<Strides> strides;
};

/// Simplifies `space` without changing which elements meet: drops dimensions of length 1,
/// orders the others by decreasing |stride| of operand `reference` (stable; the operand the
/// iteration should follow in memory, usually the output), then merges each dimension with the
/// next inner one when, for every operand, stride[outer] == stride[inner] * shape[inner]. An
/// empty space (some dimension 0) becomes shape {0}.
LoopSpace simplifyLoop(LoopSpace space, size_t reference);

/// True when `space` (simplified) can be walked with one flat index: at most one dimension
/// and every operand's stride over it equal to its item size (`itemsizes`, 0 for operands
/// passed by value, whose strides are ignored).
bool isFlat(const LoopSpace &space, const std::vector<int> &itemsizes);

} // namespace ptxjit::ufunc
