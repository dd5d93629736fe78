// Text forms and equality of the plain C++ snapshot values.
#include "ir/Values.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace ptxjit::ir {
namespace {

/// Python's repr of a float: shortest round-trip digits, fixed notation for decimal exponents
/// in [-4, 16), scientific otherwise ("1e-05", "1e+16"). `forceFraction` appends ".0" to
/// integral fixed-notation values (as repr(float) does; complex parts omit it).
std::string floatRepr(double v, bool forceFraction) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  // sci is "[-]d[.ddd]e[+-]XX".
  std::string sign;
  size_t pos = 0;
  if (sci[0] == '-') {
    sign = "-";
    pos = 1;
  }
  size_t ePos = sci.find('e');
  std::string mant = sci.substr(pos, ePos - pos);
  int exp = std::atoi(sci.c_str() + ePos + 1);
  std::string digits;
  for (char c : mant)
    if (c != '.')
      digits += c;
  if (exp >= -4 && exp < 16) {
    std::string out;
    if (exp < 0) {
      out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exp + 1) {
      out = digits + std::string(static_cast<size_t>(exp + 1 - digits.size()), '0');
      if (forceFraction)
        out += ".0";
    } else {
      out = digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
    }
    return sign + out;
  }
  std::string out = digits.substr(0, 1);
  if (digits.size() > 1)
    out += "." + digits.substr(1);
  char ebuf[16];
  std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  return sign + out + ebuf;
}

std::string complexRepr(std::complex<double> c) {
  double re = c.real(), im = c.imag();
  std::string imag = floatRepr(im, false) + "j";
  if (re == 0.0 && !std::signbit(re))
    return imag;
  std::string real = floatRepr(re, false);
  if (!std::signbit(im) || std::isnan(im))
    imag = "+" + imag;
  return "(" + real + imag + ")";
}

/// `s` quoted and escaped as ConstValue::str writes it (IRParser reads it back); bytes
/// constants (`asBytes`) also escape every byte above 0x7e, as Python's repr of bytes does.
std::string quotedRepr(const std::string &s, bool asBytes) {
  std::string out = asBytes ? "b'" : "'";
  for (unsigned char ch : s) {
    switch (ch) {
    case '\\':
      out += "\\\\";
      break;
    case '\'':
      out += "\\'";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (ch < 0x20 || ch == 0x7f || (asBytes && ch > 0x7f)) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", ch);
        out += buf;
      } else {
        out += static_cast<char>(ch);
      }
    }
  }
  return out + "'";
}

std::string stringRepr(const std::string &s) { return quotedRepr(s, false); }

bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

} // namespace

std::string ConstValue::str() const {
  switch (kind) {
  case Kind::None:
    return "None";
  case Kind::Ellipsis:
    return "Ellipsis";
  case Kind::Bool:
    return b ? "True" : "False";
  case Kind::Int:
    return isUnsigned ? std::to_string(static_cast<uint64_t>(i)) : std::to_string(i);
  case Kind::Float:
    return floatRepr(f, true);
  case Kind::Complex:
    return complexRepr(c);
  case Kind::String:
    return stringRepr(s);
  case Kind::Bytes:
    return quotedRepr(s, true);
  case Kind::Tuple: {
    std::string out = "(";
    for (size_t k = 0; k < elems.size(); ++k) {
      if (k)
        out += ", ";
      out += elems[k].str();
    }
    if (elems.size() == 1)
      out += ",";
    return out + ")";
  }
  case Kind::Unsupported:
    return "<" + s + ">";
  }
  return "?";
}

bool ConstValue::operator==(const ConstValue &o) const {
  if (kind != o.kind)
    return false;
  switch (kind) {
  case Kind::None:
  case Kind::Ellipsis:
    return true;
  case Kind::Bool:
    return b == o.b;
  case Kind::Int:
    return i == o.i && isUnsigned == o.isUnsigned;
  case Kind::Float:
    // Bitwise, so that 0.0 and -0.0 differ and a NaN constant equals itself.
    return sameBits(f, o.f);
  case Kind::Complex:
    return sameBits(c.real(), o.c.real()) && sameBits(c.imag(), o.c.imag());
  case Kind::String:
  case Kind::Bytes:
  case Kind::Unsupported:
    return s == o.s;
  case Kind::Tuple:
    return elems == o.elems;
  }
  return false;
}

std::string GlobalValue::str() const {
  switch (kind) {
  case Kind::Constant:
    return dtype.empty() ? "const " + constant.str() : "const " + dtype + " " + constant.str();
  case Kind::Symbol:
    return "symbol " + path;
  case Kind::DeviceFunction:
    return "device function " + path + " #" + std::to_string(functionId);
  case Kind::Kernel:
    return "kernel " + path + " #" + std::to_string(functionId);
  case Kind::PyFunction:
    return "python function " + path;
  case Kind::Unsupported:
    return "unsupported " + path;
  case Kind::Missing:
    return "missing";
  case Kind::ExceptionClass:
    return "exception " + path;
  case Kind::EnumClass:
    return "enum class " + (enumClass ? enumClass->qualname : path);
  case Kind::EnumMember:
    return "enum member " + (enumClass ? enumClass->qualname : std::string("?")) + "." + path +
           " = " + constant.str();
  case Kind::ExternFunction:
    return "extern function " + path + " #" + std::to_string(externDecl ? externDecl->id : -1);
  case Kind::Array: {
    std::string s = "array " + dtype + "(";
    for (size_t k = 0; k < shape.size(); ++k)
      s += (k ? ", " : "") + std::to_string(shape[k]);
    return s + (shape.size() == 1 ? ",)" : ")");
  }
  case Kind::Tuple: {
    std::string s = "tuple ("; // "tuple (symbol numpy.float32; array float64(3,); )"
    for (const GlobalValue &e : elems)
      s += e.str() + "; ";
    return s + ")";
  }
  case Kind::DeviceArray: {
    std::string s = "device array " + dtype + "(";
    for (size_t k = 0; k < shape.size(); ++k)
      s += (k ? ", " : "") + std::to_string(shape[k]);
    s += shape.size() == 1 ? ",) strides (" : ") strides (";
    for (size_t k = 0; k < strides.size(); ++k)
      s += (k ? ", " : "") + std::to_string(strides[k]);
    return s + (strides.size() == 1 ? ",) at " : ") at ") + std::to_string(address);
  }
  }
  return "?";
}

std::string RaisedException::str() const {
  if (args.empty())
    return cls.path;
  std::string s = cls.path + "(";
  for (size_t k = 0; k < args.size(); ++k)
    s += (k ? ", " : "") + args[k].str();
  return s + ")";
}

} // namespace ptxjit::ir
