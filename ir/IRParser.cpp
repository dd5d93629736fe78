// The IR text parser: a hand-written recursive-descent reader of Function::print's output.
// Each line is read by a Cursor; the function parser wires operands and branch targets once
// every line has been read, so that text may refer to values and blocks defined further down.
#include "ir/IRParser.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace ptxjit::ir {
namespace {

const char *kIRFile = "<ir text>";

[[noreturn]] void syntaxError(int line, const std::string &what) {
  SourceLoc loc;
  loc.line = line;
  raiseDiag(DiagCode::IRSyntax, kIRFile, loc, {std::to_string(line), what});
}

/// The ids of the user functions that "[device function name #id]" / "[kernel name #id]"
/// globals name, by name: what a "Function(name)" type needs. -1 marks a name given two ids.
using FunctionIds = std::unordered_map<std::string, int>;

/// Characters that end a name (a variable, attribute, keyword, global or function name):
/// the punctuation of the text form. Anything else, UTF-8 included, may be part of a name.
bool endsName(char c) {
  switch (c) {
  case ' ':
  case '\t':
  case ',':
  case ':':
  case ';':
  case '(':
  case ')':
  case '[':
  case ']':
  case '{':
  case '}':
  case '%':
  case '=':
  case '#':
    return true;
  default:
    return false;
  }
}

bool isWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

/// The type a `for` over array `a` yields: an element of a 1-d array, else a row view. This
/// mirrors Typer::iteratorOf / arrayIndex with one integer index (C stays C, F and A become
/// A, read-only is kept); IRParserTest checks it against typing.
const Type *arrayIterYield(const ArrayType *a) {
  if (a->ndim() == 1)
    return a->dtype();
  Layout l = a->layout() == Layout::C ? Layout::C : Layout::A;
  return types::array(a->dtype(), a->ndim() - 1, l, a->readonly());
}

/// Reads one line. Every read skips blanks first unless it says "raw"; failures name the
/// line and what was expected.
class Cursor {
public:
  Cursor(std::string_view text, int line, const FunctionIds *ids = nullptr)
      : text_(text), line_(line), ids_(ids) {}

  [[noreturn]] void fail(const std::string &expected) const {
    syntaxError(line_, "expected " + expected + ", found " + rest());
  }
  [[noreturn]] void failHere(const std::string &what) const { syntaxError(line_, what); }

  /// "'<the rest of the line>'" (shortened) or "the end of the line", for messages.
  std::string rest() const {
    size_t p = pos_;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t'))
      ++p;
    if (p >= text_.size())
      return "the end of the line";
    std::string_view r = text_.substr(p);
    if (r.size() > 32)
      return "'" + std::string(r.substr(0, 29)) + "...'";
    return "'" + std::string(r) + "'";
  }

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t'))
      ++pos_;
  }
  bool atEnd() {
    skipSpace();
    return pos_ >= text_.size();
  }
  /// The next character after blanks, or '\0' at the end.
  char peek() {
    skipSpace();
    return peekRaw();
  }
  char peekRaw() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool accept(char c) {
    if (peek() != c)
      return false;
    ++pos_;
    return true;
  }
  void expect(char c, const std::string &what) {
    if (!accept(c))
      fail(what);
  }
  /// Accepts `s` exactly (after blanks).
  bool acceptText(std::string_view s) {
    skipSpace();
    if (text_.substr(pos_, s.size()) != s)
      return false;
    pos_ += s.size();
    return true;
  }
  /// Accepts the word `w` when no word character follows it.
  bool acceptWord(std::string_view w) {
    skipSpace();
    if (text_.substr(pos_, w.size()) != w)
      return false;
    size_t end = pos_ + w.size();
    if (end < text_.size() && isWordChar(text_[end]))
      return false;
    pos_ = end;
    return true;
  }
  void expectWord(std::string_view w) {
    if (!acceptWord(w))
      fail("'" + std::string(w) + "'");
  }

  /// [A-Za-z0-9_]*, possibly empty.
  std::string word() {
    skipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && isWordChar(text_[pos_]))
      ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  /// A name of the text form (see endsName); `what` describes it for the message.
  std::string name(const std::string &what) {
    skipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && !endsName(text_[pos_]))
      ++pos_;
    if (pos_ == start)
      fail(what);
    return std::string(text_.substr(start, pos_ - start));
  }

  /// Everything up to (not including) `stop` or the end of the line, without trailing blanks.
  std::string until(char stop) {
    skipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != stop)
      ++pos_;
    size_t end = pos_;
    while (end > start && (text_[end - 1] == ' ' || text_[end - 1] == '\t'))
      --end;
    return std::string(text_.substr(start, end - start));
  }

  /// The text up to the ')' closing a '(' just read (nested parentheses included), blanks at
  /// its end trimmed; the cursor stops at that ')'.
  std::string untilClosing() {
    skipSpace();
    size_t start = pos_;
    int depth = 0;
    while (pos_ < text_.size() && (text_[pos_] != ')' || depth > 0)) {
      depth += text_[pos_] == '(' ? 1 : text_[pos_] == ')' ? -1 : 0;
      ++pos_;
    }
    size_t end = pos_;
    while (end > start && (text_[end - 1] == ' ' || text_[end - 1] == '\t'))
      --end;
    return std::string(text_.substr(start, end - start));
  }

  /// The run of non-blank characters at the cursor (an operator), possibly empty.
  std::string token() {
    skipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ' ' && text_[pos_] != '\t')
      ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  /// A non-negative decimal integer that fits `max`.
  int64_t integer(const std::string &what, int64_t max = std::numeric_limits<int64_t>::max()) {
    skipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && isDigit(text_[pos_]))
      ++pos_;
    int64_t v = 0;
    std::errc ec = std::from_chars(text_.data() + start, text_.data() + pos_, v).ec;
    if (pos_ == start || ec != std::errc() || v > max) {
      pos_ = start;
      fail(what);
    }
    return v;
  }

  /// "%N".
  int valueRef() {
    if (!accept('%'))
      fail("a value '%N'");
    return static_cast<int>(integer("a value number after '%'", std::numeric_limits<int>::max()));
  }
  /// "bbN".
  int blockRef() {
    skipSpace();
    if (text_.substr(pos_, 2) != "bb")
      fail("a block 'bbN'");
    pos_ += 2;
    return static_cast<int>(integer("a block number after 'bb'", std::numeric_limits<int>::max()));
  }

  const Type *type();
  ConstValue constant();
  GlobalValue global(char stop);

  size_t pos() const { return pos_; }
  void setPos(size_t p) { pos_ = p; }
  int line() const { return line_; }

