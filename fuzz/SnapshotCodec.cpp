#include "fuzz/SnapshotCodec.h"

#include <cstring>

namespace ptxjit::fuzz {
namespace {

using ir::ConstValue;
using ir::GlobalValue;

// Bounds that keep one decoded input small: a mutation that turns a count into 2^32 must not
// make the fuzzer spend its time allocating.
constexpr size_t MaxBytes = 1 << 16;
constexpr size_t MaxString = 4096;
constexpr size_t MaxList = 1024;
constexpr size_t MaxTuple = 16;
constexpr int MaxDepth = 8;

class Reader {
public:
  Reader(const uint8_t *d, size_t n) : d_(d), n_(n) {}
  uint8_t u8() { return pos_ < n_ ? d_[pos_++] : 0; }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= uint64_t(u8()) << (8 * i);
    return v;
  }
  /// LEB128, at most 5 bytes (a 35-bit value at most).
  uint64_t varint() {
    uint64_t v = 0;
    for (int i = 0; i < 5; ++i) {
      uint8_t b = u8();
      v |= uint64_t(b & 0x7f) << (7 * i);
      if (!(b & 0x80))
        break;
    }
    return v;
  }
  size_t count(size_t max) { return static_cast<size_t>(varint() % (max + 1)); }
  std::vector<uint8_t> bytes(size_t max) {
    size_t len = std::min(count(max), n_ - pos_);
    std::vector<uint8_t> out(d_ + pos_, d_ + pos_ + len);
    pos_ += len;
    return out;
  }
  std::string str() {
    std::vector<uint8_t> b = bytes(MaxString);
    return std::string(b.begin(), b.end());
  }
  double f64() {
    uint64_t bits = u64();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }

private:
  const uint8_t *d_;
  size_t n_;
  size_t pos_ = 0;
};

class Writer {
public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i)
      u8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void varint(uint64_t v) {
    do {
      uint8_t b = v & 0x7f;
      v >>= 7;
      u8(v ? (b | 0x80) : b);
    } while (v);
  }
  void bytes(const void *p, size_t n) {
    varint(n);
    out_.append(static_cast<const char *>(p), n);
  }
  void str(const std::string &s) { bytes(s.data(), s.size()); }
  void f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof v);
    u64(bits);
  }
  std::string take() { return std::move(out_); }

private:
  std::string out_;
};

ConstValue readConst(Reader &r, int depth) {
  uint8_t tag = r.u8();
  // 8 (bytes) and 9 (Ellipsis) came after the others: the tags below 8 keep their meanings
  // modulo 8.
  switch (tag == 8 || tag == 9 ? tag : tag % 8) {
  case 8:
    return ConstValue::bytes(r.str());
  case 9:
    return ConstValue::ellipsis();
  case 0:
    return ConstValue::none();
  case 1:
    return ConstValue::boolean(r.u8() & 1);
  case 2: {
    ConstValue v = ConstValue::integer(static_cast<int64_t>(r.u64()));
    v.isUnsigned = r.u8() & 1;
    return v;
  }
  case 3:
    return ConstValue::floating(r.f64());
  case 4: {
    double re = r.f64();
    return ConstValue::complexNum({re, r.f64()});
  }
  case 5:
    return ConstValue::string(r.str());
  case 6: {
    std::vector<ConstValue> elems;
    size_t n = depth < MaxDepth ? r.count(MaxTuple) : 0;
    for (size_t i = 0; i < n; ++i)
      elems.push_back(readConst(r, depth + 1));
    return ConstValue::tuple(std::move(elems));
  }
  default:
    return ConstValue::unsupported(r.str());
  }
}

