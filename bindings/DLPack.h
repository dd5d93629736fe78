// DLPack, the data interchange protocol of the Python array API standard (bindings/DLPack.cpp):
// device arrays are producers (__dlpack__, __dlpack_device__) and any producer can be imported
// without a copy.
#pragma once

#include <pybind11/pybind11.h>

namespace ptxjit::bindings {

namespace py = pybind11;

/// A device array viewing the memory of DLPack producer `obj` (no copy), to be used on `stream`
/// (a ptxjit stream or 0): on CUDA the producer is asked to order its work before that stream
/// unless `order` is false. CUDA, CUDA-host and managed memory is accepted on the CUDA backend,
/// host memory (and CUDA-host and managed memory) on the CPU backend; other devices raise
/// TypeError, tensors ptxjit cannot type BufferError. Needs the GIL.
py::object importDLPack(py::handle obj, py::handle stream, bool order);

/// Adds __dlpack__ and __dlpack_device__ to DeviceNDArray (defineDeviceArrays first) and
/// registers _from_dlpack().
void defineDLPack(py::module_ &m);

} // namespace ptxjit::bindings
