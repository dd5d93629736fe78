// Everything that changes the code generated for a specialization, as one hashable value that
// also keys every cache (in-memory specializations now, the disk cache later).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ptxjit::codegen {

enum class Backend : uint8_t {
  CUDA, ///< NVPTX → PTX text, loaded with the CUDA driver
  Host, ///< the host CPU through LLVM ORC (the grid simulated by runtime/HostGrid)
};

struct CompileOptions {
  Backend backend = Backend::CUDA;
  /// Target compute capability (sm_<major><minor>); CUDA only.
  int ccMajor = 9;
  int ccMinor = 0;
  /// An architecture-specific target (sm_90a: cc=(9, 0, "a") in numba-cuda): the PTX may use
  /// instructions of exactly this architecture and runs on no other. LLVM 19 knows sm_90a only.
  bool archSpecific = false;
  /// PTX ISA version as major*10+minor (e.g. 80 for PTX 8.0), the newest that both LLVM and
  /// the driver support (codegen::choosePtxVersion); CUDA only.
  int ptxVersion = 80;
  bool fastmath = false;
  int optLevel = 3;
  /// Source lines in the generated code (CUDA): `LineInfo` emits .file/.loc directives only
  /// (lineinfo=True, what Nsight needs); `LineTables` adds DWARF sections with the line table
  /// (debug=True; no variable locations). Functions get one DISubprogram each, the entry its own.
  enum class DebugInfo : uint8_t { None, LineInfo, LineTables };
  DebugInfo debugInfo = DebugInfo::None;
  /// Kernels only, CUDA: launch bounds (.maxntid, .minnctapersm, .maxclusterrank) and the
  /// register limit (.maxnreg); 0 = none.
  int maxThreadsPerBlock = 0;
  int minBlocksPerSM = 0;
  int maxClusterRank = 0;
  int maxRegisters = 0;
  /// Kernels only, CUDA: the preferred shared-memory carveout in percent (-1: the driver's
  /// default), set on the function when it is loaded; kNoCarveout: not set.
  static constexpr int kNoCarveout = -2;
  int carveout = kNoCarveout;
  /// Array indexing checks its indices (docs/reliability.md): an index out of bounds records
  /// the first failure in the module's `<entry>__bounds` record (codegen::BoundsRecord), which
  /// the launcher reads after the launch, and touches no memory outside the array.
  bool boundscheck = false;
  /// debug=True: `raise`, a failed `assert` and division by zero (numba's Python error model)
  /// record the raise site in the same record, which the launcher turns into the exception.
  /// Off, a raise only ends the thread and division by zero gives NumPy's results.
  bool exceptions = false;

  bool operator==(const CompileOptions &o) const = default;
  size_t hash() const;
  /// "cuda sm_90 ptx80 O3" / "host O3 fastmath".
  std::string str() const;
};

/// The PTX ISA version to emit for compute capability cc (major*10+minor) when the driver
/// supports CUDA `driverVersion` (cuDriverGetVersion's value, 0 = unknown: the newest LLVM 19
/// knows for that cc): the newest both LLVM 19's NVPTX backend and the driver accept.
int choosePtxVersion(int ccMajor, int ccMinor, int driverVersion);

} // namespace ptxjit::codegen

template <> struct std::hash<ptxjit::codegen::CompileOptions> {
  size_t operator()(const ptxjit::codegen::CompileOptions &o) const { return o.hash(); }
};
