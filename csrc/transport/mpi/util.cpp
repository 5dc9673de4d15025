#include "transport/mpi/util.h"

#include <mutex>

#include "backend/reduce_ops.h"

namespace sc {

void mpiFail(int rc, const char* what) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  SC_THROW(scMpiError, what, " failed: ", std::string(msg, len));
}

std::vector<int> ranksIn(MPI_Comm sub, MPI_Comm parent) {
  MPI_Group sg, pg;
  MPI_Comm_group(sub, &sg);
  MPI_Comm_group(parent, &pg);
  int n = 0;
  MPI_Group_size(sg, &n);
  std::vector<int> in(static_cast<size_t>(n)), out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) in[size_t(i)] = i;
  MPI_Group_translate_ranks(sg, n, in.data(), pg, out.data());
  MPI_Group_free(&sg);
  MPI_Group_free(&pg);
  return out;
}

namespace {

// inout[i] = in[i] op inout[i] with the operator every other path runs
// (core/reduce_op.h); commutative, so MPI may combine in any order.
template <typename T, int Op>
void userOp(void* in, void* inout, int* len, MPI_Datatype*) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  const ReduceOp<T, Op> f;
  for (int i = 0; i < *len; ++i) b[i] = f(a[i], b[i]);
}

template <typename T>
MPI_Op makeOp(scRedOp_t op) {
  MPI_Op o;
  switch (op) {
    case scProd: mpiCheck(MPI_Op_create(userOp<T, scProd>, 1, &o), "MPI_Op_create"); break;
    case scMax: mpiCheck(MPI_Op_create(userOp<T, scMax>, 1, &o), "MPI_Op_create"); break;
    case scMin: mpiCheck(MPI_Op_create(userOp<T, scMin>, 1, &o), "MPI_Op_create"); break;
    default: mpiCheck(MPI_Op_create(userOp<T, scSum>, 1, &o), "MPI_Op_create"); break;
  }
  return o;
}

// Where MPI's predefined ops would give other results than sparcoll's own
// algorithms (core/reduce_op.h), and native must not be the odd one out:
//  - float16/bfloat16: MPI has no such types (carried as MPI_UINT16_T);
//  - float32/float64 max/min: MPI leaves NaN undefined, and Open MPI's
//    MPI_MAX/MPI_MIN (a comparison, or a SIMD max in its AVX component) keep
//    or drop a NaN depending on the operand order; Arith propagates it;
//  - int8/uint8 sum/prod (avg is a sum): Open MPI's AVX op component
//    saturates 8-bit sums instead of wrapping (`--mca op ^avx` hides it).
bool needsUserOp(scDataType_t dt, scRedOp_t op) {
  switch (dt) {
    case scFloat16:
    case scBfloat16: return true;
    case scFloat32:
    case scFloat64: return op == scMax || op == scMin;
    case scInt8:
    case scUint8: return op == scSum || op == scAvg || op == scProd;
    default: return false;
  }
}

// The user op for (dt, op): created once per pair (MPI_Op_create needs MPI
// initialised, so lazily) and kept for the process lifetime.
MPI_Op userOpFor(scDataType_t dt, scRedOp_t rop) {
  static std::mutex m;
  static MPI_Op ops[scNumTypes][scNumOps] = {};
  static bool made[scNumTypes][scNumOps] = {};
  const scRedOp_t op = rop == scAvg ? scSum : rop;  // avg divides once afterwards
  std::lock_guard<std::mutex> lk(m);
  if (!made[dt][op]) {
    dispatchDtype(dt, [&](auto tag) { ops[dt][op] = makeOp<decltype(tag)>(op); });
    made[dt][op] = true;
  }
  return ops[dt][op];
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
    case scFloat16:
    case scBfloat16: type = MPI_UINT16_T; break;
    default: SC_THROW(scInvalidArgument, "unknown data type ", int(dt));
  }
  switch (rop) {
    case scSum:
    case scAvg: op = MPI_SUM; break;
    case scProd: op = MPI_PROD; break;
    case scMax: op = MPI_MAX; break;
    case scMin: op = MPI_MIN; break;
    default: SC_THROW(scInvalidArgument, "unknown reduction op ", int(rop));
  }
  if (needsUserOp(dt, rop)) op = userOpFor(dt, rop);
}

}  // namespace sc
