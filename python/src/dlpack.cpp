// Reads the tensor description out of a DLPack capsule (the legacy
// "dltensor" capsule every producer supports) without taking ownership: the
// capsule keeps its name, so its own destructor still frees the tensor, and
// the Python caller keeps the capsule alive while the memory is in use.
// Only the stable DLTensor layout of DLPack < 1.0 is needed, so it is written
// out here instead of depending on a dlpack header. The device types and dtype
// codes sparcoll understands are exported (DLDeviceType, DLDataTypeCode) for
// sparcoll/_arrays.py, which reads __dlpack_device__ before asking for a capsule.
#include <pybind11/stl.h>

#include <vector>

#include "common.h"

namespace scpy {
namespace {

// dlpack.h's values (the subset sparcoll accepts).
enum DLDeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13 };
enum DLDataTypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4 };

struct DLDevice {
  int32_t device_type;  // DLDeviceType
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;  // DLDataTypeCode
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; NULL = compact row-major
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};

py::dict describe(py::capsule cap) {
  if (std::string(cap.name() ? cap.name() : "") != "dltensor")
    throw Failure{scInvalidArgument, "expected an unconsumed DLPack capsule named 'dltensor', got '" +
                                         std::string(cap.name() ? cap.name() : "") + "'"};
  auto* mt = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  if (!mt) throw py::error_already_set();
  const DLTensor& t = mt->dl_tensor;
  py::dict d;
  d["data"] = reinterpret_cast<std::uintptr_t>(static_cast<char*>(t.data) + t.byte_offset);
  d["device_type"] = t.device.device_type;
  d["device_id"] = t.device.device_id;
  std::vector<int64_t> shape(t.shape, t.shape + t.ndim);
  d["shape"] = shape;
  if (t.strides) d["strides"] = std::vector<int64_t>(t.strides, t.strides + t.ndim);
  else d["strides"] = py::none();
  d["code"] = int(t.dtype.code);
  d["bits"] = int(t.dtype.bits);
  d["lanes"] = int(t.dtype.lanes);
  return d;
}

}  // namespace

void bindDlpack(py::module_& m) {
  // Host memory (cpu, cuda_host) and CUDA device memory (cuda, cuda_managed).
  py::enum_<DLDeviceType>(m, "DLDeviceType", "DLPack device types sparcoll reads")
      .value("cpu", kDLCPU)
      .value("cuda", kDLCUDA)
      .value("cuda_host", kDLCUDAHost)
      .value("cuda_managed", kDLCUDAManaged);
  // Named as the prefix of the dtype name: code "float" + 32 bits = "float32".
  py::enum_<DLDataTypeCode>(m, "DLDataTypeCode", "DLPack dtype codes sparcoll reads")
      .value("int", kDLInt)
      .value("uint", kDLUInt)
      .value("float", kDLFloat)
      .value("bfloat", kDLBfloat);
  m.def("dlpack_describe", &describe, py::arg("capsule"),
        "data address, device, shape, strides (elements) and dtype of a DLPack capsule (not consumed)");
}

}  // namespace scpy
