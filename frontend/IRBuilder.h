// Translates a function's bytecode into untyped IR by simulating CPython's value stack block
// by block (the entry point for other layers is buildFunction in frontend/Frontend.h).
//
// Model:
// - Python locals become LoadLocal/StoreLocal of Function::vars; parameters come first
//   (isArgument), stored from their ArgInstr in the entry block.
// - Within a block the simulated stack holds cells: an IR value, CPython's NULL marker
//   (PUSH_NULL, LOAD_GLOBAL/LOAD_ATTR flag bits), a constant not yet emitted, or "the value
//   slot k had on entry to the block". Constants and slot reads are emitted lazily where they
//   are first used, so `LOAD_CONST None; RETURN_VALUE` becomes a bare Return and the keyword
//   tuple CALL_KW pops leaves no dead constant.
// - Values on the stack across a block edge live in synthetic variables "$stackN": each
//   predecessor stores the slots its successors read at its end (before the terminator), the
//   successor loads them where it uses them. Slots that pass through a block unchanged share
//   the variable of the block they came from, so a `for` loop's iterator is one variable.
//   NULL markers never need a variable: every predecessor must agree that the slot is NULL.
//   A constant that every predecessor carries in a slot starts the successor as that constant
//   (the stores into a variable no block reads are dropped at the end).
// - `for` loops: GET_ITER makes a GetIter; FOR_ITER becomes a header block ending in
//   IterValid + Branch, and the loop body starts with IterNext of the iterator.
// - Unreachable bytecode blocks are not translated.
#pragma once

