// CompileOptions hashing/printing and the PTX ISA version choice.
#include "codegen/CompileOptions.h"

#include <algorithm>
#include <functional>

namespace ptxjit::codegen {

size_t CompileOptions::hash() const {
  // Every field, packed into one 64-bit value, then mixed.
  uint64_t h = static_cast<uint64_t>(backend);
  h = h * 131 + static_cast<uint64_t>(ccMajor & 0xff);
  h = h * 131 + static_cast<uint64_t>(ccMinor & 0xff);
  h = h * 131 + (archSpecific ? 1 : 0);
  h = h * 131 + static_cast<uint64_t>(ptxVersion & 0xffff);
  h = h * 131 + (fastmath ? 1 : 0);
  h = h * 131 + static_cast<uint64_t>(optLevel & 0xff);
  h = h * 131 + static_cast<uint64_t>(debugInfo);
  h = h * 131 + static_cast<uint64_t>(maxThreadsPerBlock & 0xffff);
  h = h * 131 + static_cast<uint64_t>(minBlocksPerSM & 0xffff);
  h = h * 131 + static_cast<uint64_t>(maxClusterRank & 0xffff);
  h = h * 131 + static_cast<uint64_t>(maxRegisters & 0xffff);
  h = h * 131 + static_cast<uint64_t>(carveout + 2);
  h = h * 131 + (boundscheck ? 1 : 0);
  h = h * 131 + (exceptions ? 1 : 0);
  return std::hash<uint64_t>{}(h * 0x9E3779B97F4A7C15ull);
}

std::string CompileOptions::str() const {
  std::string s;
  if (backend == Backend::CUDA)
    s = "cuda sm_" + std::to_string(ccMajor) + std::to_string(ccMinor) + (archSpecific ? "a" : "") +
        " ptx" + std::to_string(ptxVersion);
  else
    s = "host";
  s += " O" + std::to_string(optLevel);
  if (fastmath)
    s += " fastmath";
  if (debugInfo != DebugInfo::None)
    s += debugInfo == DebugInfo::LineInfo ? " lineinfo" : " debug";
  if (maxThreadsPerBlock)
    s += " maxntid" + std::to_string(maxThreadsPerBlock);
  if (minBlocksPerSM)
    s += " minnctapersm" + std::to_string(minBlocksPerSM);
  if (maxClusterRank)
    s += " maxclusterrank" + std::to_string(maxClusterRank);
  if (maxRegisters)
    s += " maxnreg" + std::to_string(maxRegisters);
  if (carveout != kNoCarveout)
    s += " carveout" + std::to_string(carveout);
  if (boundscheck)
    s += " boundscheck";
  if (exceptions)
    s += " exceptions";
  return s;
}

namespace {

/// The newest PTX ISA version LLVM 19's NVPTX backend can emit.
constexpr int kLlvmMaxPtx = 85;

/// The oldest PTX ISA version that supports compute capability cc (major*10+minor), as LLVM
/// 19 requires it for sm_<cc>.
int minPtxForCc(int cc) {
  if (cc >= 90)
    return 78;
  if (cc >= 89)
    return 78;
  if (cc >= 87)
    return 74;
  if (cc >= 86)
    return 71;
  if (cc >= 80)
    return 70;
  if (cc >= 75)
    return 63;
  if (cc >= 72)
    return 61;
  if (cc >= 70)
    return 60;
  if (cc >= 60)
    return 50;
  return 32;
}

/// The newest PTX ISA version a driver of CUDA version `driverVersion` (1000*major +
/// 10*minor, as cuDriverGetVersion) can JIT-compile.
int maxPtxForDriver(int driverVersion) {
  int major = driverVersion / 1000, minor = (driverVersion % 1000) / 10;
  if (major >= 13)
    return 90;
  if (major == 12) {
    // 12.0 → 8.0 ... 12.4 → 8.4, 12.5/12.6 → 8.5, 12.8 → 8.7, 12.9 → 8.8.
    static const int table[] = {80, 81, 82, 83, 84, 85, 85, 86, 87, 88};
    return table[std::min(minor, 9)];
  }
  if (major == 11)
    return 70 + std::min(minor, 8); // 11.0 → 7.0 ... 11.8 → 7.8
  if (major == 10)
    return minor >= 2 ? 65 : minor == 1 ? 64 : 63;
  if (major == 9)
    return 60 + std::min(minor, 2);
  return 50;
}

} // namespace

int choosePtxVersion(int ccMajor, int ccMinor, int driverVersion) {
  int cc = ccMajor * 10 + ccMinor;
  int v = kLlvmMaxPtx;
  if (driverVersion > 0)
    v = std::min(v, maxPtxForDriver(driverVersion));
  // A driver that runs a GPU of this cc accepts the cc's minimum PTX version; never go below
  // it (LLVM could not emit code for the cc otherwise).
  return std::max(v, std::min(minPtxForCc(cc), kLlvmMaxPtx));
}

} // namespace ptxjit::codegen
