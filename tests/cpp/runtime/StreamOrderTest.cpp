// Deferred release (runtime/Stream.h, joinLegacyStreamAfter): memory ptxjit frees goes back on
// the legacy default stream, so work that ptxjit submits to a non-blocking stream (which the
// legacy stream does not wait for by itself) is joined into the legacy stream, and a free that
// follows comes after that join. Blocking streams cost nothing. Against the fake driver, which
// counts the joins and orders them against frees (tests/cpp/fakecuda).
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "runtime/Memory.h"
#include "runtime/Stream.h"

#include "tests/cpp/fakecuda/Scenario.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

using namespace ptxjit::runtime;
using namespace ptxjit::testing;

namespace {

struct Order {
  int (*joins)() = nullptr;
  long (*step)(int) = nullptr;
};

Order loadOrder() {
  useFakeDriver();
  return {fake<int (*)()>("fakeCudaOrderCount"), fake<long (*)(int)>("fakeCudaOrderStep")};
}

[[noreturn]] void nonBlockingStreamScenario(bool pools) {
  Order order = loadOrder();
  if (pools)
    fake<void (*)(int)>("fakeCudaSetMemoryPools")(1);
  Device::current();
  if (pools)
    setDeviceAllocator(poolDeviceAllocator());
  std::vector<char> host(256, 7);

  // Work on a blocking stream needs no join: the legacy stream waits for it anyway.
  std::shared_ptr<Stream> blocking = Stream::create(/*nonBlocking=*/false);
  std::shared_ptr<Allocation> a = allocateDevice(host.size());
  copyHostToDevice(a->address(), host.data(), host.size(), blocking->handle());
  a.reset();
  SCENARIO_CHECK(order.joins() == 0);

  // Work on a non-blocking stream is joined before a later free (of a pool block: cached, then
  // freed on the legacy stream; of cuMemAlloc memory: cuMemFree).
  std::shared_ptr<Stream> nonBlocking = Stream::create(/*nonBlocking=*/true);
  std::shared_ptr<Allocation> b = allocateDevice(1 << 22); // above the cached sizes
  copyHostToDevice(b->address(), host.data(), host.size(), nonBlocking->handle());
  SCENARIO_CHECK(order.joins() == 1);
  fillDevice(b->address(), 0, host.size(), nonBlocking->handle());
  SCENARIO_CHECK(order.joins() == 2);
  b.reset();
  SCENARIO_CHECK(order.step(0) < order.step(1)); // the free came after the last join

  // Wrapping a number that is no stream (numba-cuda's cuda.external_stream takes any) asks the
  // driver nothing: its flags are read on the first work submitted to it.
  std::shared_ptr<Stream> dummy = Stream::external(reinterpret_cast<CUstream>(0x12345678));
  SCENARIO_CHECK(dummy->handle() == reinterpret_cast<CUstream>(0x12345678));
  dummy.reset();

  // A blocking stream made by someone else needs no join either.
  auto create = fake<int (*)(void **, unsigned)>("cuStreamCreate");
  void *rawBlocking = nullptr;
  SCENARIO_CHECK(create(&rawBlocking, /*CU_STREAM_DEFAULT=*/0) == 0);
  std::shared_ptr<Stream> externalBlocking = Stream::external(static_cast<CUstream>(rawBlocking));
  std::shared_ptr<Allocation> e = allocateDevice(host.size());
  copyHostToDevice(e->address(), host.data(), host.size(), externalBlocking->handle());
  SCENARIO_CHECK(order.joins() == 2);

  // A non-blocking stream made by someone else (cuda.external_stream) is found out by its flags
  // on its first use; once no Stream wraps the handle any more, ptxjit no longer joins it.
  void *raw = nullptr;
  SCENARIO_CHECK(create(&raw, /*CU_STREAM_NON_BLOCKING=*/1) == 0);
  std::shared_ptr<Stream> external = Stream::external(static_cast<CUstream>(raw));
  std::shared_ptr<Allocation> c = allocateDevice(1 << 22);
  copyHostToDevice(c->address(), host.data(), host.size(), external->handle());
  SCENARIO_CHECK(order.joins() == 3);
  c.reset();
  SCENARIO_CHECK(order.step(0) < order.step(1));
  external.reset();
  std::shared_ptr<Allocation> d = allocateDevice(host.size());
  copyHostToDevice(d->address(), host.data(), host.size(), static_cast<CUstream>(raw));
  SCENARIO_CHECK(order.joins() == 3);
  std::exit(0);
}

class StreamOrderDeathTest : public ::testing::Test {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(StreamOrderDeathTest, FreesFollowWorkOnNonBlockingStreamsWithCuMemAlloc) {
  EXPECT_EXIT(nonBlockingStreamScenario(false), ::testing::ExitedWithCode(0), "");
}

TEST_F(StreamOrderDeathTest, FreesFollowWorkOnNonBlockingStreamsWithThePool) {
  EXPECT_EXIT(nonBlockingStreamScenario(true), ::testing::ExitedWithCode(0), "");
}

} // namespace
