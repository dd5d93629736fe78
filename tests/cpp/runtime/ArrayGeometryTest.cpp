// The geometry of strided arrays: spans, contiguity flags, basic indexing and no-copy reshapes,
// checked against what NumPy gives for the same arrays.
#include "runtime/ArrayGeometry.h"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <vector>

using namespace ptxjit::runtime;
using V = std::vector<int64_t>;

namespace {

IndexItem intItem(int64_t v) {
  IndexItem it;
  it.kind = IndexItem::Kind::Int;
  it.value = v;
  return it;
}

// A slice as PySlice_Unpack gives it (None start/stop become the extreme values).
IndexItem sliceItem(int64_t start, int64_t stop, int64_t step) {
  IndexItem it;
  it.kind = IndexItem::Kind::Slice;
  it.start = start;
  it.stop = stop;
  it.step = step;
  return it;
}

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

IndexItem all() { return sliceItem(0, kMax, 1); }
IndexItem reversed() { return sliceItem(kMax, kMin, -1); }

IndexItem kind(IndexItem::Kind k) {
  IndexItem it;
  it.kind = k;
  return it;
}

} // namespace

TEST(ArrayGeometry, SpanCoversNegativeAndZeroStrides) {
  Span s = spanOf({10}, {8}, 8);
  EXPECT_EQ(s.begin, 0);
  EXPECT_EQ(s.end, 80);
  s = spanOf({10}, {-8}, 8); // a[::-1]: the first element is the highest
  EXPECT_EQ(s.begin, -72);
  EXPECT_EQ(s.end, 8);
  EXPECT_EQ(s.bytes(), 80);
  s = spanOf({4, 3}, {0, 8}, 8); // broadcast rows
  EXPECT_EQ(s.bytes(), 24);
  s = spanOf({4, 0}, {8, 8}, 8);
  EXPECT_EQ(s.bytes(), 0);
  s = spanOf({}, {}, 4);
  EXPECT_EQ(s.bytes(), 4);
  EXPECT_THROW(spanOf({kMax / 2}, {16}, 8), std::overflow_error);
}

TEST(ArrayGeometry, ContiguityFlagsFollowNumPy) {
  EXPECT_TRUE(isCContiguous({10}, {8}, 8));
  EXPECT_TRUE(isFContiguous({10}, {8}, 8));
  EXPECT_TRUE(isCContiguous({2, 3}, {24, 8}, 8));
  EXPECT_FALSE(isFContiguous({2, 3}, {24, 8}, 8));
  EXPECT_TRUE(isFContiguous({2, 3}, {8, 16}, 8));
  EXPECT_TRUE(isCContiguous({1, 5}, {999, 8}, 8)); // axes of length 1 are ignored
  EXPECT_TRUE(isFContiguous({1, 5}, {999, 8}, 8));
  EXPECT_FALSE(isCContiguous({5}, {16}, 8));
  EXPECT_FALSE(isCContiguous({5}, {-8}, 8));
  EXPECT_FALSE(isCContiguous({3, 2}, {0, 8}, 8)); // broadcast
  EXPECT_FALSE(isFContiguous({3, 2}, {0, 8}, 8));
  EXPECT_TRUE(isCContiguous({0, 3}, {8, 8}, 8)); // empty arrays are both
  EXPECT_TRUE(isFContiguous({0, 3}, {8, 8}, 8));
  EXPECT_TRUE(isCContiguous({}, {}, 8));
}

TEST(ArrayGeometry, IntegersPickElements) {
  ArrayGeometry a{{4, 5}, {40, 8}, 16};
  IndexResult r = indexArray(a, {intItem(1), intItem(-1)});
  EXPECT_TRUE(r.element);
  EXPECT_EQ(r.view.offset, 16 + 40 + 32);
  EXPECT_TRUE(r.view.shape.empty());
  r = indexArray(a, {intItem(2)}); // a row
  EXPECT_FALSE(r.element);
  EXPECT_EQ(r.view.shape, V({5}));
  EXPECT_EQ(r.view.strides, V({8}));
  EXPECT_EQ(r.view.offset, 16 + 80);
  try {
    indexArray(a, {intItem(4)});
    FAIL();
  } catch (const std::out_of_range &e) {
    EXPECT_STREQ(e.what(), "index 4 is out of bounds for axis 0 with size 4");
  }
  EXPECT_THROW(indexArray(a, {intItem(0), intItem(-6)}), std::out_of_range);
  EXPECT_THROW(indexArray(a, {intItem(0), intItem(0), intItem(0)}), std::out_of_range);
}

