// End-to-end driver tests: they need a GPU and skip themselves when driverAvailable() is false.
// The hand-written PTX they load is checked with ptxas on every machine.
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "runtime/Graph.h"
#include "runtime/Launch.h"
#include "runtime/Memory.h"
#include "runtime/Module.h"
#include "runtime/Stream.h"
#include "tests/cpp/common/Ptxas.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace ptxjit::runtime;

namespace {

// add_one(int *data, unsigned n): data[i] += 1 for i = blockIdx.x * blockDim.x + threadIdx.x < n.
// noop(): does nothing (a kernel without parameters).
const char *kAddOnePtx = R"(.version 7.0
.target sm_52
.address_size 64

.visible .entry add_one(
    .param .u64 add_one_data,
    .param .u32 add_one_n
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<5>;

    ld.param.u64 %rd1, [add_one_data];
    ld.param.u32 %r1, [add_one_n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r5, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.u32 %r6, [%rd4];
    add.s32 %r7, %r6, 1;
    st.global.u32 [%rd4], %r7;
DONE:
    ret;
}

.visible .entry noop()
{
    ret;
}
)";

// Not valid PTX: an unknown instruction.
const char *kBadPtx = R"(.version 7.0
.target sm_52
.address_size 64

.visible .entry broken(
    .param .u64 broken_data
)
{
    .reg .b32 %r<4>;
    frobnicate.s32 %r1, %r2, 1;
    ret;
}
)";

int runPtxas(const std::string &ptx, const std::string &, std::string *log) {
  return ptxjit::testutil::runPtxas(ptx, "sm_90", log);
}

class Gpu : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (!driverAvailable(&why))
      GTEST_SKIP() << "no CUDA driver/GPU: " << why;
  }
};

// Uploads 0..n-1, runs add_one over them with `block` threads per block, returns the result.
std::vector<int32_t> addOne(const Module &m, uint32_t n, unsigned block, CUstream stream) {
  std::vector<int32_t> host(n);
  std::iota(host.begin(), host.end(), 0);
  auto dev = allocateDevice(n * sizeof(int32_t), stream);
  dev->upload(host.data(), dev->size(), 0, stream);
  CUdeviceptr ptr = dev->devicePtr();
  void *params[] = {&ptr, &n};
  launchKernel(m.function("add_one"), {(n + block - 1) / block}, {block}, 0, stream, params);
  std::vector<int32_t> out(n, -1);
  dev->download(out.data(), dev->size(), 0, stream);
  if (stream)
    check(driver().cuStreamSynchronize(stream), "cuStreamSynchronize");
  return out;
}

void expectAddedOne(const std::vector<int32_t> &out) {
  size_t wrong = 0;
  for (size_t i = 0; i < out.size(); ++i)
    wrong += out[i] != int32_t(i) + 1;
  EXPECT_EQ(wrong, 0u);
}

} // namespace

TEST(PtxFixtures, AddOneKernelAssemblesWithPtxas) {
  std::string log;
  int status = runPtxas(kAddOnePtx, "runtime_add_one", &log);
  if (status == -1)
    GTEST_SKIP() << "ptxas not found";
  EXPECT_EQ(status, 0) << log;
}

TEST(PtxFixtures, BadKernelIsRejectedByPtxas) {
  std::string log;
  int status = runPtxas(kBadPtx, "runtime_bad", &log);
  if (status == -1)
    GTEST_SKIP() << "ptxas not found";
  EXPECT_NE(status, 0);
  EXPECT_NE(log.find("frobnicate"), std::string::npos) << log;
}