private:
  const ArrayType *arrayBody(bool readonly);
  /// A record, nested array or character sequence type at the cursor
  /// (types::parseRecordSpelling).
  const Type *recordSpelling() {
    try {
      return types::parseRecordSpelling(text_, pos_);
    } catch (const std::invalid_argument &e) {
      failHere(std::string("malformed record type: ") + e.what());
    }
  }
  std::vector<const Type *> typeList(const char *closing);
  const IteratorType *iteratorType();
  /// A number token of ConstValue::str ("-3", "2.5", "1e-06", "nan", "-inf"), or empty.
  std::string_view numberToken();
  double toDouble(std::string_view token);
  ConstValue number();
  ConstValue parenthesized();
  std::string stringLiteral();

  std::string_view text_;
  size_t pos_ = 0;
  int line_;
  const FunctionIds *ids_;
};

// ---- types ----

const Type *Cursor::type() {
  if (acceptWord("readonly")) {
    skipSpace();
    if (text_.substr(pos_, 7) == "Record(") {
      const Type *r = recordSpelling();
      if (!isa<RecordType>(r))
        failHere("'readonly' before a type that is neither an array nor a record");
      return types::readonlyRecord(cast<RecordType>(r));
    }
    expectWord("array");
    return arrayBody(true);
  }
  skipSpace();
  if (text_.substr(pos_, 1) == "[") // "[char x 12]", "[unichr x 12]"
    return recordSpelling();
  size_t start = pos_;
  std::string w = word();
  if (w.empty())
    fail("a type");
  if (w == "void" && peekRaw() == '*') {
    ++pos_;
    return types::voidPointer();
  }
  if (w == "void")
    return types::void_();
  if (w == "none")
    return types::none();
  if (w == "ellipsis")
    return types::ellipsis();
  if (w == "range_state64")
    return types::range();
  if (w == "unicode_type")
    return types::string();
  if (w == "range_iter64")
    return types::iterator(IterKind::Range, types::int64(), {types::range()});
  if (w == "slice") {
    if (!acceptText("<a:b"))
      fail("'<a:b>' or '<a:b:c>' after 'slice'");
    bool hasStep = acceptText(":c");
    expect('>', "'>' closing the slice type");
    return types::slice(hasStep);
  }
  if (w == "Literal") {
    expect('[', "'[' after 'Literal'");
    std::string k = word();
    if (k == "str") { // Literal[str]('add'): a string a caller passed, with its value
      expect(']', "']' closing 'Literal['");
      expect('(', "'(' before the string literal's value");
      if (peek() != '\'')
        fail("a quoted string");
      std::string v = stringLiteral();
      expect(')', "')' closing the string literal's value");
      return types::stringLiteral(v);
    }
    const Type *t = k == "int"       ? types::weakInt()
                    : k == "float"   ? static_cast<const Type *>(types::weakFloat())
                    : k == "complex" ? types::weakComplex()
                                     : nullptr;
    if (!t)
      failHere("unknown literal type 'Literal[" + k + "]' (expected int, float or complex)");
    expect(']', "']' closing 'Literal['");
    if (k == "int" && accept('(')) { // Literal[int](32): an int literal with its value
      bool negative = accept('-');
      int64_t v = integer("the literal's value");
      expect(')', "')' closing the literal's value");
      return types::intLiteral(negative ? -v : v);
    }
    return t;
  }
  if (w == "array")
    return arrayBody(false);
  if (w == "UniTuple") {
    expect('(', "'(' after 'UniTuple'");
    const Type *elem = type();
    expectWord("x");
    int64_t n = integer("the element count of the UniTuple", 4096);
    if (n == 0)
      failHere("a UniTuple needs at least one element");
    expect(')', "')' closing the UniTuple");
    return types::tuple(std::vector<const Type *>(static_cast<size_t>(n), elem));
  }
  if (w == "Tuple") {
    expect('(', "'(' after 'Tuple'");
    return types::tuple(typeList("')' closing the Tuple"));
  }
  if (w == "iter" || w == "enumerate" || w == "zip") {
    pos_ = start;
    return iteratorType();
  }
  if (w == "Record" || w == "nestedarray") {
    pos_ = start;
    return recordSpelling();
  }
  if (w == "Symbol") {
    expect('(', "'(' after 'Symbol'");
    std::string path = untilClosing(); // a record dtype's path has parentheses
    if (path.empty())
      fail("a symbol path");
    expect(')', "')' closing the Symbol");
    return types::symbol(path);
  }
  if (w == "Function") {
    expect('(', "'(' after 'Function'");
    std::string fname = until(')');
    expect(')', "')' closing the Function type");
    auto it = ids_ ? ids_->find(fname) : FunctionIds::const_iterator();
    if (!ids_ || it == ids_->end())
      failHere("type Function(" + fname + ") names no '[device function " + fname +
               " #id]' or '[kernel ...]' global of this text, which would give its id");
    if (it->second < 0)
      failHere("type Function(" + fname + ") is ambiguous: globals give '" + fname +
               "' two different ids");
    return types::functionRef(it->second, fname);
  }
  const ScalarType *s = types::scalarByName(w);
  if (s && s->str() == w && peekRaw() == '*') { // "int32*": a pointer, spelled with no blank
    ++pos_;
    return types::pointer(s);
  }
  if (s && s->str() == w)
    return s;
  if (s)
    failHere("type '" + w + "' is printed as '" + s->str() + "'");
  pos_ = start;
  fail("a type");
}