TEST(ArrayGeometry, SlicesMakeStridedViews) {
  ArrayGeometry a{{10}, {8}, 0};
  IndexResult r = indexArray(a, {sliceItem(1, kMax, 3)}); // a[1::3] = 1, 4, 7
  EXPECT_EQ(r.view.shape, V({3}));
  EXPECT_EQ(r.view.strides, V({24}));
  EXPECT_EQ(r.view.offset, 8);
  r = indexArray(a, {reversed()}); // a[::-1]
  EXPECT_EQ(r.view.shape, V({10}));
  EXPECT_EQ(r.view.strides, V({-8}));
  EXPECT_EQ(r.view.offset, 72);
  r = indexArray(a, {sliceItem(-2, -8, -2)}); // a[-2:-8:-2] = 8, 6, 4
  EXPECT_EQ(r.view.shape, V({3}));
  EXPECT_EQ(r.view.strides, V({-16}));
  EXPECT_EQ(r.view.offset, 64);
  r = indexArray(a, {sliceItem(5, 2, 1)}); // empty
  EXPECT_EQ(r.view.shape, V({0}));
  r = indexArray(a, {sliceItem(-100, 100, 1)}); // clamped
  EXPECT_EQ(r.view.shape, V({10}));
  EXPECT_EQ(r.view.offset, 0);
  EXPECT_THROW(indexArray(a, {sliceItem(0, 1, 0)}), std::invalid_argument);
}

TEST(ArrayGeometry, EllipsisAndNewAxis) {
  ArrayGeometry a{{2, 3, 4}, {96, 32, 8}, 0};
  IndexResult r = indexArray(a, {kind(IndexItem::Kind::Ellipsis), intItem(1)}); // a[..., 1]
  EXPECT_FALSE(r.element);
  EXPECT_EQ(r.view.shape, V({2, 3}));
  EXPECT_EQ(r.view.strides, V({96, 32}));
  EXPECT_EQ(r.view.offset, 8);
  r = indexArray(a, {intItem(1), kind(IndexItem::Kind::Ellipsis)}); // a[1, ...]
  EXPECT_EQ(r.view.shape, V({3, 4}));
  EXPECT_EQ(r.view.offset, 96);
  r = indexArray(a, {kind(IndexItem::Kind::NewAxis), all(), intItem(0)}); // a[None, :, 0]
  EXPECT_EQ(r.view.shape, V({1, 2, 4}));
  EXPECT_EQ(r.view.strides, V({0, 96, 8}));
  ArrayGeometry zero{{}, {}, 0};
  EXPECT_TRUE(indexArray(zero, {}).element); // a[()] of a 0-d array
  EXPECT_FALSE(indexArray(zero, {kind(IndexItem::Kind::Ellipsis)}).element);
  EXPECT_THROW(indexArray(a, {kind(IndexItem::Kind::Ellipsis), kind(IndexItem::Kind::Ellipsis)}),
               std::out_of_range);
}

TEST(ArrayGeometry, ReshapeWithoutCopy) {
  // C-contiguous (4, 6) to (2, 2, 6) and (24,).
  EXPECT_EQ(reshapeStrides({4, 6}, {48, 8}, 8, {2, 2, 6}, false), V({96, 48, 8}));
  EXPECT_EQ(reshapeStrides({4, 6}, {48, 8}, 8, {24}, false), V({8}));
  // Fortran order on a C array needs a copy; on an F array it does not.
  EXPECT_FALSE(reshapeStrides({4, 6}, {48, 8}, 8, {24}, true));
  EXPECT_EQ(reshapeStrides({4, 6}, {8, 32}, 8, {24}, true), V({8}));
  // A strided view: rows of a[::2] stay apart, so (5, 12) -> (5, 3, 4) works, -> (60,) does not.
  EXPECT_EQ(reshapeStrides({5, 12}, {192, 8}, 8, {5, 3, 4}, false), V({192, 32, 8}));
  EXPECT_FALSE(reshapeStrides({5, 12}, {192, 8}, 8, {60}, false));
  // Trailing and leading axes of 1.
  EXPECT_EQ(reshapeStrides({6}, {8}, 8, {1, 6, 1}, false), V({48, 8, 8}));
  EXPECT_EQ(reshapeStrides({0}, {8}, 8, {1, 0, 2}, false), V({16, 16, 8}));
}
