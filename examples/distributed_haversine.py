"""One process per GPU under torch.distributed: the haversine mesh split by rows across ranks.

Each rank owns one GPU (its LOCAL_RANK), computes its band of the mesh with ptxjit kernels
written straight into a PyTorch tensor (zero-copy through __cuda_array_interface__), and the
bands are exchanged by the engine (all_gather over NCCL); rank 0 checks the whole mesh against
NumPy. ptxjit adds no communication layer of its own: the same structure works with Dask
(dask-cuda's LocalCUDACluster, one worker per GPU, the kernels shipped to the workers by
pickling) or mpi4py (one rank per GPU, `cuda.select_device(local_rank)`, `comm.Allgather` on
host copies or CUDA-aware buffers).

    torchrun --nproc-per-node=2 examples/distributed_haversine.py [rows] [cols]
    python -m torch.distributed.run --nproc-per-node=2 examples/distributed_haversine.py
                                        # the same, with the interpreter that has ptxjit
    python examples/distributed_haversine.py [rows] [cols]      # one process

(`torchrun` starts its workers with the Python that torch's own script names: use the second
form when that interpreter does not see ptxjit, e.g. ptxjit in a virtual environment.)

Without a GPU it runs on ptxjit's CPU backend with the gloo backend of torch.distributed.
"""
import math
import os
import sys
from timeit import default_timer as timer

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from multi_gpu import BOUNDS, POINT, mesh_band, reference, to_km  # noqa: E402

from ptxjit import cuda  # noqa: E402


def main(ny=2000, nx=2000):
    import torch
    import torch.distributed as dist

    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")  # a plain one-process run
    os.environ.setdefault("MASTER_PORT", "29512")
    on_gpu = cuda.current_target() == "cuda" and torch.cuda.is_available()
    if on_gpu:
        torch.cuda.set_device(local)  # this rank's GPU, for PyTorch ...
        cuda.select_device(local)     # ... and for ptxjit
        device = torch.device("cuda", local)
    else:
        device = torch.device("cpu")
    dist.init_process_group("nccl" if on_gpu else "gloo", rank=rank, world_size=world)
    try:
        per = math.ceil(ny / world)  # equal bands (the last one padded) for all_gather
        row0 = min(rank * per, ny)
        rows = min(per, ny - row0)
        band = torch.zeros((per, nx), dtype=torch.float64, device=device)

        def mesh_once():
            if rows > 0:
                # The tensor's memory, seen by ptxjit without a copy (on the CPU backend,
                # through NumPy, which shares it too).
                d = cuda.as_cuda_array(band) if on_gpu else band.numpy()
                mine = d[:rows]
                grid = ((nx + 15) // 16, (rows + 15) // 16)
                mesh_band[grid, (16, 16)](*BOUNDS, ny, row0, *POINT, mine)
                to_km(mine, out=mine)
            if on_gpu:
                cuda.synchronize()  # the kernels ran on ptxjit's stream; NCCL reads after them
            bands = [torch.empty_like(band) for _ in range(world)]
            dist.all_gather(bands, band)
            return torch.cat(bands)[:ny].cpu().numpy()

        t0 = timer()
        mesh = mesh_once()  # compiles the kernels and makes the process group's first exchange
        t1 = timer()
        mesh = mesh_once()  # the steady state
        t2 = timer()
        if rank == 0:
            np.testing.assert_allclose(mesh, reference(ny, nx), rtol=1e-9, atol=1e-9)
            print(f"{world} rank(s) on {'GPUs' if on_gpu else 'the CPU backend'}: "
                  f"{ny}x{nx} mesh in {1e3 * (t2 - t1):.2f} ms (the first time, compiles and "
                  f"the first exchange included: {1e3 * (t1 - t0):.2f} ms); results match NumPy")
        return mesh
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:3]])
