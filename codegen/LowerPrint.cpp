// Lowering of print() in kernels and device functions, as Numba's CUDA target prints: one
// printf-style format per print statement, items separated by `sep` (" ") and followed by
// `end` ("\n"). Signed ints print with %lld, unsigned with %llu, floats (promoted to double)
// with %f, bools as True/False, complex numbers as (%f%+fj), None and string constants as their
// text (with % escaped), tuples as (a, b), and cuda.threadIdx, cuda.blockIdx, cuda.blockDim and
// cuda.gridDim (numba-cuda's dim3 values) as (x, y, z).
//
// CUDA's printf formats at most 32 values: a statement that would pass more prints its format
// string itself instead (every % doubled, so that it shows as written), and compiling it warns,
// as numba-cuda does. The host backend prints the same text.
//
// CUDA: vprintf(format, buffer) — the CUDA printf ABI: the arguments packed into a local
// buffer, each aligned to its size (all of ours are 8 bytes: i64, double or a pointer). The
// driver prints the device's buffer at the next synchronization.
// Host: printf(format, ...) — one call per statement, so a line is never interleaved with
// another thread's — then fflush(NULL) so that the output appears in order with Python's.
#include "codegen/Lowering.h"
#include "ir/ConstantOf.h"

#include <llvm/IR/Constants.h>

namespace ptxjit::codegen::detail {

using namespace ir;

namespace {

/// `s` as literal text in a printf format.
std::string escapeFormat(const std::string &s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '%')
      out += '%';
  }
  return out;
}

/// The most values CUDA's printf formats after its format string (CUDA C++ Programming Guide,
/// "Formatted Output", Limitations).
constexpr size_t kMaxPrintValues = 32;

} // namespace

