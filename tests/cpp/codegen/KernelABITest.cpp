// The kernel ABI's flattening of parameter types into leaves and slots (the packing plan).
#include "codegen/KernelABI.h"

#include "ir/Diagnostics.h"

#include <gtest/gtest.h>

using namespace ptxjit;
using namespace ptxjit::codegen;
namespace t = ptxjit::ir::types;

TEST(PackingPlan, ScalarsArraysAndTuplesFlattenInOrder) {
  const ir::Type *arr1 = t::array(t::float32(), 1, ir::Layout::C);
  const ir::Type *arr2 = t::array(t::int64(), 2, ir::Layout::A);
  PackingPlan p = buildPackingPlan({t::float32(), arr1, t::tuple({t::int8(), arr2})});
  ASSERT_EQ(p.leaves.size(), 4u);
  EXPECT_EQ(p.leaves[0].arg, 0);
  EXPECT_EQ(p.leaves[1].arg, 1);
  EXPECT_EQ(p.leaves[2].arg, 2);
  EXPECT_EQ(p.leaves[3].arg, 2);
  EXPECT_EQ(p.leaves[3].type, arr2);
  // float32 | ptr shape0 stride0 | int8 | ptr shape0 shape1 stride0 stride1
  ASSERT_EQ(p.slots.size(), 1u + 3u + 1u + 5u);
  EXPECT_EQ(p.str(), "float32@0 <- leaf0; ptr@8 <- leaf1.data; int64@16 <- leaf1.shape[0]; "
                     "int64@24 <- leaf1.strides[0]; int8@32 <- leaf2; ptr@40 <- leaf3.data; "
                     "int64@48 <- leaf3.shape[0]; int64@56 <- leaf3.shape[1]; "
                     "int64@64 <- leaf3.strides[0]; int64@72 <- leaf3.strides[1]");
  EXPECT_EQ(p.bufferSize(), 80u);
  EXPECT_EQ(p.paramBytes, 80u);
}

TEST(PackingPlan, ComplexIsTwoFloatsAndBoolOneByte) {
  PackingPlan p = buildPackingPlan({t::complex64(), t::boolean(), t::complex128()});
  ASSERT_EQ(p.slots.size(), 5u);
  EXPECT_EQ(p.slots[0].source, ParamSlot::Source::Real);
  EXPECT_EQ(p.slots[0].type, t::float32());
  EXPECT_EQ(p.slots[1].source, ParamSlot::Source::Imag);
  EXPECT_EQ(p.slots[1].offset, 4u);
  EXPECT_EQ(p.slots[2].type, t::boolean());
  EXPECT_EQ(p.slots[2].size, 1u);
  EXPECT_EQ(p.slots[2].offset, 8u);
  EXPECT_EQ(p.slots[3].type, t::float64());
  EXPECT_EQ(p.slots[3].offset, 16u); // aligned to 8
  EXPECT_EQ(p.slots[4].offset, 24u);
  EXPECT_EQ(p.bufferSize(), 32u);
}

TEST(PackingPlan, PythonFloatsTravelAsDoubleAndFloat32) {
  const ir::Type *arr1 = t::array(t::float32(), 1, ir::Layout::C);
  PackingPlan p = buildPackingPlan({t::weakFloat(), arr1, t::weakInt(), t::weakComplex()});
  ASSERT_EQ(p.leaves.size(), 4u);
  EXPECT_EQ(p.leaves[0].type, t::float64());
  EXPECT_EQ(p.str(), "float64@0 <- leaf0; float32@8 <- leaf0; ptr@16 <- leaf1.data; "
                     "int64@24 <- leaf1.shape[0]; int64@32 <- leaf1.strides[0]; "
                     "int64@40 <- leaf2; float64@48 <- leaf3.real; float64@56 <- leaf3.imag");
  EXPECT_EQ(p.bufferSize(), 64u);
}

TEST(PackingPlan, ParamBytesEndAtTheLastSlotUnpadded) {
  // The kernel's parameters end at the last slot; the buffer is padded to 8 bytes.
  PackingPlan p = buildPackingPlan({t::weakFloat()});
  EXPECT_EQ(p.str(), "float64@0 <- leaf0; float32@8 <- leaf0");
  EXPECT_EQ(p.paramBytes, 12u);
  EXPECT_EQ(p.bufferSize(), 16u);
  PackingPlan b = buildPackingPlan({t::float64(), t::boolean()});
  EXPECT_EQ(b.paramBytes, 9u);
  EXPECT_EQ(b.bufferSize(), 16u);
  PackingPlan none = buildPackingPlan({});
  EXPECT_EQ(none.paramBytes, 0u);
  EXPECT_EQ(none.bufferSize(), 0u);
}

TEST(PackingPlan, PointersAreOneAddressSlot) {
  PackingPlan p = buildPackingPlan({t::int32(), t::pointer(t::float32()), t::voidPointer()});
  ASSERT_EQ(p.slots.size(), 3u);
  EXPECT_EQ(p.slots[1].source, ParamSlot::Source::Address);
  EXPECT_EQ(p.slots[1].type, nullptr);
  EXPECT_EQ(p.str(), "int32@0 <- leaf0; ptr@8 <- leaf1.address; ptr@16 <- leaf2.address");
  EXPECT_EQ(p.leaves[2].type, t::voidPointer());
  EXPECT_EQ(p.paramBytes, 24u);
}

TEST(PackingPlan, RejectsNonArgumentTypes) {
  EXPECT_THROW(buildPackingPlan({t::range()}), ir::CompileError);
  EXPECT_THROW(buildPackingPlan({t::symbol("math")}), ir::CompileError);
}

TEST(PackingPlan, RecordsArePassedByAddressAndArraysOfThemAsArrays) {
  const ir::RecordType *r = t::record({{"a", t::float64(), 0}, {"b", t::int32(), 8}}, 16, true);
  PackingPlan p = buildPackingPlan({r, t::array(r, 1, ir::Layout::C)});
  ASSERT_EQ(p.leaves.size(), 2u);
  EXPECT_EQ(p.leaves[0].type, r);
  EXPECT_EQ(p.str(), "ptr@0 <- leaf0.data; ptr@8 <- leaf1.data; int64@16 <- leaf1.shape[0]; "
                     "int64@24 <- leaf1.strides[0]");
}
