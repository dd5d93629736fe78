// Compile latency of the whole pipeline for saxpy (reported; bounded loosely so that a
// pathological slowdown fails the test).
#include "HostRun.h"
#include "Kernels.h"

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

namespace ptxjit::codegen::test {
namespace {

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

TEST(CompileLatency, Saxpy) {
  auto fn = makeSaxpy();
  CompileOptions cuda;
  CompileOptions host;
  host.backend = Backend::Host;

  auto t0 = std::chrono::steady_clock::now();
  {
    LoweredModule m = lowerKernel(*fn, cuda, "saxpy");
    emitPTX(m, cuda);
  }
  double firstCuda = msSince(t0);
  t0 = std::chrono::steady_clock::now();
  addToHostJIT(lowerKernel(*fn, host, "saxpy"), host);
  double firstHost = msSince(t0);

  const int n = 10;
  double lowerMs = 0, ptxMs = 0, hostMs = 0;
  for (int k = 0; k < n; ++k) {
    auto a = std::chrono::steady_clock::now();
    LoweredModule m = lowerKernel(*fn, cuda, "saxpy");
    lowerMs += msSince(a);
    auto b = std::chrono::steady_clock::now();
    std::string ptx = emitPTX(m, cuda);
    ptxMs += msSince(b);
    ASSERT_FALSE(ptx.empty());
    auto c = std::chrono::steady_clock::now();
    void *entry = addToHostJIT(lowerKernel(*fn, host, "saxpy"), host);
    hostMs += msSince(c);
    ASSERT_NE(entry, nullptr);
  }
  std::cout << "[ latency ] saxpy first CUDA lower+emitPTX " << firstCuda
            << " ms, first host lower+JIT " << firstHost << " ms\n"
            << "[ latency ] saxpy warm: lowerKernel " << lowerMs / n << " ms, emitPTX "
            << ptxMs / n << " ms, host lower+JIT " << hostMs / n << " ms\n";
  RecordProperty("cuda_ms", std::to_string((lowerMs + ptxMs) / n));
  RecordProperty("host_ms", std::to_string(hostMs / n));
  // Tens of milliseconds are expected; these bounds only catch gross regressions on a
  // loaded machine.
  EXPECT_LT((lowerMs + ptxMs) / n, 500.0);
  EXPECT_LT(hostMs / n, 1000.0);
}

} // namespace
} // namespace ptxjit::codegen::test
