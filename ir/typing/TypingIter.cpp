// Typing of the iterator builtins enumerate() and zip(). Both return an iterator (Python's
// enumerate and zip objects are iterators): `for` calls iter() on it, which gives it back
// (Typer::iteratorOf), so `for i, v in enumerate(a)` and `z = zip(a, b); for p in z` both work.
#include "ir/typing/TypingInternal.h"

namespace ptxjit::ir::typing_detail {

const Type *Typer::typeIterBuiltin(CallInstr *i, BuiltinId id,
                                   const std::vector<const Type *> &args) {
  if (id != BuiltinId::Enumerate && id != BuiltinId::Zip)
    return nullptr;
  const char *name = id == BuiltinId::Enumerate ? "enumerate" : "zip";
  auto bad = [&](const std::string &why) {
    fail(DiagCode::CallArgs, i, {name, typeListStr(args) + "; " + why});
  };
  const size_t n = args.size();
  const size_t nkw = i->kwNames.size();
  i->builtin = id;
  if (id == BuiltinId::Enumerate) {
    // enumerate(iterable, start=0): yields (int64 count, item) as Numba's enumerate does.
    if (n < 1 || n > 2 || nkw > 1 || (nkw == 1 && (n != 2 || i->kwNames[0] != "start")))
      bad("expected enumerate(iterable[, start])");
    if (n == 2 && !isIntOrBool(args[1]))
      bad("start must be an integer");
    const IteratorType *inner = iteratorOf(i, args[0]);
    return types::iterator(IterKind::Enumerate, types::tuple({types::int64(), inner->yieldType()}),
                           {inner});
  }
  // zip(a, b, ...): yields tuples and stops at the shortest iterable.
  if (nkw)
    bad("keyword arguments (strict=) are not supported");
  std::vector<const Type *> yields, inners;
  for (const Type *t : args) {
    const IteratorType *inner = iteratorOf(i, t);
    inners.push_back(inner);
    yields.push_back(inner->yieldType());
  }
  return types::iterator(IterKind::Zip, types::tuple(yields), inners);
}

} // namespace ptxjit::ir::typing_detail