const ArrayType *Cursor::arrayBody(bool readonly) {
  expect('(', "'(' after 'array'");
  skipSpace();
  const Type *dtype = nullptr;
  std::string dt;
  if (text_.substr(pos_, 7) == "Record(" || text_.substr(pos_, 1) == "[") // [char x 12] too
    dtype = recordSpelling();
  else
    dtype = types::scalarByName(dt = word());
  if (!dtype || (isa<ScalarType>(dtype) && dtype->str() != dt))
    failHere("'" + dt +
             "' is not an array element type (bool, int8..uint64, float32, "
             "float64, complex64, complex128)");
  expect(',', "',' after the array's element type");
  int64_t ndim = integer("the array's dimension count", 32);
  if (peekRaw() != 'd')
    fail("'d' after the dimension count");
  ++pos_;
  expect(',', "',' after the dimension count");
  Layout layout;
  std::string l = word();
  if (l == "C")
    layout = Layout::C;
  else if (l == "F")
    layout = Layout::F;
  else if (l == "A")
    layout = Layout::A;
  else
    failHere("unknown array layout '" + l + "' (expected C, F or A)");
  expect(')', "')' closing the array type");
  return types::array(dtype, static_cast<int>(ndim), layout, readonly);
}

std::vector<const Type *> Cursor::typeList(const char *closing) {
  std::vector<const Type *> out;
  if (accept(')'))
    return out;
  do
    out.push_back(type());
  while (accept(','));
  expect(')', closing);
  return out;
}

const IteratorType *Cursor::iteratorType() {
  if (acceptWord("range_iter64"))
    return types::iterator(IterKind::Range, types::int64(), {types::range()});
  std::string w = word();
  if (w == "iter") {
    expect('(', "'(' after 'iter'");
    const Type *t = type();
    if (auto *tup = dyn_cast<TupleType>(t); tup && tup->size() > 0) {
      expect(')', "')' closing iter(");
      return types::iterator(IterKind::Tuple, tup->elements()[0], {tup});
    }
    auto *a = dyn_cast<ArrayType>(t);
    if (!a || a->ndim() < 1)
      failHere("iter() takes an array of at least one dimension or a tuple, not " + t->str());
    expect(')', "')' closing iter(");
    return types::iterator(IterKind::Array, arrayIterYield(a), {a});
  }
  if (w == "enumerate") {
    expect('(', "'(' after 'enumerate'");
    const IteratorType *inner = iteratorType();
    expect(')', "')' closing enumerate(");
    return types::iterator(IterKind::Enumerate, types::tuple({types::int64(), inner->yieldType()}),
                           {inner});
  }
  if (w == "zip") {
    expect('(', "'(' after 'zip'");
    std::vector<const Type *> inners, yields;
    if (!accept(')')) {
      do {
        const IteratorType *inner = iteratorType();
        inners.push_back(inner);
        yields.push_back(inner->yieldType());
      } while (accept(','));
      expect(')', "',' or ')' in zip(");
    }
    return types::iterator(IterKind::Zip, types::tuple(yields), inners);
  }
  fail("an iterator type (range_iter64, iter(...), enumerate(...), zip(...))");
}

// ---- constants ----

std::string_view Cursor::numberToken() {
  skipSpace();
  size_t start = pos_, p = pos_;
  if (p < text_.size() && text_[p] == '-')
    ++p;
  std::string_view r = text_.substr(p);
  if (r.substr(0, 3) == "nan" || r.substr(0, 3) == "inf") {
    p += 3;
  } else {
    size_t digits = p;
    while (p < text_.size() && isDigit(text_[p]))
      ++p;
    if (p == digits)
      return {};
    if (p < text_.size() && text_[p] == '.') {
      ++p;
      while (p < text_.size() && isDigit(text_[p]))
        ++p;
    }
    if (p < text_.size() && text_[p] == 'e') {
      size_t q = p + 1;
      if (q < text_.size() && (text_[q] == '+' || text_[q] == '-'))
        ++q;
      size_t expDigits = q;
      while (q < text_.size() && isDigit(text_[q]))
        ++q;
      if (q > expDigits)
        p = q;
    }
  }
  pos_ = p;
  return text_.substr(start, p - start);
}

double Cursor::toDouble(std::string_view token) {
  double d = 0;
  auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), d);
  if (ec != std::errc() || ptr != token.data() + token.size())
    failHere("bad number '" + std::string(token) + "'");
  return d;
}

ConstValue Cursor::number() {
  size_t start = pos_;
  std::string_view tok = numberToken();
  if (tok.empty()) {
    pos_ = start;
    fail("a constant (None, True, False, a number, a string, a tuple or <type>)");
  }
  if (peekRaw() == 'j') {
    ++pos_;
    return ConstValue::complexNum({0.0, toDouble(tok)});
  }
  if (tok.find_first_of(".eni") != std::string_view::npos)
    return ConstValue::floating(toDouble(tok));
  // An int: negative ones fit int64; larger positive ones than int64 are uint64 (isUnsigned).
  if (tok[0] == '-') {
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (ec != std::errc() || ptr != tok.data() + tok.size())
      failHere("integer constant " + std::string(tok) + " does not fit int64");
    return ConstValue::integer(v);
  }
  uint64_t u = 0;
  auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), u);
  if (ec != std::errc() || ptr != tok.data() + tok.size())
    failHere("integer constant " + std::string(tok) + " does not fit uint64");
  ConstValue c = ConstValue::integer(static_cast<int64_t>(u));
  c.isUnsigned = u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  return c;
}

ConstValue Cursor::parenthesized() {
  // After '(': a complex "(re+imj)" / "(re-imj)", or a tuple "()", "(a,)", "(a, b)".
  if (accept(')'))
    return ConstValue::tuple({});
  size_t save = pos_;
  std::string_view re = numberToken();
  if (!re.empty() && (peekRaw() == '+' || peekRaw() == '-')) {
    if (peekRaw() == '+')
      ++pos_;
    std::string_view im = numberToken();
    if (im.empty() || peekRaw() != 'j')
      fail("the imaginary part 'Nj' of a complex constant");
    ++pos_;
    expect(')', "')' closing the complex constant");
    return ConstValue::complexNum({toDouble(re), toDouble(im)});
  }
  pos_ = save;
  std::vector<ConstValue> elems;
  for (;;) {
    elems.push_back(constant());
    if (!accept(','))
      break;
    if (peek() == ')')
      break; // "(a,)"
  }
  expect(')', "',' or ')' in the tuple constant");
  return ConstValue::tuple(std::move(elems));
}

