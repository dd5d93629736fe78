// Names of ops and operators, the builtin table, block/function helpers and the IR printer.
#include "ir/IR.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

namespace ptxjit::ir {

const char *opcodeName(Opcode op) {
  switch (op) {
#define PTXJIT_IR_NAME(o)                                                                          \
  case Opcode::o:                                                                                  \
    return #o;
    PTXJIT_IR_OPS(PTXJIT_IR_NAME)
#undef PTXJIT_IR_NAME
  }
  return "?";
}

const char *binaryOpName(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::TrueDiv:
    return "/";
  case BinaryOp::FloorDiv:
    return "//";
  case BinaryOp::Mod:
    return "%";
  case BinaryOp::Pow:
    return "**";
  case BinaryOp::LShift:
    return "<<";
  case BinaryOp::RShift:
    return ">>";
  case BinaryOp::And:
    return "&";
  case BinaryOp::Or:
    return "|";
  case BinaryOp::Xor:
    return "^";
  case BinaryOp::MatMul:
    return "@";
  }
  return "?";
}

const char *unaryOpName(UnaryOpKind op) {
  switch (op) {
  case UnaryOpKind::Neg:
    return "-";
  case UnaryOpKind::Pos:
    return "+";
  case UnaryOpKind::Not:
    return "not";
  case UnaryOpKind::Invert:
    return "~";
  }
  return "?";
}

const char *cmpOpName(CmpOp op) {
  switch (op) {
  case CmpOp::Lt:
    return "<";
  case CmpOp::Le:
    return "<=";
  case CmpOp::Eq:
    return "==";
  case CmpOp::Ne:
    return "!=";
  case CmpOp::Gt:
    return ">";
  case CmpOp::Ge:
    return ">=";
  case CmpOp::Is:
    return "is";
  case CmpOp::IsNot:
    return "is not";
  case CmpOp::In:
    return "in";
  case CmpOp::NotIn:
    return "not in";
  }
  return "?";
}

BuiltinId builtinByPath(const std::string &path) {
  static const std::unordered_map<std::string, BuiltinId> table = {
#define PTXJIT_BUILTIN(id, p) {p, BuiltinId::id},
#include "ir/typing/Builtins.def"
#undef PTXJIT_BUILTIN
  };
  auto it = table.find(path);
  return it == table.end() ? BuiltinId::None : it->second;
}

const char *builtinPath(BuiltinId id) {
  switch (id) {
  case BuiltinId::None:
    return "";
#define PTXJIT_BUILTIN(i, p)                                                                       \
  case BuiltinId::i:                                                                               \
    return p;
#include "ir/typing/Builtins.def"
#undef PTXJIT_BUILTIN
  }
  return "";
}

void Instr::spliceOperand(size_t i, const std::vector<Instr *> &with) {
  if (i >= operands_.size())
    throw std::out_of_range("spliceOperand: no operand " + std::to_string(i));
  operands_.erase(operands_.begin() + static_cast<std::ptrdiff_t>(i));
  operands_.insert(operands_.begin() + static_cast<std::ptrdiff_t>(i), with.begin(), with.end());
}

bool BuildTupleInstr::hasSpread() const {
  return std::find(spread.begin(), spread.end(), true) != spread.end();
}

Instr *Block::insertBefore(const Instr *pos, std::unique_ptr<Instr> i) {
  auto it = std::find_if(instrs.begin(), instrs.end(),
                         [&](const std::unique_ptr<Instr> &p) { return p.get() == pos; });
  if (it == instrs.end())
    throw std::logic_error("insertBefore: the position is not in this block");
  Instr *raw = i.get();
  raw->parent = this;
  raw->id = parent->nextValueId();
  instrs.insert(it, std::move(i));
  return raw;
}

std::unordered_set<const Block *> reachableBlocks(const Function &fn) {
  std::unordered_set<const Block *> seen;
  std::vector<const Block *> work{fn.entry()};
  while (!work.empty()) {
    const Block *b = work.back();
    work.pop_back();
    if (seen.insert(b).second)
      for (const Block *s : b->successors())
        work.push_back(s);
  }
  return seen;
}

