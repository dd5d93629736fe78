// Hand-built *typed* IR for the codegen tests: every instruction gets its type (and builtin
// resolution) explicitly, as ir/typing/Typing.h would set them, so these tests do not depend on
// the frontend or on type inference.
#pragma once

#include "ir/IR.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ptxjit::codegen::test {

using namespace ir;

inline const ArrayType *arr(const ScalarType *dt, int ndim = 1, Layout l = Layout::C) {
  return types::array(dt, ndim, l);
}

class TypedBuilder {
public:
  TypedBuilder(const std::string &name, std::vector<std::string> argNames,
               std::vector<const Type *> argTypes, FunctionKind kind = FunctionKind::Kernel,
               const Type *returnType = nullptr)
      : fn(std::make_unique<Function>()) {
    fn->name = name;
    fn->qualname = name;
    fn->filename = "kernels.py";
    fn->firstLine = 1;
    fn->kind = kind;
    fn->argNames = argNames;
    fn->argTypes = argTypes;
    fn->returnType = returnType ? returnType : types::none();
    for (size_t k = 0; k < argNames.size(); ++k) {
      Variable &v = fn->vars[fn->varIndex(argNames[k])];
      v.isArgument = true;
      v.type = argTypes[k];
    }
    cur = fn->addBlock();
  }

  Block *newBlock() { return fn->addBlock(); }
  void at(Block *b) { cur = b; }

  template <typename T, typename... A> T *add(const Type *type, A &&...a) {
    T *i = cur->append(std::make_unique<T>(std::forward<A>(a)...));
    i->loc.line = line;
    i->type = type;
    return i;
  }

  /// Declares (or retypes) variable `name`.
  void declare(const std::string &name, const Type *t) { fn->vars[fn->varIndex(name)].type = t; }

  Instr *cint(int64_t v, const Type *t = types::weakInt()) {
    return add<ConstInstr>(t, ConstValue::integer(v));
  }
  Instr *cfloat(double v, const Type *t = types::weakFloat()) {
    return add<ConstInstr>(t, ConstValue::floating(v));
  }
  Instr *cbool(bool v) { return add<ConstInstr>(types::boolean(), ConstValue::boolean(v)); }
  Instr *sym(const std::string &path) {
    return add<GlobalInstr>(types::symbol(path), path, GlobalValue::symbol(path));
  }
  Instr *arg(int i) { return add<ArgInstr>(fn->argTypes[i], i); }
  Instr *load(const std::string &var) {
    int v = fn->varIndex(var);
    return add<LoadLocalInstr>(fn->vars[v].type, v);
  }
  Instr *store(const std::string &var, Instr *value) {
    return add<StoreLocalInstr>(types::void_(), fn->varIndex(var), value);
  }
  Instr *bin(BinaryOp op, Instr *a, Instr *b, const Type *t) {
    return add<BinOpInstr>(t, op, a, b, false);
  }
  Instr *unary(UnaryOpKind op, Instr *a, const Type *t) { return add<UnaryOpInstr>(t, op, a); }
  Instr *cmp(CmpOp op, Instr *a, Instr *b) { return add<CompareInstr>(types::boolean(), op, a, b); }
  Instr *truth(Instr *a) { return add<TruthInstr>(types::boolean(), a); }
  Instr *attr(Instr *v, const std::string &a, const Type *t, BuiltinId b = BuiltinId::None) {
    Instr *i = add<GetAttrInstr>(t, v, a);
    i->builtin = b;
    return i;
  }
  Instr *item(Instr *v, Instr *i, const Type *t) { return add<GetItemInstr>(t, v, i); }
  Instr *setItem(Instr *v, Instr *i, Instr *x) {
    return add<SetItemInstr>(types::void_(), v, i, x);
  }
  CallInstr *call(Instr *callee, std::vector<Instr *> args, const Type *t,
                  BuiltinId b = BuiltinId::None, std::vector<std::string> kw = {}) {
    args.insert(args.begin(), callee);
    CallInstr *c = add<CallInstr>(t, std::move(args), std::move(kw));
    c->builtin = b;
    return c;
  }
  /// A call of builtin `path` ("builtins.min") with the given result type.
  CallInstr *builtin(const std::string &path, std::vector<Instr *> args, const Type *t) {
    return call(sym(path), std::move(args), t, builtinByPath(path));
  }
  CallInstr *callDevice(Function *callee, std::vector<Instr *> args,
                        std::vector<std::string> kw = {}) {
    Instr *f = add<GlobalInstr>(types::functionRef(1, callee->name), callee->name,
                                GlobalValue::deviceFunction(1, callee->name));
    CallInstr *c = call(f, std::move(args), callee->returnType, BuiltinId::None, std::move(kw));
    c->calleeFunction = callee;
    return c;
  }
  Instr *tuple(std::vector<Instr *> elems) {
    std::vector<const Type *> ts;
    for (Instr *e : elems)
      ts.push_back(e->type);
    return add<BuildTupleInstr>(types::tuple(ts), std::move(elems));
  }
  Instr *tupleGet(Instr *t, int i) {
    return add<TupleGetInstr>(cast<TupleType>(t->type)->elements()[i], t, i);
  }
  Instr *jump(Block *b) { return add<JumpInstr>(types::void_(), b); }
  Instr *branch(Instr *c, Block *t, Block *f) { return add<BranchInstr>(types::void_(), c, t, f); }
  Instr *ret(Instr *v = nullptr) { return add<ReturnInstr>(types::void_(), v); }

