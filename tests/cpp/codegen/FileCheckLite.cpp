#include "FileCheckLite.h"

#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <vector>

namespace ptxjit::codegen::test {
namespace {

enum class Kind { Check, Next, Same, Not };

struct Directive {
  Kind kind;
  std::string pattern;
  int line; ///< in the check file
};

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos)
    return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

std::vector<Directive> parse(const std::string &checks) {
  static const std::pair<const char *, Kind> prefixes[] = {{"CHECK-NEXT:", Kind::Next},
                                                           {"CHECK-SAME:", Kind::Same},
                                                           {"CHECK-NOT:", Kind::Not},
                                                           {"CHECK:", Kind::Check}};
  std::vector<Directive> out;
  std::istringstream in(checks);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    for (auto &[p, k] : prefixes) {
      size_t pos = line.find(p);
      if (pos != std::string::npos) {
        out.push_back({k, trim(line.substr(pos + std::string(p).size())), n});
        break;
      }
    }
  }
  return out;
}

std::string escapeRegex(const std::string &s) {
  static const std::string special = R"(\^$.|?*+()[]{}/)";
  std::string out;
  for (char c : s) {
    if (special.find(c) != std::string::npos)
      out += '\\';
    out += c;
  }
  return out;
}

std::regex compile(const std::string &pattern) {
  std::string re;
  size_t pos = 0;
  while (pos < pattern.size()) {
    size_t open = pattern.find("{{", pos);
    if (open == std::string::npos) {
      re += escapeRegex(pattern.substr(pos));
      break;
    }
    size_t close = pattern.find("}}", open + 2);
    if (close == std::string::npos) {
      re += escapeRegex(pattern.substr(pos));
      break;
    }
    re += escapeRegex(pattern.substr(pos, open - pos));
    re += "(?:" + pattern.substr(open + 2, close - open - 2) + ")";
    pos = close + 2;
  }
  return std::regex(re);
}

/// Position right after the first match of re in line[from..], if any.
std::optional<size_t> find(const std::string &line, size_t from, const std::regex &re) {
  if (from > line.size())
    return std::nullopt;
  std::smatch m;
  std::string tail = line.substr(from);
  if (!std::regex_search(tail, m, re))
    return std::nullopt;
  return from + m.position(0) + m.length(0);
}

} // namespace

std::string readFile(const std::string &path, bool *ok) {
  std::ifstream f(path, std::ios::binary);
  if (ok)
    *ok = static_cast<bool>(f);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

CheckResult fileCheck(const std::string &input, const std::string &checks) {
  std::vector<std::string> lines;
  {
    std::istringstream in(input);
    std::string l;
    while (std::getline(in, l))
      lines.push_back(l);
  }
  std::vector<Directive> ds = parse(checks);
  if (ds.empty())
    return {false, "no CHECK directives"};

  size_t curLine = 0; // next line to search for CHECK
  long lastLine = -1; // line of the previous positive match
  size_t lastCol = 0; // column right after it
  std::vector<const Directive *> pendingNot;
  auto where = [&](const Directive &d) {
    return "check line " + std::to_string(d.line) + " '" + d.pattern + "'";
  };
  auto context = [&](long l) {
    if (l < 0 || static_cast<size_t>(l) >= lines.size())
      return std::string(" (at end of input)");
    return " (input line " + std::to_string(l + 1) + ": '" + lines[l] + "')";
  };
  auto checkNots = [&](size_t from, size_t to, size_t fromCol) -> CheckResult {
    for (const Directive *d : pendingNot) {
      std::regex re = compile(d->pattern);
      for (size_t l = from; l < to && l < lines.size(); ++l)
        if (find(lines[l], l == from ? fromCol : 0, re))
          return {false, "CHECK-NOT matched: " + where(*d) + context(long(l))};
    }
    pendingNot.clear();
    return {};
  };

  for (const Directive &d : ds) {
    std::regex re = compile(d.pattern);
    switch (d.kind) {
    case Kind::Not:
      pendingNot.push_back(&d);
      break;
    case Kind::Check: {
      bool found = false;
      for (size_t l = curLine; l < lines.size(); ++l) {
        size_t from = static_cast<long>(l) == lastLine ? lastCol : 0;
        if (auto end = find(lines[l], from, re)) {
          if (auto r =
                  checkNots(lastLine < 0 ? 0 : size_t(lastLine), l + 1, lastLine < 0 ? 0 : lastCol);
              !r.ok)
            return r;
          lastLine = static_cast<long>(l);
          lastCol = *end;
          curLine = l + 1;
          found = true;
          break;
        }
      }
      if (!found)
        return {false, "CHECK not found: " + where(d) + context(lastLine)};
      break;
    }
    case Kind::Next: {
      size_t l = static_cast<size_t>(lastLine + 1);
      auto end = l < lines.size() ? find(lines[l], 0, re) : std::nullopt;
      if (!end)
        return {false, "CHECK-NEXT not on the next line: " + where(d) + context(long(l))};
      if (auto r = checkNots(size_t(lastLine < 0 ? 0 : lastLine), l + 1, lastCol); !r.ok)
        return r;
      lastLine = static_cast<long>(l);
      lastCol = *end;
      curLine = l + 1;
      break;
    }
    case Kind::Same: {
      auto end = lastLine >= 0 ? find(lines[lastLine], lastCol, re) : std::nullopt;
      if (!end)
        return {false, "CHECK-SAME not on the same line: " + where(d) + context(lastLine)};
      lastCol = *end;
      break;
    }
    }
  }
  return checkNots(lastLine < 0 ? 0 : size_t(lastLine), lines.size(), lastLine < 0 ? 0 : lastCol);
}

} // namespace ptxjit::codegen::test
