#include "frontend/CodeSnapshot.h"

namespace ptxjit::frontend {

const char *pyVersionName(PyVersion v) {
  switch (v) {
  case PyVersion::Py311:
    return "3.11";
  case PyVersion::Py312:
    return "3.12";
  case PyVersion::Py313:
    return "3.13";
  }
  return "?";
}

std::optional<PyVersion> pyVersionFrom(int major, int minor) {
  if (major != 3)
    return std::nullopt;
  switch (minor) {
  case 11:
    return PyVersion::Py311;
  case 12:
    return PyVersion::Py312;
  case 13:
    return PyVersion::Py313;
  default:
    return std::nullopt;
  }
}

namespace {

/// Reads co_linetable's variable-length integers, never past its end (a read past it gives 0).
class LocationReader {
public:
  explicit LocationReader(const std::vector<uint8_t> &t) : t_(t) {}
  bool atEnd() const { return i_ >= t_.size(); }
  int byte() { return i_ < t_.size() ? t_[i_++] : 0; }
  /// Six bits per byte, least significant first; bit 6 says another byte follows.
  unsigned varint() {
    unsigned read = static_cast<unsigned>(byte());
    unsigned value = read & 63;
    for (unsigned shift = 6; (read & 64) && shift < 32; shift += 6) {
      read = static_cast<unsigned>(byte());
      value |= (read & 63) << shift;
    }
    return value;
  }
  /// A varint whose lowest bit is the sign.
  int signedVarint() {
    unsigned u = varint();
    return (u & 1) ? -static_cast<int>(u >> 1) : static_cast<int>(u >> 1);
  }

private:
  const std::vector<uint8_t> &t_;
  size_t i_ = 0;
};

} // namespace

std::vector<Position> decodeLocationTable(const std::vector<uint8_t> &table, int firstLine,
                                          size_t codeUnits) {
  std::vector<Position> out;
  out.reserve(codeUnits);
  LocationReader r(table);
  int line = firstLine;
  while (out.size() < codeUnits && !r.atEnd()) {
    // An entry's first byte: bit 7 set, the form in bits 3-6, its length in code units - 1 in
    // bits 0-2.
    int first = r.byte();
    int form = (first >> 3) & 15;
    size_t units = static_cast<size_t>(first & 7) + 1;
    Position p; // no location (form 15): None everywhere
    switch (form) {
    case 15:
      break;
    case 14: { // long form: line delta, end-line delta, column + 1, end column + 1
      line += r.signedVarint();
      p.line = line;
      p.endLine = line + static_cast<int>(r.varint());
      p.col = static_cast<int>(r.varint()) - 1;
      p.endCol = static_cast<int>(r.varint()) - 1;
      break;
    }
    case 13: // a line and no columns
      line += r.signedVarint();
      p.line = p.endLine = line;
      break;
    case 10:
    case 11:
    case 12: // one line, 0 to 2 after the previous one, columns one byte each
      line += form - 10;
      p.line = p.endLine = line;
      p.col = r.byte();
      p.endCol = r.byte();
      break;
    default: { // forms 0-9: the previous line; the column's high bits are the form
      int second = r.byte();
      p.line = p.endLine = line;
      p.col = (form << 3) | (second >> 4);
      p.endCol = p.col + (second & 15);
      break;
    }
    }
    // co_positions() gives None for a value CPython holds as -1; a missing line is 0 here.
    if (p.line == -1)
      p.line = 0;
    if (p.endLine == -1)
      p.endLine = 0;
    for (size_t u = 0; u < units && out.size() < codeUnits; ++u)
      out.push_back(p);
  }
  out.resize(codeUnits);
  return out;
}

} // namespace ptxjit::frontend
