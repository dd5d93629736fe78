// Parsing of Numba signature strings: "void(float32, float32[:], float32[::1])",
// "(float32[:], int64)", "float64[:, ::1]", "(int32, int32) -> int32" (the way Numba prints a
// signature), tuples as "Tuple((int32, float64))" and "UniTuple(int32, 2)", raw pointers as
// "int32*" / "void*" (Numba's CPointer(int32) and voidptr print so), "CPointer(int32)", "voidptr",
// records in Numba's spelling "Record(a[type=float64;offset=0];8;False)" (and arrays of them,
// "Record(...)[:]"), datetimes "datetime64[D]", "timedelta64[s]" (and arrays "datetime64[D][:]").
#include "ir/NamedTuples.h"
#include "ir/typing/Typing.h"

#include <cctype>

namespace ptxjit::ir {
namespace {

const char *kSignatureFile = "<signature>";

class SigParser {
public:
  explicit SigParser(const std::string &text) : text_(text) {}

  [[noreturn]] void error(const std::string &reason) const {
    raiseDiag(DiagCode::BadSignature, kSignatureFile, SourceLoc{}, {text_, reason});
  }

  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool atEnd() {
    skipSpace();
    return pos_ >= text_.size();
  }
  char peek() {
    skipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool accept(char c) {
    if (peek() != c)
      return false;
    ++pos_;
    return true;
  }
  void expect(char c, const std::string &what) {
    if (!accept(c))
      error(std::string("expected ") + what + " at " + where());
  }
  /// "position N ('rest')" or "end of text", for messages.
  std::string where() {
    skipSpace();
    if (pos_ >= text_.size())
      return "end of text";
    return "position " + std::to_string(pos_ + 1) + " ('" + text_.substr(pos_) + "')";
  }

  std::string identifier() {
    skipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    return text_.substr(start, pos_ - start);
  }

  /// A decimal count of at most `maxDigits` digits; an error naming `what` otherwise.
  size_t count(size_t maxDigits, const std::string &what) {
    skipSpace();
    size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
    if (start == pos_ || pos_ - start > maxDigits)
      error("expected " + what + " at " + where());
    return std::stoul(text_.substr(start, pos_ - start));
  }

  /// "(item, item, ...)" (a trailing comma allowed), each item read by `item`; `what` names the
  /// list in messages.
  template <class Item> void list(const std::string &what, Item item) {
    expect('(', "'(' opening " + what);
    if (accept(')'))
      return;
    do {
      if (peek() == ')')
        break; // trailing comma, as in (int32,)
      item();
    } while (accept(','));
    expect(')', "',' or ')' in " + what);
  }

  /// "(t, t, ...)": types (not void).
  std::vector<const Type *> typeList(const std::string &what) {
    std::vector<const Type *> types;
    list(what, [&] { types.push_back(type(false)); });
    return types;
  }

  /// A type: a scalar name, optionally followed by array dimensions "[:, ::1]"; "void"/"none"
  /// only when `allowVoid`.
  const Type *type(bool allowVoid) {
    skipSpace();
    if (peek() == '[') { // "[char x 12][::1]": an array of NumPy S12 (Numba's CharSeq)
      const Type *t = nullptr;
      try {
        t = types::parseRecordSpelling(text_, pos_);
      } catch (const std::invalid_argument &e) {
        error(std::string("malformed type: ") + e.what());
      }
      if (peek() != '[')
        error("a string type such as " + t->str() +
              " is only the element type of an array or a record field");
      return arrayDims(t);
    }
    std::string name = identifier();
    if (name.empty())
      error("expected a type name at " + where());
    if (name == "Tuple" || name == "UniTuple") {
      const Type *t = tupleType(name == "UniTuple");
      if (peek() == '[')
        error("a tuple cannot be an array element type");
      return t;
    }
    if (name == "NamedTuple") {
      const Type *t = namedTupleType();
      if (peek() == '[')
        error("a tuple cannot be an array element type");
      return t;
    }
    if (name == "Array" || name == "array") {
      const Type *t = arrayConstructor(name == "Array");
      if (peek() == '[')
        error("an array cannot be an array element type");
      return t;
    }
    if (name == "Record" || name == "nestedarray") { // a record: Numba's spelling (Types.h)
      pos_ -= name.size();
      const Type *t = nullptr;
      try {
        t = types::parseRecordSpelling(text_, pos_);
      } catch (const std::invalid_argument &e) {
        error(std::string("malformed record type: ") + e.what());
      }
      if (isa<NestedArrayType>(t))
        error("a nested array type is only a record field's type");
      if (peek() != '[')
        return t;
      return arrayDims(t);
    }
    if (name == "voidptr" || (name == "void" && peek() == '*')) {
      accept('*');
      return pointerSuffix(types::voidPointer());
    }
    if (name == "CPointer") {
      expect('(', "'(' after CPointer");
      std::string elem = identifier();
      const ScalarType *pointee = types::scalarByName(elem);
      if (!pointee)
        error("CPointer takes a scalar element type, not '" + elem + "'");
      expect(')', "')' closing CPointer(type)");
      return pointerSuffix(types::pointer(pointee));
    }
    if (name == "void" || name == "none") {
      if (!allowVoid)
        error("'" + name + "' is only valid as a return type");
      if (peek() == '[')
        error("'" + name + "' cannot be an array element type");
      return types::void_();
    }
    if ((name == "datetime64" || name == "timedelta64" || name == "M8" || name == "m8") &&
        peek() == '[') {
      // "datetime64[D]" (a unit), then maybe array dimensions: "datetime64[D][:]".
      size_t save = pos_;
      accept('[');
      if (peek() != ':') {
        std::string unit = identifier();
        expect(']', "']' closing the unit of " + name);
        name += "[" + unit + "]";
        if (!types::scalarByName(name))
          error("unknown unit '" + unit + "' of " + name.substr(0, name.find('[')) +
                " (Y, M, W, D, h, m, s, ms, us, ns, ps, fs or as)");
      } else {
        pos_ = save;
      }
    }
    const ScalarType *scalar = types::scalarByName(name);
    if (!scalar)
      error("unknown type name '" + name + "'");
    if (accept('*'))
      return pointerSuffix(types::pointer(scalar));
    if (peek() != '[')
      return scalar;
    return arrayDims(scalar);
  }

  /// After a pointer type: pointers to pointers and arrays of pointers are not supported.
  const Type *pointerSuffix(const PointerType *ptr) {
    if (peek() == '*')
      error("pointers to pointers are not supported ('" + ptr->str() + "*')");
    if (peek() == '[')
      error("a pointer cannot be an array element type");
    return ptr;
  }

  /// After "Tuple": "((t, t, ...))"; after "UniTuple": "(t, n)".
  const Type *tupleType(bool uniform) {
    expect('(', uniform ? "'(' after UniTuple" : "'(' after Tuple");
    std::vector<const Type *> elems;
    if (uniform) {
      const Type *elem = type(false);
      expect(',', "',' and a count in UniTuple(type, count)");
      elems.assign(count(5, "a count (at most 99999) in UniTuple(type, count)"), elem);
    } else {
      elems = typeList("the element types of Tuple((t, ...))");
    }
    expect(')', uniform ? "')' closing UniTuple(type, count)" : "')' closing Tuple((t, ...))");
    return types::tuple(elems);
  }

  /// After "NamedTuple": ptxjit's spelling of a namedtuple class's type, "(ClassName, (field,
  /// ...), (type, ...))", which ptxjit.types writes for Numba's NamedTuple and NamedUniTuple.
  const Type *namedTupleType() {
    const std::string form = "NamedTuple(Class, (field, ...), (type, ...))";
    expect('(', "'(' in " + form);
    std::string cls = identifier();
    if (cls.empty())
      error("expected a class name in " + form + " at " + where());
    expect(',', "',' after the class name in " + form);
    std::vector<std::string> fields;
    list("the field names of " + form, [&] {
      fields.push_back(identifier());
      if (fields.back().empty())
        error("expected a field name in " + form + " at " + where());
    });
    expect(',', "',' before the element types in " + form);
    std::vector<const Type *> elems = typeList("the element types of " + form);
    expect(')', "')' closing " + form);
    if (fields.size() != elems.size())
      error("NamedTuple " + cls + " has " + std::to_string(fields.size()) + " field names and " +
            std::to_string(elems.size()) + " element types");
    return types::namedTuple(cls, fields, elems);
  }

  /// After "Array": numba's constructor "(dtype, ndim, 'layout'[, readonly=True|False])"; after
  /// "array": the way numba prints an array type, "(dtype, Nd, layout)".
  const Type *arrayConstructor(bool constructor) {
    const std::string form =
        constructor ? "Array(dtype, ndim, 'layout')" : "array(dtype, Nd, layout)";
    expect('(', "'(' in " + form);
    const Type *dtype = type(false);
    if (isa<ArrayType>(dtype) || isa<TupleType>(dtype) || isa<PointerType>(dtype))
      error("the element type of " + form + " must be a scalar or a record");
    expect(',', "',' and the number of dimensions in " + form);
    size_t ndim = count(2, "the number of dimensions in " + form);
    if (ndim < 1 || ndim > 32)
      error("an array has 1 to 32 dimensions, not " + std::to_string(ndim));
    if (!constructor)
      expect('d', "'d' after the number of dimensions in array(dtype, Nd, layout)");
    expect(',', "',' and the layout in " + form);
    char quote = constructor ? peek() : '\0';
    if (constructor && quote != '\'' && quote != '"')
      error("expected a quoted layout ('C', 'F' or 'A') in " + form + " at " + where());
    if (constructor)
      ++pos_;
    std::string layoutName = identifier();
    if (constructor && (pos_ >= text_.size() || text_[pos_++] != quote))
      error("expected the closing quote of the layout at " + where());
    Layout layout = layoutName == "C" ? Layout::C : layoutName == "F" ? Layout::F : Layout::A;
    if (layoutName != "C" && layoutName != "F" && layoutName != "A")
      error("the layout of an array is 'C', 'F' or 'A', not '" + layoutName + "'");
    bool readonly = false;
    if (constructor && accept(',')) {
      if (identifier() != "readonly" || !accept('='))
        error("expected readonly=True or readonly=False in Array(...) at " + where());
      std::string value = identifier();
      if (value != "True" && value != "False")
        error("readonly is True or False, not '" + value + "'");
      readonly = value == "True";
    }
    expect(')', "')' closing " + form);
    return types::array(dtype, static_cast<int>(ndim), layout, readonly);
  }

  /// "-> type" after an argument list, the way Numba prints signatures; nullptr when absent.
  const Type *arrowReturn() {
    if (peek() != '-')
      return nullptr;
    ++pos_;
    if (pos_ >= text_.size() || text_[pos_] != '>')
      error("expected '->' at " + where());
    ++pos_;
    return type(true);
  }

  /// "[:]", "[::1]", "[:, ::1]", "[::1, :]", "[:,:,:]".
  const Type *arrayDims(const Type *dtype) {
    expect('[', "'['");
    std::vector<bool> contiguous;
    do {
      expect(':', "':' or '::1' in array dimensions");
      bool contig = false;
      if (accept(':')) {
        skipSpace();
        if (pos_ < text_.size() && text_[pos_] == '1') {
          ++pos_;
          contig = true;
        } else {
          error("expected '1' after '::' at " + where() + " (only unit steps are allowed)");
        }
      }
      contiguous.push_back(contig);
    } while (accept(','));
    expect(']', "']' closing the array dimensions");
    int ndim = static_cast<int>(contiguous.size());
    if (ndim > 32)
      error("too many array dimensions");
    int ncontig = 0;
    for (bool c : contiguous)
      ncontig += c;
    Layout layout = Layout::A;
    if (ncontig == 1 && contiguous.back())
      layout = Layout::C;
    else if (ncontig == 1 && contiguous.front())
      layout = Layout::F;
    else if (ncontig != 0)
      error("only the first (F) or the last (C) dimension may be '::1'");
    return types::array(dtype, ndim, layout);
  }

  /// "(t, t, ...)" after the return type; a trailing comma is allowed.
  std::vector<const Type *> argList() { return typeList("the argument list"); }

  void finish() {
    if (!atEnd())
      error("unexpected text at " + where());
  }

private:
  const std::string &text_;
  size_t pos_ = 0;
};

} // namespace

std::string Signature::str() const {
  std::string s = "(";
  for (size_t k = 0; k < args.size(); ++k) {
    if (k)
      s += ", ";
    s += args[k] ? args[k]->str() : "?";
  }
  s += ")";
  if (returnType)
    s += " -> " + returnType->str();
  return s;
}

const Type *parseType(const std::string &text) {
  SigParser p(text);
  if (p.atEnd())
    p.error("empty type");
  const Type *t = p.type(true);
  p.finish();
  return t;
}

Signature parseSignature(const std::string &text) {
  SigParser p(text);
  if (p.atEnd())
    p.error("empty signature");
  Signature sig;
  bool prefixReturn = p.peek() != '(';
  if (prefixReturn)
    sig.returnType = p.type(true);
  sig.args = p.argList();
  if (const Type *ret = p.arrowReturn()) {
    if (prefixReturn)
      p.error("a signature names its return type once: 'ret(args)' or '(args) -> ret'");
    sig.returnType = ret;
  }
  p.finish();
  return sig;
}

} // namespace ptxjit::ir
