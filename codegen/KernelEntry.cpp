#include "codegen/KernelEntry.h"

#include "codegen/ModuleImpl.h"
#include "codegen/ScalarValues.h"
#include "ir/Enums.h"

#include <llvm/IR/Metadata.h>

namespace ptxjit::codegen::detail {
namespace {

using ir::TypeKind;

/// The names of the leaves of an argument of type `t` named `name`, in plan order (tuple
/// elements are "name_0", "name_1", ...).
void leafNames(const ir::Type *t, const std::string &name, std::vector<std::string> &out) {
  t = ir::enumValueOf(t);
  if (const auto *tt = ir::dyn_cast<ir::TupleType>(t)) {
    for (size_t k = 0; k < tt->size(); ++k)
      leafNames(tt->elements()[k], name + "_" + std::to_string(k), out);
    return;
  }
  if (t->kind() != TypeKind::None)
    out.push_back(name);
}

const char *partSuffix(ParamSlot::Source s) {
  switch (s) {
  case ParamSlot::Source::Real:
    return "_re";
  case ParamSlot::Source::Imag:
    return "_im";
  case ParamSlot::Source::Data:
    return "_data";
  case ParamSlot::Source::Address:
  case ParamSlot::Source::Shape:
    return "_shape";
  case ParamSlot::Source::Stride:
    return "_stride";
  case ParamSlot::Source::Value:
    break;
  }
  return "";
}

llvm::Type *slotType(llvm::LLVMContext &ctx, const ParamSlot &s) {
  switch (s.source) {
  case ParamSlot::Source::Data:
  case ParamSlot::Source::Address:
    return llvm::PointerType::getUnqual(ctx);
  case ParamSlot::Source::Shape:
  case ParamSlot::Source::Stride:
    return llvm::Type::getInt64Ty(ctx);
  default: // a scalar, or a complex type's part
    return memoryType(ctx, s.type);
  }
}

/// Rebuilds arguments from slot values (one per slot; null for the float32 copies).
class Rebuilder {
public:
  Rebuilder(llvm::IRBuilderBase &b, const PackingPlan &plan,
            const std::vector<llvm::Value *> &slotValues)
      : b_(b), plan_(plan), values_(slotValues) {}

  llvm::Value *argument(const ir::Type *t) {
    t = ir::enumValueOf(ir::concretize(t)); // an enum member is its value
    if (const auto *tt = ir::dyn_cast<ir::TupleType>(t)) {
      std::vector<llvm::Value *> elems;
      std::vector<llvm::Type *> types;
      for (const ir::Type *e : tt->elements()) {
        elems.push_back(argument(e));
        types.push_back(elems.back()->getType());
      }
      llvm::Value *v = llvm::PoisonValue::get(llvm::StructType::get(b_.getContext(), types));
      for (size_t k = 0; k < elems.size(); ++k)
        v = b_.CreateInsertValue(v, elems[k], unsigned(k));
      return v;
    }
    if (t->kind() == TypeKind::None)
      return llvm::PoisonValue::get(llvm::StructType::get(b_.getContext()));
    return leaf(leaf_++);
  }

private:
  /// The value of leaf `l` from its slots (consecutive in the plan).
  llvm::Value *leaf(int l) {
    const ir::Type *t = plan_.leaves[l].type;
    std::vector<std::pair<const ParamSlot *, llvm::Value *>> slots;
    while (slot_ < plan_.slots.size() && plan_.slots[slot_].leaf == l) {
      if (values_[slot_])
        slots.emplace_back(&plan_.slots[slot_], values_[slot_]);
      ++slot_;
    }
    if (const auto *at = ir::dyn_cast<ir::ArrayType>(t)) {
      llvm::Value *v = llvm::PoisonValue::get(arrayValueType(b_.getContext(), at->ndim()));
      for (const auto &[s, value] : slots) {
        if (s->source == ParamSlot::Source::Data)
          v = b_.CreateInsertValue(v, value, 0);
        else
          v = b_.CreateInsertValue(
              v, value, {s->source == ParamSlot::Source::Shape ? 1u : 2u, unsigned(s->dim)});
      }
      return v;
    }
    if (t->kind() == TypeKind::Pointer || t->kind() == TypeKind::Record)
      return slots.at(0).second;
    const auto *st = ir::cast<ir::ScalarType>(t);
    if (st->kind() == TypeKind::Complex) {
      llvm::Value *v = llvm::PoisonValue::get(registerType(b_.getContext(), st));
      v = b_.CreateInsertValue(v, slots.at(0).second, 0);
      return b_.CreateInsertValue(v, slots.at(1).second, 1);
    }
    llvm::Value *v = slots.at(0).second;
    return st->kind() == TypeKind::Bool ? b_.CreateICmpNE(v, b_.getInt8(0)) : v;
  }

