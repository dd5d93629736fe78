"""Numba-style type objects: ``float32``, ``float32[:]``, ``float32[:, ::1]``, ``void(float32)``.

They describe kernel signatures (``@cuda.jit(void(float32, float32[:]))``) and are what
``kernel.signatures`` holds. Each type prints with Numba's spelling (``array(float32, 1d, C)``)
and knows the signature text that the compiler parses (``float32[::1]``). Scalar types used
inside a kernel (``float32(x)``) are conversions; called from Python with a value they convert
it like the NumPy scalar type of the same name.
"""

__all__ = [
    "Type", "Scalar", "Number", "Integer", "Float", "Complex", "Boolean", "NoneType", "Array",
    "BaseTuple", "UniTuple", "Tuple", "NamedUniTuple", "NamedTuple", "Signature", "as_type",
    "as_signature",
    "CPointer", "RawPointer", "voidptr", "IntegerLiteral", "Literal", "literal", "Record",
    "NestedArray", "from_dtype",
    "CharSeq", "UnicodeCharSeq",
    "NPDatetime", "NPTimedelta",
    "void", "none", "boolean", "bool_", "b1",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "intp", "uintp", "intc", "uintc", "byte",
    "char", "uchar", "short", "ushort", "int_", "uint", "long_", "ulong",
    "longlong", "ulonglong", "float16", "float32", "float64", "f2", "f4", "f8", "half",
    "float_", "double", "Bfloat16", "bfloat16",
    "complex64", "complex128", "c8", "c16",
]


class _TypeClass(type):
    """The class of ptxjit's type classes: ``isinstance(t, types.Array)`` also holds for Numba's
    own type objects that map onto a ptxjit Array (see :func:`as_type`), so that half-ported
    programs testing Numba types against ``ptxjit.types`` classes keep working."""

    def __instancecheck__(cls, obj):
        if type.__instancecheck__(cls, obj):
            return True
        if not _is_numba_type(obj):
            return False
        try:
            mapped = as_type(obj)
        except TypeError:
            return False
        return type.__instancecheck__(cls, mapped)


