// Host allocations and copies (the CPU backend's memory), and the allocator registry.
#include "runtime/Memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <vector>

using namespace ptxjit::runtime;

namespace {

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

std::vector<uint8_t> contents(const Allocation &a) {
  std::vector<uint8_t> v(a.size());
  a.download(v.data(), v.size());
  return v;
}

} // namespace

TEST(HostAllocation, PropertiesAndAlignment) {
  for (size_t size : {1u, 3u, 255u, 256u, 257u, 1000u, 4096u, 100000u}) {
    auto a = allocateHost(size);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->size(), size);
    EXPECT_FALSE(a->onDevice());
    EXPECT_EQ(a->devicePtr(), 0u);
    EXPECT_EQ(a->stream(), nullptr);
    ASSERT_NE(a->hostPtr(), nullptr);
    EXPECT_EQ(a->address(), reinterpret_cast<uint64_t>(a->hostPtr()));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a->hostPtr()) % kAllocationAlignment, 0u) << size;
    // The whole range is writable and keeps what was written.
    std::vector<uint8_t> p = pattern(size, static_cast<uint8_t>(size));
    std::memcpy(a->hostPtr(), p.data(), size);
    EXPECT_EQ(std::memcmp(a->hostPtr(), p.data(), size), 0);
  }
}

TEST(HostAllocation, DistinctAllocationsDoNotOverlap) {
  std::vector<std::shared_ptr<Allocation>> all;
  for (size_t i = 1; i <= 64; ++i) {
    all.push_back(allocateHost(i * 13));
    std::memset(all.back()->hostPtr(), static_cast<int>(i), all.back()->size());
  }
  for (size_t i = 0; i < all.size(); ++i) {
    auto bytes = contents(*all[i]);
    for (uint8_t b : bytes)
      ASSERT_EQ(b, static_cast<uint8_t>(i + 1));
  }
}

TEST(HostAllocation, ZeroBytes) {
  auto a = allocateHost(0);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->size(), 0u);
  EXPECT_EQ(a->hostPtr(), nullptr);
  EXPECT_EQ(a->address(), 0u);
  EXPECT_FALSE(a->onDevice());
  uint8_t byte = 5;
  EXPECT_NO_THROW(a->upload(&byte, 0));
  EXPECT_NO_THROW(a->download(&byte, 0));
  EXPECT_NO_THROW(a->fill(1, 0));
  EXPECT_EQ(byte, 5);
  EXPECT_THROW(a->upload(&byte, 1), std::out_of_range);
  EXPECT_THROW(a->download(&byte, 1), std::out_of_range);
}

TEST(HostAllocation, UploadDownloadWithOffsets) {
  auto a = allocateHost(100);
  a->fill(0xAB, 100);
  std::vector<uint8_t> p = pattern(10, 1);
  a->upload(p.data(), p.size(), 40);
  std::vector<uint8_t> all = contents(*a);
  for (size_t i = 0; i < 100; ++i) {
    uint8_t expected = (i >= 40 && i < 50) ? p[i - 40] : 0xAB;
    ASSERT_EQ(all[i], expected) << i;
  }
  std::vector<uint8_t> part(12, 0);
  a->download(part.data(), 12, 39);
  EXPECT_EQ(part[0], 0xAB);
  EXPECT_TRUE(std::equal(p.begin(), p.end(), part.begin() + 1));
  EXPECT_EQ(part[11], 0xAB);
  // Range ending exactly at the end is fine; one past is not.
  EXPECT_NO_THROW(a->upload(p.data(), 10, 90));
  EXPECT_THROW(a->upload(p.data(), 10, 91), std::out_of_range);
  EXPECT_THROW(a->download(part.data(), 1, 100), std::out_of_range);
  EXPECT_THROW(a->fill(0, 101), std::out_of_range);
  EXPECT_THROW(a->fill(0, 1, SIZE_MAX), std::out_of_range);
  EXPECT_THROW(a->upload(p.data(), SIZE_MAX, 2), std::out_of_range); // no wrap-around
  try {
    a->upload(p.data(), 10, 95);
    FAIL();
  } catch (const std::out_of_range &e) {
    EXPECT_NE(std::string(e.what()).find("exceed the allocation's 100 bytes"), std::string::npos)
        << e.what();
  }
}

TEST(HostAllocation, FillSetsExactlyTheRange) {
  auto a = allocateHost(64);
  a->fill(0, 64);
  a->fill(0x7F, 8, 4);
  std::vector<uint8_t> all = contents(*a);
  for (size_t i = 0; i < 64; ++i)
    ASSERT_EQ(all[i], (i >= 4 && i < 12) ? 0x7F : 0) << i;
}

TEST(HostAllocation, CopyAllocationBetweenHostBlocks) {
  auto src = allocateHost(300), dst = allocateHost(500);
  std::vector<uint8_t> p = pattern(300, 9);
  src->upload(p.data(), p.size());
  dst->fill(0, 500);
  copyAllocation(*dst, 100, *src, 50, 200);
  std::vector<uint8_t> all = contents(*dst);
  for (size_t i = 0; i < 500; ++i) {
    uint8_t expected = (i >= 100 && i < 300) ? p[i - 100 + 50] : 0;
    ASSERT_EQ(all[i], expected) << i;
  }
  EXPECT_THROW(copyAllocation(*dst, 400, *src, 0, 101), std::out_of_range);
  EXPECT_THROW(copyAllocation(*dst, 0, *src, 250, 51), std::out_of_range);
  EXPECT_NO_THROW(copyAllocation(*dst, 500, *src, 300, 0));
}

TEST(HostAllocation, CopyAllocationWithinOneBlockOverlapping) {
  auto a = allocateHost(64);
  std::vector<uint8_t> p = pattern(64, 3);
  a->upload(p.data(), 64);
  copyAllocation(*a, 8, *a, 0, 32); // overlapping: behaves like memmove
  std::vector<uint8_t> expected = p;
  std::memmove(expected.data() + 8, p.data(), 32);
  EXPECT_EQ(contents(*a), expected);
}

TEST(DeviceAllocatorRegistry, DefaultIsPlainAndReplaceable) {
  std::shared_ptr<DeviceAllocator> plain = plainDeviceAllocator();
  ASSERT_TRUE(plain);
  EXPECT_STREQ(plain->name(), "cuMemAlloc");
  EXPECT_EQ(deviceAllocator(), plain);

  struct Custom : DeviceAllocator {
    CUdeviceptr allocate(size_t, CUstream) override { throw std::runtime_error("unused"); }
    void deallocate(CUdeviceptr, size_t, CUstream) noexcept override {}
    const char *name() const noexcept override { return "custom"; }
  };
  auto custom = std::make_shared<Custom>();
  setDeviceAllocator(custom);
  EXPECT_EQ(deviceAllocator(), custom);
  setDeviceAllocator(nullptr);
  EXPECT_EQ(deviceAllocator(), plain);
}