TEST_F(Gpu, DriverAndDeviceProperties) {
  EXPECT_GE(driverVersion(), 12000);
  const Device &dev = Device::current();
  EXPECT_EQ(&dev, &Device::current());
  EXPECT_EQ(Device::Cleanup(0).device(), &dev);
  EXPECT_FALSE(dev.name().empty());
  EXPECT_GE(dev.computeCapabilityMajor(), 5);
  EXPECT_EQ(dev.computeCapability(),
            dev.computeCapabilityMajor() * 10 + dev.computeCapabilityMinor());
  EXPECT_GT(dev.multiprocessorCount(), 0);
  EXPECT_EQ(dev.warpSize(), 32);
  EXPECT_GE(dev.maxThreadsPerBlock(), 1024u);
  EXPECT_EQ(dev.maxBlockDim()[2], 64u);
  EXPECT_EQ(dev.maxGridDim()[0], 2147483647u);
  EXPECT_GT(dev.totalMemory(), size_t(1) << 30);
  EXPECT_GE(dev.sharedMemoryPerBlockOptin(), dev.sharedMemoryPerBlock());
  EXPECT_EQ(dev.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), dev.multiprocessorCount());
  EXPECT_NE(dev.context(), nullptr);
  CUcontext cur = nullptr;
  ASSERT_EQ(driver().cuCtxGetCurrent(&cur), CUDA_SUCCESS);
  EXPECT_EQ(cur, dev.context());
  MemoryInfo info = memoryInfo();
  EXPECT_GT(info.total, 0u);
  EXPECT_LE(info.free, info.total);
  EXPECT_EQ(deviceLaunchLimits().maxThreadsPerBlock, dev.maxThreadsPerBlock());
  EXPECT_NO_THROW(synchronize());
}

TEST_F(Gpu, LoadPtxLaunchAndCopyBack) {
  auto m = Module::loadPTX(kAddOnePtx);
  ASSERT_TRUE(m);
  EXPECT_NE(m->handle(), nullptr);
  CUfunction f = m->function("add_one");
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(m->function("add_one"), f); // cached
  expectAddedOne(addOne(*m, 1000, 128, nullptr));
  expectAddedOne(addOne(*m, 1, 1, nullptr));
  expectAddedOne(addOne(*m, 1 << 20, 1024, nullptr));
  launchKernel(m->function("noop"), {1}, {1}, 0, nullptr, nullptr);
  synchronize();
}

TEST_F(Gpu, AsynchronousCopiesAndLaunchOnAStream) {
  auto m = Module::loadPTX(kAddOnePtx);
  for (bool nonBlocking : {true, false}) {
    auto s = Stream::create(nonBlocking);
    ASSERT_NE(s->handle(), nullptr);
    EXPECT_FALSE(s->isDefault());
    EXPECT_EQ(s->nonBlocking(), nonBlocking);
    expectAddedOne(addOne(*m, 4096, 256, s->handle()));
    s->synchronize();
    EXPECT_TRUE(s->query());
  }
  Stream::defaultStream()->synchronize();
  EXPECT_TRUE(Stream::defaultStream()->query());
}

TEST_F(Gpu, CapturedLaunchesReplayAsAGraph) {
  auto m = Module::loadPTX(kAddOnePtx);
  auto s = Stream::create(/*nonBlocking=*/true);
  uint32_t n = 1000;
  std::vector<int32_t> host(n, 5);
  auto dev = allocateDevice(n * sizeof(int32_t), nullptr);
  dev->upload(host.data(), dev->size(), 0, nullptr);
  CUdeviceptr ptr = dev->devicePtr();
  void *params[] = {&ptr, &n};
  Graph::beginCapture(s->handle());
  EXPECT_TRUE(Graph::capturing(s->handle()));
  for (int i = 0; i < 3; ++i)
    launchKernel(m->function("add_one"), {(n + 127) / 128}, {128}, 0, s->handle(), params);
  auto g = Graph::endCapture(s->handle());
  EXPECT_EQ(g->nodeCount(), 3u);
  std::vector<int32_t> out(n, -1);
  dev->download(out.data(), dev->size(), 0, nullptr);
  EXPECT_EQ(out[0], 5); // captured, not run
  g->launch(s->handle());
  g->launch(nullptr);
  synchronize();
  dev->download(out.data(), dev->size(), 0, nullptr);
  EXPECT_EQ(out[0], 11);
  EXPECT_EQ(out[n - 1], 11);
  EXPECT_THROW(Graph::beginCapture(nullptr), std::invalid_argument);
}

TEST_F(Gpu, InvalidPtxGivesCudaErrorWithTheJitLog) {
  try {
    Module::loadPTX(kBadPtx);
    FAIL() << "no exception";
  } catch (const CudaError &e) {
    std::string msg = e.what();
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_PTX) << msg;
    EXPECT_EQ(e.call(), "cuModuleLoadDataEx");
    EXPECT_EQ(msg.rfind("cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (218)", 0), 0u) << msg;
    EXPECT_NE(msg.find("JIT error log:\n"), std::string::npos) << msg;
    EXPECT_NE(msg.find("frobnicate"), std::string::npos) << msg;
  }
  EXPECT_THROW(Module::loadPTX(""), std::invalid_argument);
  // The context is still usable afterwards.
  expectAddedOne(addOne(*Module::loadPTX(kAddOnePtx), 100, 32, nullptr));
}

