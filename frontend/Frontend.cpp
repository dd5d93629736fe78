#include "frontend/Frontend.h"

#include "frontend/Bytecode.h"
#include "frontend/Cfg.h"
#include "frontend/IRBuilder.h"
#include "frontend/Reject.h"

namespace ptxjit::frontend {

std::unique_ptr<ir::Function> buildFunction(const CodeSnapshot &code, ir::FunctionKind kind) {
  BytecodeView view(code);
  rejectUnsupportedConstructs(view);
  Cfg cfg(view);
  return IRBuilder(view, cfg, kind).build();
}

} // namespace ptxjit::frontend
