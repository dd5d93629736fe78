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

std::string located(const std::string &file, const SourceLoc &loc) {
  std::string where = file.empty() ? "<unknown>" : file;
  if (loc.line > 0)
    where += ":" + std::to_string(loc.line);
  return where;
}

/// The number of characters difflib's SequenceMatcher(None, a, b) finds matching: the longest
/// common block (earliest in `a`, then in `b`, among the longest), then the same on each side
/// of it, recursively. No junk heuristics: they only apply to sequences of 200 or more.
size_t matchingCharacters(std::string_view a, std::string_view b) {
  if (a.empty() || b.empty())
    return 0;
  // Longest common substring by dynamic programming; rows over a, columns over b.
  size_t bestLen = 0, bestI = 0, bestJ = 0;
  std::vector<size_t> prev(b.size() + 1, 0), cur(b.size() + 1, 0);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = a[i - 1] == b[j - 1] ? prev[j - 1] + 1 : 0;
      // Strictly longer only: among blocks of one length, the first found starts earliest in
      // `a`, then in `b`, which is the one difflib's find_longest_match returns.
      if (cur[j] > bestLen) {
        bestLen = cur[j];
        bestI = i - cur[j];
        bestJ = j - cur[j];
      }
    }
    std::swap(prev, cur);
  }
  if (bestLen == 0)
    return 0;
  return bestLen + matchingCharacters(a.substr(0, bestI), b.substr(0, bestJ)) +
         matchingCharacters(a.substr(bestI + bestLen), b.substr(bestJ + bestLen));
}

} // namespace

std::string closestName(std::string_view word, const std::vector<std::string> &candidates) {
  constexpr double kCutoff = 0.6; // difflib.get_close_matches' default
  const bool privateWord = !word.empty() && word[0] == '_';
  std::string best;
  double bestScore = -1;
  for (const std::string &c : candidates) {
    if (c == word || c.empty() || (c[0] == '_' && !privateWord))
      continue;
    // difflib compares SequenceMatcher(None, candidate, word).ratio().
    double score = 2.0 * static_cast<double>(matchingCharacters(c, word)) /
                   static_cast<double>(c.size() + word.size());
    if (score < kCutoff)
      continue;
    if (score > bestScore || (score == bestScore && c > best)) {
      best = c;
      bestScore = score;
    }
  }
  return best;
}

std::string didYouMean(const std::string &suggestion) {
  return suggestion.empty() ? std::string() : "; did you mean '" + suggestion + "'?";
}

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
    : std::runtime_error(message), code_(code), message_(std::move(message)),
      file_(std::move(file)), loc_(loc), what_(located(file_, loc_) + ": " + message_) {}

void CompileError::addCallSite(CallSite site) {
  const SourceLoc &at = callSites_.empty() ? loc_ : callSites_.back().loc;
  const std::string &atFile = callSites_.empty() ? file_ : callSites_.back().file;
  if (site.file == atFile && site.loc.line == at.line && site.loc.col == at.col)
    return;
  what_ += " (in '" + site.callee + "', called from '" + site.caller + "' at " +
           located(site.file, site.loc) + ")";
  callSites_.push_back(std::move(site));
}

void raiseDiag(DiagCode code, const std::string &file, SourceLoc loc,
               std::initializer_list<std::string> args) {
  throw CompileError(code, formatDiag(code, args), file, loc);
}

namespace {

std::vector<std::string> &compileWarnings() {
  thread_local std::vector<std::string> warnings;
  return warnings;
}

} // namespace

void addCompileWarning(std::string message) { compileWarnings().push_back(std::move(message)); }

std::vector<std::string> takeCompileWarnings() {
  std::vector<std::string> out;
  out.swap(compileWarnings());
  return out;
}

} // namespace ptxjit::ir