  llvm::IRBuilderBase &b_;
  const PackingPlan &plan_;
  const std::vector<llvm::Value *> &values_;
  int leaf_ = 0;
  size_t slot_ = 0;
};

} // namespace

KernelEntry buildEntry(llvm::Module &mod, llvm::IRBuilder<> &b, Backend backend, EntryKind kind,
                       const std::string &symbol, const std::vector<const ir::Type *> &types,
                       const std::vector<std::string> &names, const PackingPlan &plan,
                       llvm::Type *returnType) {
  llvm::LLVMContext &ctx = mod.getContext();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  bool host = backend == Backend::Host;

  // Each slot's type and name; the second Value slot of a leaf is a Python float's float32
  // copy.
  std::vector<std::string> leafName;
  for (size_t k = 0; k < types.size(); ++k)
    leafNames(ir::concretize(types[k]), k < names.size() ? names[k] : "arg" + std::to_string(k),
              leafName);
  std::vector<llvm::Type *> slotTypes;
  std::vector<std::string> slotNames;
  std::vector<bool> isCopy;
  std::string copies; // "double index:float index,..." for useFloat32Copies
  int lastValueLeaf = -1;
  for (size_t i = 0; i < plan.slots.size(); ++i) {
    const ParamSlot &s = plan.slots[i];
    bool copy = s.source == ParamSlot::Source::Value && s.leaf == lastValueLeaf;
    if (s.source == ParamSlot::Source::Value)
      lastValueLeaf = s.leaf;
    slotTypes.push_back(slotType(ctx, s));
    std::string name = leafName.at(s.leaf) + (copy ? "_f32" : partSuffix(s.source));
    if (s.source == ParamSlot::Source::Shape || s.source == ParamSlot::Source::Stride)
      name += std::to_string(s.dim);
    slotNames.push_back(name);
    isCopy.push_back(copy);
    if (copy)
      copies += (copies.empty() ? "" : ",") + std::to_string(i - 1) + ":" + std::to_string(i);
  }

  KernelEntry e;
  std::vector<llvm::Value *> values(plan.slots.size(), nullptr);
  if (kind == EntryKind::Kernel && host) {
    e.function = llvm::Function::Create(
        llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr}, false),
        llvm::GlobalValue::ExternalLinkage, symbol, mod);
    llvm::Argument *argv = e.function->getArg(0), *hostCtx = e.function->getArg(1);
    argv->setName("args");
    argv->addAttr(llvm::Attribute::NoCapture);
    argv->addAttr(llvm::Attribute::ReadOnly);
    e.hostCtx = hostCtx;
    b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", e.function));
    for (size_t i = 0; i < plan.slots.size(); ++i) {
      if (isCopy[i])
        continue; // the host converts the double where float32 code needs it
      llvm::Value *slot =
          b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, argv, i), slotNames[i] + "_ptr");
      values[i] = b.CreateLoad(slotTypes[i], slot, slotNames[i]);
    }
  } else {
    std::vector<llvm::Type *> params = slotTypes;
    bool trailingCtx = host && kind == EntryKind::DeviceFunction;
    if (trailingCtx)
      params.push_back(ptr);
    llvm::Type *ret =
        kind == EntryKind::Kernel || !returnType ? llvm::Type::getVoidTy(ctx) : returnType;
    e.function = llvm::Function::Create(llvm::FunctionType::get(ret, params, false),
                                        llvm::GlobalValue::ExternalLinkage, symbol, mod);
    for (size_t i = 0; i < plan.slots.size(); ++i) {
      e.function->getArg(i)->setName(slotNames[i]);
      if (!isCopy[i])
        values[i] = e.function->getArg(i);
    }
    if (trailingCtx) {
      e.hostCtx = e.function->getArg(plan.slots.size());
      e.hostCtx->setName("ctx");
    }
    if (kind == EntryKind::Kernel) {
      if (!copies.empty())
        e.function->addFnAttr(kFloat32CopiesAttr, copies);
      llvm::Metadata *md[] = {llvm::ValueAsMetadata::get(e.function),
                              llvm::MDString::get(ctx, "kernel"),
                              llvm::ConstantAsMetadata::get(b.getInt32(1))};
      mod.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx, md));
    }
    b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", e.function));
  }
  if (auto *hostCtx = llvm::dyn_cast_or_null<llvm::Argument>(e.hostCtx)) {
    hostCtx->setName("ctx");
    hostCtx->addAttr(llvm::Attribute::NoAlias);
    hostCtx->addAttr(llvm::Attribute::NoCapture);
    hostCtx->addAttr(llvm::Attribute::ReadOnly);
  }
  e.function->setDoesNotThrow();

  Rebuilder rebuild(b, plan, values);
  for (const ir::Type *t : types)
    e.args.push_back(rebuild.argument(t));
  return e;
}

} // namespace ptxjit::codegen::detail
