#include "transport/mpi/util.h"

#include <mutex>

#include "backend/reduce_ops.h"

namespace sc {

void mpiCheck(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  SC_THROW(scMpiError, what, " failed: ", std::string(msg, len));
}

namespace {

template <typename T, int Op>
void userOp(void* in, void* inout, int* len, MPI_Datatype*) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  for (int i = 0; i < *len; ++i) {
    switch (Op) {
      case scSum: b[i] = Arith<T>::sum(a[i], b[i]); break;
      case scProd: b[i] = Arith<T>::prod(a[i], b[i]); break;
      case scMax: b[i] = Arith<T>::max(a[i], b[i]); break;
      default: b[i] = Arith<T>::min(a[i], b[i]); break;
    }
  }
}

template <typename T>
MPI_Op makeOp(scRedOp_t op) {
  MPI_Op o;
  switch (op) {
    case scProd: MPI_Op_create(userOp<T, scProd>, 1, &o); break;
    case scMax: MPI_Op_create(userOp<T, scMax>, 1, &o); break;
    case scMin: MPI_Op_create(userOp<T, scMin>, 1, &o); break;
    default: MPI_Op_create(userOp<T, scSum>, 1, &o); break;
  }
  return o;
}

}  // namespace

MpiType::MpiType(scDataType_t dt, scRedOp_t rop) : size(dtypeSize(dt)) {
  switch (dt) {
    case scInt8: type = MPI_INT8_T; break;
    case scUint8: type = MPI_UINT8_T; break;
    case scInt32: type = MPI_INT32_T; break;
    case scUint32: type = MPI_UINT32_T; break;
    case scInt64: type = MPI_INT64_T; break;
    case scUint64: type = MPI_UINT64_T; break;
    case scFloat32: type = MPI_FLOAT; break;
    case scFloat64: type = MPI_DOUBLE; break;
    case scFloat16: case scBfloat16: type = MPI_UINT16_T; break;
    default: SC_THROW(scInvalidArgument, "unknown data type ", int(dt));
  }
  if (dt == scFloat16 || dt == scBfloat16) {
    // User ops are created once per (type, op) and kept for the process lifetime.
    static std::mutex m;
    static MPI_Op ops[2][4] = {};
    static bool made[2][4] = {};
    const int ti = dt == scFloat16 ? 0 : 1, oi = rop == scAvg ? 0 : int(rop);
    std::lock_guard<std::mutex> lk(m);
    if (!made[ti][oi]) {
      ops[ti][oi] = ti == 0 ? makeOp<Half>(rop == scAvg ? scSum : rop) : makeOp<BFloat16>(rop == scAvg ? scSum : rop);
      made[ti][oi] = true;
    }
    op = ops[ti][oi];
    return;
  }
  switch (rop) {
    case scSum: case scAvg: op = MPI_SUM; break;
    case scProd: op = MPI_PROD; break;
    case scMax: op = MPI_MAX; break;
    case scMin: op = MPI_MIN; break;
    default: SC_THROW(scInvalidArgument, "unknown reduction op ", int(rop));
  }
}

}  // namespace sc
