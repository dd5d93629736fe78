// frontend_replay: builds and types code snapshots read from stdin, one JSON object a line,
// and answers one JSON line each; used by scripts/codefuzz.py --replay to fuzz the frontend
// with code objects of interpreters that cannot import the extension (the build targets one
// Python version; the frontend decodes 3.11, 3.12 and 3.13).
//
// Input line:  {"fixture": <a bytecode fixture object, tests/fixtures/make_bytecode_fixtures.py
//               layout>, "argTypes": ["float64[:]", "int64", ...], "kind": "kernel"|"device"}
// Output line: {"status": "ok"|"clean"|"internal"|"error", "message": "..."}
//   clean: a CompileError of kind Unsupported or Typing (the answer to bad input);
//   internal: a CompileError of kind Internal; error: any other exception.
// A crash or a hang is seen by the caller (the process dies or stops answering).
#include "frontend/Frontend.h"
#include "ir/Diagnostics.h"
#include "ir/typing/Typing.h"
#include "tests/cpp/frontend/FixtureLoader.h"

#include <llvm/Support/JSON.h>

#include <iostream>
#include <string>

using namespace ptxjit;

namespace {

void answer(const std::string &status, const std::string &message) {
  llvm::json::Object o{{"status", status}, {"message", llvm::json::fixUTF8(message)}};
  std::string line;
  llvm::raw_string_ostream os(line);
  os << llvm::json::Value(std::move(o));
  os.flush();
  std::cout << line << "\n" << std::flush;
}

void replay(const std::string &line) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(line);
  if (!parsed) {
    answer("error", "bad input line: " + llvm::toString(parsed.takeError()));
    return;
  }
  const llvm::json::Object *o = parsed->getAsObject();
  const llvm::json::Value *fixture = o ? o->get("fixture") : nullptr;
  const llvm::json::Array *argTexts = o ? o->getArray("argTypes") : nullptr;
  if (!fixture || !argTexts) {
    answer("error", "an input line needs \"fixture\" and \"argTypes\"");
    return;
  }
  try {
    fixtures::Fixture f = fixtures::fixtureFromJson(*fixture, "<stdin>");
    std::vector<const ir::Type *> argTypes;
    for (const llvm::json::Value &t : *argTexts)
      argTypes.push_back(ir::parseType(std::string(t.getAsString().value_or(""))));
    ir::FunctionKind kind = o->getString("kind").value_or("kernel") == "device"
                                ? ir::FunctionKind::Device
                                : ir::FunctionKind::Kernel;
    std::unique_ptr<ir::Function> fn = frontend::buildFunction(f.snapshot, kind);
    ir::inferTypes(*fn, argTypes, nullptr);
    answer("ok", "");
  } catch (const ir::CompileError &e) {
    answer(e.kind() == ir::DiagKind::Internal ? "internal" : "clean", e.what());
  } catch (const std::runtime_error &e) { // the fixture loader's own errors
    answer("error", e.what());
  }
}

} // namespace

int main() {
  std::string line;
  while (std::getline(std::cin, line))
    if (!line.empty())
      replay(line);
  return 0;
}
