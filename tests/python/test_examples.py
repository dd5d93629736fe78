"""The example programs, checked against NumPy/Python references on both backends."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

from ptxjit import cuda

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_example(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "examples", name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def mandel_reference(min_x, max_x, min_y, max_y, height, width, iters):
    image = np.zeros((height, width), dtype=np.uint8)
    px, py = (max_x - min_x) / width, (max_y - min_y) / height
    for x in range(width):
        real = min_x + x * px
        for y in range(height):
            c = complex(real, min_y + y * py)
            z = 0.0j
            n = iters
            for i in range(iters):
                z = z * z + c
                if z.real * z.real + z.imag * z.imag >= 4:
                    n = i
                    break
            image[y, x] = n
    return image


def test_mandelbrot_matches_python(backend):
    m = load_example("mandelbrot")
    image = np.zeros((48, 72), dtype=np.uint8)
    d_image = cuda.to_device(image)
    # A grid smaller than the image, so the 2-D grid-stride loops do several rounds.
    m.mandel_kernel[(2, 2), (8, 4)](-2.0, 1.0, -1.0, 1.0, d_image, 20)
    d_image.to_host()
    ref = mandel_reference(-2.0, 1.0, -1.0, 1.0, 48, 72, 20)
    if backend == "cpu":
        np.testing.assert_array_equal(image, ref)
    else:
        # The GPU contracts a*b+c into fma, which can move a pixel on the set's edge by one
        # iteration; everything else must agree.
        assert np.mean(image != ref) < 0.01
        assert np.max(np.abs(image.astype(int) - ref.astype(int))) <= 20


def test_saxpy_example_runs():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), PTXJIT_TARGET="cpu")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "saxpy.py")],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "saxpy on CPU backend" in out.stdout
    assert ".target sm_" in out.stdout


def run_example(args, cwd, timeout=300):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), PTXJIT_TARGET="cpu")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", args[0])] + args[1:],
                         capture_output=True, text=True, env=env, timeout=timeout, cwd=cwd)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_mandelbrot_example_writes_png(tmp_path):
    png = tmp_path / "sub" / "m.png"
    png.parent.mkdir()
    stdout = run_example(["mandelbrot.py", "-o", str(png), "--width", "96", "--height", "64"],
                         tmp_path)
    assert "Mandelbrot created on CPU backend" in stdout and "(backend: cpu)" in stdout
    png_mod = load_example("_png")
    image = png_mod.read_png(str(png))
    assert image.shape == (64, 96, 3)
    # The image is the kernel's: the colours of the iteration counts a reference computes.
    ref = mandel_reference(-2.0, 1.0, -1.0, 1.0, 64, 96, 20)
    np.testing.assert_array_equal(image, png_mod.colorize(ref, vmin=0, vmax=20))


def test_mandelbrot_example_writes_into_the_working_directory(tmp_path):
    stdout = run_example(["mandelbrot.py", "--width", "32", "--height", "16"], tmp_path)
    assert os.path.isfile(tmp_path / "mandelbrot.png"), stdout
    assert str(tmp_path / "mandelbrot.png") in stdout


def test_haversine_example_writes_a_heat_map(tmp_path):
    png = tmp_path / "h.png"
    stdout = run_example(["haversine.py", "40", "--png", str(png)], tmp_path)
    assert "on the cpu backend" in stdout
    image = load_example("_png").read_png(str(png))
    assert image.shape == (40, 40, 3)
    h = load_example("haversine")
    ref = h.reference(-90.0, 90.0, -180.0, 180.0, 30.0, 101.0, 1.0, 40, 40)
    # North up: the last mesh row (latitude +90) is the first image row.
    np.testing.assert_array_equal(image, load_example("_png").colorize(ref[::-1]))


def test_png_writer_round_trips():
    png = load_example("_png")
    rng = np.random.default_rng(7)
    gray = rng.integers(0, 256, (5, 7), dtype=np.uint8)
    rgb = rng.integers(0, 256, (3, 4, 3), dtype=np.uint8)
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        for img in (gray, rgb):
            path = os.path.join(d, "x.png")
            png.write_png(path, img)
            np.testing.assert_array_equal(png.read_png(path), img)
    c = png.colorize(np.array([[0.0, 0.5, 1.0, np.nan]]))
    assert c.shape == (1, 4, 3) and c.dtype == np.uint8
    assert tuple(c[0, 0]) == (0, 0, 4) and tuple(c[0, 2]) == (252, 253, 191)
    assert tuple(c[0, 3]) == (0, 0, 0)
    with pytest.raises(ValueError):
        png.write_png(os.path.join(ROOT, "never.png"), np.zeros((2, 2), dtype=np.float32))


def test_haversine_mesh_matches_numpy(backend):
    h = load_example("haversine")
    Z = cuda.device_array((40, 50), dtype=np.float64)
    # out[y][x] writes through a row view; the grid covers more than the mesh.
    h.mesh_kernel[(4, 4), (16, 16)](-60.0, 60.0, -120.0, 120.0, 30.0, 101.0, 2.0, Z)
    ref = h.reference(-60.0, 60.0, -120.0, 120.0, 30.0, 101.0, 2.0, 40, 50)
    np.testing.assert_allclose(Z.copy_to_host(), ref, rtol=1e-12, atol=1e-15)


def test_haversine_vectorize_versions_match_numpy(backend):
    h = load_example("haversine")
    X, Y = h.mesh_points(-60.0, 60.0, -120.0, 120.0, 20, 30)
    ref = h.reference(-60.0, 60.0, -120.0, 120.0, 30.0, 101.0, 2.0, 20, 30).ravel()
    for version in (h.vectorize_arrays, h.vectorize_scalars):
        z, _ = version(X, Y, 30.0, 101.0, 2.0)
        np.testing.assert_allclose(z, ref, rtol=1e-12, atol=1e-15)


def test_black_scholes_example(backend):
    b = load_example("black_scholes")
    call, put = b.main(5000)
    assert call.dtype == np.float32 and put.shape == (5000,)



# ---- cooperating threads: shared memory, barriers, warp shuffles, atomics ----

def test_matmul_example_matches_numpy(backend):
    m = load_example("matmul")
    rng = np.random.default_rng(3)
    # Sizes that are not multiples of the tile: edge threads load zeros but reach the barriers.
    a = rng.random((37, 50), dtype=np.float32)
    b = rng.random((50, 21), dtype=np.float32)
    d_c = cuda.device_array((37, 21), dtype=np.float32)
    m.launch(cuda.to_device(a), cuda.to_device(b), d_c)
    np.testing.assert_allclose(d_c.copy_to_host(), a @ b, rtol=1e-5, atol=1e-5)


def test_reduction_example_matches_numpy(backend):
    m = load_example("reduction")
    x = np.random.default_rng(4).random(100_003, dtype=np.float32)
    total = m.total(cuda.to_device(x), blocks=16)
    assert abs(total - np.sum(x, dtype=np.float64)) <= 1e-5 * np.sum(x, dtype=np.float64)


def test_histogram_example_matches_numpy(backend):
    m = load_example("histogram")
    x = np.random.default_rng(5).normal(size=50_000)
    hist = m.compute(x, -3.0, 3.0, blocks=8)
    expected, _ = np.histogram(x, bins=m.BINS, range=(-3.0, 3.0))
    np.testing.assert_array_equal(hist, expected)


def test_multi_gpu_example_uses_every_device(backend, capsys):
    m = load_example("multi_gpu")
    out = m.main(40, 24)  # checks itself against NumPy
    np.testing.assert_allclose(out, m.reference(40, 24), rtol=1e-9, atol=1e-9)
    printed = capsys.readouterr().out
    assert f"{len(cuda.gpus)} device(s)" in printed and "results match NumPy" in printed
    # Bands of uneven size, one of them empty: more devices than rows changes nothing.
    np.testing.assert_allclose(m.run(3, 5, [0, 0, 0, 0]), m.reference(3, 5), rtol=1e-9)


def test_distributed_haversine_example_in_one_process():
    pytest = __import__("pytest")
    pytest.importorskip("torch", reason="torch.distributed is the example's engine")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), PTXJIT_TARGET="cpu")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples",
                                                       "distributed_haversine.py"), "30", "20"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "1 rank(s) on the CPU backend: 30x20 mesh" in out.stdout


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_two_ranks(target):
    """examples/distributed_haversine.py under torch.distributed.run with two ranks on
    `target` ("cpu": gloo; "cuda": NCCL, one GPU per rank); its stdout."""
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"), PTXJIT_TARGET=target)
    out = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node=2",
                          f"--master-port={free_port()}",
                          os.path.join(ROOT, "examples", "distributed_haversine.py"), "33", "20"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def test_distributed_haversine_example_with_two_ranks_on_the_cpu_backend():
    # Two processes exchanging their bands through gloo; rank 0 checks the whole mesh (an odd
    # row count: the last band is padded for all_gather).
    pytest.importorskip("torch", reason="torch.distributed is the example's engine")
    assert "2 rank(s) on the CPU backend: 33x20 mesh" in run_two_ranks("cpu")


@pytest.mark.multigpu
def test_distributed_haversine_example_with_one_rank_per_gpu():
    # Each rank's kernels write into its own GPU's PyTorch tensor; NCCL gathers the bands.
    pytest.importorskip("torch", reason="torch.distributed is the example's engine")
    assert "2 rank(s) on GPUs: 33x20 mesh" in run_two_ranks("cuda")