TEST_F(Gpu, UnknownKernelNameIsReported) {
  auto m = Module::loadPTX(kAddOnePtx);
  try {
    m->function("no_such_kernel");
    FAIL() << "no exception";
  } catch (const CudaError &e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find("no_such_kernel"), std::string::npos) << e.what();
  }
}

TEST_F(Gpu, InvalidLaunchConfigurationsThrowInvalidArgument) {
  auto m = Module::loadPTX(kAddOnePtx);
  CUfunction f = m->function("noop");
  EXPECT_THROW(launchKernel(f, {1}, {2048}, 0, nullptr, nullptr), std::invalid_argument);
  EXPECT_THROW(launchKernel(f, {0}, {1}, 0, nullptr, nullptr), std::invalid_argument);
  EXPECT_THROW(launchKernel(f, {1, 65536}, {1}, 0, nullptr, nullptr), std::invalid_argument);
  EXPECT_THROW(launchKernel(f, {1}, {1, 1, 65}, 0, nullptr, nullptr), std::invalid_argument);
  EXPECT_THROW(launchKernel(f, {1}, {1}, 1u << 30, nullptr, nullptr), std::invalid_argument);
  EXPECT_NO_THROW(synchronize()); // nothing reached the driver
}

TEST_F(Gpu, KernelAttributesAndOccupancy) {
  auto m = Module::loadPTX(kAddOnePtx);
  FunctionAttributes a = functionAttributes(m->function("add_one"));
  EXPECT_GE(a.maxThreadsPerBlock, 128);
  EXPECT_GT(a.numRegs, 0);
  EXPECT_EQ(a.sharedSizeBytes, 0);
  EXPECT_EQ(a.ptxVersion, 52); // the PTX .target (sm_52)
  EXPECT_EQ(a.binaryVersion, Device::current().computeCapability());
  BlockSizeSuggestion s = maxPotentialBlockSize(m->function("add_one"));
  EXPECT_GT(s.blockSize, 0);
  EXPECT_EQ(s.blockSize % 32, 0);
  EXPECT_GT(s.minGridSize, 0);
  BlockSizeSuggestion capped = maxPotentialBlockSize(m->function("add_one"), 0, 64);
  EXPECT_LE(capped.blockSize, 64);
}

