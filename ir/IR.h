// The compiler's intermediate representation: a Function of basic Blocks of Instrs.
//
// The frontend emits it untyped from bytecode: Python locals are explicit LoadLocal/StoreLocal
// of numbered variables (values left on the operand stack across block edges become synthetic
// variables named "$stackN"), every instruction carries its source location, and each block
// ends with exactly one terminator (Jump, Branch, Return, Raise).
//
// Type inference (ir/typing/Typing.h) then fills, per specialization, `Instr::type` of every value,
// `Variable::type` of every local, and the resolution fields (`builtin`, `callee`). Codegen
// lowers the typed IR; it inserts the numeric conversions the types imply (operand →
// result type, stored value → variable type).
//
// Ops come from one X-macro list; each op has a `final` class named <Op>Instr with LLVM-style
// classof, so isa<BinOpInstr>(i) / dyn_cast<CallInstr>(i) work.
#pragma once

#include "ir/Casting.h"
#include "ir/Diagnostics.h"
#include "ir/Types.h"
#include "ir/Values.h"

#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace ptxjit::ir {

// X(Op): the op list. Terminators are last.
#define PTXJIT_IR_OPS(X)                                                                           \
  X(Const)      /* a literal ConstValue */                                                         \
  X(Global)     /* a global or closure cell, snapshotted (GlobalValue) */                          \
  X(Arg)        /* the function's argument `index` */                                              \
  X(LoadLocal)  /* read variable `var` */                                                          \
  X(StoreLocal) /* var = operand(0) */                                                             \
  X(BinOp)      /* operand(0) <op> operand(1); `inplace` for augmented assignment */               \
  X(UnaryOp)    /* <op> operand(0) */                                                              \
  X(Compare)    /* operand(0) <cmp> operand(1) (one link of a chained comparison) */               \
  X(Truth)      /* bool(operand(0)), for branches and `not` */                                     \
  X(GetAttr)    /* operand(0).attr */                                                              \
  X(GetItem)    /* operand(0)[operand(1)] */                                                       \
  X(SetItem)    /* operand(0)[operand(1)] = operand(2) */                                          \
  X(SetAttr)    /* operand(0).attr = operand(1) (a record's field) */                              \
  X(Call)       /* operand(0)(operand(1..)); the last kwNames.size() args are keywords */          \
  X(BuildTuple) /* (operand(0), operand(1), ...), or the list display [...] */                     \
  X(TupleGet)   /* operand(0)[index], constant index (unpacking) */                                \
  X(BuildSlice) /* slice(operand(0), operand(1)[, operand(2)]); None operands allowed */           \
  X(GetIter)    /* iter(operand(0)): a new iterator state */                                       \
  X(IterValid)  /* bool: the iterator operand(0) has a next value (no side effect) */              \
  X(IterNext)   /* the next value of iterator operand(0); advances it */                           \
  X(Jump)       /* goto target */                                                                  \
  X(Branch)     /* if operand(0) (a bool) goto ifTrue else ifFalse */                              \
  X(Return)     /* return operand(0) if present, else return None */                               \
  X(Raise)      /* raise `exception` (a class and constant arguments); ends the thread */

enum class Opcode : uint8_t {
#define PTXJIT_IR_ENUM(op) op,
  PTXJIT_IR_OPS(PTXJIT_IR_ENUM)
#undef PTXJIT_IR_ENUM
};

/// The op's name as printed ("BinOp").
const char *opcodeName(Opcode op);
/// True for ops whose instructions are values (printed "%N = ..."); false for StoreLocal,
/// SetItem, SetAttr and the terminators.
bool producesValue(Opcode op);

enum class BinaryOp : uint8_t { Add, Sub, Mul, TrueDiv, FloorDiv, Mod, Pow, LShift, RShift, And, Or, Xor, MatMul };
enum class UnaryOpKind : uint8_t { Neg, Pos, Not, Invert };
enum class CmpOp : uint8_t { Lt, Le, Eq, Ne, Gt, Ge, Is, IsNot, In, NotIn };

/// The Python spelling: "+", "//", "<=", "is not", "not", "~", ...
const char *binaryOpName(BinaryOp op);
const char *unaryOpName(UnaryOpKind op);
const char *cmpOpName(CmpOp op);

enum class BuiltinId : uint16_t {
  None,
#define PTXJIT_BUILTIN(id, path) id,
#include "ir/typing/Builtins.def"
#undef PTXJIT_BUILTIN
};
/// The Id for a symbol path ("math.sin"), or BuiltinId::None.
BuiltinId builtinByPath(const std::string &path);
const char *builtinPath(BuiltinId id);

