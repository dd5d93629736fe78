"""Numba-style type objects: ``float32``, ``float32[:]``, ``float32[:, ::1]``, ``void(float32)``.

They describe kernel signatures (``@cuda.jit(void(float32, float32[:]))``) and are what
``kernel.signatures`` holds. Each type prints with Numba's spelling (``array(float32, 1d, C)``)
and knows the signature text that the compiler parses (``float32[::1]``). Scalar types used
inside a kernel (``float32(x)``) are conversions; called from Python with a value they convert
it like the NumPy scalar type of the same name.
"""

__all__ = [
    "Type", "Scalar", "NoneType", "Array", "BaseTuple", "UniTuple", "Tuple", "Signature",
    "void", "none", "boolean", "bool_", "b1",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "intp", "uintp", "intc", "uintc", "byte",
    "float32", "float64", "f4", "f8", "float_", "double",
    "complex64", "complex128", "c8", "c16",
]


class Type:
    """Base of all type objects; equal when they print the same."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, Type) and type(self) is type(other) and self.name == other.name

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((type(self).__name__, self.name))

    def __repr__(self):
        return self.name

    __str__ = __repr__

    @property
    def _sig_text(self):
        raise TypeError(f"type {self.name} cannot appear in a kernel signature")

    def __call__(self, *args):
        if all(isinstance(a, Type) for a in args):
            return Signature(self, args)
        raise TypeError(f"{self.name} is not callable with values")


class NoneType(Type):
    """``void`` / ``none``: the return type of kernels."""

    __slots__ = ()

    @property
    def _sig_text(self):
        return "void"


class Scalar(Type):
    """bool, int8..int64, uint8..uint64, float32, float64, complex64, complex128."""

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
        dims = item if isinstance(item, tuple) else (item,)
        if not 1 <= len(dims) <= 3 or not all(isinstance(d, slice) for d in dims):
            raise TypeError(f"{self.name}[...] takes 1 to 3 slices (':' or '::1'), got {item!r}")
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
        return Array(self, len(dims), layout)

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


class Array(Type):
    """An array type: dtype, number of dimensions, layout ('C', 'F' or 'A')."""

    __slots__ = ("dtype", "ndim", "layout", "readonly")

    def __init__(self, dtype, ndim, layout, readonly=False):
        if isinstance(dtype, str):
            dtype = _SCALARS[dtype]
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
        super().__init__(f"UniTuple({dtype.name} x {count})")
        self.types = (dtype,) * count
        self.dtype = dtype
        self.count = count


class Tuple(BaseTuple):
    __slots__ = ()

    def __new__(cls, types):
        types = tuple(types)
        if types and all(t == types[0] for t in types):
            return UniTuple(types[0], len(types))
        self = super().__new__(cls)
        Type.__init__(self, f"Tuple({', '.join(t.name for t in types)})")
        self.types = types
        return self

    def __init__(self, types):
        pass  # initialized in __new__ (which may consume an iterator)


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


void = none = NoneType("none")
boolean = bool_ = b1 = Scalar("bool", "b", 8)
int8 = i1 = Scalar("int8", "i", 8)
int16 = i2 = Scalar("int16", "i", 16)
int32 = i4 = intc = Scalar("int32", "i", 32)
int64 = i8 = intp = Scalar("int64", "i", 64)
uint8 = u1 = byte = Scalar("uint8", "u", 8)
uint16 = u2 = Scalar("uint16", "u", 16)
uint32 = u4 = uintc = Scalar("uint32", "u", 32)
uint64 = u8 = uintp = Scalar("uint64", "u", 64)
float32 = f4 = float_ = Scalar("float32", "f", 32)
float64 = f8 = double = Scalar("float64", "f", 64)
complex64 = c8 = Scalar("complex64", "c", 64)
complex128 = c16 = Scalar("complex128", "c", 128)

_SCALARS = {t.name: t for t in (boolean, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
                                 float32, float64, complex64, complex128)}


def from_description(desc):
    """The type object for the compiler's description of a type.

    Descriptions are tuples: ``("scalar", "float32")``, ``("array", "float32", ndim, layout,
    readonly)``, ``("tuple", [descriptions...])``, ``("none",)``; anything else is
    ``("other", "spelling")``.
    """
    tag = desc[0]
    if tag == "scalar":
        return _SCALARS[desc[1]]
    if tag == "array":
        return Array(_SCALARS[desc[1]], desc[2], desc[3], bool(desc[4]))
    if tag == "tuple":
        return Tuple(from_description(d) for d in desc[1])
    if tag == "none":
        return none
    return Type(desc[1])


def signature_text(sig):
    """The text the compiler parses for one signature: a string (kept as is), a Signature, or a
    tuple of argument types."""
    if isinstance(sig, str):
        return sig
    if isinstance(sig, Signature):
        return sig._sig_text
    if isinstance(sig, tuple):
        return Signature(None, sig)._sig_text
    if isinstance(sig, Type):
        raise TypeError(f"a signature needs argument types: got the single type {sig!r}; "
                        f"write void({sig!r}) or ({sig!r},)")
    raise TypeError(f"invalid signature {sig!r}: expected a string, a Signature such as "
                    f"void(float32[:]) or a tuple of types")
