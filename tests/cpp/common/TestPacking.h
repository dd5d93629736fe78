// Packs test values into a kernel's parameters by its PackingPlan (codegen/KernelABI.h), for the
// tests of layers below the compiler's packer (compiler/Packing.h): scalars as doubles (stored
// as the slot's float or integer type), arrays as a pointer with a shape and byte strides.
#pragma once

#include "codegen/KernelABI.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace ptxjit::testutil {

/// A test leaf: a scalar `value`, or an array at `data`.
struct TestLeaf {
  double value = 0;
  const void *data = nullptr;
  std::vector<int64_t> shape, strides;
};

/// A C-contiguous array of `shape` with elements of `itemsize` bytes.
inline TestLeaf arrayLeaf(const void *data, std::vector<int64_t> shape, int itemsize) {
  TestLeaf l;
  l.data = data;
  l.shape = shape;
  l.strides.assign(shape.size(), 0);
  int64_t acc = itemsize;
  for (size_t k = shape.size(); k-- > 0;) {
    l.strides[k] = acc;
    acc *= shape[k];
  }
  return l;
}

/// An array with explicit byte strides.
inline TestLeaf stridedLeaf(const void *data, std::vector<int64_t> shape,
                            std::vector<int64_t> strides) {
  TestLeaf l;
  l.data = data;
  l.shape = std::move(shape);
  l.strides = std::move(strides);
  return l;
}

inline TestLeaf scalarLeaf(double v) {
  TestLeaf l;
  l.value = v;
  return l;
}

/// The packed buffer of `leaves` (one per plan leaf) and the pointer to each slot.
struct Packed {
  std::vector<uint64_t> buffer;
  std::vector<void *> params;
  Packed(const codegen::PackingPlan &plan, const std::vector<TestLeaf> &leaves) {
    namespace t = ir::types;
    buffer.assign(plan.bufferSize() / 8 + 1, 0);
    char *buf = reinterpret_cast<char *>(buffer.data());
    for (const codegen::ParamSlot &s : plan.slots) {
      const TestLeaf &l = leaves.at(s.leaf);
      char *dst = buf + s.offset;
      using S = codegen::ParamSlot::Source;
      if (s.source == S::Data) {
        std::memcpy(dst, &l.data, 8);
      } else if (s.source == S::Shape) {
        std::memcpy(dst, &l.shape.at(s.dim), 8);
      } else if (s.source == S::Stride) {
        std::memcpy(dst, &l.strides.at(s.dim), 8);
      } else if (s.type == t::float32()) {
        float f = static_cast<float>(l.value);
        std::memcpy(dst, &f, 4);
      } else if (s.type == t::float64()) {
        std::memcpy(dst, &l.value, 8);
      } else if (s.type == t::int64()) {
        int64_t i = static_cast<int64_t>(l.value);
        std::memcpy(dst, &i, 8);
      } else {
        ADD_FAILURE() << "test packing does not handle " << s.type->str();
      }
      params.push_back(dst);
    }
  }
};

} // namespace ptxjit::testutil