std::vector<Block *> Block::successors() const {
  Instr *t = terminator();
  if (!t)
    return {};
  if (auto *j = dyn_cast<JumpInstr>(t))
    return {j->target};
  if (auto *b = dyn_cast<BranchInstr>(t))
    return {b->ifTrue, b->ifFalse};
  return {};
}

Block *Function::addBlock() {
  auto b = std::make_unique<Block>();
  b->id = static_cast<int>(blocks.size());
  b->parent = this;
  Block *raw = b.get();
  blocks.push_back(std::move(b));
  return raw;
}

int Function::varIndex(const std::string &n, int version) {
  for (size_t i = 0; i < vars.size(); ++i)
    if (vars[i].name == n && vars[i].version == version)
      return static_cast<int>(i);
  vars.push_back(Variable{n, nullptr, false, version});
  return static_cast<int>(vars.size() - 1);
}

std::string Variable::printedName() const {
  return version ? name + "." + std::to_string(version) : name;
}

std::pair<std::string, int> parseVariableName(const std::string &printed) {
  size_t dot = printed.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == printed.size() ||
      printed.size() - dot > 10) // more digits than an int holds: not a version
    return {printed, 0};
  for (size_t k = dot + 1; k < printed.size(); ++k)
    if (printed[k] < '0' || printed[k] > '9')
      return {printed, 0};
  if (printed[dot + 1] == '0') // "v.0" and "v.01" are not how a version prints
    return {printed, 0};
  return {printed.substr(0, dot), std::stoi(printed.substr(dot + 1))};
}

bool producesValue(Opcode op) {
  switch (op) {
  case Opcode::StoreLocal:
  case Opcode::SetItem:
  case Opcode::SetAttr:
  case Opcode::Jump:
  case Opcode::Branch:
  case Opcode::Return:
  case Opcode::Raise:
    return false;
  default:
    return true;
  }
}

namespace {

bool producesValue(const Instr *i) { return producesValue(i->op()); }

std::string ref(const Instr *i) { return i ? "%" + std::to_string(i->id) : "%?"; }
std::string blockRef(const Block *b) { return b ? "bb" + std::to_string(b->id) : "bb?"; }

std::string varName(const Function &fn, int var) {
  if (var >= 0 && static_cast<size_t>(var) < fn.vars.size())
    return fn.vars[var].printedName();
  return "$var" + std::to_string(var);
}

std::string operandList(const Instr *i, size_t from) {
  std::string s;
  for (size_t k = from; k < i->numOperands(); ++k) {
    if (k > from)
      s += ", ";
    s += ref(i->operand(k));
  }
  return s;
}

/// The instruction's text without its type/location suffix.
std::string instrBody(const Function &fn, const Instr *i) {
  std::string s = opcodeName(i->op());
  switch (i->op()) {
  case Opcode::Const:
    return s + " " + cast<ConstInstr>(i)->value.str();
  case Opcode::Global: {
    auto *g = cast<GlobalInstr>(i);
    return s + " " + g->name + " [" + g->value.str() + "]";
  }
  case Opcode::Arg: {
    int idx = cast<ArgInstr>(i)->index;
    s += " " + std::to_string(idx);
    if (idx >= 0 && static_cast<size_t>(idx) < fn.argNames.size())
      s += " (" + fn.argNames[idx] + ")";
    return s;
  }
  case Opcode::LoadLocal:
    return s + " " + varName(fn, cast<LoadLocalInstr>(i)->var);
  case Opcode::StoreLocal:
    return s + " " + varName(fn, cast<StoreLocalInstr>(i)->var) + ", " + ref(i->operand(0));
  case Opcode::BinOp: {
    auto *b = cast<BinOpInstr>(i);
    return s + " " + binaryOpName(b->binop) + (b->inplace ? "= " : " ") + ref(i->operand(0)) +
           ", " + ref(i->operand(1));
  }
  case Opcode::UnaryOp:
    return s + " " + unaryOpName(cast<UnaryOpInstr>(i)->unop) + " " + ref(i->operand(0));
  case Opcode::Compare:
    return s + " " + cmpOpName(cast<CompareInstr>(i)->cmp) + " " + ref(i->operand(0)) + ", " +
           ref(i->operand(1));
  case Opcode::GetAttr:
    return s + " " + ref(i->operand(0)) + " ." + cast<GetAttrInstr>(i)->attr;
  case Opcode::GetItem:
    return s + " " + ref(i->operand(0)) + "[" + ref(i->operand(1)) + "]";
  case Opcode::SetItem:
    return s + " " + ref(i->operand(0)) + "[" + ref(i->operand(1)) + "] = " + ref(i->operand(2));
  case Opcode::SetAttr:
    return s + " " + ref(i->operand(0)) + " ." + cast<SetAttrInstr>(i)->attr + " = " +
           ref(i->operand(1));
  case Opcode::Call: {
    auto *c = cast<CallInstr>(i);
    s += " " + ref(c->callee()) + "(";
    size_t nargs = c->numArgs();
    size_t nkw = std::min(c->kwNames.size(), nargs);
    for (size_t k = 0; k < nargs; ++k) {
      if (k)
        s += ", ";
      if (k >= nargs - nkw)
        s += c->kwNames[k - (nargs - nkw)] + "=";
      else if (k == 0 && c->starArgs)
        s += "*";
      s += ref(c->arg(k));
    }
    return s + ")";
  }
  case Opcode::BuildTuple: { // (a, *t) or [a, *t]
    auto *t = cast<BuildTupleInstr>(i);
    std::string elems;
    for (size_t k = 0; k < t->numOperands(); ++k)
      elems += (k ? ", " : "") + std::string(t->isSpread(k) ? "*" : "") + ref(t->operand(k));
    return s + (t->isList ? " [" + elems + "]" : " (" + elems + ")");
  }
  case Opcode::TupleGet:
    return s + " " + ref(i->operand(0)) + ", " + std::to_string(cast<TupleGetInstr>(i)->index);
  case Opcode::Jump:
    return s + " " + blockRef(cast<JumpInstr>(i)->target);
  case Opcode::Branch: {
    auto *b = cast<BranchInstr>(i);
    return s + " " + ref(i->operand(0)) + ", " + blockRef(b->ifTrue) + ", " + blockRef(b->ifFalse);
  }
  case Opcode::Return:
    return i->numOperands() ? s + " " + ref(i->operand(0)) : s;
  case Opcode::Raise:
    return s + " " + cast<RaiseInstr>(i)->exception.str();
  default: {
    std::string ops = operandList(i, 0);
    return ops.empty() ? s : s + " " + ops;
  }
  }
}

} // namespace

