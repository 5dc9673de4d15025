// DSAR_Split_AllGather (thesis §3.3.4): the split phase of SSAR_Split_AllGather
// (split.cpp), after which every owner densifies its range and the foundation's
// ring allgather distributes the dense ranges. No data dependence after the
// split: k + (P-1)/P N elements at most per rank (Table 3.1).
#include "sparse/schedules.h"

namespace sc::sp {

Stream dsarSplitAllGather(SpCtx& s, const Stream& in) { return denseAllGather(s, splitReduce(s, in)); }

}  // namespace sc::sp
