#include "compiler/Dump.h"

#include <cstdio>
#include <cstdlib>

namespace ptxjit::compiler {

DumpStages parseDumpStages(std::string_view text, std::string *unknown) {
  DumpStages s;
  if (unknown)
    unknown->clear();
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view name = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    while (!name.empty() && name.front() == ' ')
      name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ')
      name.remove_suffix(1);
    if (name == "ir" || name == "all")
      s.ir = true;
    if (name == "typed" || name == "all")
      s.typed = true;
    if (name == "llvm" || name == "all")
      s.llvm = true;
    if (name == "ptx" || name == "all")
      s.ptx = true;
    bool known = name.empty() || name == "ir" || name == "typed" || name == "llvm" ||
                 name == "ptx" || name == "all";
    if (!known && unknown)
      *unknown += (unknown->empty() ? "" : ",") + std::string(name);
  }
  return s;
}

const DumpStages &dumpStages() {
  static const DumpStages stages = [] {
    const char *env = std::getenv("PTXJIT_DUMP");
    std::string unknown;
    DumpStages s = parseDumpStages(env ? env : "", &unknown);
    if (!unknown.empty())
      std::fprintf(stderr,
                   "ptxjit: PTXJIT_DUMP: unknown stage(s) '%s' ignored (stages: ir, typed, "
                   "llvm, ptx, all)\n",
                   unknown.c_str());
    return s;
  }();
  return stages;
}

void dump(std::string_view stage, const std::string &what, const std::string &text) {
  std::fprintf(stderr, "==== ptxjit %.*s: %s ====\n%s", static_cast<int>(stage.size()),
               stage.data(), what.c_str(), text.c_str());
  if (!text.empty() && text.back() != '\n')
    std::fputc('\n', stderr);
  std::fflush(stderr);
}

} // namespace ptxjit::compiler
