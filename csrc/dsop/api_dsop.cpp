// C API of DSOP: validates every argument before the first message (a bad
// argument leaves the communicator usable), picks the schedule, runs it.
#include <cstdint>

#include "core/api_guard.h"
#include "dsop/algos.h"
#include "dsop/sparse.h"

namespace sc::dsop {

scDataType_t checkCall(scComm* comm, scDataType_t dt, scDsopAlgo_t algo, size_t n, size_t m, void* G, void* stream) {
  checkComm(comm);
  const scDataType_t out = outputType(dt);
  SC_ARG(algo >= 0 && algo < scNumDsopAlgos, "unknown DSOP algorithm ", int(algo));
  if (!comm->device()) SC_ARG(stream == nullptr, "stream must be NULL on a host communicator");
  SC_ARG(n >= 1 && m >= 1, "DSOP needs n >= 1 and m >= 1 (got n = ", n, ", m = ", m, ")");
  const size_t si = dtypeSize(dt), so = dtypeSize(out), P = size_t(comm->size());
  SC_ARG(n <= SIZE_MAX / m && n * m <= SIZE_MAX / so, "G of ", n, " x ", m, " ", dtypeName(out),
         " elements overflows size_t");
  SC_ARG(n <= SIZE_MAX - m && n + m <= SIZE_MAX / si / P, "the ", P, " gathered vector pairs of ", n, " + ", m,
         " elements overflow size_t");
  SC_ARG(G != nullptr, "G is NULL");
  comm->backend->checkPointer(G, "G");
  if (comm->device()) deviceEngine(P);  // a bad SPARCOLL_DSOP_GEMM fails here, not mid-schedule
  return out;
}

}  // namespace sc::dsop

using namespace sc;
using namespace sc::dsop;

extern "C" scResult_t scDsop(const void* a, size_t n, const void* b, size_t m, void* G, scDataType_t dtype,
                             scDsopAlgo_t algo, scComm_t comm, void* stream) {
  return scCall(comm, [&] {
    const scDataType_t out = checkCall(comm, dtype, algo, n, m, G, stream);
    SC_ARG(a != nullptr, "a is NULL");
    SC_ARG(b != nullptr, "b is NULL");
    comm->backend->checkPointer(a, "a");
    comm->backend->checkPointer(b, "b");
    const size_t gBytes = n * m * dtypeSize(out), si = dtypeSize(dtype);
    SC_ARG(!overlaps(G, gBytes, a, n * si) && !overlaps(G, gBytes, b, m * si), "G overlaps a or b");
    const scDsopAlgo_t chosen = choose(comm->model, algo, n, m, dtype);
    setCall(*comm, {"scDsop", n, dtype, -1, scDsopAlgoName(chosen), m});
    Ctx v(*comm, dtype, scSum, stream), g(*comm, out, scSum, stream);
    Problem pb{v, g, a, b, n, m, G};
    run(pb, chosen);
  });
}

extern "C" scResult_t scDsopAlgoFor(scComm_t comm, size_t n, size_t m, scDataType_t dtype, scDsopAlgo_t* algo) {
  return scGuard(comm, [&] {
    checkComm(comm);
    SC_ARG(algo != nullptr, "algo output is NULL");
    outputType(dtype);
    SC_ARG(n >= 1 && m >= 1, "DSOP needs n >= 1 and m >= 1 (got n = ", n, ", m = ", m, ")");
    *algo = choose(comm->model, scDsopAuto, n, m, dtype);
  });
}

extern "C" const char* scDsopAlgoName(scDsopAlgo_t algo) {
  static const char* names[] = {"auto", "allgather", "allreduce", "allreduce_ring", "g_rabenseifner", "all_scatter"};
  static_assert(sizeof(names) / sizeof(names[0]) == scNumDsopAlgos, "names follows scDsopAlgo_t");
  return algo >= 0 && algo < scNumDsopAlgos ? names[algo] : "?";
}

extern "C" scResult_t scDsopOutputType(scDataType_t dtype, scDataType_t* out) {
  return scGuard(nullptr, [&] {
    SC_ARG(out != nullptr, "output pointer is NULL");
    *out = outputType(dtype);
  });
}
