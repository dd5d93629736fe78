"""The names of ``ptxjit.cuda.bf16`` and ``ptxjit.cuda.fp16``: numba-cuda's ``numba.cuda.bf16``
and ``numba.cuda.fp16`` intrinsics (docs/language.md#bfloat16, #float16).

Each function is an intrinsic whose symbol the compiler knows (ir/typing/LowFloat.def lists them
with what they compute); numba-cuda's aliases of a function (``float2bfloat16_rn`` for
``float32_to_bfloat16_rn``, ``__hadd`` for ``hadd``) are the same object, as in numba-cuda.
``ptxjit/cuda.py`` builds the two modules with :func:`build`.
"""

import sys
import types as _pytypes

_MODES = ("rn", "rz", "rd", "ru")
# (NumPy-style name, C-style name) of the integer types.
_INTS = (("int16", "short"), ("uint16", "ushort"), ("int32", "int"), ("uint32", "uint"),
         ("int64", "ll"), ("uint64", "ull"))

# The operations both modules have: (cuda.bf16 name, cuda.fp16 name). numba-cuda's fp16 module
# names the newer ones only in CUDA's spelling (__hadd_rn); the short ones it also has as __h*.
_OPS = (
    ("hadd", "hadd"), ("hsub", "hsub"), ("hmul", "hmul"), ("hdiv", "hdiv"),
    ("hadd_rn", "__hadd_rn"), ("hsub_rn", "__hsub_rn"), ("hmul_rn", "__hmul_rn"),
    ("hadd_sat", "__hadd_sat"), ("hsub_sat", "__hsub_sat"), ("hmul_sat", "__hmul_sat"),
    ("hneg", "hneg"), ("habs", "habs"), ("hfma", "hfma"), ("hfma_sat", "__hfma_sat"),
    ("hfma_relu", "__hfma_relu"),
    ("heq", "heq"), ("hne", "hne"), ("hge", "hge"), ("hgt", "hgt"), ("hle", "hle"), ("hlt", "hlt"),
    ("hequ", "__hequ"), ("hneu", "__hneu"), ("hgeu", "__hgeu"), ("hgtu", "__hgtu"),
    ("hleu", "__hleu"), ("hltu", "__hltu"),
    ("hmax", "hmax"), ("hmin", "hmin"), ("hmax_nan", "__hmax_nan"), ("hmin_nan", "__hmin_nan"),
    ("hisnan", "__hisnan"), ("hisinf", "__hisinf"),
    ("htrunc", "htrunc"), ("hceil", "hceil"), ("hfloor", "hfloor"), ("hrint", "hrint"),
    ("hsqrt", "hsqrt"), ("hrsqrt", "hrsqrt"), ("hrcp", "hrcp"), ("hlog", "hlog"),
    ("hlog2", "hlog2"), ("hlog10", "hlog10"), ("hcos", "hcos"), ("hsin", "hsin"),
    ("htanh", "htanh"), ("htanh_approx", "htanh_approx"), ("hexp", "hexp"), ("hexp2", "hexp2"),
    ("hexp10", "hexp10"),
)
# fp16's short names that numba-cuda also exports as CUDA's __h* (the same objects).
_FP16_DOUBLE_UNDERSCORE = ("habs", "hadd", "hdiv", "heq", "hfma", "hge", "hgt", "hle", "hlt",
                           "hmax", "hmin", "hmul", "hne", "hneg", "hsub")


def _bf16_names():
    """{name: canonical name} of cuda.bf16's functions (a canonical name maps to itself)."""
    names = {b: b for b, _ in _OPS}
    conv = {"float32_to_bfloat16": "float2bfloat16", "float64_to_bfloat16": "double2bfloat16",
            "bfloat16_to_float32": "bfloat162float",
            "bfloat16_to_int8_rz": "bfloat162char_rz", "bfloat16_to_uint8_rz": "bfloat162uchar_rz",
            "bfloat16_as_int16": "bfloat16_as_short", "bfloat16_as_uint16": "bfloat16_as_ushort",
            "int16_as_bfloat16": "short_as_bfloat16", "uint16_as_bfloat16": "ushort_as_bfloat16"}
    for m in _MODES:
        conv[f"float32_to_bfloat16_{m}"] = f"float2bfloat16_{m}"
        for n, c in _INTS:
            conv[f"{n}_to_bfloat16_{m}"] = f"{c}2bfloat16_{m}"
            conv[f"bfloat16_to_{n}_{m}"] = f"bfloat162{c}_{m}"
    for canonical, alias in conv.items():
        names[canonical] = canonical
        names[alias] = canonical
    return names


def _fp16_names():
    names = {h: h for _, h in _OPS}
    for h in _FP16_DOUBLE_UNDERSCORE:
        names["__" + h] = h
    conv = ["__float2half", "__double2half", "__half2float", "__half2char_rz", "__half2uchar_rz",
            "__half_as_short", "__half_as_ushort", "__short_as_half", "__ushort_as_half"]
    for m in _MODES:
        conv.append(f"__float2half_{m}")
        for _, c in _INTS:
            conv += [f"__{c}2half_{m}", f"__half2{c}_{m}"]
    for c in conv:
        names[c] = c
    return names


def _bf16_all():
    """numba-cuda's numba.cuda.bf16.__all__ (less its numba registries)."""
    out = ["bfloat16"] + [b for b, _ in _OPS]
    out += ["float32_to_bfloat16", "float64_to_bfloat16", "bfloat16_to_float32"]
    out += [f"float32_to_bfloat16_{m}" for m in _MODES]
    out += ["bfloat16_to_int8_rz", "bfloat16_to_uint8_rz"]
    for n, _ in _INTS:
        out += [f"{n}_to_bfloat16_{m}" for m in _MODES]
        out += [f"bfloat16_to_{n}_{m}" for m in _MODES]
    out += ["bfloat16_as_int16", "bfloat16_as_uint16", "int16_as_bfloat16", "uint16_as_bfloat16"]
    return out


def build(package, intrinsic, bfloat16, float16):
    """The modules ``<package>.bf16`` and ``<package>.fp16`` (registered in sys.modules), whose
    functions are ``intrinsic(path)`` objects and whose types are ``bfloat16`` / ``float16``."""
    modules = []
    docs = {"bf16": "numba-cuda's cuda.bf16: bfloat16 intrinsics (docs/language.md#bfloat16).",
            "fp16": "numba-cuda's cuda.fp16: float16 intrinsics (docs/language.md#float16)."}
    for short, names in (("bf16", _bf16_names()), ("fp16", _fp16_names())):
        mod = _pytypes.ModuleType(f"{package}.{short}", docs[short])
        made = {}
        for name, canonical in names.items():
            if canonical not in made:
                made[canonical] = intrinsic(f"{short}.{canonical}")
            setattr(mod, name, made[canonical])
        if short == "bf16":
            mod.bfloat16 = bfloat16
            mod.__all__ = _bf16_all()
        else:
            setattr(mod, "__half", float16)  # numba-cuda's name of the float16 type there
            mod.__all__ = ["__half"] + sorted(names)
        sys.modules.setdefault(mod.__name__, mod)
        modules.append(sys.modules[mod.__name__])
    return modules