std::string Cursor::stringLiteral() {
  // ConstValue::str's escapes: \\ \' \n \r \t \xNN; every other byte as is.
  ++pos_; // the opening quote
  std::string out;
  for (;;) {
    if (pos_ >= text_.size())
      failHere("unterminated string constant (expected a closing ')");
    char c = text_[pos_++];
    if (c == '\'')
      return out;
    if (c != '\\') {
      out += c;
      continue;
    }
    char e = peekRaw();
    ++pos_;
    switch (e) {
    case '\\':
      out += '\\';
      break;
    case '\'':
      out += '\'';
      break;
    case 'n':
      out += '\n';
      break;
    case 'r':
      out += '\r';
      break;
    case 't':
      out += '\t';
      break;
    case 'x': {
      unsigned v = 0;
      const char *b = text_.data() + pos_;
      auto [ptr, ec] = std::from_chars(b, b + std::min<size_t>(2, text_.size() - pos_), v, 16);
      if (ec != std::errc() || ptr != b + 2)
        failHere("'\\x' in a string constant needs two hex digits");
      pos_ += 2;
      out += static_cast<char>(v);
      break;
    }
    default:
      failHere(std::string("unknown escape '\\") + (e ? std::string(1, e) : "") +
               "' in a string constant (expected \\\\, \\', \\n, \\r, \\t or \\xNN)");
    }
  }
}

ConstValue Cursor::constant() {
  if (acceptWord("None"))
    return ConstValue::none();
  if (acceptWord("Ellipsis"))
    return ConstValue::ellipsis();
  if (acceptWord("True"))
    return ConstValue::boolean(true);
  if (acceptWord("False"))
    return ConstValue::boolean(false);
  char c = peek();
  if (c == '\'')
    return ConstValue::string(stringLiteral());
  if (c == 'b' && text_.substr(pos_, 2) == "b'") { // bytes: b'...', escaped as strings are
    ++pos_;
    return ConstValue::bytes(stringLiteral());
  }
  if (c == '<') {
    ++pos_;
    std::string t = until('>');
    if (t.empty() || !accept('>'))
      fail("'<type name>' of an unsupported constant");
    return ConstValue::unsupported(t);
  }
  if (accept('('))
    return parenthesized();
  return number();
}

// ---- globals ----

GlobalValue Cursor::global(char stop) {
  if (acceptWord("const")) {
    // "const <value>" or, for a NumPy scalar, "const <dtype> <value>".
    skipSpace();
    size_t save = pos_;
    std::string dtype = word();
    if (dtype.empty() || isDigit(dtype[0]) || peekRaw() != ' ') {
      dtype.clear();
      pos_ = save;
    }
    ConstValue v = constant();
    return GlobalValue::makeConstant(std::move(v), dtype);
  }
  if (acceptWord("symbol")) {
    std::string path = until(stop);
    if (path.empty())
      fail("a symbol path");
    return GlobalValue::symbol(path);
  }
  bool device = acceptWord("device");
  if (device && acceptWord("array")) {
    // "device array float32(4,) strides (4,) at 1234": a device array by reference.
    std::string dtype = word();
    if (dtype.empty())
      fail("the dtype of the device array global");
    auto ints = [&](const char *what) {
      expect('(', "'(' before the device array's " + std::string(what));
      std::vector<int64_t> v;
      while (peek() != ')') {
        bool negative = accept('-');
        int64_t x = integer(std::string("a value of the device array's ") + what);
        v.push_back(negative ? -x : x);
        if (!accept(','))
          break;
      }
      expect(')', "',' or ')' in the device array's " + std::string(what));
      return v;
    };
    std::vector<int64_t> shape = ints("shape");
    expectWord("strides");
    std::vector<int64_t> strides = ints("strides");
    expectWord("at");
    int64_t address = integer("the device array's address");
    return GlobalValue::deviceArray(dtype, std::move(shape), std::move(strides),
                                    static_cast<uint64_t>(address));
  }
  if (device)
    expectWord("function");
  if (device || acceptWord("kernel")) {
    std::string fname = until('#');
    if (fname.empty() || !accept('#'))
      fail("'<name> #<id>' of a user function");
    int id = static_cast<int>(integer("a function id after '#'", std::numeric_limits<int>::max()));
    return device ? GlobalValue::deviceFunction(id, fname) : GlobalValue::kernel(id, fname);
  }
  if (acceptWord("python")) {
    expectWord("function");
    std::string fname = until(stop);
    if (fname.empty())
      fail("the name of the Python function");
    return GlobalValue::pyFunction(fname);
  }
  if (acceptWord("unsupported")) {
    std::string t = until(stop);
    if (t.empty())
      fail("the Python type name of the unsupported global");
    return GlobalValue::unsupported(t);
  }
  if (acceptWord("missing"))
    return GlobalValue::missing();
  if (acceptWord("exception")) { // a builtin exception class, found by name
    std::string name = until(stop);
    if (name.empty())
      fail("the exception class's name");
    return GlobalValue::exceptionClass(name, 0);
  }
  if (acceptWord("tuple")) {
    // "tuple (symbol numpy.float32; array float64(3,); )": each element ends with "; ".
    expect('(', "'(' after 'tuple'");
    std::vector<GlobalValue> elems;
    while (!accept(')')) {
      elems.push_back(global(';'));
      expect(';', "';' after an element of the tuple global");
    }
    return GlobalValue::tuple(std::move(elems));
  }
  if (acceptWord("array")) {
    // "array float32(4,)", "array int64(2, 3)", "array Record(...)(2,)": the elements are not
    // printed; they come back as zeros of the right size.
    skipSpace();
    std::string dtype;
    const Type *dt = nullptr;
    if (text_.substr(pos_, 7) == "Record(") {
      size_t start = pos_;
      dt = recordSpelling();
      dtype = std::string(text_.substr(start, pos_ - start));
    } else {
      dtype = word();
      dt = types::scalarByName(dtype);
    }
    if (dtype.empty())
      fail("the dtype of the array global");
    expect('(', "'(' before the array's shape");
    std::vector<int64_t> shape;
    uint64_t count = 1;
    while (peek() != ')') {
      int64_t d = integer("an array dimension", 1 << 30);
      shape.push_back(d);
      count *= static_cast<uint64_t>(d);
      if (count > (uint64_t(1) << 30))
        failHere("the array global is too large to rebuild from text");
      if (!accept(','))
        break;
    }
    expect(')', "',' or ')' in the array's shape");
    int64_t itemSize = !dt                   ? 0
                       : isa<RecordType>(dt) ? cast<RecordType>(dt)->size()
                                             : cast<ScalarType>(dt)->byteSize();
    size_t bytes = static_cast<size_t>(count) * static_cast<size_t>(itemSize);
    return GlobalValue::array(dtype, std::move(shape), std::string(bytes, '\0'));
  }
  fail("a global (const, symbol, device function, kernel, python function, unsupported, "
       "missing, array, device array or tuple)");
}

