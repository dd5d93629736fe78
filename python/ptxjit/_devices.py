"""Devices and contexts: ``cuda.gpus``, ``cuda.select_device``, ``cuda.get_current_device``,
``cuda.current_context``, ``cuda.close``, ``cuda.list_devices`` (numba-cuda's API).

Each thread has a current device (device 0 until it selects another), kept by the C++ runtime
(``runtime::Device``): kernels, ufuncs, allocations and copies of that thread go to it, and every
kernel is loaded once per device it runs on. ``with cuda.gpus[i]:`` selects device ``i`` for the
block and restores the thread's previous device afterwards, so blocks nest.

On the CPU backend there is one device, the host (id 0), and nothing here calls the CUDA driver.
"""

import collections as _collections
import threading as _threading

from ._loader import lib as _lib

MemoryInfo = _collections.namedtuple("MemoryInfo", ["free", "total"])

# Per thread: the devices that were current when each open `with cuda.gpus[i]:` block began
# (blocks nest per thread, and one manager object may be entered by several threads at once).
_saved = _threading.local()

# The CPU backend's one device: what get_current_device() reports there. The compute capability
# is the one kernels' PTX targets when no GPU says otherwise (bindings/Target.cpp).
_HOST_INFO = {
    "id": 0, "name": "ptxjit CPU backend (host)", "compute_capability": (9, 0),
    "MULTIPROCESSOR_COUNT": 1, "MAX_THREADS_PER_BLOCK": 1024, "MAX_BLOCK_DIM_X": 1024,
    "MAX_BLOCK_DIM_Y": 1024, "MAX_BLOCK_DIM_Z": 64, "MAX_GRID_DIM_X": 2147483647,
    "MAX_GRID_DIM_Y": 65535, "MAX_GRID_DIM_Z": 65535, "WARP_SIZE": 32,
    "MAX_SHARED_MEMORY_PER_BLOCK": 49152, "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 49152,
    "UNIFIED_ADDRESSING": 1,
}


def _on_cpu():
    return _lib(start_cuda=True).current_target() == "cpu"


def _count():
    return 1 if _on_cpu() else _lib()._device_count()


def _check_ordinal(i):
    if not isinstance(i, int) or isinstance(i, bool):
        raise TypeError(f"a device is chosen by its integer id, not {type(i).__name__}")
    n = _count()
    if not 0 <= i < n:
        where = "the CPU backend has one device (0)" if _on_cpu() else (
            f"{n} CUDA device{' is' if n == 1 else 's are'} visible (ids 0 to {n - 1}; see "
            f"CUDA_VISIBLE_DEVICES)")
        raise IndexError(f"no device {i}: {where}")
    return i


def _current_id():
    return 0 if _on_cpu() else _lib()._current_device()


def _select(i):
    if not _on_cpu():
        _lib()._select_device(i)


class Device:
    """A device (numba-cuda's ``Device``): ``id``, ``name``, ``compute_capability`` (read
    without opening it), ``uuid``, and attributes such as ``MULTIPROCESSOR_COUNT``,
    ``MAX_THREADS_PER_BLOCK`` and ``WARP_SIZE`` (the driver's values; reading one opens the
    device)."""

    __slots__ = ("id", "_info", "_summary")

    def __init__(self, i):
        self.id = _check_ordinal(i)
        self._info = None
        self._summary = None

    def _props(self):
        """Every property (opens the device: its primary context is retained)."""
        if self._info is None:
            self._info = dict(_HOST_INFO) if _on_cpu() else _lib()._device_info(self.id)
        return self._info

    def _brief(self):
        """Name and compute capability, read without opening the device."""
        if self._summary is None:
            self._summary = (self._info if self._info is not None else dict(_HOST_INFO)
                             if _on_cpu() else _lib()._device_summary(self.id))
        return self._summary

    @property
    def name(self):
        return self._brief()["name"]

    @property
    def compute_capability(self):
        return tuple(self._brief()["compute_capability"])

    @property
    def supports_float16(self):
        """float16 arithmetic in hardware (compute capability 5.3+), as numba-cuda's."""
        return self.compute_capability >= (5, 3)

    @property
    def supports_bfloat16(self):
        """bfloat16 arithmetic in hardware (compute capability 8.0+), as numba-cuda's. Kernels
        may use bfloat16 on any device: older ones compute it in float32 (and the CPU backend
        computes it exactly)."""
        return self.compute_capability >= (8, 0)

    def __getattr__(self, name):
        if name == "uuid":
            # numba-cuda's "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (as nvidia-smi writes it).
            if _on_cpu():
                raise AttributeError("'Device' object has no attribute 'uuid': the CPU "
                                     "backend's device is the host, which has no GPU UUID")
            return _lib()._device_uuid(self.id)
        props = Device._props(self)
        if name in props:
            return props[name]
        raise AttributeError(f"'Device' object has no attribute '{name}'")

    def reset(self):
        """Waits for the device's work (ptxjit keeps primary contexts for the life of the
        process: memory and kernels stay valid; docs/api.md)."""
        if not _on_cpu():
            _lib()._synchronize_device(self.id)

    def can_access_peer(self, peer):
        """True when this device can access device ``peer``'s memory directly."""
        peer = _peer_id(peer)
        return False if _on_cpu() else bool(_lib()._can_access_peer(self.id, peer))

    def __eq__(self, other):
        if isinstance(other, _DeviceContextManager):
            other = other._device
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(("ptxjit.Device", self.id))

    def __repr__(self):
        return f"<CUDA device {self.id} '{self.name}'>"


