// The process's parked workers (runtime/Workers.h): every lane of a run is called exactly once,
// whatever the number of lanes against the number of workers, run after run (a run wakes only the
// workers it needs, so one that sat out earlier runs must still take part in a later, wider
// one), and two callers at once take turns. In a child process of its own, so that
// PTXJIT_HOST_THREADS picks the pool's size before it is made.
#include "runtime/Workers.h"

#include "tests/cpp/fakecuda/Scenario.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <thread>

using namespace ptxjit::runtime;

namespace {

constexpr unsigned kMaxLanes = 12;

// Runs `lanes` lanes on `w` and checks that each was called once.
bool everyLaneOnce(Workers &w, unsigned lanes) {
  std::unique_ptr<std::atomic<int>[]> hits(new std::atomic<int>[kMaxLanes]());
  w.run(lanes, [&](unsigned lane) { hits[lane].fetch_add(1, std::memory_order_relaxed); });
  for (unsigned lane = 0; lane < kMaxLanes; ++lane)
    if (hits[lane].load() != (lane < lanes ? 1 : 0))
      return false;
  return true;
}

[[noreturn]] void lanesScenario() {
  setenv("PTXJIT_HOST_THREADS", "8", 1);
  Workers &w = Workers::get();
  SCENARIO_CHECK(w.count() == 7);
  // 0 .. 11 lanes in a scrambled order: fewer workers than lanes, as many, more.
  for (unsigned round = 0; round < 3000; ++round)
    SCENARIO_CHECK(everyLaneOnce(w, (round * 7 + round / 12) % kMaxLanes));
  // Two callers at once: each run gets all of its lanes.
  std::atomic<bool> ok{true};
  std::thread other([&] {
    for (unsigned round = 0; round < 1000; ++round)
      if (!everyLaneOnce(w, 1 + round % 4))
        ok = false;
  });
  for (unsigned round = 0; round < 1000; ++round)
    if (!everyLaneOnce(w, 2 + round % 10))
      ok = false;
  other.join();
  SCENARIO_CHECK(ok.load());
  std::_Exit(0);
}

class WorkersDeathTest : public ::testing::Test {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(WorkersDeathTest, EveryLaneRunsOnceWhateverTheWidthOfTheRunsBefore) {
  EXPECT_EXIT(lanesScenario(), ::testing::ExitedWithCode(0), "");
}

} // namespace