// ---- operators ----

/// The enum value whose printed name is `text`, for an enum printed by `name` (which gives
/// "?" past the last value), or null.
template <typename E, typename NameFn>
std::optional<E> enumByName(std::string_view text, NameFn name) {
  for (int k = 0; k < 256; ++k) {
    const char *n = name(static_cast<E>(k));
    if (std::string_view(n) == "?")
      break;
    if (text == n)
      return static_cast<E>(k);
  }
  return std::nullopt;
}

// ---- functions ----

class FunctionParser {
public:
  FunctionParser(std::string_view text, const CalleeLookup &lookup) : lookup_(lookup) {
    int number = 0;
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos)
        end = text.size();
      std::string_view l = text.substr(start, end - start);
      if (!l.empty() && l.back() == '\r')
        l.remove_suffix(1);
      ++number;
      size_t first = l.find_first_not_of(" \t");
      if (first != std::string_view::npos && l[first] != ';')
        lines_.push_back({number, l});
      start = end + 1;
    }
  }

  std::unique_ptr<Function> parse() {
    collectFunctionIds();
    if (lines_.empty())
      syntaxError(1, "expected 'function <name>(...)', found an empty text");
    fn_ = std::make_unique<Function>();
    parseHeader(lines_.front());
    Block *current = nullptr;
    for (size_t k = 1; k < lines_.size(); ++k) {
      const Line &l = lines_[k];
      Cursor c(l.text, l.number, &functionIds_);
      if (c.acceptWord("var")) {
        parseVar(c, current != nullptr);
        continue;
      }
      c.setPos(0);
      if (isLabel(l.text)) {
        current = parseLabel(c);
        continue;
      }
      if (!current)
        c.failHere("an instruction before the first block label 'bbN:'");
      parseInstr(c, current);
    }
    if (fn_->returnType && fn_->vars.size() < fn_->argNames.size())
      syntaxError(lines_.front().number,
                  "a typed function lists every variable in 'var' lines, the " +
                      std::to_string(fn_->argNames.size()) + " parameters first");
    resolve();
    return std::move(fn_);
  }

