// Facts about the toolchain that keys of the disk cache depend on; cheap, initializing no
// LLVM target.
#include "codegen/Codegen.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/TargetParser/Host.h>

#include <map>

namespace ptxjit::codegen {

std::string llvmVersion() { return LLVM_VERSION_STRING; }

std::string hostTargetId() {
  static const std::string id = [] {
    std::string s = llvm::sys::getProcessTriple() + ";" + llvm::sys::getHostCPUName().str() + ";";
    // Sorted, so that the text does not depend on the map's iteration order.
    std::map<std::string, bool> sorted;
    for (const auto &f : llvm::sys::getHostCPUFeatures())
      sorted[f.getKey().str()] = f.getValue();
    for (const auto &[name, on] : sorted)
      s += (on ? "+" : "-") + name + ",";
    return s;
  }();
  return id;
}

} // namespace ptxjit::codegen