class Block;
class Function;

/// Base of all instructions. An instruction is also the value it produces.
class Instr {
public:
  virtual ~Instr() = default;
  Opcode op() const { return op_; }
  bool isTerminator() const { return op_ >= Opcode::Jump; }

  const std::vector<Instr *> &operands() const { return operands_; }
  Instr *operand(size_t i) const { return operands_.at(i); }
  size_t numOperands() const { return operands_.size(); }
  void setOperand(size_t i, Instr *v) { operands_.at(i) = v; }
  /// Replaces operand `i` by the values `with` (in order), shifting the later operands.
  void spliceOperand(size_t i, const std::vector<Instr *> &with);

  /// Position of the bytecode instruction this came from.
  SourceLoc loc;
  /// Result type; null until typing. Void for instructions without a value.
  const Type *type = nullptr;
  /// Set by typing on Call/GetAttr/GetItem when the target is a known builtin.
  BuiltinId builtin = BuiltinId::None;
  /// Value number, unique in its function (printed as %id).
  int id = -1;
  Block *parent = nullptr;

protected:
  Instr(Opcode op, std::vector<Instr *> operands) : op_(op), operands_(std::move(operands)) {}

private:
  Opcode op_;
  std::vector<Instr *> operands_;
};

#define PTXJIT_INSTR_CLASSOF(OP)                                                                   \
  static bool classof(const Instr *i) { return i->op() == Opcode::OP; }

class ConstInstr final : public Instr {
public:
  explicit ConstInstr(ConstValue v) : Instr(Opcode::Const, {}), value(std::move(v)) {}
  ConstValue value;
  PTXJIT_INSTR_CLASSOF(Const)
};

class GlobalInstr final : public Instr {
public:
  GlobalInstr(std::string n, GlobalValue v) : Instr(Opcode::Global, {}), name(std::move(n)), value(std::move(v)) {}
  std::string name; ///< the Python name as written (for messages)
  GlobalValue value;
  PTXJIT_INSTR_CLASSOF(Global)
};

class ArgInstr final : public Instr {
public:
  explicit ArgInstr(int idx) : Instr(Opcode::Arg, {}), index(idx) {}
  int index;
  PTXJIT_INSTR_CLASSOF(Arg)
};

class LoadLocalInstr final : public Instr {
public:
  explicit LoadLocalInstr(int v) : Instr(Opcode::LoadLocal, {}), var(v) {}
  int var; ///< index into Function::vars
  PTXJIT_INSTR_CLASSOF(LoadLocal)
};

class StoreLocalInstr final : public Instr {
public:
  StoreLocalInstr(int v, Instr *value) : Instr(Opcode::StoreLocal, {value}), var(v) {}
  int var;
  PTXJIT_INSTR_CLASSOF(StoreLocal)
};

class BinOpInstr final : public Instr {
public:
  BinOpInstr(BinaryOp o, Instr *l, Instr *r, bool inpl) : Instr(Opcode::BinOp, {l, r}), binop(o), inplace(inpl) {}
  BinaryOp binop;
  bool inplace;
  PTXJIT_INSTR_CLASSOF(BinOp)
};

class UnaryOpInstr final : public Instr {
public:
  UnaryOpInstr(UnaryOpKind o, Instr *v) : Instr(Opcode::UnaryOp, {v}), unop(o) {}
  UnaryOpKind unop;
  PTXJIT_INSTR_CLASSOF(UnaryOp)
};

class CompareInstr final : public Instr {
public:
  CompareInstr(CmpOp o, Instr *l, Instr *r) : Instr(Opcode::Compare, {l, r}), cmp(o) {}
  CmpOp cmp;
  PTXJIT_INSTR_CLASSOF(Compare)
};

class TruthInstr final : public Instr {
public:
  explicit TruthInstr(Instr *v) : Instr(Opcode::Truth, {v}) {}
  PTXJIT_INSTR_CLASSOF(Truth)
};

class GetAttrInstr final : public Instr {
public:
  GetAttrInstr(Instr *v, std::string a) : Instr(Opcode::GetAttr, {v}), attr(std::move(a)) {}
  std::string attr;
  PTXJIT_INSTR_CLASSOF(GetAttr)
};

class GetItemInstr final : public Instr {
public:
  GetItemInstr(Instr *v, Instr *idx) : Instr(Opcode::GetItem, {v, idx}) {}
  PTXJIT_INSTR_CLASSOF(GetItem)
};

class SetItemInstr final : public Instr {
public:
  SetItemInstr(Instr *v, Instr *idx, Instr *value) : Instr(Opcode::SetItem, {v, idx, value}) {}
  PTXJIT_INSTR_CLASSOF(SetItem)
};

