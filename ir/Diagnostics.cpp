// Diagnostic codes, message formatting and the CompileError exception.
#include "ir/Diagnostics.h"

#include <vector>

namespace ptxjit::ir {
namespace {

struct DiagInfo {
  DiagKind kind;
  const char *name;
  const char *text;
};

const DiagInfo &info(DiagCode code) {
  static const DiagInfo table[] = {
#define PTXJIT_DIAG_INFO(code, kind, text) {DiagKind::kind, #code, text},
      PTXJIT_DIAGNOSTICS(PTXJIT_DIAG_INFO)
#undef PTXJIT_DIAG_INFO
  };
  size_t idx = static_cast<size_t>(code);
  if (idx >= sizeof table / sizeof table[0])
    idx = static_cast<size_t>(DiagCode::Internal);
  return table[idx];
}

std::string locatedMessage(const std::string &file, const SourceLoc &loc,
                           const std::string &message) {
  std::string where = file.empty() ? "<unknown>" : file;
  if (loc.line > 0)
    where += ":" + std::to_string(loc.line);
  return where + ": " + message;
}

} // namespace

DiagKind diagKind(DiagCode code) { return info(code).kind; }

const char *diagName(DiagCode code) { return info(code).name; }

std::string formatDiag(DiagCode code, std::initializer_list<std::string> args) {
  std::vector<std::string> argv(args);
  std::string tmpl = info(code).text;
  std::string out;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] == '{') {
      size_t close = tmpl.find('}', i);
      if (close != std::string::npos && close > i + 1) {
        std::string num = tmpl.substr(i + 1, close - i - 1);
        bool digits = num.find_first_not_of("0123456789") == std::string::npos;
        if (digits) {
          size_t n = std::stoul(num);
          out += n < argv.size() ? argv[n] : "?";
          i = close;
          continue;
        }
      }
    }
    out += tmpl[i];
  }
  return out;
}

CompileError::CompileError(DiagCode code, std::string message, std::string file, SourceLoc loc)
    : std::runtime_error(locatedMessage(file, loc, message)), code_(code),
      message_(std::move(message)), file_(std::move(file)), loc_(loc) {}

void raiseDiag(DiagCode code, const std::string &file, SourceLoc loc,
               std::initializer_list<std::string> args) {
  throw CompileError(code, formatDiag(code, args), file, loc);
}

} // namespace ptxjit::ir
