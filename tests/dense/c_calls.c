/* Calls made the way a C program makes them: enum arguments are plain ints,
 * so any value can reach the library (C allows it; C++ callers could not pass
 * values outside an enum's range without undefined behaviour). */
#include "sparcoll/sparcoll.h"

scResult_t c_allreduce(const void* s, void* r, size_t n, int dt, int op, int algo, scComm_t comm) {
  return scAllReduce(s, r, n, dt, op, algo, comm, NULL);
}

scResult_t c_reduce_scatter(const void* s, void* r, size_t n, int dt, int op, int algo, scComm_t comm) {
  return scReduceScatter(s, r, n, dt, op, algo, comm, NULL);
}

scResult_t c_allgather(const void* s, void* r, size_t n, int dt, int algo, scComm_t comm) {
  return scAllGather(s, r, n, dt, algo, comm, NULL);
}

scResult_t c_init_local_with_algo(scComm_t* comms, int nranks, int algo) {
  scConfig_t cfg = SC_CONFIG_INITIALIZER;
  cfg.algo = algo;
  return scCommInitLocal(comms, nranks, NULL, &cfg);
}
