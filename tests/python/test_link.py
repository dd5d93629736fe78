"""Foreign device functions: cuda.declare_device(name, sig, link=, abi=) and cuda.jit(link=...),
with CUDA C++ (NVRTC) and PTX linked when the kernel is loaded on the GPU. The CPU backend
refuses calls of foreign functions (their code is CUDA code)."""
import re

import numpy as np
import pytest

from ptxjit import cuda, errors, types

# Numba's ABI: the result through the first pointer, an int status returned.
MUL_CU = r'''
extern "C" __device__ int mul_f32(float *out, float a, float b) {
  *out = a * b;
  return 0;
}
'''

# The C ABI, and a pointer parameter.
SUM_CU = r'''
extern "C" __device__ float sum_first(const float *p, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += p[i];
  return s;
}
'''

# Hand-written PTX with the C ABI: x + 1.
ADD1_PTX = r'''
.version 7.0
.target sm_52
.address_size 64
.visible .func (.param .b32 r) add_one(.param .b32 x)
{
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [x];
  add.s32 %r2, %r1, 1;
  st.param.b32 [r], %r2;
  ret;
}
'''


def test_declare_device_checks_its_arguments():
    with pytest.raises(NotImplementedError, match="Unsupported ABI: cpp"):
        cuda.declare_device("f", "float32(float32)", abi="cpp")
    with pytest.raises(TypeError, match="Return type must be provided"):
        cuda.declare_device("f", "(float32,)")
    with pytest.raises(TypeError, match="Return type must be provided"):
        cuda.declare_device("f", (types.float32,))
    with pytest.raises(ValueError, match="not a valid device function name"):
        cuda.declare_device("f-g", "float32(float32)")
    with pytest.raises(TypeError, match="cannot read the signature"):
        cuda.declare_device("f", "float32(nosuchtype)")
    f = cuda.declare_device("mul_f32", "float32(float32, float32)",
                            link=cuda.CUSource(MUL_CU))
    assert f.name == "mul_f32" and "mul_f32" in repr(f)
    with pytest.raises(errors.UnsupportedError, match="only be called from kernels"):
        f(1.0, 2.0)


def test_link_items_are_read_where_they_are_named(tmp_path):
    with pytest.raises(FileNotFoundError):
        cuda.jit(link=[str(tmp_path / "missing.cu")])(lambda: None)
    (tmp_path / "x.txt").write_text("")
    with pytest.raises(ValueError, match="unknown kind of file"):
        cuda.declare_device("f", "int32(int32)", link=str(tmp_path / "x.txt"))
    with pytest.raises(NotImplementedError, match="LTO-IR"):
        cuda.jit(link=[str(tmp_path / "a.ltoir")])(lambda: None)
    with pytest.raises(TypeError, match="bytes or str"):
        cuda.PTXSource(3)
    with pytest.raises(TypeError, match="file paths"):
        cuda.jit(link=[3])(lambda: None)
    (tmp_path / "add.ptx").write_text(ADD1_PTX)
    cuda.jit(link=[str(tmp_path / "add.ptx")])(lambda: None)  # read, linked at load


def test_kernels_call_foreign_functions_by_name_in_the_ptx():
    mul = cuda.declare_device("mul_f32", "float32(float32, float32)",
                              link=cuda.CUSource(MUL_CU))
    total = cuda.declare_device("sum_first", "float32(CPointer(float32), int32)",
                                link=cuda.CUSource(SUM_CU), abi="c")

    def k(out, x):
        out[0] = mul(x[0], x[1])
        out[1] = total(x, 2)  # an array passes its data pointer

    ptx, _ = cuda.compile_ptx(k, (types.float32[::1], types.float32[::1]))
    # Numba's ABI: an int status returned, the result pointer first; the C ABI: the float back.
    assert re.search(r"\.extern \.func\s+\(\.param \.b32 \w+\) mul_f32\s*\(\s*"
                     r"\.param \.b64 \w+,\s*\.param \.b32 \w+,\s*\.param \.b32 \w+\s*\)", ptx)
    assert re.search(r"\.extern \.func\s+\(\.param \.b32 \w+\) sum_first\s*\(\s*"
                     r"\.param \.b64 \w+,\s*\.param \.b32 \w+\s*\)", ptx)
    assert re.search(r"call\.uni[^;]*mul_f32", ptx) and re.search(r"call\.uni[^;]*sum_first", ptx)


def test_foreign_call_errors_name_the_function_and_types(cpu):
    mul = cuda.declare_device("mul_f32", "float32(float32, float32)",
                              link=cuda.CUSource(MUL_CU))

    def bad_args(out):
        out[0] = mul(out, 1.0)

    with pytest.raises(errors.TypingError, match=r"external function 'mul_f32' cannot be called "
                                                 r"with .*declared \(float32, float32\)"):
        cuda.compile_ptx(bad_args, (types.float32[::1],))

    def wrong_count(out):
        out[0] = mul(1.0)

    with pytest.raises(errors.TypingError, match=r"mul_f32\(\) takes 2 arguments but 1"):
        cuda.compile_ptx(wrong_count, (types.float32[::1],))

    @cuda.jit
    def on_cpu(out):
        out[0] = mul(2.0, 3.0)

    with pytest.raises(errors.UnsupportedError, match="on the CPU backend: its code is CUDA"):
        on_cpu[1, 1](np.zeros(1, np.float32))


@pytest.mark.gpu
def test_cuda_cpp_and_ptx_linked_on_the_gpu(cuda_target, tmp_path):
    mul = cuda.declare_device("mul_f32", "float32(float32, float32)",
                              link=cuda.CUSource(MUL_CU, name="mul.cu"))
    total = cuda.declare_device("sum_first", "float32(CPointer(float32), int32)",
                                link=cuda.CUSource(SUM_CU), abi="c")
    (tmp_path / "add.ptx").write_text(ADD1_PTX)
    add_one = cuda.declare_device("add_one", "int32(int32)", abi="c")

    @cuda.jit(device=True)
    def twice(a, b):
        return mul(a, b) * 2  # a device function's foreign call links into its kernel

    @cuda.jit(link=[str(tmp_path / "add.ptx")])
    def k(out, x, n):
        out[0] = twice(x[0], x[1])
        out[1] = total(x, 3)
        out[2] = add_one(n)

    out = np.zeros(3, np.float32)
    k[1, 1](out, np.array([2.0, 3.5, 4.0], np.float32), np.int32(41))
    assert out.tolist() == [14.0, 9.5, 42.0]


@pytest.mark.gpu
def test_cuda_cpp_that_does_not_compile_shows_nvrtcs_log(cuda_target):
    broken = cuda.declare_device("broken", "int32(int32)", abi="c",
                                 link=cuda.CUSource("extern \"C\" __device__ int broken(int x) "
                                                    "{ return x + ; }", name="broken.cu"))

    @cuda.jit
    def k(out):
        out[0] = broken(1)

    with pytest.raises(RuntimeError, match=r"NVRTC could not compile 'broken.cu'"):
        k[1, 1](np.zeros(1, np.int32))