TEST_F(Gpu, WorksFromOtherThreads) {
  auto m = Module::loadPTX(kAddOnePtx);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      try {
        // A fresh thread has no current context; the runtime makes it current.
        auto out = addOne(*m, 1000 + t, 64, nullptr);
        for (size_t i = 0; i < out.size(); ++i)
          if (out[i] != int32_t(i) + 1)
            throw std::runtime_error("wrong result");
        auto s = Stream::create();
        out = addOne(*m, 500, 32, s->handle());
        for (size_t i = 0; i < out.size(); ++i)
          if (out[i] != int32_t(i) + 1)
            throw std::runtime_error("wrong result on a stream");
      } catch (const std::exception &e) {
        std::fprintf(stderr, "thread %d: %s\n", t, e.what());
        failures.fetch_add(1);
      }
    });
  for (auto &th : threads)
    th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(Gpu, DeviceAllocationsAndCopies) {
  auto empty = allocateDevice(0);
  EXPECT_TRUE(empty->onDevice());
  EXPECT_EQ(empty->size(), 0u);
  EXPECT_EQ(empty->devicePtr(), 0u);
  EXPECT_EQ(empty->hostPtr(), nullptr);

  auto a = allocateDevice(1000), b = allocateDevice(1000);
  EXPECT_TRUE(a->onDevice());
  EXPECT_EQ(a->hostPtr(), nullptr);
  EXPECT_NE(a->devicePtr(), 0u);
  EXPECT_EQ(a->address(), a->devicePtr());
  EXPECT_EQ(a->devicePtr() % kAllocationAlignment, 0u);
  EXPECT_NE(a->devicePtr(), b->devicePtr());

  std::vector<uint8_t> p(1000);
  for (size_t i = 0; i < p.size(); ++i)
    p[i] = uint8_t(i * 13 + 1);
  a->upload(p.data(), p.size());
  b->fill(0xEE, 1000);
  copyAllocation(*b, 10, *a, 20, 100); // device to device
  std::vector<uint8_t> out(1000);
  b->download(out.data(), out.size());
  for (size_t i = 0; i < 1000; ++i)
    ASSERT_EQ(out[i], (i >= 10 && i < 110) ? p[i + 10] : 0xEE) << i;

  auto h = allocateHost(1000);
  copyAllocation(*h, 0, *a, 0, 1000); // device to host
  EXPECT_EQ(std::memcmp(h->hostPtr(), p.data(), 1000), 0);
  std::memset(h->hostPtr(), 0x11, 1000);
  copyAllocation(*a, 500, *h, 0, 500); // host to device
  a->download(out.data(), 1000);
  for (size_t i = 0; i < 1000; ++i)
    ASSERT_EQ(out[i], i < 500 ? p[i] : 0x11) << i;

  copyDeviceToDevice(b->devicePtr(), a->devicePtr(), 1000);
  fillDevice(b->devicePtr() + 1, 0x22, 2);
  copyDeviceToHost(out.data(), b->devicePtr(), 4);
  EXPECT_EQ(out[0], p[0]);
  EXPECT_EQ(out[1], 0x22);
  EXPECT_EQ(out[2], 0x22);
  EXPECT_EQ(out[3], p[3]);
  EXPECT_THROW(a->upload(p.data(), 1000, 1), std::out_of_range);
  EXPECT_THROW(copyAllocation(*a, 0, *b, 900, 101), std::out_of_range);
}

TEST_F(Gpu, OutOfMemoryIsACudaError) {
  try {
    allocateDevice(Device::current().totalMemory() * 4);
    FAIL() << "no exception";
  } catch (const CudaError &e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(std::string(e.what()).rfind("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2)", 0), 0u)
        << e.what();
  }
}

namespace {
// Wraps the plain allocator and counts its calls.
struct CountingAllocator : DeviceAllocator {
  std::atomic<int> allocations{0}, releases{0};
  std::shared_ptr<DeviceAllocator> inner = plainDeviceAllocator();
  CUdeviceptr allocate(size_t bytes, CUstream stream) override {
    allocations.fetch_add(1);
    return inner->allocate(bytes, stream);
  }
  void deallocate(CUdeviceptr p, size_t bytes, CUstream stream) noexcept override {
    releases.fetch_add(1);
    inner->deallocate(p, bytes, stream);
  }
  const char *name() const noexcept override { return "counting"; }
};
} // namespace

TEST_F(Gpu, ReplacingTheAllocatorNeedsNoCallerChanges) {
  auto counting = std::make_shared<CountingAllocator>();
  setDeviceAllocator(counting);
  auto m = Module::loadPTX(kAddOnePtx);
  expectAddedOne(addOne(*m, 300, 64, nullptr));
  auto kept = allocateDevice(64);
  setDeviceAllocator(nullptr); // later allocations use the plain one again
  EXPECT_EQ(counting->allocations.load(), 2);
  EXPECT_EQ(counting->releases.load(), 1);
  kept.reset(); // freed by the allocator that made it
  EXPECT_EQ(counting->releases.load(), 2);
  auto other = allocateDevice(64);
  EXPECT_EQ(counting->allocations.load(), 2);
}

TEST_F(Gpu, StreamOrderedPoolAllocator) {
  if (!Device::current().memoryPoolsSupported())
    GTEST_SKIP() << "no memory pools on this device";
  std::shared_ptr<DeviceAllocator> pool = poolDeviceAllocator();
  EXPECT_STREQ(pool->name(), "cuMemAllocAsync");
  EXPECT_EQ(poolDeviceAllocator(), pool);
  setDeviceAllocator(pool);
  auto m = Module::loadPTX(kAddOnePtx);
  auto s = Stream::create();
  for (int i = 0; i < 5; ++i) {
    expectAddedOne(addOne(*m, 10000, 256, s->handle()));
    expectAddedOne(addOne(*m, 777, 128, nullptr));
  }
  setDeviceAllocator(nullptr);
  s->synchronize();
  synchronize();
}
