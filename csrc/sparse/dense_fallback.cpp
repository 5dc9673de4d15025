// The dense fallback: densify the input into the output and run the
// foundation's dense allreduce on it, in place, with the algorithm scAllReduce's
// scAlgoAuto would use (configuration, SPARCOLL_ALGO, then the cost model).
#include "algo/dense.h"
#include "sparse/schedules.h"

namespace sc::sp {

Stream denseFallback(SpCtx& s, const Stream& in) {
  void* out = s.out();
  Stream r = s.toDense(in, out, kOut);
  if (s.size == 1 || s.N == 0) return r;
  Ctx& c = s.c;
  switch (chooseAlgo(c.comm, Coll::AllReduce, scAlgoAuto, s.N * s.vsz)) {
    case scAlgoRing: ringAllReduce(c, out, out, s.N); break;
    case scAlgoRabenseifner: rabenseifnerAllReduce(c, out, out, s.N); break;
    case scAlgoRecDbl: recdblAllReduce(c, out, out, s.N); break;
    case scAlgoNative: c.comm.transport->nativeAllReduce(out, out, s.N, c.dt, scSum, c.stream, c.dl); break;
    default: SC_THROW(scInternalError, "unresolved dense algorithm");
  }
  return r;
}

}  // namespace sc::sp