llvm::Value *FunctionLowerer::lowerPrint(const CallInstr &i) {
  SourceLoc at = i.loc;
  const size_t nkw = std::min(i.kwNames.size(), i.numArgs());
  const size_t npos = i.numArgs() - nkw;
  std::string sep = " ", end = "\n";
  for (size_t k = 0; k < nkw; ++k) {
    const std::string &kw = i.kwNames[k];
    const ConstValue *c = constantValueOf(i.arg(npos + k));
    if ((kw != "sep" && kw != "end") || !c ||
        (c->kind != ConstValue::Kind::String && c->kind != ConstValue::Kind::None))
      fail(at, DiagCode::UnsupportedConstruct, {"print() with the keyword argument '" + kw + "'"});
    if (c->kind == ConstValue::Kind::String)
      (kw == "sep" ? sep : end) = c->s;
  }

  std::string fmt;
  std::vector<llvm::Value *> args; // each i64, double or ptr
  auto *i64 = B.getInt64Ty();
  auto *f64 = B.getDoubleTy();
  auto cstring = [&](const std::string &text) -> llvm::Value * {
    std::string name = "__ptxjit_str_" + text;
    if (llvm::GlobalVariable *g = M.mod.getNamedGlobal(name))
      return g;
    return B.CreateGlobalString(text, name, 0, &M.mod);
  };
  auto toDouble = [&](llvm::Value *v) {
    return v->getType()->isDoubleTy() ? v : B.CreateFPExt(v, f64);
  };

  // One item: `src` is the instruction it comes from (null inside a tuple value), `cv` its
  // constant when known (string text is only known this way), `v` its value of type `t`.
  auto item = [&](auto &self, const Instr *src, const ConstValue *cv, llvm::Value *v,
                  const Type *t) -> void {
    const Type *ct = concretize(t);
    if (cv && cv->kind == ConstValue::Kind::String) {
      if (cv->s.find('\0') != std::string::npos)
        fail(at, DiagCode::UnsupportedConstruct, {"print() of a string with a NUL character"});
      fmt += escapeFormat(cv->s);
      return;
    }
    if (ct->kind() == TypeKind::None) {
      fmt += "None";
      return;
    }
    if (int reg = dim3Symbol(ct); reg >= 0) { // cuda.threadIdx, ...: (x, y, z)
      fmt += "(";
      for (int d = 0; d < 3; ++d) {
        fmt += d ? ", " : "";
        self(self, nullptr, nullptr, specialRegister(static_cast<Sreg>(reg), d), types::uint32());
      }
      fmt += ")";
      return;
    }
    if (auto *tt = dyn_cast<TupleType>(ct)) {
      auto *bt = src ? dyn_cast<BuildTupleInstr>(src) : nullptr;
      fmt += "(";
      for (size_t k = 0; k < tt->size(); ++k) {
        if (k)
          fmt += ", ";
        const Instr *es = bt && k < bt->numOperands() ? bt->operand(k) : nullptr;
        const ConstValue *ec = nullptr;
        if (cv && cv->kind == ConstValue::Kind::Tuple && k < cv->elems.size())
          ec = &cv->elems[k];
        else if (es)
          ec = constantValueOf(es);
        self(self, es, ec, B.CreateExtractValue(v, unsigned(k)), tt->elements()[k]);
      }
      fmt += tt->size() == 1 ? ",)" : ")";
      return;
    }
    // Scalars: one case per kind of ScalarType. A new floating-point type prints as the
    // others do, %f of its value extended to double (LLVM's fpext from any float type).
    auto *st = dyn_cast<ScalarType>(ct);
    switch (st ? st->kind() : TypeKind::Void) {
    case TypeKind::Bool:
      fmt += "%s";
      args.push_back(B.CreateSelect(v, cstring("True"), cstring("False")));
      return;
    case TypeKind::Int:
      fmt += st->isSigned() ? "%lld" : "%llu";
      args.push_back(st->isSigned() ? B.CreateSExtOrTrunc(v, i64) : B.CreateZExtOrTrunc(v, i64));
      return;
    case TypeKind::Float:
      fmt += "%f";
      args.push_back(toDouble(v));
      return;
    case TypeKind::Complex:
      fmt += "(%f%+fj)";
      args.push_back(toDouble(B.CreateExtractValue(v, 0)));
      args.push_back(toDouble(B.CreateExtractValue(v, 1)));
      return;
    default:
      fail(at, DiagCode::UnsupportedConstruct, {"print() of a value of type " + t->str()});
    }
  };
  for (size_t k = 0; k < npos; ++k) {
    if (k)
      fmt += escapeFormat(sep);
    const Instr *a = i.arg(k);
    item(item, a, constantValueOf(a), valueOf(a, at), typeOf(a, at));
  }
  fmt += escapeFormat(end);
  if (args.size() > kMaxPrintValues) {
    // numba-cuda's behaviour and warning: the format itself is printed, as written.
    fmt = escapeFormat(fmt);
    args.clear();
    addCompileWarning("CUDA print() cannot print more than 32 items. The raw format string will "
                      "be emitted by the kernel instead.");
  }

  // CUDA: the format string in constant memory (addrspace 4), as numba-cuda places it, so it
  // counts in the kernel's constant size (get_const_mem_size) and not in its global data.
  llvm::Value *format = B.CreateGlobalString(fmt, "__ptxjit_fmt", M.isHost() ? 0 : 4, &M.mod);
  auto *ptr = B.getPtrTy();
  if (M.isHost()) {
    llvm::FunctionCallee printfFn =
        M.mod.getOrInsertFunction("printf", llvm::FunctionType::get(B.getInt32Ty(), {ptr}, true));
    std::vector<llvm::Value *> callArgs{format};
    callArgs.insert(callArgs.end(), args.begin(), args.end());
    B.CreateCall(printfFn, callArgs);
    llvm::FunctionCallee flush =
        M.mod.getOrInsertFunction("fflush", llvm::FunctionType::get(B.getInt32Ty(), {ptr}, false));
    B.CreateCall(flush, {llvm::ConstantPointerNull::get(ptr)});
    return placeholder();
  }
  llvm::Value *buffer = llvm::ConstantPointerNull::get(ptr);
  if (!args.empty()) {
    std::vector<llvm::Type *> fields;
    for (llvm::Value *a : args)
      fields.push_back(a->getType());
    auto *sty = llvm::StructType::get(M.ctx, fields);
    llvm::AllocaInst *slot = entryAlloca(sty, "print.args");
    for (size_t k = 0; k < args.size(); ++k)
      B.CreateStore(args[k], B.CreateStructGEP(sty, slot, unsigned(k)));
    buffer = slot;
  }
  llvm::FunctionCallee vprintf = M.mod.getOrInsertFunction(
      "vprintf", llvm::FunctionType::get(B.getInt32Ty(), {ptr, ptr}, false));
  B.CreateCall(vprintf, {B.CreateAddrSpaceCast(format, ptr), buffer});
  return placeholder();
}

} // namespace ptxjit::codegen::detail
