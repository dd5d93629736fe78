// compiler/Background.h: what a compile no longer needs is destroyed, and the tasks it hands
// over are run, on the background thread, in the order handed over; a forked child uses a
// thread of its own and exits without waiting for the parent's.
#include "compiler/Background.h"

#include "tests/cpp/fakecuda/Scenario.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

using namespace ptxjit::compiler;

namespace {

/// Records the order and the thread of its destruction.
struct Tracked {
  struct Log {
    std::mutex mutex;
    std::vector<int> order;
    std::vector<std::thread::id> threads;
  };
  Tracked(int n, Log &log) : n(n), log(log) {}
  ~Tracked() {
    std::lock_guard<std::mutex> lock(log.mutex);
    log.order.push_back(n);
    log.threads.push_back(std::this_thread::get_id());
  }
  int n;
  Log &log;
};

TEST(Background, DestroysOnAnotherThreadInTheOrderHandedOver) {
  Tracked::Log log;
  for (int n = 0; n < 50; ++n)
    disposeLater(std::make_shared<Tracked>(n, log));
  disposeLater(nullptr); // nothing to destroy
  waitForBackground();
  std::lock_guard<std::mutex> lock(log.mutex);
  ASSERT_EQ(log.order.size(), 50u);
  for (int n = 0; n < 50; ++n) {
    EXPECT_EQ(log.order[n], n);
    EXPECT_NE(log.threads[n], std::this_thread::get_id());
  }
}

// A build never waits behind a disposal: here a disposal that blocks until the last of the
// tasks handed over after it has run.
TEST(Background, TasksRunInOrderWhileADisposalIsUnderWay) {
  struct Blocking {
    Blocking(std::atomic<bool> &go, std::atomic<bool> &timedOut) : go(go), timedOut(timedOut) {}
    std::atomic<bool> &go, &timedOut;
    ~Blocking() {
      for (int i = 0; i < 10000 && !go; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      timedOut = !go;
    }
  };
  std::atomic<bool> lastTaskRan{false}, timedOut{false};
  disposeLater(std::make_shared<Blocking>(lastTaskRan, timedOut));
  std::mutex mutex;
  std::vector<int> ran;
  std::vector<std::thread::id> threads;
  for (int n = 0; n < 10; ++n)
    runLater([&, n] {
      std::lock_guard<std::mutex> lock(mutex);
      ran.push_back(n);
      threads.push_back(std::this_thread::get_id());
      if (n == 9)
        lastTaskRan = true;
    });
  runLater(nullptr); // nothing to run
  waitForBackground();
  EXPECT_FALSE(timedOut) << "the tasks waited for the disposal handed over before them";
  std::lock_guard<std::mutex> lock(mutex);
  ASSERT_EQ(ran.size(), 10u);
  for (int n = 0; n < 10; ++n) {
    EXPECT_EQ(ran[n], n);
    EXPECT_NE(threads[n], std::this_thread::get_id());
  }
}

TEST(Background, ALastReferenceHeldElsewhereOutlivesTheHandOver) {
  Tracked::Log log;
  auto kept = std::make_shared<Tracked>(7, log);
  disposeLater(kept);
  waitForBackground();
  {
    std::lock_guard<std::mutex> lock(log.mutex);
    EXPECT_TRUE(log.order.empty()) << "destroyed while still referenced";
  }
  kept.reset();
  std::lock_guard<std::mutex> lock(log.mutex);
  ASSERT_EQ(log.order.size(), 1u);
  EXPECT_EQ(log.threads[0], std::this_thread::get_id());
}

[[noreturn]] void forkAfterDisposalsScenario() {
  static Tracked::Log parentLog;
  disposeLater(std::make_shared<Tracked>(1, parentLog)); // the parent's thread is running
  waitForBackground();
  pid_t child = fork();
  SCENARIO_CHECK(child >= 0);
  if (child == 0) {
    alarm(30);
    static Tracked::Log log;
    disposeLater(std::make_shared<Tracked>(2, log));
    const std::thread::id self = std::this_thread::get_id();
    std::atomic<int> taskRan{0}; // 1: on another thread, 2: on this one
    runLater([&] { taskRan = std::this_thread::get_id() != self ? 1 : 2; });
    waitForBackground(); // served by the child's own thread
    bool ok = log.order.size() == 1 && log.threads[0] != self && taskRan == 1;
    // The exit handler joins the child's thread, not the parent's (which is not here).
    std::exit(ok ? 0 : 1);
  }
  int status = 0;
  SCENARIO_CHECK(waitpid(child, &status, 0) == child);
  SCENARIO_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  disposeLater(std::make_shared<Tracked>(3, parentLog)); // the parent's thread still serves
  waitForBackground();
  SCENARIO_CHECK(parentLog.order.size() == 2);
  std::exit(0);
}

TEST(BackgroundDeathTest, AForkedChildDisposesOnItsOwnThreadAndExits) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(forkAfterDisposalsScenario(), ::testing::ExitedWithCode(0), "");
}

} // namespace
