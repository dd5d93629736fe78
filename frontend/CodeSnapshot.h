// Everything the compiler needs from a Python function, copied out of the interpreter into
// plain C++ before compiling (the bindings fill it; tests load it from JSON fixtures). No
// layer below the bindings sees a Python object.
#pragma once

#include "ir/Values.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ptxjit::frontend {

/// The CPython minor version whose bytecode this is (3.11, 3.12 or 3.13).
enum class PyVersion : uint8_t { Py311, Py312, Py313 };

/// "3.12" etc.
const char *pyVersionName(PyVersion v);
/// The PyVersion for (major, minor); std::nullopt for unsupported interpreters.
std::optional<PyVersion> pyVersionFrom(int major, int minor);

/// One entry of co_positions(): the source span of one 2-byte code unit. Missing values
/// (None in Python) are 0 / -1.
struct Position {
  int line = 0;
  int endLine = 0;
  int col = -1;
  int endCol = -1;
};

/// The positions co_positions() gives for code of `codeUnits` 2-byte units, decoded from its
/// co_linetable `table` (the location table of CPython 3.11 to 3.13, Objects/locations.md),
/// lines counted from `firstLine` (co_firstlineno): one Position per code unit, the same values
/// co_positions() yields. A table that ends early leaves the remaining units without a
/// position, and one that describes more units than `codeUnits` is cut there; neither happens
/// with a table CPython made. The bindings decode the table here instead of iterating
/// co_positions() in Python, which yields a tuple per code unit.
std::vector<Position> decodeLocationTable(const std::vector<uint8_t> &table, int firstLine,
                                          size_t codeUnits);

struct CodeSnapshot {
  PyVersion version = PyVersion::Py312;
  std::string name;     ///< co_name
  std::string qualname; ///< co_qualname
  std::string filename; ///< co_filename
  int firstLine = 0;    ///< co_firstlineno
  int flags = 0;        ///< co_flags (generator/coroutine bits are rejected)
  int argCount = 0;     ///< co_argcount
  int posOnlyArgCount = 0;
  int kwOnlyArgCount = 0;
  std::vector<uint8_t> code;           ///< co_code: raw bytes, CACHE entries included
  std::vector<ir::ConstValue> consts;  ///< co_consts
  std::vector<std::string> names;      ///< co_names
  std::vector<std::string> varnames;   ///< co_varnames
  std::vector<std::string> cellvars;   ///< co_cellvars
  std::vector<std::string> freevars;   ///< co_freevars
  /// Names of the "fast locals" slots in index order (what `code._varname_from_oparg(i)`
  /// returns for i = 0, 1, ...): LOAD_FAST/LOAD_DEREF operands index this list.
  std::vector<std::string> localsPlusNames;
  std::vector<uint8_t> exceptionTable; ///< co_exceptiontable (non-empty means try/with)
  std::vector<Position> positions;     ///< co_positions(), one per 2-byte code unit
  /// Every name in co_names that the function may load as a global, resolved through
  /// __globals__ then __builtins__ at snapshot time. A module kernels do not know by name
  /// (`import helpers`) is the symbol kModuleSymbolPrefix + its name, and each of its
  /// attributes the code names is an entry "helpers.attr" of its own (see translateLoadAttr).
  std::map<std::string, ir::GlobalValue> globals;
  /// Contents of the closure cells, by free-variable name (modules as in `globals`).
  std::map<std::string, ir::GlobalValue> closure;
  /// Default values of parameters, aligned to the last parameters (co_argcount order).
  std::vector<ir::ConstValue> defaults;
};

/// The symbol path prefix of a Python module that kernels do not know by name: "module:helpers".
inline constexpr const char *kModuleSymbolPrefix = "module:";

/// CPython co_flags bits the frontend checks.
namespace coflags {
constexpr int Generator = 0x20;
constexpr int Coroutine = 0x80;
constexpr int IterableCoroutine = 0x100;
constexpr int AsyncGenerator = 0x200;
constexpr int VarArgs = 0x04;
constexpr int VarKeywords = 0x08;
} // namespace coflags

} // namespace ptxjit::frontend
