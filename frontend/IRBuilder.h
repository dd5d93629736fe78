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
  /// A simulated stack entry (see the file comment).
  struct Cell {
    ir::Instr *value = nullptr;          ///< the IR value once emitted
    bool isNull = false;                 ///< CPython's NULL marker
    int slot = -1;                       ///< >= 0: the value stack slot `slot` had on entry
    std::optional<InstrIndex> constFrom; ///< a LOAD_CONST not yet emitted (or emitted from)
    /// An exception built by calling an exception class with constants: only `raise` uses it.
    std::shared_ptr<const ir::RaisedException> exception;
    /// The items of a list display that CPython builds for a call with more than 30 arguments
    /// (BUILD_LIST, LIST_APPEND; frontend/Reject.h lets only those through): `isTuple` once
    /// LIST_TO_TUPLE made it the call's argument tuple (used as a value: a BuildTuple).
    std::shared_ptr<std::vector<Cell *>> items;
    bool isTuple = false;
    /// The keyword arguments of such a call (BUILD_MAP of constant names), in order.
    std::shared_ptr<std::vector<std::pair<std::string, Cell *>>> keywords;
    InstrIndex builtAt{0}; ///< where `items` or `keywords` was built (for messages)
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
  /// Emits the cell's value if needed and returns it; NULL is an internal error.
  ir::Instr *value(Cell *c);
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
  /// A call of `pair`'s callable (CPython's [NULL, callable] or [method, self] below the
  /// arguments; 3.13's [callable, NULL]) with `args`, the last kwNames.size() of them keyword
  /// arguments.
  void emitCall(std::vector<Cell *> pair, std::vector<Cell *> args,
                std::vector<std::string> kwNames);
  /// CALL_FUNCTION_EX of a call with more than 30 arguments: its argument tuple (LIST_TO_TUPLE
  /// of a list display) and keywords (BUILD_MAP of constant names) are those cells' items.
  void translateCallEx(const Instruction &in);
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