void writeConst(Writer &w, const ConstValue &c) {
  switch (c.kind) {
  case ConstValue::Kind::None:
    w.u8(0);
    return;
  case ConstValue::Kind::Bool:
    w.u8(1);
    w.u8(c.b);
    return;
  case ConstValue::Kind::Int:
    w.u8(2);
    w.u64(static_cast<uint64_t>(c.i));
    w.u8(c.isUnsigned);
    return;
  case ConstValue::Kind::Float:
    w.u8(3);
    w.f64(c.f);
    return;
  case ConstValue::Kind::Complex:
    w.u8(4);
    w.f64(c.c.real());
    w.f64(c.c.imag());
    return;
  case ConstValue::Kind::String:
    w.u8(5);
    w.str(c.s);
    return;
  case ConstValue::Kind::Tuple:
    w.u8(6);
    w.varint(c.elems.size());
    for (const ConstValue &e : c.elems)
      writeConst(w, e);
    return;
  case ConstValue::Kind::Unsupported:
    w.u8(7);
    w.str(c.s);
    return;
  case ConstValue::Kind::Bytes:
    w.u8(8);
    w.str(c.s);
    return;
  case ConstValue::Kind::Ellipsis:
    w.u8(9);
    return;
  }
}

std::vector<ConstValue> readConsts(Reader &r) {
  std::vector<ConstValue> out;
  size_t n = r.count(MaxList);
  for (size_t i = 0; i < n; ++i)
    out.push_back(readConst(r, 0));
  return out;
}

void writeConsts(Writer &w, const std::vector<ConstValue> &cs) {
  w.varint(cs.size());
  for (const ConstValue &c : cs)
    writeConst(w, c);
}

std::vector<std::string> readStrings(Reader &r) {
  std::vector<std::string> out;
  size_t n = r.count(MaxList);
  for (size_t i = 0; i < n; ++i)
    out.push_back(r.str());
  return out;
}

void writeStrings(Writer &w, const std::vector<std::string> &ss) {
  w.varint(ss.size());
  for (const std::string &s : ss)
    w.str(s);
}

// Globals and closure cells: the kinds a snapshot of Python values can hold without the
// compiler's function table (device functions and arrays are left to the other tests).
std::map<std::string, GlobalValue> readGlobals(Reader &r) {
  std::map<std::string, GlobalValue> out;
  size_t n = r.count(64);
  for (size_t i = 0; i < n; ++i) {
    std::string name = r.str();
    switch (r.u8() % 5) {
    case 0: {
      ConstValue c = readConst(r, 0);
      out[name] = GlobalValue::makeConstant(std::move(c), r.str());
      break;
    }
    case 1:
      out[name] = GlobalValue::symbol(r.str());
      break;
    case 2:
      out[name] = GlobalValue::pyFunction(r.str());
      break;
    case 3:
      out[name] = GlobalValue::unsupported(r.str());
      break;
    default:
      out[name] = GlobalValue::missing();
    }
  }
  return out;
}

void writeGlobals(Writer &w, const std::map<std::string, GlobalValue> &gs) {
  size_t n = 0;
  for (const auto &[name, g] : gs)
    n += g.kind == GlobalValue::Kind::Constant || g.kind == GlobalValue::Kind::Symbol ||
         g.kind == GlobalValue::Kind::PyFunction || g.kind == GlobalValue::Kind::Unsupported ||
         g.kind == GlobalValue::Kind::Missing;
  w.varint(n);
  for (const auto &[name, g] : gs) {
    switch (g.kind) {
    case GlobalValue::Kind::Constant:
      w.str(name);
      w.u8(0);
      writeConst(w, g.constant);
      w.str(g.dtype);
      break;
    case GlobalValue::Kind::Symbol:
    case GlobalValue::Kind::PyFunction:
    case GlobalValue::Kind::Unsupported:
      w.str(name);
      w.u8(g.kind == GlobalValue::Kind::Symbol       ? 1
           : g.kind == GlobalValue::Kind::PyFunction ? 2
                                                     : 3);
      w.str(g.path);
      break;
    case GlobalValue::Kind::Missing:
      w.str(name);
      w.u8(4);
      break;
    default:
      break;
    }
  }
}

} // namespace

