// Lowering, PTX emission (with libdevice) and the host JIT used from several threads at once.
#include "HostRun.h"
#include "Kernels.h"
#include "tests/cpp/common/NeedsLibdevice.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>

namespace ptxjit::codegen::test {
namespace {

TEST(Concurrency, CompileFromManyThreads) {
  PTXJIT_SKIP_WITHOUT_LIBDEVICE();
  auto saxpy = makeSaxpy();
  auto powFn = makeElementwise(BinaryOp::Pow, types::float64(), types::float64(), types::float64(),
                               types::float64());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      try {
        for (int k = 0; k < 3; ++k) {
          CompileOptions cuda;
          LoweredModule m = lowerKernel(*powFn, cuda, "pow_t" + std::to_string(t));
          std::string ptx = emitPTX(m, cuda);
          if (ptx.find(".entry pow_t" + std::to_string(t)) == std::string::npos ||
              !m.linkedLibdevice())
            ++failures;
          HostEntry e = compileHost(*saxpy, "saxpy_t" + std::to_string(t));
          std::vector<float> x = {1, 2}, y = {3, 4}, out(2);
          KernelArgs args;
          args.scalar(float(t)).vec(x).vec(y).vec(out);
          launchHost(e, args, {1}, {2});
          if (out[0] != float(t) * 1 + 3 || out[1] != float(t) * 2 + 4)
            ++failures;
        }
      } catch (const std::exception &e) {
        ADD_FAILURE() << e.what();
        ++failures;
      }
    });
  }
  for (auto &th : threads)
    th.join();
  EXPECT_EQ(failures.load(), 0);
}

} // namespace
} // namespace ptxjit::codegen::test
