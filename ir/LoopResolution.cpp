#include "ir/LoopResolution.h"

namespace ptxjit::ir {

bool inputCastsTo(InputType in, const ScalarType *to, bool narrowing) {
  if (const auto *w = ir::dyn_cast<ir::WeakType>(in))
    return ir::weakConversion(w, to) <= ir::Conversion::Safe;
  const auto *from = ir::cast<ScalarType>(in);
  return ir::canCast(from, to, ir::Casting::Safe) ||
         (narrowing && ir::canCast(to, from, ir::Casting::Safe) &&
          ir::canCast(from, to, ir::Casting::SameKind));
}

LoopMatch resolveLoop(const std::vector<InputType> &in, const std::vector<LoopTypes> &loops,
                      const std::vector<const ScalarType *> &outputs, ir::Casting outputCasting,
                      bool narrowing) {
  // NEP 50: when every input is a Python scalar, they all take their default types.
  std::vector<InputType> inputs = in;
  bool allWeak = true;
  for (InputType i : inputs)
    allWeak = allWeak && i->isWeak();
  if (allWeak)
    for (InputType &i : inputs)
      i = ir::concretize(i);
  LoopMatch m;
  for (size_t l = 0; l < loops.size(); ++l) {
    const LoopTypes &loop = loops[l];
    if (loop.inputs.size() != inputs.size())
      continue;
    bool ok = true;
    for (size_t k = 0; k < inputs.size() && ok; ++k)
      ok = inputCastsTo(inputs[k], loop.inputs[k], narrowing);
    if (!ok)
      continue;
    for (size_t k = 0; k < outputs.size() && k < loop.outputs.size() && ok; ++k) {
      if (!outputs[k] || ir::canCast(loop.outputs[k], outputs[k], outputCasting))
        continue;
      ok = false;
      if (!m.outputRefused) {
        m.outputRefused = true;
        m.outputFrom = loop.outputs[k];
        m.outputTo = outputs[k];
      }
    }
    if (ok) {
      m.loop = static_cast<int>(l);
      m.outputRefused = false;
      return m;
    }
  }
  return m;
}

std::vector<const ScalarType *> lazyLoopTypes(const std::vector<InputType> &inputs) {
  const ir::Type *strong = nullptr;
  for (InputType in : inputs)
    if (!in->isWeak())
      strong = strong ? ir::promote(strong, in) : in;
  std::vector<const ScalarType *> out;
  for (InputType in : inputs) {
    if (!in->isWeak()) {
      out.push_back(ir::cast<ScalarType>(in));
      continue;
    }
    const ir::Type *t = strong ? ir::promote(strong, in) : nullptr;
    // A weak int next to bools: NumPy gives the default integer.
    if (t && t->kind() == TypeKind::Bool)
      t = nullptr;
    const auto *st = t ? ir::dyn_cast<ScalarType>(ir::concretize(t)) : nullptr;
    out.push_back(st ? st : ir::cast<ScalarType>(ir::concretize(in)));
  }
  return out;
}

std::string inputTypesStr(const std::vector<InputType> &inputs) {
  std::string s;
  for (InputType in : inputs) {
    if (!s.empty())
      s += ", ";
    switch (in->kind()) {
    case TypeKind::WeakInt:
      s += "int";
      break;
    case TypeKind::WeakFloat:
      s += "float";
      break;
    case TypeKind::WeakComplex:
      s += "complex";
      break;
    default:
      s += in->str();
      break;
    }
  }
  return s;
}

} // namespace ptxjit::ir
