"""Checks the toolkit's ptxas for the negation it dropped from a three-input minimum.

CUDA 13.0's ptxas (and the driver 580 PTX JIT) fuses ``min(min(b, neg a), 0)`` into one
VIMNMX3 on sm_90 and forgets the negation (docs/reliability.md, seed 9115259). This script
assembles small hand-written kernels at -O0 and -O3, prints their SASS (cuobjdump) and runs
them through CuPy on 30 input pairs, so a new toolkit or driver can be checked in a minute:

    python3 scripts/ptxas_neg_min3.py [--arch sm_90]

It needs a GPU, the CUDA toolkit (ptxas, cuobjdump) and CuPy.
"""

import argparse
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np

HEAD = """.version 8.5
.target {arch}
.address_size 64
.visible .entry k(.param .u64 pa, .param .u64 pb, .param .u64 po)
{{
 .reg .b32 %r<12>; .reg .b64 %rd<16>; .reg .b16 %rs<8>;
 ld.param.u64 %rd1, [pa]; ld.param.u64 %rd2, [pb]; ld.param.u64 %rd3, [po];
 cvta.to.global.u64 %rd4, %rd1; cvta.to.global.u64 %rd5, %rd2; cvta.to.global.u64 %rd6, %rd3;
 ld.global.u32 %r1, [%rd4]; ld.global.s16 %r2, [%rd5];
"""
TAIL = " st.global.u32 [%rd6], %r8;\n ret;\n}\n"


def s32(v):
    return (v + 2**31) % 2**32 - 2**31


def s16(v):
    return (v + 2**15) % 2**16 - 2**15


# name: (PTX body computing %r8 from %r1 = a (int32) and %r2 = b (int16), expected value)
KERNELS = {
    "neg, min, min": ("neg.s32 %r5, %r1; min.s32 %r7, %r2, %r5; min.s32 %r8, %r7, 0;",
                      lambda a, b: min(b, s32(-a), 0)),
    "sub 0, min, min": ("sub.s32 %r5, 0, %r1; min.s32 %r7, %r2, %r5; min.s32 %r8, %r7, 0;",
                        lambda a, b: min(b, s32(-a), 0)),
    "neg.s16, min.s16 x2": ("cvt.u16.u32 %rs1, %r1; cvt.u16.u32 %rs2, %r2; neg.s16 %rs3, %rs1; "
                            "min.s16 %rs4, %rs2, %rs3; min.s16 %rs5, %rs4, 0; "
                            "cvt.s32.s16 %r8, %rs5;",
                            lambda a, b: min(s16(b), s16(-s16(a)), 0)),
    "or -128, neg, min, min": ("or.b32 %r4, %r1, -128; neg.s32 %r5, %r4; min.s32 %r7, %r2, %r5; "
                               "min.s32 %r8, %r7, 0;",
                               lambda a, b: min(b, s32(-s32(a | -128)), 0)),
    "neg, min 0, min (negation last)": ("neg.s32 %r5, %r1; min.s32 %r7, %r2, 0; "
                                        "min.s32 %r8, %r7, %r5;",
                                        lambda a, b: min(b, s32(-a), 0)),
    "neg, max, max": ("neg.s32 %r5, %r1; max.s32 %r7, %r2, %r5; max.s32 %r8, %r7, 0;",
                      lambda a, b: max(b, s32(-a), 0)),
    "not, add 1, min, min (ptxjit's form)": ("not.b32 %r9, %r1; add.s32 %r5, %r9, 1; "
                                             "min.s32 %r7, %r2, %r5; min.s32 %r8, %r7, 0;",
                                             lambda a, b: min(b, s32(-a), 0)),
}
A = [-2**31, -5, 7, 2**31 - 1, -129, 0]
B = [18644, -3, 100, -32768, 5]


def tool(name):
    """The toolkit's `name`: from PATH, else /usr/local/cuda/bin."""
    return shutil.which(name) or os.path.join("/usr/local/cuda/bin", name)


def sass_of(cubin):
    text = subprocess.run([tool("cuobjdump"), "-sass", cubin], capture_output=True, text=True,
                          check=True).stdout
    ops = [m.group(1).strip() for m in
           (re.match(r"\s*/\*[0-9a-f]{4}\*/\s*(.*?);", line) for line in text.splitlines()) if m]
    skip = ("NOP", "BRA", "LDC", "ULDC", "LDG", "STG", "EXIT", "MOV", "R2UR")
    return " ; ".join(op for op in ops if not op.startswith(skip))


def main():
    import cupy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="sm_90")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, (body, expected)) in enumerate(KERNELS.items()):
            ptx = os.path.join(tmp, f"k{i}.ptx")
            with open(ptx, "w") as f:
                f.write(HEAD.format(arch=args.arch) + " " + body.replace("; ", ";\n ") + "\n"
                        + TAIL)
            for opt in ("0", "3"):
                # one file per module: CuPy caches modules by path
                cubin = os.path.join(tmp, f"k{i}_O{opt}.cubin")
                subprocess.run([tool("ptxas"), f"-arch={args.arch}", f"-O{opt}", ptx, "-o", cubin],
                               check=True)
                kernel = cupy.RawModule(path=cubin).get_function("k")
                wrong = []
                for a in A:
                    for b in B:
                        da = cupy.array([a], cupy.int32)
                        db = cupy.array([b], cupy.int16)
                        out = cupy.zeros(1, cupy.int32)
                        kernel((1,), (1,), (np.uint64(da.data.ptr), np.uint64(db.data.ptr),
                                            np.uint64(out.data.ptr)))
                        got = int(out.get()[0])
                        if got != expected(a, b):
                            wrong.append((a, b, expected(a, b), got))
                sass = sass_of(cubin) if opt == "3" else "(unfused)"
                print(f"-O{opt} {name:38s} wrong {len(wrong):2d}/{len(A) * len(B)} "
                      f"{wrong[:2]} | {sass}")


if __name__ == "__main__":
    main()
