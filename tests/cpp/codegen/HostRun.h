// Running host-backend kernels in the tests: argument packing with the kernel ABI (an array
// of pointers to flattened values) and a simulated grid calling the entry once per thread.
#pragma once

#include "codegen/Codegen.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ptxjit::codegen::test {

/// Same layout as ptxjit::runtime::HostThreadCtx.
struct HostThreadCtx {
  uint32_t tid[3], ntid[3], ctaid[3], nctaid[3];
};

using HostEntry = void (*)(void **, const HostThreadCtx *);

/// The flattened kernel arguments and the pointer array handed to the entry.
class KernelArgs {
public:
  template <typename T> KernelArgs &scalar(T v) {
    auto p = std::make_shared<T>(v);
    ptrs_.push_back(p.get());
    keep_.push_back(p);
    return *this;
  }
  /// A bool parameter travels as one byte.
  KernelArgs &boolean(bool v) { return scalar<uint8_t>(v ? 1 : 0); }
  /// An array view: data, shape[...], strides[...] (bytes).
  KernelArgs &array(void *data, std::vector<int64_t> shape, std::vector<int64_t> strides) {
    scalar<void *>(data);
    for (int64_t s : shape)
      scalar<int64_t>(s);
    for (int64_t s : strides)
      scalar<int64_t>(s);
    return *this;
  }
  /// A C-contiguous 1-d array over `v`.
  template <typename T> KernelArgs &vec(std::vector<T> &v) {
    return array(v.data(), {static_cast<int64_t>(v.size())}, {static_cast<int64_t>(sizeof(T))});
  }
  void **data() { return ptrs_.data(); }

private:
  std::vector<void *> ptrs_;
  std::vector<std::shared_ptr<void>> keep_;
};

/// lowerKernel for the host backend + addToHostJIT.
inline HostEntry compileHost(const ir::Function &fn, const std::string &symbol = "kernel",
                             CompileOptions opts = {}) {
  opts.backend = Backend::Host;
  LoweredModule m = lowerKernel(fn, opts, symbol);
  return reinterpret_cast<HostEntry>(addToHostJIT(std::move(m), opts));
}

/// Calls `entry` once per thread of a grid of `grid` blocks of `block` threads (x only, or
/// x/y/z when given).
inline void launchHost(HostEntry entry, KernelArgs &args, std::vector<uint32_t> grid,
                       std::vector<uint32_t> block) {
  grid.resize(3, 1);
  block.resize(3, 1);
  HostThreadCtx c{};
  for (int d = 0; d < 3; ++d) {
    c.ntid[d] = block[d];
    c.nctaid[d] = grid[d];
  }
  for (c.ctaid[2] = 0; c.ctaid[2] < grid[2]; ++c.ctaid[2])
    for (c.ctaid[1] = 0; c.ctaid[1] < grid[1]; ++c.ctaid[1])
      for (c.ctaid[0] = 0; c.ctaid[0] < grid[0]; ++c.ctaid[0])
        for (c.tid[2] = 0; c.tid[2] < block[2]; ++c.tid[2])
          for (c.tid[1] = 0; c.tid[1] < block[1]; ++c.tid[1])
            for (c.tid[0] = 0; c.tid[0] < block[0]; ++c.tid[0])
              entry(args.data(), &c);
}

} // namespace ptxjit::codegen::test
