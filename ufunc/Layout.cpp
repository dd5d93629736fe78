#include "ufunc/Layout.h"

#include <cctype>
#include <stdexcept>

namespace ptxjit::ufunc {
namespace {

[[noreturn]] void badLayout(const std::string &text, const std::string &why) {
  throw std::invalid_argument("not a valid gufunc signature '" + text + "': " + why);
}

/// Parses "(a,b),(c)" into `out`; returns the position after it.
size_t parseList(const std::string &s, size_t i, const std::string &text,
                 std::vector<std::vector<std::string>> &out) {
  while (true) {
    if (i >= s.size() || s[i] != '(')
      badLayout(text, "expected '(' at position " + std::to_string(i));
    ++i;
    std::vector<std::string> dims;
    if (i < s.size() && s[i] == ')') {
      ++i;
    } else {
      while (true) {
        size_t start = i;
        while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_'))
          ++i;
        if (i == start)
          badLayout(text, "expected a dimension name at position " + std::to_string(i));
        std::string name = s.substr(start, i - start);
        bool digits = std::isdigit(static_cast<unsigned char>(name[0]));
        for (char c : name)
          if (digits && !std::isdigit(static_cast<unsigned char>(c)))
            badLayout(text, "'" + name + "' is not a dimension name");
        dims.push_back(name);
        if (i < s.size() && s[i] == ',') {
          ++i;
          continue;
        }
        if (i < s.size() && s[i] == ')') {
          ++i;
          break;
        }
        badLayout(text, "expected ',' or ')' at position " + std::to_string(i));
      }
    }
    out.push_back(std::move(dims));
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    return i;
  }
}

bool isFixed(const std::string &name) { return std::isdigit(static_cast<unsigned char>(name[0])); }

} // namespace

GufuncLayout parseLayout(const std::string &text) {
  std::string s;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c)))
      s += c;
  GufuncLayout l;
  l.text = s;
  size_t arrow = s.find("->");
  if (arrow == std::string::npos)
    badLayout(text, "no '->' between inputs and outputs");
  std::string in = s.substr(0, arrow), out = s.substr(arrow + 2);
  if (in.empty())
    badLayout(text, "no inputs");
  if (out.empty())
    badLayout(text, "no outputs");
  if (parseList(in, 0, text, l.inputs) != in.size())
    badLayout(text, "unexpected text after the inputs");
  if (parseList(out, 0, text, l.outputs) != out.size())
    badLayout(text, "unexpected text after the outputs");
  return l;
}

CoreBinding bindCoreDims(const GufuncLayout &layout, const std::vector<Shape> &inputShapes,
                         const std::vector<const Shape *> &outputShapes) {
  CoreBinding cb;
  auto find = [&](const std::string &name) -> int64_t * {
    for (auto &p : cb.sizes)
      if (p.first == name)
        return &p.second;
    return nullptr;
  };
  std::vector<Shape> loopParts;
  // numba-cuda's "old-style scalar": a one-element 1-d array given for an input without core
  // dimensions (np.array([2]) for `()`) broadcasts into the other inputs' loop shape and adds
  // no dimension of its own when another input is an array; NumPy's loop shape would be (1,).
  std::vector<bool> oldStyle(layout.nin(), false);
  bool otherArray = false;
  size_t nops = layout.nin() + layout.nout();
  cb.coreShapes.resize(nops);
  for (size_t k = 0; k < nops; ++k) {
    bool isInput = k < layout.nin();
    const Shape *shape = isInput ? &inputShapes[k] : outputShapes[k - layout.nin()];
    if (!shape)
      continue;
    const auto &dims = layout.operand(k);
    std::string what = std::string(isInput ? "Input" : "Output") + " operand " +
                       std::to_string(isInput ? k : k - layout.nin());
    if (shape->size() < dims.size())
      throw std::invalid_argument(what + " does not have enough dimensions (has " +
                                  std::to_string(shape->size()) + ", gufunc core with signature " +
                                  layout.text + " requires " + std::to_string(dims.size()) + ")");
    size_t lead = shape->size() - dims.size();
    for (size_t d = 0; d < dims.size(); ++d) {
      int64_t size = (*shape)[lead + d];
      int64_t expected = -1;
      if (isFixed(dims[d]))
        expected = std::stoll(dims[d]);
      else if (int64_t *known = find(dims[d]))
        expected = *known;
      else
        cb.sizes.emplace_back(dims[d], size);
      if (expected >= 0 && expected != size)
        throw std::invalid_argument(what + " has a mismatch in its core dimension " +
                                    std::to_string(d) + ", with gufunc signature " + layout.text +
                                    " (size " + std::to_string(size) + " is different from " +
                                    std::to_string(expected) + ")");
      cb.coreShapes[k].push_back(size);
    }
    if (isInput) {
      loopParts.emplace_back(shape->begin(), shape->begin() + lead);
      oldStyle[k] = dims.empty() && *shape == Shape{1};
      otherArray = otherArray || (!oldStyle[k] && !shape->empty());
    }
  }
  cb.loopShape = broadcastShapes(loopParts);
  if (otherArray && cb.loopShape == Shape{1}) {
    std::vector<Shape> parts;
    for (size_t k = 0; k < layout.nin(); ++k)
      if (!oldStyle[k])
        parts.push_back(loopParts[k]);
    Shape numbaShape = broadcastShapes(parts);
    // An output given with NumPy's loop shape keeps it.
    bool numpyOut = false;
    for (size_t k = 0; k < layout.nout(); ++k)
      if (const Shape *given = outputShapes[k])
        numpyOut = numpyOut || (given->size() == layout.outputs[k].size() + 1 && (*given)[0] == 1);
    if (!numpyOut)
      cb.loopShape = numbaShape;
  }
  for (size_t k = layout.nin(); k < nops; ++k) {
    const auto &dims = layout.operand(k);
    const Shape *given = outputShapes[k - layout.nin()];
    if (given) {
      Shape lead(given->begin(), given->end() - dims.size());
      if (lead != cb.loopShape)
        throw std::invalid_argument("Output operand " + std::to_string(k - layout.nin()) +
                                    " has loop dimensions " + shapeStr(lead) +
                                    " that do not match the broadcast loop shape " +
                                    shapeStr(cb.loopShape));
      continue;
    }
    for (const std::string &name : dims) {
      if (isFixed(name)) {
        cb.coreShapes[k].push_back(std::stoll(name));
      } else if (int64_t *known = find(name)) {
        cb.coreShapes[k].push_back(*known);
      } else {
        throw std::invalid_argument(
            "Output operand " + std::to_string(k - layout.nin()) + " has core dimension '" + name +
            "' that no input binds (gufunc signature " + layout.text + "); pass the output array");
      }
    }
  }
  return cb;
}

} // namespace ptxjit::ufunc