std::string Function::print(bool withLocs) const {
  std::string out = "function " + name + "(";
  for (size_t k = 0; k < argNames.size(); ++k) {
    if (k)
      out += ", ";
    out += argNames[k];
    if (k < argTypes.size() && argTypes[k])
      out += ": " + argTypes[k]->str();
  }
  out += ")";
  out += kind == FunctionKind::Kernel ? " kernel" : " device";
  if (alwaysInline)
    out += " alwaysinline";
  if (returnType)
    out += " -> " + returnType->str() + (returnTypeDeclared ? " declared" : "");
  out += "\n";
  // Once typed, the variables' types follow the header (the untyped text has no var lines).
  if (returnType)
    for (const Variable &v : vars)
      out +=
          "  var " + v.printedName() + " : " + (v.type ? v.type->str() : std::string("?")) + "\n";
  for (const auto &b : blocks) {
    out += blockRef(b.get()) + ":\n";
    for (const auto &ip : b->instrs) {
      const Instr *i = ip.get();
      std::string line = "  ";
      if (producesValue(i))
        line += ref(i) + " = ";
      line += instrBody(*this, i);
      if (i->type && (producesValue(i) || i->type->kind() != TypeKind::Void))
        line += " : " + i->type->str();
      if (i->builtin != BuiltinId::None)
        line += std::string(" {") + builtinPath(i->builtin) + "}";
      if (auto *c = dyn_cast<CallInstr>(i); c && c->calleeFunction)
        line += " -> " + c->calleeFunction->name;
      if (withLocs && i->loc.line > 0) {
        if (line.size() < 48)
          line.append(48 - line.size(), ' ');
        else
          line += ' ';
        line += "; line " + std::to_string(i->loc.line);
      }
      out += line + "\n";
    }
  }
  return out;
}

} // namespace ptxjit::ir