class SetAttrInstr final : public Instr {
public:
  SetAttrInstr(Instr *v, std::string a, Instr *value)
      : Instr(Opcode::SetAttr, {v, value}), attr(std::move(a)) {}
  std::string attr;
  PTXJIT_INSTR_CLASSOF(SetAttr)
};

class CallInstr final : public Instr {
public:
  /// operands: callee, then positional args, then keyword args (named by kwNames, in order).
  CallInstr(std::vector<Instr *> calleeAndArgs, std::vector<std::string> kw)
      : Instr(Opcode::Call, std::move(calleeAndArgs)), kwNames(std::move(kw)) {}
  Instr *callee() const { return operand(0); }
  size_t numArgs() const { return numOperands() - 1; }
  Instr *arg(size_t i) const { return operand(i + 1); }
  std::vector<std::string> kwNames;
  /// `f(*args)`: arg(0) is one tuple holding every positional argument (the keyword arguments
  /// follow it). Typing replaces it by TupleGets of its elements once its type, hence its
  /// length, is known (ir/typing), and clears the flag; typed IR never has it.
  bool starArgs = false;
  /// Set by typing when the callee is a user device function: its typed specialization.
  Function *calleeFunction = nullptr;
  PTXJIT_INSTR_CLASSOF(Call)
};

/// A tuple display `(a, b)`, or with `isList` a list display `[a, b]`. An operand marked in
/// `spread` is unpacked in place (`(a, *t)`, `[*t]`): typing replaces it by TupleGets of its
/// elements once its type is known (only tuples can be), so typed IR has no spread operands.
/// A list display types as a compile-time-only ListType (kernels cannot allocate lists).
class BuildTupleInstr final : public Instr {
public:
  explicit BuildTupleInstr(std::vector<Instr *> elems, std::vector<bool> spreadOps = {},
                           bool list = false)
      : Instr(Opcode::BuildTuple, std::move(elems)), spread(std::move(spreadOps)), isList(list) {}
  /// True when operand `k` is unpacked with `*`.
  bool isSpread(size_t k) const { return k < spread.size() && spread[k]; }
  /// True when some operand is unpacked with `*`.
  bool hasSpread() const;
  /// Per operand (empty: none is spread).
  std::vector<bool> spread;
  bool isList = false;
  PTXJIT_INSTR_CLASSOF(BuildTuple)
};

class TupleGetInstr final : public Instr {
public:
  TupleGetInstr(Instr *t, int i) : Instr(Opcode::TupleGet, {t}), index(i) {}
  int index;
  PTXJIT_INSTR_CLASSOF(TupleGet)
};

class BuildSliceInstr final : public Instr {
public:
  explicit BuildSliceInstr(std::vector<Instr *> parts) : Instr(Opcode::BuildSlice, std::move(parts)) {}
  PTXJIT_INSTR_CLASSOF(BuildSlice)
};

class GetIterInstr final : public Instr {
public:
  explicit GetIterInstr(Instr *v) : Instr(Opcode::GetIter, {v}) {}
  PTXJIT_INSTR_CLASSOF(GetIter)
};

class IterValidInstr final : public Instr {
public:
  explicit IterValidInstr(Instr *it) : Instr(Opcode::IterValid, {it}) {}
  PTXJIT_INSTR_CLASSOF(IterValid)
};

class IterNextInstr final : public Instr {
public:
  explicit IterNextInstr(Instr *it) : Instr(Opcode::IterNext, {it}) {}
  PTXJIT_INSTR_CLASSOF(IterNext)
};

class JumpInstr final : public Instr {
public:
  explicit JumpInstr(Block *t) : Instr(Opcode::Jump, {}), target(t) {}
  Block *target;
  PTXJIT_INSTR_CLASSOF(Jump)
};

class BranchInstr final : public Instr {
public:
  BranchInstr(Instr *cond, Block *t, Block *f) : Instr(Opcode::Branch, {cond}), ifTrue(t), ifFalse(f) {}
  Block *ifTrue;
  Block *ifFalse;
  PTXJIT_INSTR_CLASSOF(Branch)
};

class ReturnInstr final : public Instr {
public:
  /// `value` may be null for a bare return (None).
  explicit ReturnInstr(Instr *value)
      : Instr(Opcode::Return, value ? std::vector<Instr *>{value} : std::vector<Instr *>{}) {}
  Instr *value() const { return numOperands() ? operand(0) : nullptr; }
  PTXJIT_INSTR_CLASSOF(Return)
};

