// A small builder for hand-written IR in the ir tests.
#pragma once

#include "ir/IR.h"
#include "ir/typing/Typing.h"

#include <memory>
#include <string>
#include <vector>

namespace ptxjit::ir::test {

/// Builds a Function block by block; every instruction gets `line` as its source line.
class FnBuilder {
public:
  FnBuilder(const std::string &name, std::vector<std::string> args,
            FunctionKind kind = FunctionKind::Kernel)
      : fn(std::make_unique<Function>()) {
    fn->name = name;
    fn->qualname = name;
    fn->filename = "kernels.py";
    fn->firstLine = 1;
    fn->kind = kind;
    fn->argNames = args;
    for (const std::string &a : args)
      fn->vars[fn->varIndex(a)].isArgument = true;
    cur = fn->addBlock();
  }

  Block *newBlock() { return fn->addBlock(); }
  void at(Block *b) { cur = b; }

  template <typename T, typename... A> T *add(A &&...a) {
    T *i = cur->append(std::make_unique<T>(std::forward<A>(a)...));
    i->loc.line = line;
    return i;
  }

  Instr *cint(int64_t v) { return add<ConstInstr>(ConstValue::integer(v)); }
  Instr *cfloat(double v) { return add<ConstInstr>(ConstValue::floating(v)); }
  Instr *cnone() { return add<ConstInstr>(ConstValue::none()); }
  Instr *global(const std::string &name, GlobalValue v) {
    return add<GlobalInstr>(name, std::move(v));
  }
  Instr *sym(const std::string &name, const std::string &path) {
    return global(name, GlobalValue::symbol(path));
  }
  Instr *arg(int i) { return add<ArgInstr>(i); }
  Instr *load(const std::string &var) { return add<LoadLocalInstr>(fn->varIndex(var)); }
  Instr *store(const std::string &var, Instr *v) {
    return add<StoreLocalInstr>(fn->varIndex(var), v);
  }
  Instr *bin(BinaryOp op, Instr *a, Instr *b, bool inplace = false) {
    return add<BinOpInstr>(op, a, b, inplace);
  }
  Instr *unary(UnaryOpKind op, Instr *a) { return add<UnaryOpInstr>(op, a); }
  Instr *cmp(CmpOp op, Instr *a, Instr *b) { return add<CompareInstr>(op, a, b); }
  Instr *truth(Instr *a) { return add<TruthInstr>(a); }
  Instr *attr(Instr *v, const std::string &a) { return add<GetAttrInstr>(v, a); }
  Instr *item(Instr *v, Instr *i) { return add<GetItemInstr>(v, i); }
  Instr *setItem(Instr *v, Instr *i, Instr *x) { return add<SetItemInstr>(v, i, x); }
  CallInstr *call(Instr *callee, std::vector<Instr *> args, std::vector<std::string> kw = {}) {
    args.insert(args.begin(), callee);
    return add<CallInstr>(std::move(args), std::move(kw));
  }
  Instr *tuple(std::vector<Instr *> elems) { return add<BuildTupleInstr>(std::move(elems)); }
  Instr *tupleGet(Instr *t, int i) { return add<TupleGetInstr>(t, i); }
  Instr *jump(Block *b) { return add<JumpInstr>(b); }
  Instr *branch(Instr *c, Block *t, Block *f) { return add<BranchInstr>(c, t, f); }
  Instr *ret(Instr *v = nullptr) { return add<ReturnInstr>(v); }

  /// `cuda.grid(n)` as the frontend emits it.
  CallInstr *grid(int n) {
    Instr *g = attr(sym("cuda", "cuda"), "grid");
    return call(g, {cint(n)});
  }

  const Variable &var(const std::string &name) const {
    for (const Variable &v : fn->vars)
      if (v.name == name)
        return v;
    static Variable none;
    return none;
  }

  std::unique_ptr<Function> fn;
  Block *cur;
  int line = 2;
};

inline const ArrayType *arr1(const ScalarType *dt, Layout l = Layout::C) {
  return types::array(dt, 1, l);
}

} // namespace ptxjit::ir::test