def _peer_id(peer):
    return _check_ordinal(peer.id if isinstance(peer, (Device, _DeviceContextManager)) else peer)


class _DeviceContextManager:
    """``cuda.gpus[i]``: device ``i``, and a context manager making it the thread's current
    device for a ``with`` block (the previous one is current again afterwards)."""

    __slots__ = ("_device",)

    def __init__(self, device):
        self._device = device

    def __getattr__(self, name):
        return getattr(self._device, name)

    def __enter__(self):
        prev = _current_id()
        _select(self._device.id)
        stack = _saved.__dict__.setdefault("stack", [])
        stack.append(prev)
        return self

    def __exit__(self, *exc):
        _select(_saved.stack.pop())
        return False

    def __eq__(self, other):
        other = other._device if isinstance(other, _DeviceContextManager) else other
        return self._device == other

    def __hash__(self):
        return hash(self._device)

    def __str__(self):
        return f"<Managed Device {self._device.id}>"

    __repr__ = __str__


class _DeviceList:
    """``cuda.gpus``: the visible devices, as a sequence (``len``, indexing, slicing,
    iteration); ``cuda.gpus.current`` is the calling thread's current device."""

    def __len__(self):
        return _count()

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if isinstance(i, int) and not isinstance(i, bool) and i < 0:
            i += len(self)
        return _DeviceContextManager(Device(i))

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    @property
    def current(self):
        """The calling thread's current device (a context manager as ``gpus[i]`` is)."""
        return self[_current_id()]

    def __str__(self):
        return ", ".join(str(d) for d in self)

    def __repr__(self):
        return f"<ptxjit device list: {len(self)} device(s)>"


gpus = _DeviceList()


class Context:
    """A device's context (numba-cuda's ``Context``; ptxjit uses each device's primary context,
    shared with the CUDA runtime, CuPy and PyTorch): ``device``, ``get_memory_info()``,
    ``can_access_peer``, ``enable_peer_access``, ``synchronize``, ``reset``."""

    __slots__ = ("device",)

    def __init__(self, device):
        self.device = device

    @property
    def handle(self):
        return self.device.id

    def get_memory_info(self):
        """``(free, total)`` bytes of the device's memory, now. Run under the device."""
        if _on_cpu():
            import os

            pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
            free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
            return MemoryInfo(free, pages)
        with _DeviceContextManager(self.device):
            return MemoryInfo(*_lib()._memory_info())

    def can_access_peer(self, peer_device):
        """True when this context's device can access device ``peer_device``'s memory (an id
        or a Device)."""
        return self.device.can_access_peer(peer_device)

    def enable_peer_access(self, peer_device):
        """Lets this device's kernels and copies use device ``peer_device``'s arrays
        (cuCtxEnablePeerAccess). Raises when the devices cannot access each other."""
        peer = _peer_id(peer_device)
        if _on_cpu():
            raise RuntimeError("peer access needs two CUDA devices; the CPU backend has one")
        _lib()._enable_peer_access(self.device.id, peer)

    def synchronize(self):
        """Waits for all work on this context's device."""
        self.device.reset()

    def reset(self):
        """Waits for the device's work; memory and loaded kernels stay valid (see Device.reset)."""
        self.device.reset()

    def __eq__(self, other):
        return isinstance(other, Context) and other.device == self.device

    def __hash__(self):
        return hash(("ptxjit.Context", self.device.id))

    def __repr__(self):
        return f"<CUDA context of device {self.device.id}>"


def select_device(device_id):
    """Makes device ``device_id`` the calling thread's current device; returns it."""
    dev = Device(device_id)
    _select(dev.id)
    return dev


def get_current_device():
    """The calling thread's current device."""
    return Device(_current_id())


def current_context(devnum=None):
    """The context of the calling thread's current device (of device ``devnum`` when given,
    which becomes current, as numba-cuda does)."""
    if devnum is not None:
        select_device(devnum)
    return Context(get_current_device())


def list_devices():
    """The visible devices (numba-cuda's ``cuda.list_devices()``)."""
    return list(gpus)


def close():
    """numba-cuda's ``cuda.close()``: ends the thread's use of its devices. ptxjit waits for the
    work of the thread's current device and makes device 0 current again; the primary contexts,
    memory and loaded kernels stay (they are shared with other libraries and the process)."""
    if _on_cpu():
        return
    _lib()._synchronize_device(_current_id())
    _select(0)