private:
  struct Line {
    int number;
    std::string_view text;
  };
  struct PendingOperand {
    Instr *user;
    size_t index;
    int id;
    int line;
  };
  struct PendingBlock {
    Block **slot;
    int id;
    int line;
  };

  /// A first look at every Global line for the ids of user functions, so that a
  /// "Function(name)" type anywhere (var lines included) can be read. Lines that do not
  /// parse here are reported by the main pass, in order.
  void collectFunctionIds() {
    for (const Line &l : lines_) {
      try {
        Cursor c(l.text, l.number);
        if (c.peek() != '%')
          continue;
        c.valueRef();
        if (!c.accept('=') || !c.acceptWord("Global"))
          continue;
        c.name("a name");
        if (!c.accept('['))
          continue;
        GlobalValue g = c.global(']');
        if (g.kind != GlobalValue::Kind::DeviceFunction && g.kind != GlobalValue::Kind::Kernel)
          continue;
        auto [it, inserted] = functionIds_.emplace(g.path, g.functionId);
        if (!inserted && it->second != g.functionId)
          it->second = -1;
      } catch (const CompileError &) {
      }
    }
  }

  static bool isLabel(std::string_view text) {
    size_t first = text.find_first_not_of(" \t");
    size_t last = text.find_last_not_of(" \t");
    return text.substr(first, 2) == "bb" && text[last] == ':';
  }

  void parseHeader(const Line &l) {
    Cursor c(l.text, l.number, &functionIds_);
    if (!c.acceptWord("function"))
      c.fail("'function <name>(...)' on the first line");
    fn_->name = c.name("the function's name");
    fn_->qualname = fn_->name;
    c.expect('(', "'(' after the function's name");
    std::vector<const Type *> argTypes;
    bool anyType = false;
    if (!c.accept(')')) {
      do {
        std::string arg = c.name("a parameter name");
        for (const std::string &a : fn_->argNames)
          if (a == arg)
            c.failHere("parameter '" + arg + "' appears twice");
        fn_->argNames.push_back(arg);
        const Type *t = nullptr;
        if (c.accept(':')) {
          t = c.type();
          anyType = true;
        }
        argTypes.push_back(t);
      } while (c.accept(','));
      c.expect(')', "',' or ')' in the parameter list");
    }
    if (c.acceptWord("kernel"))
      fn_->kind = FunctionKind::Kernel;
    else if (c.acceptWord("device"))
      fn_->kind = FunctionKind::Device;
    else
      c.fail("'kernel' or 'device' after the parameters");
    fn_->alwaysInline = c.acceptWord("alwaysinline");
    if (c.acceptText("->")) {
      fn_->returnType = c.type();
      fn_->returnTypeDeclared = c.acceptWord("declared");
    }
    if (!c.atEnd())
      c.fail("the end of the header line");
    if (anyType)
      fn_->argTypes = std::move(argTypes);
    // Untyped text lists no variables: the parameters are the first ones. Typed text lists
    // them in 'var' lines, checked against the parameters there.
    if (!fn_->returnType)
      for (const std::string &a : fn_->argNames)
        fn_->vars.push_back(Variable{a, nullptr, true});
  }

  void parseVar(Cursor &c, bool afterBlocks) {
    if (afterBlocks)
      c.failHere("'var' lines must come before the first block");
    if (!fn_->returnType)
      c.failHere("'var' lines belong to typed text, whose header ends in '-> <return type>'");
    std::string name = c.name("a variable name after 'var'");
    size_t index = fn_->vars.size();
    if (index < fn_->argNames.size() && name != fn_->argNames[index])
      c.failHere("variable " + std::to_string(index) + " must be parameter '" +
                 fn_->argNames[index] + "', not '" + name + "'");
    if (varByName_.count(name))
      c.failHere("variable '" + name + "' is listed twice");
    c.expect(':', "':' after the variable's name");
    const Type *t = c.accept('?') ? nullptr : c.type();
    if (!c.atEnd())
      c.fail("the end of the 'var' line");
    varByName_[name] = static_cast<int>(index);
    auto [base, version] = parseVariableName(name);
    fn_->vars.push_back(Variable{base, t, index < fn_->argNames.size(), version});
  }

  Block *parseLabel(Cursor &c) {
    int id = c.blockRef();
    c.expect(':', "':' after the block label");
    if (!c.atEnd())
      c.fail("the end of the line after the block label");
    if (blocks_.count(id))
      c.failHere("block bb" + std::to_string(id) + " is defined twice");
    Block *b = fn_->addBlock();
    b->id = id;
    blocks_[id] = b;
    return b;
  }

  /// The index of variable `name` (as printed: "v.2" is version 2 of v): in typed text one of
  /// the 'var' lines, else created on first mention.
  int variable(Cursor &c, const std::string &name) {
    if (!fn_->returnType) {
      auto [base, version] = parseVariableName(name);
      return fn_->varIndex(base, version);
    }
    auto it = varByName_.find(name);
    if (it == varByName_.end())
      c.failHere("variable '" + name + "' is not among the 'var' lines");
    return it->second;
  }

  /// An operand "%N", wired to the value once every line is read.
  Instr *operand(Cursor &c) {
    int id = c.valueRef();
    pendingOperands_.push_back({nullptr, 0, id, c.line()});
    return &placeholder_;
  }

  /// Records the operands just read (the last `n` pending entries) as operands of `user`.
  void bindOperands(Instr *user, size_t n) {
    size_t first = pendingOperands_.size() - n;
    for (size_t k = 0; k < n; ++k) {
      pendingOperands_[first + k].user = user;
      pendingOperands_[first + k].index = k;
    }
  }

  void blockTarget(Cursor &c, Block **slot) {
    pendingBlocks_.push_back({slot, c.blockRef(), c.line()});
  }

  std::unique_ptr<Instr> parseBody(Cursor &c, Opcode op);
  void parseInstr(Cursor &c, Block *block);
  void resolve();

  const CalleeLookup &lookup_;
  std::vector<Line> lines_;
  FunctionIds functionIds_;
  std::unique_ptr<Function> fn_;
  std::unordered_map<std::string, int> varByName_;
  std::unordered_map<int, Block *> blocks_;
  std::unordered_map<int, std::pair<Instr *, int>> values_; ///< id → (instr, line)
  std::vector<PendingOperand> pendingOperands_;
  std::vector<PendingBlock> pendingBlocks_;
  /// Stands in for operands until resolve() wires them (Return needs a non-null value).
  ConstInstr placeholder_{ConstValue::none()};
};

