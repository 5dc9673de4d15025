// The C API's enums as Python enum types (sparcoll._sparcoll.RedOp, ...). The
// Python layer builds its tables of accepted names ("sum", "ring", "float32")
// from these, so a value exists in Python exactly when it exists in C.
//
// Each pyName function is a switch over every enumerator with no default case:
// the target builds with -Werror=switch (python/CMakeLists.txt), so a new C
// enumerator without a Python name fails the build, and a renamed one fails to
// compile. The algorithm enums (scAlgo_t, scSparseAlgo_t, scDsopAlgo_t) and the
// reductions are the exception: their names are the C API's (scAlgoName,
// scRedOpName, ...), whose tables the library keeps. The data types take
// numpy's names ("float32"), which the C API accepts as aliases
// (scDataTypeFromName) but does not print; scResult_t keeps its C names because
// SparcollError.code_name reports them.
#include <cstdint>

#include "common.h"

namespace scpy {
namespace {

const char* pyName(scResult_t v) {
  switch (v) {
    case scSuccess: return "scSuccess";
    case scInvalidArgument: return "scInvalidArgument";
    case scInvalidUsage: return "scInvalidUsage";
    case scSystemError: return "scSystemError";
    case scCudaError: return "scCudaError";
    case scNcclError: return "scNcclError";
    case scMpiError: return "scMpiError";
    case scTimeout: return "scTimeout";
    case scRemoteError: return "scRemoteError";
    case scInternalError: return "scInternalError";
    case scInterrupted: return "scInterrupted";
    case scNumResults: break;
  }
  return nullptr;
}

// The names numpy, torch and cupy give these dtypes.
const char* pyName(scDataType_t v) {
  switch (v) {
    case scInt8: return "int8";
    case scUint8: return "uint8";
    case scInt32: return "int32";
    case scUint32: return "uint32";
    case scInt64: return "int64";
    case scUint64: return "uint64";
    case scFloat16: return "float16";
    case scFloat32: return "float32";
    case scFloat64: return "float64";
    case scBfloat16: return "bfloat16";
    case scNumTypes: break;
  }
  return nullptr;
}

int itemsize(scDataType_t v) {
  switch (v) {
    case scInt8: return sizeof(int8_t);
    case scUint8: return sizeof(uint8_t);
    case scInt32: return sizeof(int32_t);
    case scUint32: return sizeof(uint32_t);
    case scInt64: return sizeof(int64_t);
    case scUint64: return sizeof(uint64_t);
    case scFloat16:
    case scBfloat16: return sizeof(uint16_t);
    case scFloat32: return sizeof(float);
    case scFloat64: return sizeof(double);
    case scNumTypes: break;
  }
  return 0;
}

// scTopkIndexU32/U64 are the same values under the top-k API's names.
const char* pyName(scIndexType_t v) {
  switch (v) {
    case scIndexU32: return "uint32";
    case scIndexU64: return "uint64";
    case scNumIndexTypes: break;
  }
  return nullptr;
}

// The reductions' names are the C API's own (scRedOpName).
const char* pyName(scRedOp_t v) { return v >= 0 && v < scNumOps ? scRedOpName(v) : nullptr; }

// The algorithms' names are the C API's own (scAlgoName: one table, in the
// library, whose size is checked against scNumAlgos there).
const char* pyName(scAlgo_t v) { return v >= 0 && v < scNumAlgos ? scAlgoName(v) : nullptr; }

const char* pyName(scTransport_t v) {
  switch (v) {
    case scTransportMpi: return "mpi";
    case scTransportNccl: return "nccl";
    case scTransportLocal: return "local";
  }
  return nullptr;
}

// The benchmarks and tuning files spell scSsarRecDbl "ssar_recdbl" (as the dense
// scAlgoRecDbl); the package still accepts its old spelling "ssar_rec_dbl" with a
// DeprecationWarning (sparcoll/_capi.py, DEPRECATED_NAMES).
const char* pyName(scSparseAlgo_t v) { return v >= 0 && v < scNumSparseAlgos ? scSparseAlgoName(v) : nullptr; }

const char* pyName(scDsopAlgo_t v) { return v >= 0 && v < scNumDsopAlgos ? scDsopAlgoName(v) : nullptr; }

const char* pyName(scNbrAlgo_t v) {
  switch (v) {
    case scNbrAuto: return "auto";
    case scNbrNaive: return "naive";
    case scNbrCombining: return "combining";
    case scNbrHierarchical: return "hierarchical";
    case scNbrNative: return "native";
    case scNumNbrAlgos: break;
  }
  return nullptr;
}

// The collectives the cost model prices, by the tuning file's names.
const char* pyName(scCollective_t v) {
  switch (v) {
    case scCollAllReduce: return "allreduce";
    case scCollReduceScatter: return "reduce_scatter";
    case scCollAllGather: return "allgather";
    case scCollSparseAllReduce: return "sparse_allreduce";
    case scCollDsop: return "dsop";
    case scCollBroadcast: return "broadcast";
    case scNumCollectives: break;
  }
  return nullptr;
}

const char* pyName(scTopkMethod_t v) {
  switch (v) {
    case scTopkApprox: return "approx";
    case scTopkApproxAtMost: return "approx_at_most";
    case scTopkExact: return "exact";
    case scTopkThreshold: return "threshold";
    case scTopkBracket: return "bracket";
    case scTopkNumMethods: break;
  }
  return nullptr;
}

const char* pyName(scTopkOutput_t v) {
  switch (v) {
    case scTopkVariable: return "variable";
    case scTopkFixedPerBucket: return "fixed";
    case scTopkNumOutputs: break;
  }
  return nullptr;
}

// Every sparcoll enum numbers its values 0, 1, 2, ... and (but scTransport_t)
// ends with a count that has no name: the values are those up to the first
// without a name.
template <typename E>
py::enum_<E> exportEnum(py::module_& m, const char* name, const char* doc) {
  py::enum_<E> e(m, name, doc);
  for (int i = 0; const char* n = pyName(E(i)); ++i) e.value(n, E(i));
  return e;
}

}  // namespace

void bindEnums(py::module_& m) {
  exportEnum<scResult_t>(m, "Result", "scResult_t, by C name");
  exportEnum<scDataType_t>(m, "DataType", "scDataType_t, by numpy dtype name")
      .def_property_readonly("itemsize", &itemsize, "bytes per element");
  exportEnum<scIndexType_t>(m, "IndexType", "scIndexType_t (= scTopkIndex_t), by the unsigned dtype it reads");
  exportEnum<scRedOp_t>(m, "RedOp", "scRedOp_t");
  exportEnum<scAlgo_t>(m, "Algo", "scAlgo_t (dense algorithms)");
  exportEnum<scTransport_t>(m, "Transport", "scTransport_t");
  exportEnum<scSparseAlgo_t>(m, "SparseAlgo", "scSparseAlgo_t");
  exportEnum<scDsopAlgo_t>(m, "DsopAlgo", "scDsopAlgo_t");
  exportEnum<scNbrAlgo_t>(m, "NbrAlgo", "scNbrAlgo_t (neighbourhood collectives)");
  exportEnum<scCollective_t>(m, "Collective", "scCollective_t (what the cost model prices), by tuning-file name");
  exportEnum<scTopkMethod_t>(m, "TopkMethod", "scTopkMethod_t");
  exportEnum<scTopkOutput_t>(m, "TopkOutput", "scTopkOutput_t");
  m.attr("SPARSE_SORT_INPUT") = unsigned(scSparseSortInput);
}

}  // namespace scpy
