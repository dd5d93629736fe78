#include "ufunc/Broadcast.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace ptxjit::ufunc {

std::string shapeStr(const Shape &s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i)
      r += ",";
    r += std::to_string(s[i]);
  }
  if (s.size() == 1)
    r += ",";
  return r + ")";
}

Shape broadcastShapes(const std::vector<Shape> &shapes) {
  size_t nd = 0;
  for (const Shape &s : shapes)
    nd = std::max(nd, s.size());
  Shape out(nd, 1);
  for (const Shape &s : shapes) {
    size_t off = nd - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t &o = out[off + d];
      if (s[d] == o || s[d] == 1)
        continue;
      if (o == 1) {
        o = s[d];
        continue;
      }
      std::string msg = "operands could not be broadcast together with shapes ";
      for (const Shape &t : shapes)
        msg += shapeStr(t) + " ";
      throw std::invalid_argument(msg);
    }
  }
  return out;
}

Strides broadcastStrides(const Shape &s, const Strides &st, const Shape &target) {
  Strides out(target.size(), 0);
  size_t off = target.size() - s.size();
  for (size_t d = 0; d < s.size(); ++d)
    out[off + d] = (s[d] == 1 && target[off + d] != 1) ? 0 : st[d];
  return out;
}

int64_t shapeSize(const Shape &s) {
  int64_t n = 1;
  for (int64_t v : s)
    n *= v;
  return n;
}

Strides contiguousStrides(const Shape &shape, int64_t itemsize, bool fortran) {
  Strides st(shape.size(), 0);
  int64_t acc = itemsize;
  if (fortran) {
    for (size_t d = 0; d < shape.size(); ++d) {
      st[d] = acc;
      acc *= std::max<int64_t>(shape[d], 1);
    }
  } else {
    for (size_t d = shape.size(); d-- > 0;) {
      st[d] = acc;
      acc *= std::max<int64_t>(shape[d], 1);
    }
  }
  return st;
}

LoopSpace simplifyLoop(LoopSpace space, size_t reference) {
  size_t nops = space.strides.size();
  for (int64_t v : space.shape)
    if (v == 0)
      return LoopSpace{Shape{0}, std::vector<Strides>(nops, Strides{0})};
  // Keep the dimensions longer than 1.
  std::vector<size_t> dims;
  for (size_t d = 0; d < space.shape.size(); ++d)
    if (space.shape[d] != 1)
      dims.push_back(d);
  // Outermost first: decreasing |stride| of the reference operand (stable for equal ones).
  if (reference < nops) {
    const Strides &r = space.strides[reference];
    std::stable_sort(dims.begin(), dims.end(),
                     [&](size_t a, size_t b) { return std::llabs(r[a]) > std::llabs(r[b]); });
  }
  LoopSpace out;
  out.strides.resize(nops);
  for (size_t d : dims) {
    if (!out.shape.empty()) {
      // Merge the outer dimension so far with d (the next inner one) when contiguous for all.
      bool merge = true;
      for (size_t k = 0; k < nops && merge; ++k)
        merge = out.strides[k].back() == space.strides[k][d] * space.shape[d];
      if (merge) {
        out.shape.back() *= space.shape[d];
        for (size_t k = 0; k < nops; ++k)
          out.strides[k].back() = space.strides[k][d];
        continue;
      }
    }
    out.shape.push_back(space.shape[d]);
    for (size_t k = 0; k < nops; ++k)
      out.strides[k].push_back(space.strides[k][d]);
  }
  return out;
}

bool isFlat(const LoopSpace &space, const std::vector<int> &itemsizes) {
  if (space.shape.size() > 1)
    return false;
  if (space.shape.empty())
    return true;
  for (size_t k = 0; k < space.strides.size(); ++k)
    if (itemsizes[k] != 0 && space.shape[0] > 1 && space.strides[k][0] != itemsizes[k])
      return false;
  return true;
}

} // namespace ptxjit::ufunc