std::unique_ptr<Instr> FunctionParser::parseBody(Cursor &c, Opcode op) {
  size_t before = pendingOperands_.size();
  std::unique_ptr<Instr> i;
  switch (op) {
  case Opcode::Const:
    i = std::make_unique<ConstInstr>(c.constant());
    break;
  case Opcode::Global: {
    std::string name = c.name("the global's name");
    c.expect('[', "'[' before the global's value");
    GlobalValue g = c.global(']');
    c.expect(']', "']' after the global's value");
    i = std::make_unique<GlobalInstr>(name, std::move(g));
    break;
  }
  case Opcode::Arg: {
    int index = static_cast<int>(c.integer("the argument index", std::numeric_limits<int>::max()));
    if (c.accept('(')) {
      std::string name = c.name("the parameter's name");
      if (static_cast<size_t>(index) >= fn_->argNames.size() || fn_->argNames[index] != name)
        c.failHere("Arg " + std::to_string(index) + " is not parameter '" + name + "'");
      c.expect(')', "')' after the parameter's name");
    }
    i = std::make_unique<ArgInstr>(index);
    break;
  }
  case Opcode::LoadLocal:
    i = std::make_unique<LoadLocalInstr>(variable(c, c.name("a variable name")));
    break;
  case Opcode::StoreLocal: {
    int var = variable(c, c.name("a variable name"));
    c.expect(',', "',' after the variable");
    i = std::make_unique<StoreLocalInstr>(var, operand(c));
    break;
  }
  case Opcode::BinOp: {
    c.skipSpace();
    size_t start = c.pos();
    std::string tok = c.token();
    bool inplace = !tok.empty() && tok.back() == '=';
    if (inplace)
      tok.pop_back();
    auto bop = enumByName<BinaryOp>(tok, binaryOpName);
    if (!bop) {
      c.setPos(start);
      c.fail("a binary operator (+, -, *, /, //, %, **, <<, >>, &, |, ^, @, or one of them "
             "followed by '=')");
    }
    Instr *l = operand(c);
    c.expect(',', "',' between the operands");
    i = std::make_unique<BinOpInstr>(*bop, l, operand(c), inplace);
    break;
  }
  case Opcode::UnaryOp: {
    c.skipSpace();
    size_t start = c.pos();
    auto uop = enumByName<UnaryOpKind>(c.token(), unaryOpName);
    if (!uop) {
      c.setPos(start);
      c.fail("a unary operator (-, +, not, ~)");
    }
    i = std::make_unique<UnaryOpInstr>(*uop, operand(c));
    break;
  }
  case Opcode::Compare: {
    c.skipSpace();
    size_t start = c.pos();
    std::string tok = c.token();
    if (tok == "is" && c.acceptWord("not"))
      tok = "is not";
    else if (tok == "not" && c.acceptWord("in"))
      tok = "not in";
    auto cop = enumByName<CmpOp>(tok, cmpOpName);
    if (!cop) {
      c.setPos(start);
      c.fail("a comparison (<, <=, ==, !=, >, >=, is, is not, in, not in)");
    }
    Instr *l = operand(c);
    c.expect(',', "',' between the operands");
    i = std::make_unique<CompareInstr>(*cop, l, operand(c));
    break;
  }
  case Opcode::Truth:
    i = std::make_unique<TruthInstr>(operand(c));
    break;
  case Opcode::GetAttr: {
    Instr *v = operand(c);
    c.expect('.', "'.attribute' after the operand");
    if (c.peekRaw() == ' ' || c.peekRaw() == '\t')
      c.fail("an attribute name right after '.'");
    i = std::make_unique<GetAttrInstr>(v, c.name("an attribute name"));
    break;
  }
  case Opcode::GetItem: {
    Instr *v = operand(c);
    c.expect('[', "'[' after the indexed operand");
    Instr *idx = operand(c);
    c.expect(']', "']' after the index");
    i = std::make_unique<GetItemInstr>(v, idx);
    break;
  }
  case Opcode::SetItem: {
    Instr *v = operand(c);
    c.expect('[', "'[' after the indexed operand");
    Instr *idx = operand(c);
    c.expect(']', "']' after the index");
    c.expect('=', "'=' before the stored value");
    i = std::make_unique<SetItemInstr>(v, idx, operand(c));
    break;
  }
  case Opcode::SetAttr: {
    Instr *v = operand(c);
    c.expect('.', "'.attribute' after the operand");
    if (c.peekRaw() == ' ' || c.peekRaw() == '\t')
      c.fail("an attribute name right after '.'");
    std::string attr = c.name("an attribute name");
    c.expect('=', "'=' before the stored value");
    i = std::make_unique<SetAttrInstr>(v, std::move(attr), operand(c));
    break;
  }
  case Opcode::Call: { // %f(%a, k=%b), or %f(*%t, k=%b): the positional arguments are one tuple
    std::vector<Instr *> ops{operand(c)};
    std::vector<std::string> kw;
    bool star = false;
    c.expect('(', "'(' after the callee");
    if (!c.accept(')')) {
      do {
        c.skipSpace();
        if (ops.size() == 1 && c.accept('*')) {
          star = true;
        } else if (c.peekRaw() != '%') {
          kw.push_back(c.name("an argument '%N' or 'name=%N'"));
          c.expect('=', "'=' after the keyword");
        } else if (!kw.empty()) {
          c.fail("a keyword argument 'name=%N' (keywords come last)");
        } else if (star) {
          c.fail("a keyword argument 'name=%N' (a call with *args has no other positional "
                 "argument)");
        }
        ops.push_back(operand(c));
      } while (c.accept(','));
      c.expect(')', "',' or ')' in the argument list");
    }
    auto call = std::make_unique<CallInstr>(std::move(ops), std::move(kw));
    call->starArgs = star;
    i = std::move(call);
    break;
  }
  case Opcode::BuildTuple: { // (%a, *%t), or the list display [%a, *%t]
    std::vector<Instr *> elems;
    std::vector<bool> spread;
    bool list = c.accept('[');
    if (!list)
      c.expect('(', "'(' or '[' after BuildTuple");
    const char close = list ? ']' : ')';
    if (!c.accept(close)) {
      do {
        c.skipSpace();
        spread.push_back(c.accept('*'));
        elems.push_back(operand(c));
      } while (c.accept(','));
      c.expect(close, list ? "',' or ']' in the list" : "',' or ')' in the tuple");
    }
    if (std::find(spread.begin(), spread.end(), true) == spread.end())
      spread.clear();
    i = std::make_unique<BuildTupleInstr>(std::move(elems), std::move(spread), list);
    break;
  }
  case Opcode::TupleGet: {
    Instr *t = operand(c);
    c.expect(',', "',' after the tuple operand");
    int index = static_cast<int>(c.integer("the element index", std::numeric_limits<int>::max()));
    i = std::make_unique<TupleGetInstr>(t, index);
    break;
  }
  case Opcode::BuildSlice: {
    std::vector<Instr *> parts{operand(c)};
    c.expect(',', "',' between the slice's parts");
    parts.push_back(operand(c));
    if (c.accept(','))
      parts.push_back(operand(c));
    i = std::make_unique<BuildSliceInstr>(std::move(parts));
    break;
  }
  case Opcode::GetIter:
    i = std::make_unique<GetIterInstr>(operand(c));
    break;
  case Opcode::IterValid:
    i = std::make_unique<IterValidInstr>(operand(c));
    break;
  case Opcode::IterNext:
    i = std::make_unique<IterNextInstr>(operand(c));
    break;
  case Opcode::Jump: {
    auto j = std::make_unique<JumpInstr>(nullptr);
    blockTarget(c, &j->target);
    i = std::move(j);
    break;
  }
  case Opcode::Branch: {
    auto b = std::make_unique<BranchInstr>(operand(c), nullptr, nullptr);
    c.expect(',', "',' after the condition");
    blockTarget(c, &b->ifTrue);
    c.expect(',', "',' between the targets");
    blockTarget(c, &b->ifFalse);
    i = std::move(b);
    break;
  }
  case Opcode::Return: {
    Instr *v = c.peek() == '%' ? operand(c) : nullptr;
    i = std::make_unique<ReturnInstr>(v);
    break;
  }
  case Opcode::Raise: {
    // "Raise ValueError" / "Raise ValueError('msg', 2)": a builtin exception class.
    RaisedException e;
    e.cls = GlobalValue::exceptionClass(c.name("the exception class's name"), 0);
    if (c.accept('(')) {
      while (c.peek() != ')') {
        e.args.push_back(c.constant());
        if (!c.accept(','))
          break;
      }
      c.expect(')', "',' or ')' after the exception's arguments");
    }
    i = std::make_unique<RaiseInstr>(std::move(e));
    break;
  }
  }
  bindOperands(i.get(), pendingOperands_.size() - before);
  return i;
}

