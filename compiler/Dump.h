// PTXJIT_DUMP: each stage of every compile printed to stderr, the first thing to reach for when
// a kernel misbehaves. PTXJIT_DUMP=ir,typed,llvm,ptx (any subset, or "all"):
//   ir     the untyped IR the frontend built from the bytecode (every function typed anew,
//          device functions included)
//   typed  the same function after type inference, for the argument types it was typed for
//   llvm   the LLVM IR of each compiled entry (CUDA: linked and optimized; host: as lowered)
//   ptx    the PTX of each compiled CUDA entry
// Each dump starts with a header naming the stage, the function and its signature (and, for
// ufunc loops, the loop). Read once per process; an unknown stage name is reported on stderr.
#pragma once

#include <string>
#include <string_view>

namespace ptxjit::compiler {

/// The stages PTXJIT_DUMP asks for.
struct DumpStages {
  bool ir = false, typed = false, llvm = false, ptx = false;
  bool any() const { return ir || typed || llvm || ptx; }
};

/// Parses a PTXJIT_DUMP value ("ir,typed", "all", "" for none); unknown names go to `unknown`
/// (comma-separated), which is left empty when there are none.
DumpStages parseDumpStages(std::string_view text, std::string *unknown = nullptr);

/// The stages of this process's PTXJIT_DUMP (read and checked on first call; thread-safe).
const DumpStages &dumpStages();

/// Writes "==== ptxjit <stage>: <what> ====", then `text`, to stderr (flushed).
void dump(std::string_view stage, const std::string &what, const std::string &text);

} // namespace ptxjit::compiler
