// Reading IR text back: the inverse of Function::print, so that tests (and anyone debugging)
// can write IR by hand, and so that golden files can be checked for more than equal text.
//
// The parser reads exactly what Function::print(withLocs) writes, untyped (as the frontend
// produces it) or typed (after ir::inferTypes), with or without the "; line N" comments:
//
//   function k(x: array(float32, 1d, C), n: int32) kernel -> void
//     var x : array(float32, 1d, C)
//     var n : int32
//   bb0:
//     %0 = Global cuda [symbol cuda] : Symbol(cuda)              ; line 3
//     %3 = Call %1(%2) : int64 {cuda.grid}                         ; line 3
//     StoreLocal i, %3
//     Branch %7, bb1, bb2
//
// so that parseFunction(f.print(b))->print(b) == f.print(b). It is lenient where that costs
// nothing: indentation and the padding before "; line N" are free, blank lines and lines
// whose first non-blank character is ';' are skipped, values and blocks may be used before
// the line that defines them (verify() judges whether that is well-formed), and the
// parameter name after "Arg N" may be left out.
//
// What the text cannot carry is reconstructed as follows:
//  - qualname is the name; filename and firstLine stay empty / 0; a location is a line only.
//  - Instructions without a value (StoreLocal, SetItem, terminators) have no printed number:
//    each gets the number after the instruction before it (what the frontend would have
//    given it) or, when that is taken, one above every number in the text.
//  - Untyped text has no variable list: variables are the parameters, then every other name
//    in the order of first mention. Typed text lists them all ("var" lines) and every name
//    used must be among them.
//  - In typed text (a header with "-> T") an instruction without a value and without a
//    printed type gets type void, as typing gives it.
//  - A frozen NumPy array global ("[array float32(4,)]") prints no elements: it is read
//    back as zeros of the right size.
//  - A type "Function(name)" is resolved through the "[device function name #id]" or
//    "[kernel name #id]" globals of the same text, which carry the function id.
//  - A call's "-> name" names a typed device function, which text cannot rebuild: it is
//    looked up through the optional CalleeLookup; without one, calleeFunction stays null.
#pragma once

#include "ir/IR.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace ptxjit::ir {

/// Finds the typed device function a call's "-> name" refers to; returns null when unknown.
using CalleeLookup = std::function<Function *(const std::string &name)>;

/// Parses one function in the text form of Function::print (typed or untyped, with or without
/// locations). `lookupCallee`, when given, resolves "-> name" on calls into
/// CallInstr::calleeFunction, and a name it does not know is an error; when empty,
/// calleeFunction stays null. Throws CompileError(DiagCode::IRSyntax), whose message and
/// loc().line give the 1-based line of `text` and what was expected there. Never asserts on
/// bad input. The result is not verified: call ir::verify for that.
std::unique_ptr<Function> parseFunction(std::string_view text,
                                        const CalleeLookup &lookupCallee = {});

/// Parses a type from its Type::str() spelling ("array(float32, 2d, A)", "UniTuple(int64 x
/// 2)", "Literal[float]", "enumerate(range_iter64)", ...) and returns the interned type, so
/// parseTypeText(t->str()) == t. "Function(name)" cannot be read on its own (the spelling
/// lacks the function id). Throws CompileError(DiagCode::IRSyntax) naming line 1.
const Type *parseTypeText(std::string_view text);

/// Parses a constant from its ConstValue::str() text ("None", "-3", "2.5", "1e-06", "nan",
/// "(1+2j)", "'a\\n'", "(1, 2.0)", "<code>"); parseConstText(c.str()).str() == c.str().
/// Throws CompileError(DiagCode::IRSyntax) naming line 1.
ConstValue parseConstText(std::string_view text);

/// Parses a global's snapshot from its GlobalValue::str() text ("symbol math",
/// "const float32 0.5", "device function helper #3", "missing", ...); an array's elements are
/// zeros (see above). Throws CompileError(DiagCode::IRSyntax) naming line 1.
GlobalValue parseGlobalText(std::string_view text);

} // namespace ptxjit::ir
