// Loads the bytecode fixtures written by tests/fixtures/make_bytecode_fixtures.py
// (tests/fixtures/bytecode/py3XX/<name>.json) into CodeSnapshots, plus what `dis` and the
// generator recorded about each one. Header-only so any test directory can include it
// ("tests/cpp/frontend/FixtureLoader.h"); needs LLVM (llvm/Support/JSON.h) and
// PTXJIT_SOURCE_DIR, which every test executable has. The JSON layout is documented in the
// generator's docstring. A malformed fixture throws std::runtime_error.
#pragma once

#include "frontend/CodeSnapshot.h"
#include "ir/Values.h"

#include <llvm/Support/JSON.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef PTXJIT_SOURCE_DIR
#error "FixtureLoader.h needs PTXJIT_SOURCE_DIR (set by tests/cpp/CMakeLists.txt)"
#endif

namespace ptxjit::fixtures {

/// One instruction as `dis.get_instructions` listed it (caches hidden, EXTENDED_ARG shown).
struct DisEntry {
  int offset = 0;
  int opcode = 0;
  std::string opname;
  std::optional<int> arg;        ///< null for instructions without an operand
  std::string argrepr;           ///< dis's rendering of the operand ("NULL + range", "+=")
  std::optional<int> jumpTarget; ///< byte offset for jumps (dis's argval), else none
};

/// Where and why the frontend must reject a sample (from its `# reject` marker).
struct ExpectedReject {
  std::string code; ///< DiagCode name ("UnsupportedConstruct")
  int line = 0;
  std::string text; ///< what the message must contain
};

struct Fixture {
  std::string name; ///< sample function name (= file stem)
  std::string path;
  frontend::CodeSnapshot snapshot;
  std::vector<uint8_t> lineTable; ///< co_linetable (snapshot.positions are what it says)
  std::vector<DisEntry> dis;
  std::optional<ExpectedReject> expectReject;
  /// Offsets of the instructions one traced call executed (RUNNABLE samples only).
  std::optional<std::vector<int>> executedOffsets;
};

namespace fixture_detail {

[[noreturn]] inline void fail(const std::string &path, const std::string &what) {
  throw std::runtime_error("bad fixture " + path + ": " + what);
}

inline const llvm::json::Value &get(const llvm::json::Object &o, const char *key,
                                    const std::string &path) {
  const llvm::json::Value *v = o.get(key);
  if (!v)
    fail(path, std::string("missing key '") + key + "'");
  return *v;
}

inline const llvm::json::Object &asObject(const llvm::json::Value &v, const std::string &path) {
  const llvm::json::Object *o = v.getAsObject();
  if (!o)
    fail(path, "expected an object");
  return *o;
}

inline const llvm::json::Array &asArray(const llvm::json::Value &v, const std::string &path) {
  const llvm::json::Array *a = v.getAsArray();
  if (!a)
    fail(path, "expected an array");
  return *a;
}

inline std::string asString(const llvm::json::Value &v, const std::string &path) {
  std::optional<llvm::StringRef> s = v.getAsString();
  if (!s)
    fail(path, "expected a string");
  return s->str();
}

inline int64_t asInt(const llvm::json::Value &v, const std::string &path) {
  std::optional<int64_t> i = v.getAsInteger();
  if (!i)
    fail(path, "expected an integer");
  return *i;
}

inline std::optional<int> asOptInt(const llvm::json::Value &v, const std::string &path) {
  if (v.kind() == llvm::json::Value::Null)
    return std::nullopt;
  return static_cast<int>(asInt(v, path));
}

inline std::vector<uint8_t> hexBytes(const std::string &hex, const std::string &path) {
  if (hex.size() % 2 != 0)
    fail(path, "odd-length hex string");
  std::vector<uint8_t> out;
  for (size_t i = 0; i < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

inline std::vector<std::string> stringList(const llvm::json::Value &v, const std::string &path) {
  std::vector<std::string> out;
  for (const llvm::json::Value &e : asArray(v, path))
    out.push_back(asString(e, path));
  return out;
}

/// float.hex() text ("0x1.4p+1", "inf", "-inf", "nan") to double.
inline double hexFloat(const std::string &s, const std::string &path) {
  char *end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0')
    fail(path, "bad float '" + s + "'");
  return d;
}

inline ir::ConstValue constValue(const llvm::json::Value &v, const std::string &path) {
  const llvm::json::Object &o = asObject(v, path);
  std::string kind = asString(get(o, "kind", path), path);
  if (kind == "none")
    return ir::ConstValue::none();
  if (kind == "bool") {
    std::optional<bool> b = get(o, "value", path).getAsBoolean();
    if (!b)
      fail(path, "bad bool constant");
    return ir::ConstValue::boolean(*b);
  }
  if (kind == "int") {
    std::string text = asString(get(o, "value", path), path);
    if (!text.empty() && text[0] == '-')
      return ir::ConstValue::integer(std::stoll(text));
    uint64_t u = std::stoull(text);
    ir::ConstValue c = ir::ConstValue::integer(static_cast<int64_t>(u));
    c.isUnsigned = u > static_cast<uint64_t>(INT64_MAX);
    return c;
  }
  if (kind == "float")
    return ir::ConstValue::floating(hexFloat(asString(get(o, "value", path), path), path));
  if (kind == "complex")
    return ir::ConstValue::complexNum({hexFloat(asString(get(o, "real", path), path), path),
                                       hexFloat(asString(get(o, "imag", path), path), path)});
  if (kind == "str")
    return ir::ConstValue::string(asString(get(o, "value", path), path));
  if (kind == "tuple") {
    std::vector<ir::ConstValue> elems;
    for (const llvm::json::Value &e : asArray(get(o, "elems", path), path))
      elems.push_back(constValue(e, path));
    return ir::ConstValue::tuple(std::move(elems));
  }
  if (kind == "unsupported")
    return ir::ConstValue::unsupported(asString(get(o, "type", path), path));
  fail(path, "unknown constant kind '" + kind + "'");
}

inline ir::GlobalValue globalValue(const llvm::json::Value &v, const std::string &path) {
  const llvm::json::Object &o = asObject(v, path);
  std::string kind = asString(get(o, "kind", path), path);
  if (kind == "constant")
    return ir::GlobalValue::makeConstant(constValue(get(o, "value", path), path),
                                         asString(get(o, "dtype", path), path));
  if (kind == "symbol")
    return ir::GlobalValue::symbol(asString(get(o, "path", path), path));
  if (kind == "exceptionClass") // a builtin exception class, by name
    return ir::GlobalValue::exceptionClass(asString(get(o, "path", path), path), 0);
  if (kind == "pyFunction")
    return ir::GlobalValue::pyFunction(asString(get(o, "path", path), path));
  if (kind == "unsupported")
    return ir::GlobalValue::unsupported(asString(get(o, "path", path), path));
  if (kind == "missing")
    return ir::GlobalValue::missing();
  fail(path, "unknown global kind '" + kind + "'");
}

inline std::map<std::string, ir::GlobalValue> globalMap(const llvm::json::Value &v,
                                                        const std::string &path) {
  std::map<std::string, ir::GlobalValue> out;
  for (const auto &kv : asObject(v, path))
    out[kv.first.str()] = globalValue(kv.second, path);
  return out;
}

} // namespace fixture_detail

/// The directory holding samples.py and the py3XX fixture directories.
inline std::string fixturesRoot() {
  return std::string(PTXJIT_SOURCE_DIR) + "/tests/fixtures/bytecode";
}

/// "py311", "py312", "py313".
inline std::string versionDir(frontend::PyVersion v) {
  switch (v) {
  case frontend::PyVersion::Py311:
    return "py311";
  case frontend::PyVersion::Py312:
    return "py312";
  case frontend::PyVersion::Py313:
    return "py313";
  }
  return "py3??";
}

inline std::vector<frontend::PyVersion> allPyVersions() {
  return {frontend::PyVersion::Py311, frontend::PyVersion::Py312, frontend::PyVersion::Py313};
}

/// Parses one fixture file.
/// A fixture from its JSON object (`path` names it in errors).
inline Fixture fixtureFromJson(const llvm::json::Value &json, const std::string &path) {
  using namespace fixture_detail;
  const llvm::json::Object &o = asObject(json, path);

  Fixture f;
  f.path = path;
  f.name = std::filesystem::path(path).stem().string();
  frontend::CodeSnapshot &s = f.snapshot;
  std::string version = asString(get(o, "version", path), path);
  size_t dot = version.find('.');
  if (dot == std::string::npos)
    fail(path, "bad version '" + version + "'");
  std::optional<frontend::PyVersion> v = frontend::pyVersionFrom(
      std::stoi(version.substr(0, dot)), std::stoi(version.substr(dot + 1)));
  if (!v)
    fail(path, "unsupported version '" + version + "'");
  s.version = *v;
  s.name = asString(get(o, "name", path), path);
  s.qualname = asString(get(o, "qualname", path), path);
  s.filename = asString(get(o, "filename", path), path);
  s.firstLine = static_cast<int>(asInt(get(o, "firstLine", path), path));
  s.flags = static_cast<int>(asInt(get(o, "flags", path), path));
  s.argCount = static_cast<int>(asInt(get(o, "argCount", path), path));
  s.posOnlyArgCount = static_cast<int>(asInt(get(o, "posOnlyArgCount", path), path));
  s.kwOnlyArgCount = static_cast<int>(asInt(get(o, "kwOnlyArgCount", path), path));
  s.code = hexBytes(asString(get(o, "code", path), path), path);
  for (const llvm::json::Value &c : asArray(get(o, "consts", path), path))
    s.consts.push_back(constValue(c, path));
  s.names = stringList(get(o, "names", path), path);
  s.varnames = stringList(get(o, "varnames", path), path);
  s.cellvars = stringList(get(o, "cellvars", path), path);
  s.freevars = stringList(get(o, "freevars", path), path);
  s.localsPlusNames = stringList(get(o, "localsPlusNames", path), path);
  s.exceptionTable = hexBytes(asString(get(o, "exceptionTable", path), path), path);
  for (const llvm::json::Value &p : asArray(get(o, "positions", path), path)) {
    const llvm::json::Array &a = asArray(p, path);
    if (a.size() != 4)
      fail(path, "a position needs 4 numbers");
    frontend::Position pos;
    pos.line = static_cast<int>(asInt(a[0], path));
    pos.endLine = static_cast<int>(asInt(a[1], path));
    pos.col = static_cast<int>(asInt(a[2], path));
    pos.endCol = static_cast<int>(asInt(a[3], path));
    s.positions.push_back(pos);
  }
  if (const llvm::json::Value *t = o.get("lineTable")) // absent in codefuzz's replay input
    f.lineTable = hexBytes(asString(*t, path), path);
  s.globals = globalMap(get(o, "globals", path), path);
  s.closure = globalMap(get(o, "closure", path), path);
  for (const llvm::json::Value &c : asArray(get(o, "defaults", path), path))
    s.defaults.push_back(constValue(c, path));

  for (const llvm::json::Value &e : asArray(get(o, "dis", path), path)) {
    const llvm::json::Object &d = asObject(e, path);
    DisEntry de;
    de.offset = static_cast<int>(asInt(get(d, "offset", path), path));
    de.opcode = static_cast<int>(asInt(get(d, "opcode", path), path));
    de.opname = asString(get(d, "opname", path), path);
    de.arg = asOptInt(get(d, "arg", path), path);
    de.argrepr = asString(get(d, "argrepr", path), path);
    de.jumpTarget = asOptInt(get(d, "jumpTarget", path), path);
    f.dis.push_back(de);
  }
  const llvm::json::Value &rej = get(o, "expectReject", path);
  if (rej.kind() != llvm::json::Value::Null) {
    const llvm::json::Object &r = asObject(rej, path);
    f.expectReject = ExpectedReject{asString(get(r, "code", path), path),
                                    static_cast<int>(asInt(get(r, "line", path), path)),
                                    asString(get(r, "text", path), path)};
  }
  const llvm::json::Value &exec = get(o, "executedOffsets", path);
  if (exec.kind() != llvm::json::Value::Null) {
    std::vector<int> offs;
    for (const llvm::json::Value &x : asArray(exec, path))
      offs.push_back(static_cast<int>(asInt(x, path)));
    f.executedOffsets = std::move(offs);
  }
  return f;
}

inline Fixture loadFixtureFile(const std::string &path) {
  using namespace fixture_detail;
  std::ifstream in(path);
  if (!in)
    fail(path, "cannot open");
  std::stringstream text;
  text << in.rdbuf();
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text.str());
  if (!parsed)
    fail(path, llvm::toString(parsed.takeError()));
  return fixtureFromJson(*parsed, path);
}

/// Path of fixture `name` for version `v`.
inline std::string fixturePath(frontend::PyVersion v, const std::string &name) {
  return fixturesRoot() + "/" + versionDir(v) + "/" + name + ".json";
}

/// Loads fixture `name` (a sample function of samples.py) for version `v`.
inline Fixture loadFixture(frontend::PyVersion v, const std::string &name) {
  return loadFixtureFile(fixturePath(v, name));
}

/// Just the snapshot of fixture `name` for version `v`.
inline frontend::CodeSnapshot loadSnapshot(frontend::PyVersion v, const std::string &name) {
  return loadFixture(v, name).snapshot;
}

/// The names of every fixture for version `v`, sorted.
inline std::vector<std::string> fixtureNames(frontend::PyVersion v) {
  std::vector<std::string> out;
  std::filesystem::path dir = fixturesRoot() + "/" + versionDir(v);
  if (!std::filesystem::is_directory(dir))
    return out;
  for (const auto &e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json")
      out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace ptxjit::fixtures