void FunctionParser::parseInstr(Cursor &c, Block *block) {
  int id = -1;
  if (c.peek() == '%') {
    id = c.valueRef();
    c.expect('=', "'=' after the value number");
  }
  size_t opStart = c.pos();
  std::string opName = c.word();
  auto op = enumByName<Opcode>(opName, opcodeName);
  if (!op) {
    c.setPos(opStart);
    c.fail("an instruction (Const, Global, Arg, LoadLocal, StoreLocal, BinOp, UnaryOp, "
           "Compare, Truth, GetAttr, GetItem, SetItem, SetAttr, Call, BuildTuple, TupleGet, "
           "BuildSlice, "
           "GetIter, IterValid, IterNext, Jump, Branch, Return)");
  }
  if (producesValue(*op) && id < 0)
    c.failHere("expected '%N = ' before " + opName + ", which produces a value");
  if (!producesValue(*op) && id >= 0)
    c.failHere(opName + " produces no value: remove '%" + std::to_string(id) + " ='");
  if (id >= 0) {
    auto [it, inserted] = values_.emplace(id, std::make_pair(nullptr, c.line()));
    if (!inserted)
      c.failHere("value %" + std::to_string(id) + " is defined twice (first on line " +
                 std::to_string(it->second.second) + ")");
  }

  std::unique_ptr<Instr> parsed = parseBody(c, *op);
  Instr *i = block->append(std::move(parsed));
  if (id >= 0) {
    i->id = id;
    values_[id].first = i;
  }

  // The suffixes, in the order print writes them: " : type", " {builtin}", " -> callee",
  // "; line N".
  if (c.accept(':'))
    i->type = c.type();
  if (c.accept('{')) {
    std::string path = c.until('}');
    BuiltinId b = builtinByPath(path);
    if (b == BuiltinId::None)
      c.failHere("unknown builtin '{" + path + "}'");
    c.expect('}', "'}' after the builtin's path");
    i->builtin = b;
  }
  if (c.acceptText("->")) {
    auto *call = dyn_cast<CallInstr>(i);
    if (!call)
      c.failHere("'-> callee' belongs to Call, not " + opName);
    std::string callee = c.name("the callee's name after '->'");
    if (lookup_) {
      call->calleeFunction = lookup_(callee);
      if (!call->calleeFunction)
        c.failHere("the callee lookup does not know function '" + callee + "'");
    }
  }
  if (c.accept(';')) {
    c.expectWord("line");
    i->loc.line = static_cast<int>(c.integer("a line number", std::numeric_limits<int>::max()));
  }
  if (!c.atEnd())
    c.fail("the end of the instruction (or ' : type', ' {builtin}', ' -> callee', '; line N')");
}

void FunctionParser::resolve() {
  for (const PendingOperand &p : pendingOperands_) {
    auto it = values_.find(p.id);
    if (it == values_.end())
      syntaxError(p.line, "use of undefined value %" + std::to_string(p.id));
    p.user->setOperand(p.index, it->second.first);
  }
  for (const PendingBlock &p : pendingBlocks_) {
    auto it = blocks_.find(p.id);
    if (it == blocks_.end())
      syntaxError(p.line, "branch to undefined block bb" + std::to_string(p.id));
    *p.slot = it->second;
  }
  // Numbers for instructions without a value: the one after the previous instruction's, as
  // the frontend numbers them, unless the text uses it; then one above every number.
  int maxId = -1;
  for (const auto &[id, v] : values_)
    maxId = std::max(maxId, id);
  std::unordered_set<int> used;
  for (const auto &[id, v] : values_)
    used.insert(id);
  int previous = -1;
  for (const auto &b : fn_->blocks)
    for (const auto &ip : b->instrs) {
      Instr *i = ip.get();
      if (producesValue(i->op())) {
        previous = i->id;
        continue;
      }
      int id = previous + 1;
      if (used.count(id))
        id = ++maxId;
      maxId = std::max(maxId, id);
      used.insert(id);
      i->id = id;
      previous = id;
      if (fn_->returnType && !i->type)
        i->type = types::void_(); // typing gives every instruction without a value void
    }
  // Later appends (Block::append) must not reuse a number of the text.
  while (fn_->nextValueId() < maxId) {
  }
}

} // namespace

std::unique_ptr<Function> parseFunction(std::string_view text, const CalleeLookup &lookupCallee) {
  return FunctionParser(text, lookupCallee).parse();
}

namespace {

/// Runs `read` on a one-line `text` and checks that it consumed all of it.
template <typename T, typename Read>
T parseWhole(std::string_view text, const char *what, Read read) {
  if (text.find('\n') != std::string_view::npos)
    syntaxError(1, std::string("expected ") + what + " on one line");
  Cursor c(text, 1);
  T v = read(c);
  if (!c.atEnd())
    c.fail(std::string("the end of the ") + what);
  return v;
}

} // namespace

const Type *parseTypeText(std::string_view text) {
  return parseWhole<const Type *>(text, "type", [](Cursor &c) { return c.type(); });
}

ConstValue parseConstText(std::string_view text) {
  return parseWhole<ConstValue>(text, "constant", [](Cursor &c) { return c.constant(); });
}

GlobalValue parseGlobalText(std::string_view text) {
  return parseWhole<GlobalValue>(text, "global", [](Cursor &c) { return c.global('\0'); });
}

} // namespace ptxjit::ir
