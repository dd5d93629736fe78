// The baseline for ptxjit's launch overhead, in a process of its own: a bare cuLaunchKernel
// loop from C++. bench/run.py also builds bare_launch_lib.cpp (the same loop, bare_driver.h)
// as a shared library and times it interleaved with ptxjit's loop in ptxjit's own process; this
// separate-process figure is kept beside it for comparison.
// Build: g++ -O2 -std=c++17 -I/usr/local/cuda/include bare_launch.cpp -ldl -o bare_launch
// Usage: ./bare_launch <kernel.ptx> <kernel-name> [nargs | layout] [block] [iters]
//   Loads the PTX, launches kernel<<<1, block>>> (block = 1 by default) `iters` times (10,000 by
//   default) per repetition, synchronizes, and prints the median microseconds per launch of 7
//   repetitions (after one that warms up) as JSON. The layout is bare_driver.h's: `nargs`
//   8-byte zeros, or e.g. "f64,f32,a1,a1,a1" (ptxjit's kernel ABI for a Python float, passed
//   as its double and its float32 copy, and three 1-d arrays).
#include "bare_driver.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s kernel.ptx name [nargs | layout] [block] [iters]\n", argv[0]);
    return 2;
  }
  std::string layout = argc > 3 ? argv[3] : "0";
  int block = argc > 4 ? std::atoi(argv[4]) : 1;
  int iters = argc > 5 ? std::atoi(argv[5]) : 10000;
  if (block < 1 || iters < 1) {
    std::fprintf(stderr, "block and iters must be positive\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", argv[1]);
    return 2;
  }
  std::stringstream ss;
  ss << in.rdbuf();

  std::string error;
  bare::Driver driver;
  if (!bare::loadDriver(driver, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  bare::Launcher launcher;
  if (!launcher.open(driver, ss.str(), argv[2], layout, static_cast<unsigned>(block), error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  const int reps = 7;
  std::vector<double> perLaunch;
  for (int r = 0; r < reps + 1; ++r) {
    double us = launcher.loopMicroseconds(iters, error);
    if (us < 0) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
    if (r > 0) // the first repetition warms up
      perLaunch.push_back(us);
  }
  std::sort(perLaunch.begin(), perLaunch.end());
  std::printf("{\"bare_launch_us\": %.4f, \"nargs\": %d}\n", perLaunch[perLaunch.size() / 2],
              launcher.paramCount());
  return 0;
}
