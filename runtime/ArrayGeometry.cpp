#include "runtime/ArrayGeometry.h"

#include <stdexcept>
#include <string>

namespace ptxjit::runtime {
namespace {

bool hasNoElements(const std::vector<int64_t> &shape) {
  for (int64_t s : shape)
    if (s == 0)
      return true;
  return false;
}

/// Contiguity in C order (`fortran` false: the last axis varies fastest) or Fortran order.
bool contiguous(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
                int64_t itemsize, bool fortran) {
  if (hasNoElements(shape))
    return true;
  for (size_t k = 0; k < shape.size(); ++k)
    if (strides[k] == 0 && shape[k] > 1)
      return false; // broadcast
  int64_t expect = itemsize;
  size_t n = shape.size();
  for (size_t i = 0; i < n; ++i) {
    size_t k = fortran ? i : n - 1 - i;
    if (shape[k] == 1)
      continue;
    if (strides[k] != expect)
      return false;
    expect *= shape[k];
  }
  return true;
}

/// Python's PySlice_AdjustIndices: clamps start/stop to an axis of `length`; returns the number
/// of elements the slice selects.
int64_t adjustSlice(int64_t length, int64_t &start, int64_t &stop, int64_t step) {
  auto clamp = [&](int64_t &v) {
    if (v < 0) {
      v = v < -length ? (step < 0 ? -1 : 0) : v + length;
    } else if (v >= length) {
      v = step < 0 ? length - 1 : length;
    }
  };
  clamp(start);
  clamp(stop);
  if (step < 0)
    return stop < start ? (start - stop - 1) / (-step) + 1 : 0;
  return start < stop ? (stop - start - 1) / step + 1 : 0;
}

} // namespace

Span spanOf(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
            int64_t itemsize) {
  if (hasNoElements(shape))
    return {};
  Span s{0, itemsize};
  for (size_t k = 0; k < shape.size(); ++k) {
    int64_t reach = 0;
    if (__builtin_mul_overflow(shape[k] - 1, strides[k], &reach) ||
        __builtin_add_overflow(reach < 0 ? s.begin : s.end, reach, reach < 0 ? &s.begin : &s.end))
      throw std::overflow_error("the array's span of memory does not fit in 64 bits");
  }
  return s;
}

bool isCContiguous(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
                   int64_t itemsize) {
  return contiguous(shape, strides, itemsize, false);
}

bool isFContiguous(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
                   int64_t itemsize) {
  return contiguous(shape, strides, itemsize, true);
}

IndexResult indexArray(const ArrayGeometry &array, const std::vector<IndexItem> &items) {
  size_t ndim = array.shape.size();
  size_t consuming = 0; // items that take an axis (ints and slices)
  size_t ints = 0;
  int ellipses = 0;
  for (const IndexItem &it : items) {
    if (it.kind == IndexItem::Kind::Int || it.kind == IndexItem::Kind::Slice)
      ++consuming;
    if (it.kind == IndexItem::Kind::Int)
      ++ints;
    else if (it.kind == IndexItem::Kind::Ellipsis)
      ++ellipses;
  }
  if (ellipses > 1)
    throw std::out_of_range("an index can only have a single ellipsis ('...')");
  if (consuming > ndim)
    throw std::out_of_range("too many indices for array: array is " + std::to_string(ndim) +
                            "-dimensional, but " + std::to_string(consuming) + " were indexed");
  IndexResult r;
  r.view.offset = array.offset;
  r.element = ints == ndim && items.size() == ndim;
  size_t axis = 0;
  auto keepAxis = [&](int64_t length, int64_t stride) {
    r.view.shape.push_back(length);
    r.view.strides.push_back(stride);
  };
  for (const IndexItem &it : items) {
    switch (it.kind) {
    case IndexItem::Kind::Int: {
      int64_t size = array.shape[axis];
      int64_t i = it.value < 0 ? it.value + size : it.value;
      if (i < 0 || i >= size)
        throw std::out_of_range("index " + std::to_string(it.value) +
                                " is out of bounds for axis " + std::to_string(axis) +
                                " with size " + std::to_string(size));
      r.view.offset += i * array.strides[axis];
      ++axis;
      break;
    }
    case IndexItem::Kind::Slice: {
      if (it.step == 0)
        throw std::invalid_argument("slice step cannot be zero");
      int64_t start = it.start, stop = it.stop;
      int64_t length = adjustSlice(array.shape[axis], start, stop, it.step);
      if (length > 0)
        r.view.offset += start * array.strides[axis];
      keepAxis(length, array.strides[axis] * it.step);
      ++axis;
      break;
    }
    case IndexItem::Kind::NewAxis:
      keepAxis(1, 0);
      break;
    case IndexItem::Kind::Ellipsis:
      for (size_t n = ndim - consuming; n > 0; --n, ++axis)
        keepAxis(array.shape[axis], array.strides[axis]);
      break;
    }
  }
  for (; axis < ndim; ++axis) // axes not indexed are taken whole
    keepAxis(array.shape[axis], array.strides[axis]);
  return r;
}

std::optional<std::vector<int64_t>>
reshapeStrides(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
               int64_t itemsize, const std::vector<int64_t> &newShape, bool fortran) {
  size_t newnd = newShape.size();
  std::vector<int64_t> out(newnd, 0);
  if (hasNoElements(shape) || hasNoElements(newShape)) {
    int64_t acc = itemsize;
    for (size_t i = 0; i < newnd; ++i) {
      size_t k = fortran ? i : newnd - 1 - i;
      out[k] = acc;
      acc *= newShape[k] > 0 ? newShape[k] : 1;
    }
    return out;
  }
  // NumPy's _attempt_nocopy_reshape: axes of length 1 of the old array are dropped, then runs of
  // old axes are matched with runs of new axes of the same element count; each old run must be
  // contiguous in itself (in the requested order) to be relabeled.
  std::vector<int64_t> olddims, oldstrides;
  for (size_t k = 0; k < shape.size(); ++k)
    if (shape[k] != 1) {
      olddims.push_back(shape[k]);
      oldstrides.push_back(strides[k]);
    }
  size_t oldnd = olddims.size();
  size_t oi = 0, oj = 1, ni = 0, nj = 1;
  while (ni < newnd && oi < oldnd) {
    int64_t np = newShape[ni], op = olddims[oi];
    while (np != op) {
      if (np < op)
        np *= newShape[nj++];
      else
        op *= olddims[oj++];
    }
    for (size_t ok = oi; ok + 1 < oj; ++ok) {
      if (fortran ? oldstrides[ok + 1] != olddims[ok] * oldstrides[ok]
                  : oldstrides[ok] != olddims[ok + 1] * oldstrides[ok + 1])
        return std::nullopt;
    }
    if (fortran) {
      out[ni] = oldstrides[oi];
      for (size_t nk = ni + 1; nk < nj; ++nk)
        out[nk] = out[nk - 1] * newShape[nk - 1];
    } else {
      out[nj - 1] = oldstrides[oj - 1];
      for (size_t nk = nj - 1; nk > ni; --nk)
        out[nk - 1] = out[nk] * newShape[nk];
    }
    ni = nj++;
    oi = oj++;
  }
  // Trailing axes of length 1 of the new shape.
  int64_t last = ni >= 1 ? out[ni - 1] : itemsize;
  if (fortran && ni >= 1)
    last *= newShape[ni - 1];
  for (size_t nk = ni; nk < newnd; ++nk)
    out[nk] = last;
  return out;
}

} // namespace ptxjit::runtime