#include "frontend/Bytecode.h"
#include "frontend/Cfg.h"
#include "ir/IR.h"

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ptxjit::frontend {

class IRBuilder {
public:
  /// `view` and `cfg` (built from `view`) must outlive the builder.
  IRBuilder(const BytecodeView &view, const Cfg &cfg, ir::FunctionKind kind);

  /// Builds the function. Throws CompileError: UnsupportedOpcode for an instruction the
  /// frontend does not translate, Internal for bytecode whose stack does not add up.
  /// Constructs rejected by rejectUnsupportedConstructs (frontend/Reject.h) must have been
  /// checked first.
  std::unique_ptr<ir::Function> build();

private:
  /// A list display under construction (BUILD_LIST, LIST_APPEND, LIST_EXTEND), which
  /// LIST_TO_TUPLE may turn into a tuple display: CPython builds `(a, *t)`, `[a, *t]` and the
  /// positional arguments of `f(a, *t)` this way. Its items are emitted as they come (Python's
  /// evaluation order); a spread item is unpacked in place.
  struct Display {
    std::vector<ir::Instr *> items;
    std::vector<bool> spread;
    bool tuple = false; ///< converted by LIST_TO_TUPLE
    InstrIndex at;      ///< the BUILD_LIST (a list literal's location in messages)
  };
  /// Keyword arguments under construction for CALL_FUNCTION_EX: a dict display with constant
  /// string keys (BUILD_MAP, BUILD_CONST_KEY_MAP), merged by DICT_MERGE (`f(*a, k=v, **{...})`).
  struct Keywords {
    std::vector<std::string> names;
    std::vector<ir::Instr *> values;
    InstrIndex at; ///< the BUILD_MAP (a dict literal's location in messages)
  };

  /// A simulated stack entry (see the file comment).
  struct Cell {
    ir::Instr *value = nullptr;          ///< the IR value once emitted
    bool isNull = false;                 ///< CPython's NULL marker
    int slot = -1;                       ///< >= 0: the value stack slot `slot` had on entry
    std::optional<InstrIndex> constFrom; ///< a LOAD_CONST not yet emitted (or emitted from)
    /// An exception built by calling an exception class with constants: only `raise` uses it.
    std::shared_ptr<const ir::RaisedException> exception;
    std::shared_ptr<Display> display;   ///< a list or tuple display being built
    std::shared_ptr<Keywords> keywords; ///< keyword arguments being collected
    /// A slot holding a list display begun in a predecessor (it crossed a block edge, as in
    /// `f(*t, a if c else b)`, as a tuple of its items so far): only LIST_* may continue it.
    bool partialList = false;
  };

  /// An outgoing edge of the current block and the stack its successor starts with.
  struct Edge {
    int succ = -1;
    std::vector<Cell *> stack;
    bool forIterBody = false; ///< the body edge of FOR_ITER: the successor starts with IterNext
  };

  struct BlockState {
    bool entryKnown = false;
    bool simulated = false;
    int depth = 0;
    std::vector<bool> nullSlots;
    /// Per entry slot: the LOAD_CONST that every edge into the block carries there (the `5`
    /// of `5 + (a if c else b)`), else none. Such a slot starts as that constant rather than
    /// as a load of its "$stack" variable, so that typing still sees a literal (weak, NEP 50:
    /// `5 + x` with an int8 x is int8 on every path, as without the branch).
    std::vector<std::optional<InstrIndex>> constSlots;
    std::vector<bool> listSlots; ///< slots holding a list display begun before (partialList)
    bool forIterBody = false;
    ir::Block *irBlock = nullptr;
    std::vector<std::unique_ptr<ir::Instr>> staged; ///< emitted instructions, in order
  };

  const BytecodeView &view_;
  const Cfg &cfg_;
  std::unique_ptr<ir::Function> fn_;
  std::vector<BlockState> states_;
  std::vector<std::unique_ptr<ir::Instr>> entryStaged_;

  // Current block.
  int block_ = -1;
  InstrIndex cur_;
  std::vector<Cell *> stack_;
  std::deque<Cell> cells_;
  bool terminated_ = false;
  std::optional<std::vector<std::string>> pendingKwNames_; ///< KW_NAMES awaiting its CALL

  // "$stack" variables: a node is (block, slot) = the variable a block's entry slot lives in;
  // nodes joined by union-find share one variable.
  std::map<std::pair<int, int>, int> nodeIds_;
  std::vector<int> parent_;
  std::vector<std::pair<ir::LoadLocalInstr *, int>> slotLoads_;
  std::vector<std::pair<ir::StoreLocalInstr *, int>> slotStores_;
  std::map<int, std::vector<int>> blockStores_;      ///< block -> nodes it stores to
  std::map<int, std::vector<int>> blockPassThrough_; ///< block -> nodes that pass through it

  // Framework (IRBuilder.cpp).
  void emitEntry();
  void simulateBlock(int id);
  void setEntry(int succ, const Edge &e);
  void finishBlock(const std::vector<Edge> &edges);
  void finalize();
  int node(int block, int slot);
  int find(int n);
  void unite(int a, int b);

  template <typename T, typename... Args> T *emit(Args &&...args) {
    auto owned = std::make_unique<T>(std::forward<Args>(args)...);
    T *raw = owned.get();
    raw->loc = view_.loc(cur_);
    states_[static_cast<size_t>(block_)].staged.push_back(std::move(owned));
    return raw;
  }

  Cell *newCell();
  Cell *valueCell(ir::Instr *v);
  Cell *nullCell();
  void push(Cell *c) { stack_.push_back(c); }
  void pushValue(ir::Instr *v) { push(valueCell(v)); }
  Cell *pop();
  Cell *peek(size_t depthFromTop) const; ///< 1 = top
  /// Pops `n` cells, returned in push order (deepest first).
  std::vector<Cell *> popN(size_t n);
  /// Emits the cell's value if needed and returns it; NULL is an internal error. A list or
  /// dict display used as a value is rejected (kernels cannot allocate them) except a list
  /// passed to a call (callArgValue); a tuple display becomes a BuildTuple.
  ir::Instr *value(Cell *c);
  /// value(c) for an argument of a call: a list display is allowed there, as a list value that
  /// typing lets the callee name in its error (cuda.local.array([2, 3], ...)).
  ir::Instr *callArgValue(Cell *c);
  /// The value a cell has on a block edge: a display not finished yet crosses as the tuple of
  /// its items so far (the successor continues it: BlockState::listSlots).
  ir::Instr *edgeValue(Cell *c);
  /// The display `c` is or continues (a partialList slot becomes one that spreads the tuple its
  /// predecessor stored); null when `c` is neither.
  Display *displayOf(Cell *c);
  /// A BuildTuple of display `d`'s items (a list display when `asList`).
  ir::Instr *emitDisplay(const Display &d, bool asList);
  ir::Instr *popValue() { return value(pop()); }
  /// The constant a LOAD_CONST cell stands for, if it is one.
  const ir::ConstValue *constantOf(const Cell *c) const;
  /// bool(v) for a branch: v itself when it already is a Truth.
  ir::Instr *truth(ir::Instr *v);
  ir::Block *irBlockOf(int cfgBlock) const;
  int localVar(uint32_t slot);
  [[noreturn]] void unsupported(const Instruction &in) const;
  [[noreturn]] void internal(const std::string &what) const;
  /// The code object is malformed (BytecodeView::malformed at the current instruction).
  [[noreturn]] void malformed(const std::string &what) const;

  // Opcode translation (IRBuilderOps.cpp).
  void translate(const Instruction &in);
  void translateCall(const Instruction &in, size_t argc, std::vector<std::string> kwNames);
  /// The callee and the extra first argument (null when none) of the two cells below a call's
  /// arguments: [NULL, callable] or [method, self] (3.11, 3.12), [callable, NULL] or
  /// [method, self] (3.13).
  std::pair<Cell *, Cell *> calleeOf(const std::vector<Cell *> &pair) const;
  /// The call `callee(self?, args..., kw=...)` (pair: the two cells below the arguments, as
  /// CALL and CALL_FUNCTION_EX find them): an exception to raise, an `operator` function's
  /// operation, or a Call.
  void emitCall(const std::vector<Cell *> &pair, const std::vector<Cell *> &args,
                std::vector<std::string> kwNames);
  /// CALL_FUNCTION_EX: `f(*args)` and `f(*args, **kwargs)` (positional arguments from a
  /// display or one tuple value, keywords from a dict display with constant keys).
  void translateCallEx(const Instruction &in);
  /// BUILD_LIST, LIST_APPEND, LIST_EXTEND, LIST_TO_TUPLE, BUILD_MAP, BUILD_CONST_KEY_MAP and
  /// DICT_MERGE: the displays that star calls and tuple displays are built from.
  void translateDisplay(const Instruction &in);
  void translateJump(const Instruction &in);
  /// RAISE_VARARGS 1: `raise C` or `raise C(constants)` (an exception cell) ends the block.
  void translateRaise(const Instruction &in);
  /// The exception `callee(args...)` builds when callee is an exception class and every
  /// argument a constant; null otherwise (an ordinary call).
  std::shared_ptr<const ir::RaisedException> exceptionCall(Cell *callee,
                                                           const std::vector<Cell *> &args);
  void translateForIter(const Instruction &in);
  void translateLoadGlobal(const Instruction &in);
  void translateLoadAttr(const Instruction &in);
  void translateLoadDeref(const Instruction &in);
  /// A call of an `operator` module function with no keywords (`operator.add(a, b)`, also
  /// through a global or closure value) as the operator's instruction; null for other calls.
  /// `operands` are the callee then the arguments.
  ir::Instr *operatorCall(const std::vector<ir::Instr *> &operands);
};

} // namespace ptxjit::frontend