/// `raise C` / `raise C(constants...)` / a failed `assert cond, msg`: without operands, since
/// what is raised is known at compile time (numba's static raise). The thread ends here.
class RaiseInstr final : public Instr {
public:
  explicit RaiseInstr(RaisedException e) : Instr(Opcode::Raise, {}), exception(std::move(e)) {}
  RaisedException exception;
  PTXJIT_INSTR_CLASSOF(Raise)
};

#undef PTXJIT_INSTR_CLASSOF

/// A basic block: straight-line instructions ending in one terminator.
class Block {
public:
  int id = -1; ///< printed as bb<id>; the entry block is blocks[0]
  std::vector<std::unique_ptr<Instr>> instrs;
  Function *parent = nullptr;

  /// Appends `i` (numbering it in the parent function) and returns it.
  template <typename T> T *append(std::unique_ptr<T> i);
  /// Inserts `i` just before `pos` (an instruction of this block), numbering it; returns it.
  Instr *insertBefore(const Instr *pos, std::unique_ptr<Instr> i);
  Instr *terminator() const { return instrs.empty() || !instrs.back()->isTerminator() ? nullptr : instrs.back().get(); }
  /// The successor blocks named by the terminator (none for Return and Raise).
  std::vector<Block *> successors() const;
};

/// A Python local (or a synthetic "$stack" slot), or one version of it: splitVariables
/// (ir/SplitVariables.h) gives each live range ("web") of a local its own Variable with the
/// same `name`, as numba's SSA renames them, so that a local may hold values of different types
/// in different parts of a function. Its type is set by typing and is the unification of every
/// value stored to it (the stores of one web: those that meet at a use).
struct Variable {
  std::string name; ///< the Python name, as messages give it
  const Type *type = nullptr;
  bool isArgument = false; ///< true for the function's parameters (var index == arg index)
  /// 0 for the first version of a local (a parameter's is the one its argument starts), k for
  /// the k-th other one.
  int version = 0;

  /// The name the IR text and type annotations give it: `name`, or "name.k" for version k
  /// (numba's spelling of its SSA versions; Python names have no '.').
  std::string printedName() const;
};

/// Splits a printed variable name (Variable::printedName) into the name and the version: "v.2"
/// is ("v", 2); a name without a "." and digits at its end is version 0.
std::pair<std::string, int> parseVariableName(const std::string &printed);

enum class FunctionKind : uint8_t { Kernel, Device };

class Function {
public:
  std::string name;     ///< co_name
  std::string qualname; ///< co_qualname (3.11+)
  std::string filename; ///< co_filename
  int firstLine = 0;
  FunctionKind kind = FunctionKind::Kernel;
  /// The first argNames.size() variables are the parameters, in order.
  std::vector<std::string> argNames;
  std::vector<Variable> vars;
  std::vector<std::unique_ptr<Block>> blocks;

  /// Set by typing: the parameter types of this specialization and the return type.
  std::vector<const Type *> argTypes;
  const Type *returnType = nullptr;
  /// The return type was declared (a device function's eager signature): returned numbers
  /// convert to it by any numeric conversion, as Numba casts at a return. Printed as
  /// "-> T declared".
  bool returnTypeDeclared = false;
  /// A device function whose decorator asked for it to be inlined into every caller
  /// (`inline="always"`/`True` or `forceinline=True`): LLVM's alwaysinline. Printed as
  /// "alwaysinline" after "device".
  bool alwaysInline = false;

  Block *entry() const { return blocks.front().get(); }
  /// Creates a new empty block at the end of `blocks`.
  Block *addBlock();
  /// Returns the index of version `version` of the variable named `name`, creating it if
  /// needed.
  int varIndex(const std::string &name, int version = 0);
  /// Gives the next value number.
  int nextValueId() { return nextId_++; }

  /// Text form, one instruction per line, e.g.
  ///   function saxpy(a, x, y, out) kernel
  ///   bb0:
  ///     %0 = Global cuda [symbol cuda]              ; line 3
  ///     %1 = GetAttr %0 .grid
  ///     %3 = Call %1(%2) : int64
  ///     StoreLocal i, %3
  ///     Branch %7, bb1, bb2
  /// Types are printed after " : " once typing has run. `withLocs` appends "; line N".
  std::string print(bool withLocs = false) const;

private:
  int nextId_ = 0;
};

/// The blocks of `fn` reachable from its entry (following Block::successors).
std::unordered_set<const Block *> reachableBlocks(const Function &fn);

template <typename T> T *Block::append(std::unique_ptr<T> i) {
  T *raw = i.get();
  raw->parent = this;
  raw->id = parent->nextValueId();
  instrs.push_back(std::move(i));
  return raw;
}

} // namespace ptxjit::ir