class Type(metaclass=_TypeClass):
    """Base of all type objects; equal when they print the same."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        if _is_numba_type(other):
            try:
                other = as_type(other)
            except TypeError:
                return False
        return isinstance(other, Type) and type(self) is type(other) and self.name == other.name

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((type(self).__name__, self.name))

    def __repr__(self):
        return self.name

    __str__ = __repr__

    @property
    def key(self):
        """What equality and hashing compare (Numba's ``Type.key``): the name here."""
        return self.name

    def is_precise(self):
        """True: every ptxjit type object is a complete type (Numba's ``Type.is_precise``)."""
        return True

    @property
    def _sig_text(self):
        raise TypeError(f"type {self.name} cannot appear in a kernel signature")

    def __call__(self, *args):
        if all(isinstance(a, Type) or _is_numba_type(a) for a in args):
            # as_type names a Numba type with no ptxjit equivalent (CPointer, Record, ...)
            return Signature(self, [as_type(a) for a in args])
        raise TypeError(f"{self.name} is not callable with values")


class NoneType(Type):
    """``void`` / ``none``: the return type of kernels."""

    __slots__ = ()

    @property
    def _sig_text(self):
        return "void"


class Scalar(Type):
    """bool, int8..int64, uint8..uint64, float16, float32, float64, complex64, complex128."""

    __slots__ = ("_ptxjit_symbol", "kind", "bitwidth")

    def __init__(self, name, kind, bitwidth):
        super().__init__(name)
        self.kind = kind          # 'b', 'i', 'u', 'f', 'c'
        self.bitwidth = bitwidth
        # A type object read as a global by a kernel is the NumPy type of the same name.
        self._ptxjit_symbol = "numpy." + name

    @property
    def _sig_text(self):
        return self.name

    @property
    def signed(self):
        return self.kind == "i"

    def __getitem__(self, item):
        return _array_of(self, item)

    def __call__(self, *args):
        if len(args) == 1 and not isinstance(args[0], Type):
            return self.cast_python_value(args[0])
        return super().__call__(*args)

    def cast_python_value(self, value):
        import numpy as np

        return np.dtype(self.name).type(value)

    @property
    def dtype(self):
        import numpy as np

        return np.dtype(self.name)


# NumPy's datetime units (numba's npdatetime_helpers.DATETIME_UNITS); "" is the generic unit.
_DATE_UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as", "")


class _NPDatetimeBase(Scalar):
    """numpy.datetime64 / timedelta64 of one unit: int64 counts of the unit (NaT is the
    smallest int64). See docs/language.md."""

    __slots__ = ("unit",)
    type_name = None

    def __init__(self, unit=""):
        unit = "" if unit in (None, "generic") else str(unit)
        if unit not in _DATE_UNITS:
            raise ValueError(f"{self.type_name} has no unit {unit!r}; units are "
                             f"{', '.join(u for u in _DATE_UNITS if u)} (or '' for generic)")
        name = f"{self.type_name}[{unit}]" if unit else self.type_name
        super().__init__(name, "M" if self.type_name == "datetime64" else "m", 64)
        self.unit = unit

    def cast_python_value(self, value):
        import numpy as np

        cls = np.datetime64 if self.type_name == "datetime64" else np.timedelta64
        return cls(value, self.unit) if self.unit else cls(value)


class NPDatetime(_NPDatetimeBase):
    """Numba's ``types.NPDatetime(unit)``: ``numpy.datetime64`` of ``unit`` ('D', 's', ...),
    printed ``datetime64[D]``."""

    __slots__ = ()
    type_name = "datetime64"


class NPTimedelta(_NPDatetimeBase):
    """Numba's ``types.NPTimedelta(unit)``: ``numpy.timedelta64`` of ``unit``, printed
    ``timedelta64[s]``."""

    __slots__ = ()
    type_name = "timedelta64"


def _scalar_named(name):
    """The scalar type named ``name`` ("float32", "datetime64[D]", "m8[s]"), or None."""
    t = _SCALARS.get(name)
    if t is not None:
        return t
    base, _, rest = name.partition("[")
    unit = rest[:-1] if rest.endswith("]") else ("" if not rest else None)
    if unit is None or unit not in _DATE_UNITS:
        return None
    if base in ("datetime64", "M8"):
        return NPDatetime(unit)
    if base in ("timedelta64", "m8"):
        return NPTimedelta(unit)
    return None


def _array_of(dtype, item):
    """``dtype[:]``, ``dtype[:, ::1]``, ...: the array type the slices describe."""
    dims = item if isinstance(item, tuple) else (item,)
    if not 1 <= len(dims) <= 32 or not all(isinstance(d, slice) for d in dims):
        raise TypeError(f"{dtype.name}[...] takes 1 to 32 slices (':' or '::1'), got {item!r}")
    for d in dims:
        if d.start is not None or d.stop is not None or d.step not in (None, 1):
            raise TypeError(f"only ':' and '::1' are allowed in array types, got {d!r}")
    steps = [d.step for d in dims]
    if steps.count(1) > 1:
        raise TypeError("at most one dimension may be marked contiguous ('::1')")
    if steps[-1] == 1:
        layout = "C"
    elif steps[0] == 1 and len(dims) > 1:
        layout = "F"
    elif 1 in steps:
        raise TypeError("'::1' must mark the first or the last dimension")
    else:
        layout = "A"
    return Array(dtype, len(dims), layout)


class NestedArray(Type):
    """Numba's ``NestedArray``: an array field of a record, ``shape`` elements of a scalar
    ``dtype`` in C order (``('j', 'f4', (3, 2))``). Reading the field in a kernel gives an array
    view of the record's bytes."""

    __slots__ = ("dtype", "shape")

    def __init__(self, dtype, shape):
        dtype = _scalar_named(dtype) if isinstance(dtype, str) else as_type(dtype)
        if not isinstance(dtype, Scalar) or isinstance(dtype, IntegerLiteral):
            raise TypeError(f"a nested array's elements must be scalars, not {dtype!r}")
        shape = tuple(int(d) for d in shape)
        if not shape or any(d < 0 for d in shape):
            raise ValueError(f"a nested array needs dimensions >= 0, got {shape!r}")
        super().__init__(f"nestedarray({dtype.name}, {shape!r})")
        self.dtype = dtype
        self.shape = shape

    @property
    def ndim(self):
        return len(self.shape)


class _CharSeqBase(Type):
    """A fixed-length string element: :class:`CharSeq` or :class:`UnicodeCharSeq`."""

    __slots__ = ("count",)

    def __init__(self, count):
        count = int(count)
        if count < 1:
            raise ValueError(f"{type(self).__name__} needs a length >= 1, got {count}")
        super().__init__(f"[{self._spelling} x {count}]")
        self.count = count

    @property
    def _sig_text(self):
        return self.name

    def __getitem__(self, item):
        return _array_of(self, item)

    @property
    def dtype(self):
        """The NumPy dtype of these elements (``S12``, ``<U12``)."""
        import numpy as np
        return np.dtype(f"{self._np_kind}{self.count}")


class CharSeq(_CharSeqBase):
    """Numba's ``CharSeq``: an element of NumPy dtype ``S<count>`` (``count`` bytes), printed
    ``[char x count]``. Arrays and record fields of this type take bytes constants in kernels
    (``a[i] = b"abc"``), cut to the length or padded with zeros as NumPy assigns."""

    __slots__ = ()
    _spelling = "char"
    _np_kind = "S"


class UnicodeCharSeq(_CharSeqBase):
    """Numba's ``UnicodeCharSeq``: an element of NumPy dtype ``U<count>`` (``count`` UCS4 code
    points, four bytes each), printed ``[unichr x count]``. Arrays and record fields of this
    type take str constants in kernels (``a[i] = "abc"``)."""

    __slots__ = ()
    _spelling = "unichr"
    _np_kind = "U"


class Record(Type):
    """Numba's ``Record``: a NumPy structured dtype, its fields at byte offsets within ``size``
    bytes. ``Record(fields, size, aligned)`` takes Numba's arguments: ``fields`` a list of
    ``(name, {"type": t, "offset": n})``; usually it comes from :func:`from_dtype`. Printed as
    Numba prints it (``Record(a[type=float64;offset=0],b[type=int32;offset=8];16;True)``);
    ``rec[:]`` is the type of a 1-d array of these records, ``void(rec[:])`` a signature. As a
    global in a kernel it names the dtype (``cuda.local.array(4, rec)``)."""

    __slots__ = ("fields", "size", "aligned", "_ptxjit_symbol")

    def __init__(self, fields, size, aligned):
        norm = []
        for name, info in fields:
            t = info["type"] if isinstance(info, dict) else info[0]
            offset = info["offset"] if isinstance(info, dict) else info[1]
            t = _SCALARS.get(t) if isinstance(t, str) else as_type(t)
            if (not isinstance(t, (Scalar, NestedArray, Record, _CharSeqBase))
                    or isinstance(t, IntegerLiteral)):
                raise TypeError(f"record field {name!r} has type {t!r}: fields are scalars, "
                                f"nested arrays, strings or records")
            norm.append((str(name), t, int(offset)))
        norm.sort(key=lambda f: (f[2], f[0]))
        desc = ",".join(f"{n}[type={t.name};offset={o}]" for n, t, o in norm)
        super().__init__(f"Record({desc};{int(size)};{bool(aligned)})")
        self.fields = {n: (t, o) for n, t, o in norm}
        self.size = int(size)
        self.aligned = bool(aligned)
        self._ptxjit_symbol = "numpy." + self.name

    @property
    def _sig_text(self):
        return self.name

    def __getitem__(self, item):
        return _array_of(self, item)

    def __len__(self):
        return len(self.fields)

    def offset(self, key):
        """The byte offset of field ``key``."""
        return self.fields[key][1]

    def typeof(self, key):
        """The type of field ``key``."""
        return self.fields[key][0]

    @property
    def dtype(self):
        """The NumPy structured dtype of this record."""
        import numpy as np

        def np_of(t):
            if isinstance(t, (Record, _CharSeqBase)):
                return t.dtype
            if isinstance(t, NestedArray):
                return np.dtype((np.dtype(t.dtype.name), t.shape))
            return np.dtype(t.name)

        names = list(self.fields)
        return np.dtype({"names": names, "formats": [np_of(self.fields[n][0]) for n in names],
                         "offsets": [self.fields[n][1] for n in names], "itemsize": self.size,
                         "aligned": self.aligned})


def from_dtype(dtype):
    """The ptxjit type of NumPy dtype ``dtype`` (anything ``numpy.dtype()`` accepts), as
    ``numba.from_dtype``: a scalar type, or a :class:`Record` for a structured dtype (nested
    records and array fields included)."""
    import numpy as np

    dtype = np.dtype(dtype)
    if dtype.kind in "SU" and dtype.names is None:
        if dtype.kind == "U" and dtype.byteorder == ">":
            raise TypeError(f"dtype {dtype} (a big-endian string) has no ptxjit type")
        return CharSeq(dtype.itemsize) if dtype.kind == "S" else UnicodeCharSeq(dtype.itemsize // 4)
    if dtype.names is None:
        if dtype.subdtype is not None:
            raise TypeError(f"a subarray dtype {dtype} is only a record field's type")
        if dtype.kind in "Mm" and dtype.byteorder != ">":
            unit, count = np.datetime_data(dtype)
            if count != 1:
                raise TypeError(f"dtype {dtype}: datetime64 and timedelta64 in multiples of a "
                                f"unit have no ptxjit type (numba does not support them either)")
            return (NPDatetime if dtype.kind == "M" else NPTimedelta)(unit)
        if dtype.byteorder == ">" or dtype.name not in _SCALARS:
            raise TypeError(f"dtype {dtype} has no ptxjit type")
        return _SCALARS[dtype.name]
    fields = []
    for name in dtype.names:
        sub, offset = dtype.fields[name][:2]
        if sub.subdtype is not None:
            base, shape = sub.subdtype
            t = NestedArray(from_dtype(base), shape)
        else:
            t = from_dtype(sub)
        fields.append((name, {"type": t, "offset": offset}))
    return Record(fields, dtype.itemsize, dtype.isalignedstruct)


class Array(Type):
    """An array type: dtype, number of dimensions, layout ('C', 'F' or 'A')."""

    __slots__ = ("dtype", "ndim", "layout", "readonly")

    def __init__(self, dtype, ndim, layout="A", readonly=False):
        if isinstance(dtype, str):
            if _scalar_named(dtype) is None:
                raise TypeError(f"unknown array element type {dtype!r}")
            dtype = _scalar_named(dtype)
        else:
            dtype = as_type(dtype)
        if not isinstance(dtype, (Scalar, Record, _CharSeqBase)):
            raise TypeError(f"array elements must be scalars, records or strings, not {dtype!r}")
        if not isinstance(ndim, int) or ndim < 0:
            raise ValueError(f"ndim must be a non-negative int, not {ndim!r}")
        if layout not in ("C", "F", "A"):
            raise ValueError(f"layout must be 'C', 'F' or 'A', not {layout!r}")
        prefix = "readonly " if readonly else ""
        super().__init__(f"{prefix}array({dtype.name}, {ndim}d, {layout})")
        self.dtype = dtype
        self.ndim = ndim
        self.layout = layout
        self.readonly = readonly

    @property
    def _sig_text(self):
        dims = [":"] * self.ndim
        if self.layout == "C":
            dims[-1] = "::1"
        elif self.layout == "F":
            dims[0] = "::1"
        return f"{self.dtype.name}[{', '.join(dims)}]"

    def copy(self, dtype=None, ndim=None, layout=None, readonly=None):
        return Array(dtype or self.dtype, ndim or self.ndim, layout or self.layout,
                     self.readonly if readonly is None else readonly)

    @property
    def mutable(self):
        """False for a read-only array (Numba's ``Array.mutable``)."""
        return not self.readonly

    @property
    def aligned(self):
        """True: ptxjit's arrays are always aligned (Numba's ``Array.aligned``)."""
        return True

    @property
    def key(self):
        return self.dtype, self.ndim, self.layout, self.mutable, self.aligned

    @property
    def is_c_contig(self):
        """C-contiguous (1-d arrays of layout C or F are both)."""
        return self.layout == "C" or (self.ndim <= 1 and self.layout in "CF")

    @property
    def is_f_contig(self):
        """Fortran-contiguous (1-d arrays of layout C or F are both)."""
        return self.layout == "F" or (self.ndim <= 1 and self.layout in "CF")

    @property
    def is_contig(self):
        """C- or Fortran-contiguous."""
        return self.layout in "CF"


class BaseTuple(Type):
    __slots__ = ("types",)

    def __iter__(self):
        return iter(self.types)

    def __len__(self):
        return len(self.types)

    def __getitem__(self, i):
        return self.types[i]


class UniTuple(BaseTuple):
    __slots__ = ("dtype", "count")

    def __init__(self, dtype, count):
        dtype = as_type(dtype)
        super().__init__(f"UniTuple({dtype.name} x {count})")
        self.types = (dtype,) * count
        self.dtype = dtype
        self.count = count

    @property
    def _sig_text(self):
        return f"UniTuple({self.dtype._sig_text}, {self.count})"


class Tuple(BaseTuple):
    __slots__ = ()

    def __new__(cls, types):
        types = tuple(as_type(t) for t in types)
        if types and all(t == types[0] for t in types):
            return UniTuple(types[0], len(types))
        self = super().__new__(cls)
        Type.__init__(self, f"Tuple({', '.join(t.name for t in types)})")
        self.types = types
        return self

    def __init__(self, types):
        pass  # initialized in __new__ (which may consume an iterator)

    @property
    def _sig_text(self):
        elems = ", ".join(t._sig_text for t in self.types)
        return f"Tuple(({elems}{',' if len(self.types) == 1 else ''}))"


class NamedUniTuple(UniTuple):
    """Numba's ``NamedUniTuple``: the type of a ``collections.namedtuple`` argument whose
    elements have one type, printed ``Pair(int64 x 2)``; ``fields`` are its field names. In a
    signature it is that class's type: the kernel reads ``p.x`` and takes instances of a
    namedtuple class of that name and fields."""

    __slots__ = ("fields",)

    def __init__(self, dtype, count, fields, class_name=None):
        fields, class_name = _namedtuple_fields(fields, class_name)
        super().__init__(dtype, count)
        self.name = f"{class_name}({self.dtype.name} x {count})"
        self.fields = tuple(fields)

    @property
    def _sig_text(self):
        return _named_sig_text(self.name, self.fields, [self.dtype] * self.count)


def _named_sig_text(name, fields, types):
    """ptxjit's signature spelling of a namedtuple type (ir/Signature.cpp): "NamedTuple(Point,
    (x, y), (int32, float64))"; the class name is the printed name's head."""
    return (f"NamedTuple({name[:name.index('(')]}, ({', '.join(fields)}), "
            f"({', '.join(t._sig_text for t in types)}))")


def _namedtuple_fields(fields, class_name):
    """(fields, class name) from ptxjit's form (field names and a class name) or numba's (the
    namedtuple class: ``NamedTuple(types, Point)``)."""
    if class_name is not None:
        return tuple(fields), class_name
    if isinstance(fields, type) and hasattr(fields, "_fields"):
        return tuple(fields._fields), fields.__name__
    raise TypeError(f"expected a namedtuple class (numba's NamedTuple(types, cls)) or field names "
                    f"and a class name, got {fields!r}")


class NamedTuple(Tuple):
    """Numba's ``NamedTuple``: the type of a ``collections.namedtuple`` argument, printed
    ``Point(int64, float64)``; ``fields`` are its field names. In a signature it is that class's
    type (see NamedUniTuple)."""

    __slots__ = ("fields",)

    def __new__(cls, types, fields, class_name=None):
        fields, class_name = _namedtuple_fields(fields, class_name)
        types = tuple(as_type(t) for t in types)
        if types and all(t == types[0] for t in types):
            return NamedUniTuple(types[0], len(types), fields, class_name)
        self = object.__new__(cls)
        Type.__init__(self, f"{class_name}({', '.join(t.name for t in types)})")
        self.types = types
        self.fields = tuple(fields)
        return self

    def __init__(self, types, fields, class_name=None):
        pass  # initialized in __new__

    @property
    def _sig_text(self):
        return _named_sig_text(self.name, self.fields, self.types)


class Signature:
    """``return_type(args...)``; ``return_type`` is None for a bare argument tuple."""

    __slots__ = ("return_type", "args")

    def __init__(self, return_type, args):
        self.return_type = return_type
        self.args = tuple(args)

    def __eq__(self, other):
        return (isinstance(other, Signature) and self.return_type == other.return_type
                and self.args == other.args)

    def __hash__(self):
        return hash((self.return_type, self.args))

    def __repr__(self):
        args = ", ".join(a.name for a in self.args)
        if self.return_type is None:
            return f"({args})"
        return f"({args}{',' if len(self.args) == 1 else ''}) -> {self.return_type.name}"

    @property
    def _sig_text(self):
        args = ", ".join(a._sig_text for a in self.args)
        if self.return_type is None:
            return f"({args})"
        return f"{self.return_type._sig_text}({args})"


class Number(Scalar):
    """Numbers: the base of Integer, Float and Complex (Numba's class names, for isinstance)."""

    __slots__ = ()

    def __lt__(self, other):
        # Numba orders numbers of one class by width (int8 < int64, float32 < float64); ints of
        # different signedness, and different classes, are not ordered.
        if type(self) is not type(other) or self.signed != other.signed:
            return NotImplemented
        return self.bitwidth < other.bitwidth

    def __le__(self, other):
        lt = self.__lt__(other)
        return lt if lt is NotImplemented else lt or self == other

    def __gt__(self, other):
        if type(self) is not type(other) or self.signed != other.signed:
            return NotImplemented
        return other.bitwidth < self.bitwidth

    def __ge__(self, other):
        gt = self.__gt__(other)
        return gt if gt is NotImplemented else gt or self == other

    __hash__ = Scalar.__hash__


class Integer(Number):
    """int8..int64 and uint8..uint64: ``bitwidth``, ``signed``, ``minval`` and ``maxval``, as
    Numba's Integer."""

    __slots__ = ()

    @property
    def maxval(self):
        """The largest value of this type."""
        return (1 << (self.bitwidth - 1)) - 1 if self.signed else (1 << self.bitwidth) - 1

    @property
    def minval(self):
        """The smallest value of this type."""
        return -(1 << (self.bitwidth - 1)) if self.signed else 0

    @classmethod
    def from_bitwidth(cls, bitwidth, signed=True):
        """The integer type of `bitwidth` bits (8, 16, 32 or 64), signed or not."""
        name = ("int%d" if signed else "uint%d") % bitwidth
        if name not in _SCALARS:
            raise ValueError(f"no integer type of {bitwidth} bits")
        return _SCALARS[name]


class Float(Number):
    """float16, float32, float64 (``bitwidth`` 16, 32, 64)."""

    __slots__ = ()


class Complex(Number):
    """complex64, complex128: ``bitwidth`` counts both parts; ``underlying_float`` is the type
    of one part (float32, float64), as Numba's Complex."""

    __slots__ = ()

    @property
    def underlying_float(self):
        return _SCALARS["float%d" % (self.bitwidth // 2)]


class Bfloat16(Number):
    """bfloat16 (numba-cuda's ``types.bfloat16``): float32's sign and 8-bit exponent with an
    8-bit significand. A number but not a ``Float``, as in numba-cuda. NumPy has no such dtype:
    its arrays and scalars are ml_dtypes' (``ml_dtypes.bfloat16``), which ``bfloat16(x)`` returns
    on the host and ``.dtype`` is (both need ml_dtypes installed)."""

    __slots__ = ()

    def cast_python_value(self, value):
        return _ml_dtypes_bfloat16()(value)

    @property
    def dtype(self):
        import numpy as np

        return np.dtype(_ml_dtypes_bfloat16())


def _ml_dtypes_bfloat16():
    try:
        from ml_dtypes import bfloat16 as bf16
    except ImportError:
        raise TypeError("bfloat16 values and arrays on the host need ml_dtypes "
                        "(pip install ml_dtypes); in kernels bfloat16 needs nothing") from None
    return bf16


class Boolean(Scalar):
    __slots__ = ()


class CPointer(Type):
    """Numba's ``types.CPointer(dtype)``: a raw pointer to elements of a scalar dtype, printed
    ``int32*``. A kernel given one in its signature takes an integer (a Python int or a NumPy
    integer) as the address, as numba-cuda does, and ``p[i]`` reads or writes element ``i``
    without bounds. On the CPU backend the address is a host address (``a.ctypes.data``)."""

    __slots__ = ("dtype",)

    def __init__(self, dtype):
        dtype = _SCALARS.get(dtype) if isinstance(dtype, str) else as_type(dtype)
        if not isinstance(dtype, Scalar) or isinstance(dtype, IntegerLiteral):
            raise TypeError(f"CPointer takes a scalar element type, not {dtype!r}")
        super().__init__(f"{dtype.name}*")
        self.dtype = dtype

    @property
    def _sig_text(self):
        return self.name


class RawPointer(Type):
    """Numba's class of ``types.voidptr`` (``void*``): an address with no element type. It can be
    passed along (to a device function taking ``voidptr``) but not indexed."""

    __slots__ = ()

    @property
    def _sig_text(self):
        return self.name


class Literal(Type):
    """Numba's ``types.Literal``: the class of the types of one constant; ptxjit's one such type
    is ``IntegerLiteral`` (for ``isinstance``)."""

    __slots__ = ()


def literal(value):
    """Numba's ``types.literal(value)``: the type of the constant ``value``; an int's is
    ``IntegerLiteral(value)``. TypeError for other values (ptxjit has no literal type of
    them)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return IntegerLiteral(value)
    raise TypeError(f"types.literal: ptxjit has literal types of ints only (IntegerLiteral), "
                    f"not of {type(value).__name__} {value!r}")


class IntegerLiteral(Literal, Integer):
    """Numba's ``types.IntegerLiteral(value)``: the type of one integer constant. ptxjit does not
    specialize kernels on argument values, so in a signature it stands for its type,
    ``literal_type`` (int64, or uint64 for a value above int64's range)."""

    __slots__ = ("literal_value", "literal_type")

    def __init__(self, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"IntegerLiteral takes an int, not {value!r}")
        literal_type = int64 if -2**63 <= value < 2**63 else uint64
        super().__init__(f"Literal[int]({value})", literal_type.kind, literal_type.bitwidth)
        self._ptxjit_symbol = "numpy." + literal_type.name
        self.literal_value = value
        self.literal_type = literal_type

    @property
    def _sig_text(self):
        return self.literal_type.name

    def cast_python_value(self, value):
        return self.literal_type.cast_python_value(value)

    @property
    def dtype(self):
        return self.literal_type.dtype


void = none = NoneType("none")
boolean = bool_ = b1 = Boolean("bool", "b", 8)
# The C names are numba's, for 64-bit Linux (numba.types.char is np.byte's type, int_ NumPy's
# default int, long_ C's long).
int8 = i1 = char = Integer("int8", "i", 8)
int16 = i2 = short = Integer("int16", "i", 16)
int32 = i4 = intc = Integer("int32", "i", 32)
int64 = i8 = intp = longlong = int_ = long_ = Integer("int64", "i", 64)
uint8 = u1 = byte = uchar = Integer("uint8", "u", 8)
uint16 = u2 = ushort = Integer("uint16", "u", 16)
uint32 = u4 = uintc = Integer("uint32", "u", 32)
uint64 = u8 = uintp = ulonglong = uint = ulong = Integer("uint64", "u", 64)
float16 = f2 = half = Float("float16", "f", 16)
float32 = f4 = float_ = Float("float32", "f", 32)
float64 = f8 = double = Float("float64", "f", 64)
complex64 = c8 = Complex("complex64", "c", 64)
complex128 = c16 = Complex("complex128", "c", 128)
bfloat16 = Bfloat16("bfloat16", "f", 16)
voidptr = RawPointer("void*")

_SCALARS = {t.name: t for t in (boolean, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                                 float16, float32, float64, complex64, complex128, bfloat16)}
_SCALARS["__nv_bfloat16"] = bfloat16  # numba-cuda's name of its bfloat16 type


def from_description(desc):
    """The type object for the compiler's description of a type.

    Descriptions are tuples: ``("scalar", "float32")``, ``("array", dtype, ndim, layout,
    readonly)`` (dtype a scalar name or a record's description), ``("record", [(name,
    description, offset)...], size, aligned)``, ``("nestedarray", "float32", shape)``,
    ``("charseq", count, unicode)``,
    ``("tuple", [descriptions...])``, ``("namedtuple", class_name, [fields...],
    [descriptions...])``, ``("pointer", "int32")`` (``None`` for void*),
    ``("none",)``; anything else is ``("other", "spelling")``.
    """
    tag = desc[0]
    if tag == "scalar":
        return _scalar_named(desc[1])
    if tag == "array":
        dtype = _scalar_named(desc[1]) if isinstance(desc[1], str) else from_description(desc[1])
        return Array(dtype, desc[2], desc[3], bool(desc[4]))
    if tag == "record":
        return Record([(n, {"type": from_description(d), "offset": o}) for n, d, o in desc[1]],
                      desc[2], desc[3])
    if tag == "nestedarray":
        return NestedArray(_scalar_named(desc[1]), desc[2])
    if tag == "charseq":
        return UnicodeCharSeq(desc[1]) if desc[2] else CharSeq(desc[1])
    if tag == "tuple":
        return Tuple(from_description(d) for d in desc[1])
    if tag == "namedtuple":
        return NamedTuple([from_description(d) for d in desc[3]], desc[2], desc[1])
    if tag == "none":
        return none
    if tag == "pointer":
        return voidptr if desc[1] is None else CPointer(_SCALARS[desc[1]])
    return Type(desc[1])


def _is_numba_type(obj):
    """True for Numba's own type and signature objects (numba.core.types, numba.cuda.types and
    numba's typing Signature), recognized by their class's module so that numba is never
    imported here."""
    mod = getattr(type(obj), "__module__", "") or ""
    return mod.startswith(("numba.", "numba_cuda.")) and (
        hasattr(obj, "name") or (hasattr(obj, "args") and hasattr(obj, "return_type")))


def as_type(obj):
    """The ptxjit type object for ``obj``: a ptxjit type (returned as is), or one of Numba's type
    objects (``numba.float32``, ``numba.types.Array(numba.float32, 2, 'C')``, a UniTuple or
    Tuple of those, ``numba.types.none``, an IntegerLiteral (its literal type), a CPointer,
    ``numba.types.voidptr``, a Record and its NestedArray fields), mapped by structure. Raises
    TypeError for anything else, naming it."""
    if isinstance(type(obj), _TypeClass):  # a ptxjit type (not via __instancecheck__)
        return obj
    if not _is_numba_type(obj):
        raise TypeError(f"expected a type, got {obj!r} ({type(obj).__name__})")
    cls = type(obj).__name__
    name = str(getattr(obj, "name", ""))
    if cls == "NestedArray" and hasattr(obj, "shape"):
        return NestedArray(as_type(obj.dtype), tuple(obj.shape))
    if cls in ("CharSeq", "UnicodeCharSeq") and hasattr(obj, "count"):
        return (CharSeq if cls == "CharSeq" else UnicodeCharSeq)(obj.count)
    if cls == "Record" and hasattr(obj, "fields") and hasattr(obj, "size"):
        return Record([(n, {"type": as_type(f.type), "offset": f.offset})
                       for n, f in obj.fields.items()], obj.size, obj.aligned)
    if cls in ("Array",) and hasattr(obj, "ndim") and hasattr(obj, "layout"):
        return Array(as_type(obj.dtype), int(obj.ndim), str(obj.layout),
                     readonly=not getattr(obj, "mutable", True))
    named = getattr(getattr(obj, "instance_class", None), "__name__", None)
    if cls in ("NamedUniTuple", "NamedTuple") and named and hasattr(obj, "fields"):
        return NamedTuple([as_type(t) for t in obj.types], obj.fields, named)
    if cls in ("UniTuple", "NamedUniTuple"):
        return UniTuple(as_type(obj.dtype), int(obj.count))
    if cls in ("Tuple", "NamedTuple"):
        return Tuple(as_type(t) for t in obj.types)
    if cls in ("NoneType", "Omitted") or name in ("none", "void"):
        return none
    if hasattr(obj, "literal_type") and cls.endswith("Literal"):
        return as_type(obj.literal_type)
    if cls == "CPointer" and hasattr(obj, "dtype"):
        if getattr(obj, "addrspace", None) is not None:
            raise TypeError(f"Numba type {name} (CPointer with an address space) has no "
                            f"ptxjit equivalent")
        return CPointer(as_type(obj.dtype))
    if cls == "RawPointer" and name == "void*":
        return voidptr
    if cls in ("NPDatetime", "NPTimedelta") and hasattr(obj, "unit"):
        return (NPDatetime if cls == "NPDatetime" else NPTimedelta)(obj.unit)
    if name in _SCALARS:
        return _SCALARS[name]
    raise TypeError(f"Numba type {name or cls} ({cls}) has no ptxjit equivalent")


def as_signature(sig):
    """A ptxjit Signature for a ptxjit Signature or Numba's typing Signature (return_type,
    args)."""
    if isinstance(sig, Signature):
        return sig
    if _is_numba_type(sig) and hasattr(sig, "args") and hasattr(sig, "return_type"):
        ret = sig.return_type
        return Signature(None if ret is None else as_type(ret), [as_type(a) for a in sig.args])
    raise TypeError(f"expected a signature, got {sig!r}")


def signature_text(sig):
    """The text the compiler parses for one signature: a string (kept as is), a Signature
    (ptxjit's or Numba's), or a tuple of argument types (ptxjit's or Numba's)."""
    if isinstance(sig, str):
        return sig
    if _is_numba_type(sig):
        if hasattr(sig, "args") and hasattr(sig, "return_type"):
            return as_signature(sig)._sig_text
        sig = as_type(sig)
    if isinstance(sig, tuple):
        return Signature(None, [as_type(a) for a in sig])._sig_text
    if isinstance(sig, Signature):
        return sig._sig_text
    if isinstance(sig, Type):
        raise TypeError(f"a signature needs argument types: got the single type {sig!r}; "
                        f"write void({sig!r}) or ({sig!r},)")
    raise TypeError(f"invalid signature {sig!r}: expected a string, a Signature such as "
                    f"void(float32[:]) or a tuple of types")
