// fork() safety (runtime/Fork.h): a child forked while another thread holds one of ptxjit's
// registered locks, opens the device in the background or warms up the memory pool neither
// hangs nor crashes: it refuses CUDA at once (ForkedAfterInit) and exits normally. Each scenario
// runs in a death-test child against the fake driver (tests/cpp/fakecuda); the grandchild it
// forks has an alarm, so a hang ends as a failure instead of blocking the test.
#include "runtime/Fork.h"
#include "runtime/Device.h"
#include "runtime/Driver.h"
#include "runtime/Memory.h"

#include "tests/cpp/fakecuda/Scenario.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

using namespace ptxjit::runtime;
using namespace ptxjit::testing;

namespace {

constexpr unsigned kChildAlarmSeconds = 30;

// Waits for `child` and checks that it exited with status 0 (not killed by its alarm).
void expectChildSucceeded(pid_t child) {
  int status = 0;
  SCENARIO_CHECK(waitpid(child, &status, 0) == child);
  if (WIFSIGNALED(status))
    std::fprintf(stderr, "the forked child was killed by signal %d (its alarm: a hang)\n",
                 WTERMSIG(status));
  SCENARIO_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// True when `f` throws ForkedAfterInit whose text starts with the refusal numba-cuda gives.
template <typename F> bool refusesAfterFork(F &&f) {
  try {
    f();
  } catch (const ForkedAfterInit &e) {
    return std::string(e.what()).rfind("CUDA initialized before forking", 0) == 0;
  } catch (...) {
    return false;
  }
  return false;
}

// Waits (up to 20 s) until `pred` holds.
template <typename P> void awaitTrue(P &&pred) {
  for (int i = 0; i < 2000 && !pred(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  SCENARIO_CHECK(pred());
}

[[noreturn]] void forkDuringBackgroundOpeningScenario() {
  useFakeDriver();
  auto hold = fake<void (*)(int)>("fakeCudaHoldContext");
  auto waiting = fake<int (*)()>("fakeCudaContextWaiting");
  hold(1);
  Device::openInBackground(nullptr);
  awaitTrue([&] { return waiting() != 0; }); // the opener thread is inside the driver
  pid_t child = fork();
  SCENARIO_CHECK(child >= 0);
  if (child == 0) {
    alarm(kChildAlarmSeconds);
    // The parent's opening is not waited for: CUDA is refused at once, on every path.
    bool refused = refusesAfterFork([] { Device::current(); }) &&
                   refusesAfterFork([] { allocateDevice(64); }) &&
                   refusesAfterFork([] { Device::get(0); }) && !driverAvailable();
    // A normal exit runs the atexit handlers, which must not wait for the parent's opener.
    std::exit(refused ? 0 : 1);
  }
  hold(0);
  SCENARIO_CHECK(Device::current().name() == "Fake GPU"); // the parent's opening completes
  expectChildSucceeded(child);
  std::exit(0);
}

std::atomic<int> gWarmUpStarted{-1};
void warmUpHook() { gWarmUpStarted = usePoolAllocatorAfterWarmUp() ? 1 : 0; }

[[noreturn]] void forkDuringPoolWarmUpScenario() {
  useFakeDriver();
  fake<void (*)(int)>("fakeCudaSetMemoryPools")(1);
  auto holdPool = fake<void (*)(int)>("fakeCudaHoldPoolAllocation");
  auto poolWaiting = fake<int (*)()>("fakeCudaPoolAllocationWaiting");
  holdPool(1);
  Device::openInBackground(warmUpHook);
  Device::current();
  SCENARIO_CHECK(gWarmUpStarted == 1);
  awaitTrue([&] { return poolWaiting() != 0; }); // the warm-up thread is inside the driver
  pid_t child = fork();
  SCENARIO_CHECK(child >= 0);
  if (child == 0) {
    alarm(kChildAlarmSeconds);
    bool refused = refusesAfterFork([] { allocateDevice(64); });
    // The atexit handler that joins the warm-up thread finds nothing to join here.
    std::exit(refused ? 0 : 1);
  }
  holdPool(0);
  joinPoolWarmUp();
  SCENARIO_CHECK(std::string(deviceAllocator()->name()) == "cuMemAllocAsync");
  expectChildSucceeded(child);
  std::exit(0);
}

// A registered lock held by another thread when fork() is called: the fork waits for it, and
// the child finds it free.
std::mutex gTableLock;
std::atomic<int> gChildHandlerRuns{0};
void countChildHandler() { ++gChildHandlerRuns; }
[[maybe_unused]] const bool gRegistered = [] {
  registerForkLock(gTableLock);
  onForkChild(countChildHandler);
  return true;
}();

[[noreturn]] void forkWaitsForRegisteredLocksScenario() {
  std::mutex m;
  std::condition_variable cv;
  bool locked = false;
  std::atomic<bool> released{false};
  std::thread holder([&] {
    std::unique_lock<std::mutex> table(gTableLock);
    {
      std::lock_guard<std::mutex> g(m);
      locked = true;
    }
    cv.notify_all();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    released = true;
  }); // unlocks gTableLock on return
  {
    std::unique_lock<std::mutex> g(m);
    cv.wait(g, [&] { return locked; });
  }
  pid_t child = fork(); // waits until the holder releases the table lock
  SCENARIO_CHECK(child >= 0);
  if (child == 0) {
    alarm(kChildAlarmSeconds);
    bool free = gTableLock.try_lock();
    if (free)
      gTableLock.unlock();
    std::_Exit(free && gChildHandlerRuns == 1 ? 0 : 1);
  }
  SCENARIO_CHECK(released); // fork() returned only after the holder let go
  holder.join();
  SCENARIO_CHECK(gChildHandlerRuns == 0); // child handlers run in the child only
  SCENARIO_CHECK(gTableLock.try_lock());  // and the parent's lock is free again
  gTableLock.unlock();
  expectChildSucceeded(child);
  std::exit(0);
}

class ForkDeathTest : public ::testing::Test {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(ForkDeathTest, AChildForkedDuringTheBackgroundOpeningRefusesCudaAndExits) {
  EXPECT_EXIT(forkDuringBackgroundOpeningScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(ForkDeathTest, AChildForkedDuringThePoolWarmUpRefusesCudaAndExits) {
  EXPECT_EXIT(forkDuringPoolWarmUpScenario(), ::testing::ExitedWithCode(0), "");
}

TEST_F(ForkDeathTest, ForkWaitsForRegisteredLocksAndTheChildFindsThemFree) {
  EXPECT_EXIT(forkWaitsForRegisteredLocksScenario(), ::testing::ExitedWithCode(0), "");
}

} // namespace
