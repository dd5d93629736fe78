#include "ufunc/Loops.h"

#include "runtime/Device.h"
#include "runtime/HostGrid.h"

#include <algorithm>
#include <memory>

namespace ptxjit::ufunc {
namespace {

/// Elements below which a Parallel loop stays on the calling thread.
constexpr int64_t kParallelGrain = 1 << 14;

/// The block a CUDA elementwise or gufunc loop's occupancy-optimal block is split into. Blocks
/// of 256 ran a row-wise float32 dot product over 2^20 rows of 64 (a gufunc) 7% faster than the
/// occupancy-optimal 1024, with the same threads resident, and a float32 add of 2^26 elements
/// no slower (H200, 2026-11-29, docs/performance.md).
constexpr int64_t kLoopSplitBlock = 256;

/// The packed arguments of one launch: small plans stay on the stack.
class Packed {
public:
  Packed(const compiler::Specialization &spec, const compiler::ArgValue *leaves) {
    size_t words = spec.plan.bufferSize() / 8;
    size_t slots = spec.plan.slots.size();
    if (words > kWords || slots > kSlots) [[unlikely]] {
      heapBuf_ = std::make_unique<uint64_t[]>(words);
      heapParams_ = std::make_unique<void *[]>(slots);
      buf_ = heapBuf_.get();
      params_ = heapParams_.get();
    }
    compiler::pack(spec.plan, leaves, buffer());
  }
  char *buffer() { return reinterpret_cast<char *>(buf_); }
  void **params() { return params_; }

private:
  static constexpr size_t kWords = 64, kSlots = 64;
  uint64_t stackBuf_[kWords];
  void *stackParams_[kSlots];
  uint64_t *buf_ = stackBuf_;
  void **params_ = stackParams_;
  std::unique_ptr<uint64_t[]> heapBuf_;
  std::unique_ptr<void *[]> heapParams_;
};

/// Runs a host loop entry over `chunks` blocks of one thread (the entry splits its iteration
/// space by block), on the calling thread when there is one chunk.
void runHost(const compiler::Specialization &spec, int64_t chunks, Packed &p) {
  if (chunks <= 1) {
    compiler::pointAtSlots(spec.plan, p.buffer(), p.params());
    runtime::HostThreadCtx ctx{{0, 0, 0}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, nullptr,
                               nullptr,   nullptr,   0,         0};
    spec.hostEntry(p.params(), &ctx);
    spec.checkHostFaults();
    return;
  }
  spec.launchHost({static_cast<unsigned>(chunks), 1, 1}, {1, 1, 1}, 0, p.buffer(), p.params());
}

} // namespace

int64_t hostChunks(int64_t n) {
  if (n < 2 * kParallelGrain)
    return 1;
  int64_t threads = static_cast<int64_t>(runtime::hostParallelism());
  return std::max<int64_t>(1, std::min<int64_t>(threads * 4, n / kParallelGrain));
}

int64_t launchElementwise(const compiler::Specialization &spec, ExecMode mode, int64_t n,
                          const compiler::ArgValue *leaves, CUstream stream, int64_t liveRowBytes) {
  if (n <= 0)
    return 0;
  Packed p(spec, leaves);
  if (mode != ExecMode::Device) {
    runHost(spec, mode == ExecMode::Parallel ? hostChunks(n) : 1, p);
    return 0;
  }
  // numba-cuda launches its ufunc kernels in blocks of the occupancy-optimal size, and warns
  // of a small grid by that size: so does the warning here.
  runtime::BlockSizeSuggestion occ = spec.occupancy();
  int64_t optimal = std::max(occ.blockSize, 32);
  int64_t needed = (n + optimal - 1) / optimal;
  int64_t fill = std::max<int64_t>(occ.minGridSize, 1);
  // The launch itself takes blocks of kLoopSplitBlock threads when the optimal size is a
  // multiple of it, as many more of them as keeps the same threads resident (the kernel is a
  // grid-stride loop over any grid; per warp, a smaller block needs the same registers, so the
  // device holds that many). Other sizes are kept: a split could leave blocks of the grid
  // waiting for a second round.
  int64_t block = optimal % kLoopSplitBlock == 0 ? kLoopSplitBlock : optimal;
  int64_t grid = std::min((n + block - 1) / block, std::max<int64_t>(1, fill * optimal / block));
  if (liveRowBytes > 0) {
    // Aligned rows: blocks small enough to hold the threads per SM that keep the rows'
    // lines in L1 (register-limited occupancies such as 1,152 threads in blocks of 576 are not
    // multiples of the blocks a cap needs), as many as the occupancy's threads per SM allow.
    int64_t sms = runtime::Device::current().multiprocessorCount();
    block = std::min(optimal, kLoopSplitBlock);
    int64_t resident = std::max<int64_t>(1, fill * optimal / (sms * block));
    int64_t perSM = std::clamp<int64_t>(kL1LiveRowBytes / (liveRowBytes * block), 1, resident);
    grid = std::min((n + block - 1) / block, perSM * sms);
  }
  spec.launchCuda({static_cast<unsigned>(grid), 1, 1}, {static_cast<unsigned>(block), 1, 1}, 0,
                  stream, p.buffer(), p.params());
  return needed <= fill && needed < kLowOccupancyBlocks ? needed : 0;
}

void launchReduce(const compiler::Specialization &spec, ExecMode mode, int64_t tasks,
                  unsigned blockSize, const compiler::ArgValue *leaves, CUstream stream) {
  if (tasks <= 0)
    return;
  Packed p(spec, leaves);
  if (mode != ExecMode::Device) {
    int64_t threads = static_cast<int64_t>(runtime::hostParallelism());
    runHost(spec, mode == ExecMode::Parallel ? std::min<int64_t>(tasks, threads * 4) : 1, p);
    return;
  }
  int64_t perSM = std::max<int64_t>(1, 2048 / static_cast<int64_t>(blockSize));
  int64_t full = runtime::Device::current().multiprocessorCount() * perSM;
  int64_t grid = std::min<int64_t>(tasks, full);
  spec.launchCuda({static_cast<unsigned>(grid), 1, 1}, {blockSize, 1, 1}, 0, stream, p.buffer(),
                  p.params());
}

} // namespace ptxjit::ufunc
