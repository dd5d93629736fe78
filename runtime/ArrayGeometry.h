// The byte geometry of strided arrays, as device arrays and their views use it: the span of
// memory an array's elements reach (strides of any sign), NumPy's contiguity flags, NumPy's basic
// indexing (integers, slices, new axes, one ellipsis) and reshapes without a copy. Pure
// arithmetic: no memory is touched, no driver or Python needed.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace ptxjit::runtime {

/// An array's shape and strides in bytes (any sign, 0 for broadcast dimensions), and the byte
/// offset of its first element (index 0, ..., 0) from the start of its memory.
struct ArrayGeometry {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

/// The bytes an array's elements occupy, relative to its first element: [begin, end), begin <= 0
/// (negative strides reach below the first element), end >= itemsize; {0, 0} when the array has
/// no elements. Throws std::overflow_error when the span does not fit in int64.
struct Span {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t bytes() const { return end - begin; }
};
Span spanOf(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
            int64_t itemsize);

/// NumPy's C_CONTIGUOUS / F_CONTIGUOUS flags (numba-cuda's dummyarray flags): dimensions of
/// length 1 are ignored, arrays without elements are both, a broadcast array (some stride 0 with
/// elements) is neither. A 0-d or 1-d contiguous array is both.
bool isCContiguous(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
                   int64_t itemsize);
bool isFContiguous(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
                   int64_t itemsize);

/// One entry of a basic index: an integer, a slice (start/stop as Python's PySlice_Unpack gives
/// them: any int64, clamped to the axis like PySlice_AdjustIndices; step != 0), a new axis
/// (None) or an ellipsis.
struct IndexItem {
  enum class Kind { Int, Slice, NewAxis, Ellipsis } kind = Kind::Int;
  int64_t value = 0; ///< Kind::Int (negative counts from the end)
  int64_t start = 0, stop = 0, step = 1;
};

/// The result of basic indexing: the view's geometry (offset relative to the indexed array's
/// memory) and whether it names a single element (an integer for every axis, no ellipsis or new
/// axis), which NumPy returns as a scalar.
struct IndexResult {
  ArrayGeometry view;
  bool element = false;
};

/// Applies NumPy's basic indexing to `array`. Throws std::out_of_range (IndexError) for an
/// integer out of bounds ("index 10 is out of bounds for axis 0 with size 10"), too many indices
/// or more than one ellipsis; std::invalid_argument for a zero slice step.
IndexResult indexArray(const ArrayGeometry &array, const std::vector<IndexItem> &items);

/// The strides in bytes of `array` reshaped to `newShape` (same number of elements) without
/// moving data, in C or Fortran index order (NumPy's _attempt_nocopy_reshape); nullopt when
/// the reshape needs a copy. Arrays without elements get contiguous strides.
std::optional<std::vector<int64_t>>
reshapeStrides(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
               int64_t itemsize, const std::vector<int64_t> &newShape, bool fortran);

} // namespace ptxjit::runtime