  /// cuda.grid(n): int64 for n == 1, else a UniTuple of n int64.
  Instr *grid(int n, bool gridsize = false) {
    const char *name = gridsize ? "gridsize" : "grid";
    Instr *g = attr(sym("cuda"), name, types::symbol(std::string("cuda.") + name));
    const Type *t = types::int64();
    if (n > 1)
      t = types::tuple(std::vector<const Type *>(n, types::int64()));
    return call(g, {cint(n)}, t, gridsize ? BuiltinId::CudaGridsize : BuiltinId::CudaGrid);
  }
  /// cuda.<group>.<dim>, e.g. ("threadIdx", "x").
  Instr *threadAttr(const std::string &group, const std::string &dim) {
    Instr *g = attr(sym("cuda"), group, types::symbol("cuda." + group));
    return attr(g, dim, types::int32(), builtinByPath("cuda." + group + "." + dim));
  }

  /// `for var in range(args...): body()`; continues in the block after the loop.
  void forRange(const std::string &var, std::vector<Instr *> rangeArgs,
                const std::function<void()> &body) {
    Instr *r = builtin("builtins.range", rangeArgs, types::range());
    const Type *itType = types::iterator(IterKind::Range, types::int64(), {types::range()});
    Instr *it = add<GetIterInstr>(itType, r);
    std::string itVar = "$iter" + std::to_string(loops++);
    declare(itVar, itType);
    declare(var,
            fn->vars[fn->varIndex(var)].type ? fn->vars[fn->varIndex(var)].type : types::int64());
    store(itVar, it);
    Block *header = newBlock(), *bodyB = newBlock(), *exit = newBlock();
    jump(header);
    at(header);
    Instr *valid = add<IterValidInstr>(types::boolean(), load(itVar));
    branch(valid, bodyB, exit);
    at(bodyB);
    store(var, add<IterNextInstr>(types::int64(), load(itVar)));
    body();
    jump(header);
    at(exit);
  }

  /// `if cond: then()`; continues after the if.
  void ifThen(Instr *cond, const std::function<void()> &then) {
    Block *t = newBlock(), *join = newBlock();
    branch(cond, t, join);
    at(t);
    then();
    jump(join);
    at(join);
  }

  std::unique_ptr<Function> fn;
  Block *cur;
  int line = 2;
  int loops = 0;
};

} // namespace ptxjit::codegen::test
