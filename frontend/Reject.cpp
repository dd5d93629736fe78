#include "frontend/Reject.h"

#include <optional>

namespace ptxjit::frontend {

namespace {

struct Construct {
  InstrIndex at;
  std::string what;
};

ir::SourceLoc functionLoc(const CodeSnapshot &s) {
  ir::SourceLoc l;
  l.line = l.endLine = s.firstLine;
  return l;
}

[[noreturn]] void rejectAt(const BytecodeView &view, InstrIndex at, const std::string &what) {
  view.raise(ir::DiagCode::UnsupportedConstruct, at, {what});
}

[[noreturn]] void rejectFunction(const BytecodeView &view, const std::string &what) {
  ir::raiseDiag(ir::DiagCode::UnsupportedConstruct, view.snapshot().filename,
                functionLoc(view.snapshot()), {what});
}

/// The kind of comprehension whose result container the next BUILD_* from `from` makes.
std::string comprehensionKind(const BytecodeView &view, InstrIndex from) {
  for (int k = from.value; k < static_cast<int>(view.size()); ++k) {
    switch (view.at(InstrIndex(k)).op) {
    case PyOp::BUILD_LIST:
    case PyOp::LIST_APPEND:
      return "list comprehension";
    case PyOp::BUILD_SET:
    case PyOp::SET_ADD:
      return "set comprehension";
    case PyOp::BUILD_MAP:
    case PyOp::MAP_ADD:
      return "dict comprehension";
    default:
      break;
    }
  }
  return "comprehension";
}

/// The construct a nested code object named `name` (its co_name) comes from, or "" when the
/// name does not say.
std::string constructOfCodeName(const std::string &name) {
  if (name == "<listcomp>")
    return "list comprehension";
  if (name == "<setcomp>")
    return "set comprehension";
  if (name == "<dictcomp>")
    return "dict comprehension";
  if (name == "<genexpr>")
    return "generator expression";
  if (name == "<lambda>")
    return "lambda";
  if (!name.empty() && name[0] != '<')
    return "nested function '" + name + "'";
  return "";
}

/// What a MAKE_FUNCTION at `at` creates: named by its code object (the LOAD_CONST just before,
/// whose snapshot constant is "code <co_name>"), else guessed from what follows: a function
/// called at once on an iterator is a comprehension (3.11) or a generator expression (3.12+
/// inline comprehensions); anything else is a lambda or a nested def.
std::string madeFunction(const BytecodeView &view, InstrIndex at) {
  if (at.value > 0) {
    const Instruction &load = view.at(InstrIndex(at.value - 1));
    if (load.op == PyOp::LOAD_CONST && load.arg < view.snapshot().consts.size()) {
      const ir::ConstValue &c = view.snapshot().consts[load.arg];
      const std::string prefix = "code ";
      if (c.kind == ir::ConstValue::Kind::Unsupported && c.s.rfind(prefix, 0) == 0)
        if (std::string what = constructOfCodeName(c.s.substr(prefix.size())); !what.empty())
          return what;
    }
  }
  for (int k = at.value + 1; k < static_cast<int>(view.size()); ++k) {
    const Instruction &in = view.at(InstrIndex(k));
    if (in.op == PyOp::GET_ITER) {
      int j = k + 1;
      if (view.contains(InstrIndex(j)) && view.at(InstrIndex(j)).op == PyOp::PRECALL)
        ++j;
      if (view.contains(InstrIndex(j)) && view.at(InstrIndex(j)).op == PyOp::CALL &&
          view.at(InstrIndex(j)).arg == 0) {
        switch (view.version()) {
        case PyVersion::Py311:
          return "comprehension or generator expression";
        case PyVersion::Py312:
        case PyVersion::Py313:
          return "generator expression"; // comprehensions are inlined since 3.12
        }
      }
      break;
    }
    if (in.op == PyOp::STORE_FAST || in.op == PyOp::STORE_DEREF || in.op == PyOp::CALL ||
        in.op == PyOp::RETURN_VALUE || pyOpJumpKind(in.op) != JumpKind::None)
      break;
  }
  return "lambda or nested function";
}

/// The construct instruction `in` belongs to, if it is one the kernel language rejects.
std::optional<std::string> constructOf(const BytecodeView &view, const Instruction &in) {
  switch (in.op) {
  case PyOp::LOAD_BUILD_CLASS:
    return "class statement";
  // List displays, dict displays with constant string keys and star calls are built by the
  // IRBuilder (IRBuilderDisplays.cpp), which rejects a list or dict used as a value; `{**d}`
  // only ever builds a dict.
  case PyOp::DICT_UPDATE:
    return "dict literal";
  case PyOp::BUILD_SET:
  case PyOp::SET_UPDATE:
    return "set literal";
  case PyOp::FORMAT_VALUE:
  case PyOp::FORMAT_SIMPLE:
  case PyOp::FORMAT_WITH_SPEC:
  case PyOp::CONVERT_VALUE:
  case PyOp::BUILD_STRING:
    return "f-string";
  case PyOp::BEFORE_WITH:
    return "with statement";
  case PyOp::BEFORE_ASYNC_WITH:
    return "async with statement";
  case PyOp::LOAD_FAST_AND_CLEAR: // 3.12+: saves the comprehension variable of an inlined one
  case PyOp::SET_ADD:
  case PyOp::MAP_ADD:
    return comprehensionKind(view, in.index);
  case PyOp::MAKE_FUNCTION:
    return madeFunction(view, in.index);
  case PyOp::IMPORT_NAME:
  case PyOp::IMPORT_FROM:
    return "import statement";
  case PyOp::STORE_GLOBAL:
    return "global statement (assigning a global variable)";
  case PyOp::DELETE_FAST:
  case PyOp::DELETE_SUBSCR:
  case PyOp::DELETE_ATTR:
  case PyOp::DELETE_DEREF:
  case PyOp::DELETE_GLOBAL:
  case PyOp::DELETE_NAME:
    return "del statement";
  case PyOp::STORE_DEREF:
    return "nonlocal assignment (assigning a closure variable)";
  case PyOp::YIELD_VALUE:
    return "generator (yield)";
  case PyOp::RAISE_VARARGS: // `raise C` and `raise C(...)` compile (IRBuilder); not these
    if (in.arg == 0)
      return "bare raise statement (re-raising)";
    if (in.arg == 2)
      return "raise ... from ... statement";
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

/// try/except or try/finally: where the first protected range starts (at the `try:` NOP
/// CPython leaves just before it when there is one).
std::optional<Construct> tryConstruct(const BytecodeView &view) {
  std::vector<ExceptionTableEntry> table = view.exceptionTable();
  if (table.empty())
    return std::nullopt;
  std::optional<InstrIndex> first;
  for (const ExceptionTableEntry &e : table) {
    std::optional<InstrIndex> i = view.indexAtStart(e.start);
    if (i && (!first || *i < *first))
      first = i;
  }
  if (!first)
    first = InstrIndex(0);
  if (first->value > 0 && view.at(InstrIndex(first->value - 1)).op == PyOp::NOP)
    first = InstrIndex(first->value - 1);
  bool except = false;
  for (const Instruction &in : view)
    except |= in.op == PyOp::CHECK_EXC_MATCH || in.op == PyOp::CHECK_EG_MATCH;
  return Construct{*first, except ? "try/except" : "try/finally"};
}

} // namespace

void rejectUnsupportedConstructs(const BytecodeView &view) {
  const CodeSnapshot &s = view.snapshot();
  if (s.flags & (coflags::Coroutine | coflags::IterableCoroutine))
    rejectFunction(view, "async function (coroutine)");
  if (s.flags & coflags::AsyncGenerator)
    rejectFunction(view, "async generator");
  if (s.flags & coflags::Generator) {
    for (const Instruction &in : view)
      if (in.op == PyOp::YIELD_VALUE)
        rejectAt(view, in.index, "generator (yield)");
    rejectFunction(view, "generator (yield)");
  }
  if (s.flags & coflags::VarArgs)
    rejectFunction(view, "*args parameter");
  if (s.flags & coflags::VarKeywords)
    rejectFunction(view, "**kwargs parameter");

  std::optional<Construct> found = tryConstruct(view);
  for (const Instruction &in : view) {
    if (found && found->at <= in.index)
      break;
    if (std::optional<std::string> what = constructOf(view, in)) {
      found = Construct{in.index, *what};
      break;
    }
  }
  if (found)
    rejectAt(view, found->at, found->what);
}

} // namespace ptxjit::frontend