const std::vector<const ir::Type *> &argTypeTable() {
  using namespace ir::types;
  using ir::Layout;
  static const std::vector<const ir::Type *> table = {
      array(float64(), 1, Layout::C),
      array(float32(), 1, Layout::C),
      array(int64(), 1, Layout::C),
      array(int32(), 1, Layout::C),
      array(float64(), 2, Layout::C),
      array(complex128(), 1, Layout::C),
      array(uint8(), 1, Layout::A),
      array(float64(), 2, Layout::F),
      int64(),
      int32(),
      uint64(),
      float64(),
      float32(),
      boolean(),
      complex128(),
      float16(),
  };
  return table;
}

FuzzInput decodeInput(const uint8_t *data, size_t size) {
  Reader r(data, size);
  FuzzInput in;
  frontend::CodeSnapshot &s = in.snapshot;
  s.version = static_cast<frontend::PyVersion>(r.u8() % 3);
  in.kind = (r.u8() & 1) ? ir::FunctionKind::Device : ir::FunctionKind::Kernel;
  s.argCount = r.u8();
  s.posOnlyArgCount = r.u8();
  s.kwOnlyArgCount = r.u8();
  s.flags = r.u8() | (r.u8() << 8);
  s.firstLine = static_cast<int>(r.varint() % 1000000);
  s.name = r.str();
  s.qualname = r.str();
  s.filename = r.str();
  s.code = r.bytes(MaxBytes);
  s.consts = readConsts(r);
  s.names = readStrings(r);
  s.varnames = readStrings(r);
  s.cellvars = readStrings(r);
  s.freevars = readStrings(r);
  s.localsPlusNames = readStrings(r);
  s.exceptionTable = r.bytes(MaxBytes);
  s.globals = readGlobals(r);
  s.closure = readGlobals(r);
  s.defaults = readConsts(r);
  size_t nargs = r.count(16);
  const auto &table = argTypeTable();
  for (size_t i = 0; i < nargs; ++i)
    in.argTypes.push_back(table[r.u8() % table.size()]);
  for (size_t i = 0; i < s.code.size() / 2; ++i) {
    int line = s.firstLine + static_cast<int>(i / 8);
    s.positions.push_back({line, line, 4, 12});
  }
  return in;
}

std::string encodeInput(const FuzzInput &in) {
  Writer w;
  const frontend::CodeSnapshot &s = in.snapshot;
  w.u8(static_cast<uint8_t>(s.version));
  w.u8(in.kind == ir::FunctionKind::Device);
  w.u8(static_cast<uint8_t>(s.argCount));
  w.u8(static_cast<uint8_t>(s.posOnlyArgCount));
  w.u8(static_cast<uint8_t>(s.kwOnlyArgCount));
  w.u8(static_cast<uint8_t>(s.flags));
  w.u8(static_cast<uint8_t>(s.flags >> 8));
  w.varint(static_cast<uint64_t>(s.firstLine));
  w.str(s.name);
  w.str(s.qualname);
  w.str(s.filename);
  w.bytes(s.code.data(), s.code.size());
  writeConsts(w, s.consts);
  writeStrings(w, s.names);
  writeStrings(w, s.varnames);
  writeStrings(w, s.cellvars);
  writeStrings(w, s.freevars);
  writeStrings(w, s.localsPlusNames);
  w.bytes(s.exceptionTable.data(), s.exceptionTable.size());
  writeGlobals(w, s.globals);
  writeGlobals(w, s.closure);
  writeConsts(w, s.defaults);
  w.varint(in.argTypes.size());
  const auto &table = argTypeTable();
  for (const ir::Type *t : in.argTypes) {
    size_t i = 0;
    while (i < table.size() && table[i] != t)
      ++i;
    w.u8(static_cast<uint8_t>(i < table.size() ? i : 0));
  }
  return w.take();
}

} // namespace ptxjit::fuzz
