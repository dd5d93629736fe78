// Stream capture into graphs and their replay (runtime/Graph.h) against the fake driver of
// tests/cpp/fakecuda (PTXJIT_LIBCUDA), which records cuMemsetD8Async on a captured stream and
// replays it on cuGraphLaunch: what is captured is not done, a replay does it, each replay
// again; the errors of the capture rules; the destruction of the graph. The driver state is
// per process, so each scenario runs in a death-test child.
#include "runtime/Graph.h"
#include "runtime/Driver.h"
#include "runtime/Launch.h"
#include "runtime/Memory.h"
#include "runtime/Module.h"
#include "runtime/Stream.h"

#include "tests/cpp/fakecuda/Scenario.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <stdexcept>
#include <string>

using namespace ptxjit::runtime;
using namespace ptxjit::testing;

namespace {

// The fake driver's count of cuGraphLaunch (0), cuGraphExecDestroy (1), cuGraphDestroy (2).
int graphCalls(int which) {
  void *lib = dlopen(PTXJIT_FAKE_LIBCUDA, RTLD_NOW | RTLD_NOLOAD);
  auto fn = reinterpret_cast<int (*)(int)>(dlsym(lib, "fakeCudaGraphCalls"));
  return fn ? fn(which) : -1;
}

[[noreturn]] void captureAndReplayScenario() {
  useFakeDriver();
  auto stream = Stream::create(/*nonBlocking=*/true);
  unsigned char buf[8];
  std::memset(buf, 0, sizeof buf);
  auto ptr = reinterpret_cast<CUdeviceptr>(buf); // the fake's device memory is host memory

  Graph::beginCapture(stream->handle());
  SCENARIO_CHECK(Graph::capturing(stream->handle()));
  fillDevice(ptr, 7, 4, stream->handle());
  fillDevice(ptr + 4, 9, 2, stream->handle());
  SCENARIO_CHECK(buf[0] == 0 && buf[4] == 0); // recorded, not done
  std::shared_ptr<Graph> g = Graph::endCapture(stream->handle());
  SCENARIO_CHECK(!Graph::capturing(stream->handle()));
  SCENARIO_CHECK(g->nodeCount() == 2);
  SCENARIO_CHECK(buf[0] == 0);

  g->launch(stream->handle());
  SCENARIO_CHECK(buf[0] == 7 && buf[3] == 7 && buf[4] == 9 && buf[5] == 9 && buf[6] == 0);
  std::memset(buf, 1, sizeof buf);
  g->launch(nullptr); // any stream, the default one included
  SCENARIO_CHECK(buf[0] == 7 && buf[5] == 9 && buf[6] == 1);
  SCENARIO_CHECK(graphCalls(0) == 2);

  fillDevice(ptr, 3, 1, stream->handle()); // after the capture: done at once again
  SCENARIO_CHECK(buf[0] == 3);

  g.reset();
  SCENARIO_CHECK(graphCalls(1) == 1 && graphCalls(2) == 1); // its exec and its graph
  std::_Exit(0);
}

[[noreturn]] void captureRulesScenario() {
  useFakeDriver();
  // The legacy default stream cannot be captured: said before the driver is asked.
  bool refused = false;
  try {
    Graph::beginCapture(nullptr);
  } catch (const std::invalid_argument &e) {
    refused = std::string(e.what()).find("legacy default stream") != std::string::npos;
  }
  SCENARIO_CHECK(refused);

  auto stream = Stream::create(/*nonBlocking=*/false);
  SCENARIO_CHECK(failure([&] { Graph::endCapture(stream->handle()); }) ==
                 "CUDA_ERROR_ILLEGAL_STATE from cuStreamEndCapture"); // not capturing
  Graph::beginCapture(stream->handle());
  SCENARIO_CHECK(failure([&] { Graph::beginCapture(stream->handle()); }) ==
                 "CUDA_ERROR_ILLEGAL_STATE from cuStreamBeginCapture");

  // Work on the legacy default stream meanwhile breaks the capture of a blocking stream.
  unsigned char buf[4] = {0, 0, 0, 0};
  auto ptr = reinterpret_cast<CUdeviceptr>(buf);
  fillDevice(ptr, 5, 4, stream->handle());
  SCENARIO_CHECK(failure([&] { fillDevice(ptr, 6, 4, CU_STREAM_LEGACY); }) ==
                 "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT from cuMemsetD8Async");
  SCENARIO_CHECK(failure([&] { Graph::endCapture(stream->handle()); }) ==
                 "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED from cuStreamEndCapture");
  SCENARIO_CHECK(!Graph::capturing(stream->handle()));
  SCENARIO_CHECK(buf[0] == 0);

  // abandonCapture ends a capture under way and discards it; without one it does nothing.
  Graph::beginCapture(stream->handle());
  fillDevice(ptr, 5, 4, stream->handle());
  Graph::abandonCapture(stream->handle());
  SCENARIO_CHECK(!Graph::capturing(stream->handle()));
  SCENARIO_CHECK(graphCalls(2) == 1); // the discarded graph
  Graph::abandonCapture(stream->handle());
  SCENARIO_CHECK(graphCalls(2) == 1);
  SCENARIO_CHECK(buf[0] == 0);

  // The stream can be captured again afterwards.
  Graph::beginCapture(stream->handle());
  fillDevice(ptr, 4, 4, stream->handle());
  Graph::endCapture(stream->handle())->launch(stream->handle());
  SCENARIO_CHECK(buf[0] == 4 && buf[3] == 4);
  std::_Exit(0);
}

// The fake driver's packed buffer of the last kernel node whose arguments were set, and that
// node's index in its graph.
std::string lastNodeParams(long *index) {
  void *lib = dlopen(PTXJIT_FAKE_LIBCUDA, RTLD_NOW | RTLD_NOLOAD);
  auto params = reinterpret_cast<size_t (*)(unsigned char *, size_t)>(
      dlsym(lib, "fakeCudaLastKernelNodeParams"));
  auto node = reinterpret_cast<long (*)()>(dlsym(lib, "fakeCudaLastKernelNodeIndex"));
  unsigned char buf[64] = {};
  size_t n = params(buf, sizeof buf);
  *index = node();
  return std::string(reinterpret_cast<char *>(buf), std::min(n, sizeof buf));
}

[[noreturn]] void kernelArgumentsScenario() {
  useFakeDriver();
  auto stream = Stream::create(/*nonBlocking=*/true);
  auto module = Module::loadPTX("// fake-ok\n.entry k()\n");
  CUfunction f = module->function("k");
  unsigned char mem[4] = {};
  auto ptr = reinterpret_cast<CUdeviceptr>(mem);

  // Not capturing: no node.
  SCENARIO_CHECK(Graph::lastCapturedNode(stream->handle()) == nullptr);
  Graph::beginCapture(stream->handle());
  SCENARIO_CHECK(Graph::lastCapturedNode(stream->handle()) == nullptr); // nothing captured yet
  fillDevice(ptr, 1, 4, stream->handle());
  CUgraphNode fill = Graph::lastCapturedNode(stream->handle());
  uint64_t words[2] = {7, 8};
  launchKernelBuffer(f, Dim3{2, 1, 1}, Dim3{32, 1, 1}, 0, stream->handle(), words, sizeof words);
  CUgraphNode launch = Graph::lastCapturedNode(stream->handle());
  SCENARIO_CHECK(fill != nullptr && launch != nullptr && launch != fill);
  std::shared_ptr<Graph> g = Graph::endCapture(stream->handle());
  SCENARIO_CHECK(g->nodeCount() == 2);

  uint64_t fresh[2] = {70, 80};
  g->setKernelArguments(launch, f, Dim3{2, 1, 1}, Dim3{32, 1, 1}, 0, fresh, sizeof fresh, nullptr);
  long index = -1;
  std::string got = lastNodeParams(&index);
  SCENARIO_CHECK(index == 1 && got.size() == sizeof fresh &&
                 std::memcmp(got.data(), fresh, sizeof fresh) == 0);
  // The driver's refusal (the fill's node is no kernel node) comes back named.
  SCENARIO_CHECK(failure([&] {
                   g->setKernelArguments(fill, f, Dim3{2, 1, 1}, Dim3{32, 1, 1}, 0, fresh,
                                         sizeof fresh, nullptr);
                 }) == "CUDA_ERROR_INVALID_VALUE from cuGraphExecKernelNodeSetParams");
  g->launch(stream->handle());
  SCENARIO_CHECK(mem[0] == 1 && mem[3] == 1);
  std::_Exit(0);
}

class GraphDeathTest : public ::testing::Test {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

} // namespace

TEST_F(GraphDeathTest, CapturedWorkIsRecordedAndEachReplayDoesIt) {
  EXPECT_EXIT(captureAndReplayScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(GraphDeathTest, CaptureRulesAndAbandonedCaptures) {
  EXPECT_EXIT(captureRulesScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(GraphDeathTest, CapturedLaunchesGetTheirNodesAndArgumentsSetAnew) {
  EXPECT_EXIT(kernelArgumentsScenario(), ::testing::ExitedWithCode(0), "");
}

TEST(GraphWithoutDriver, NeedsTheDriver) {
  // Without a usable driver (the test process never loads one) graphs say why.
  if (driverAvailable())
    GTEST_SKIP() << "a driver is loaded";
  EXPECT_THROW(Graph::beginCapture(reinterpret_cast<CUstream>(0x10)), DriverUnavailable);
}
