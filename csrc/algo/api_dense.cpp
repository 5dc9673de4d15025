// C API: dense collectives. Validates everything before the first message (a
// bad argument is reported locally, never half-way through a schedule), picks
// the algorithm, runs the schedule, applies avg's division once.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "algo/dense.h"
#include "core/api_guard.h"
#include "core/overlap.h"

namespace sc {
namespace {

void checkStream(scComm* comm, void* stream) {
  if (!comm->device()) SC_ARG(stream == nullptr, "stream must be NULL on a host communicator");
}

void checkCall(scComm* comm, scDataType_t dt, void* stream) {
  checkComm(comm);
  checkDtype(dt);
  checkStream(comm, stream);
}

void checkBuffers(scComm* comm, const void* send, size_t sendElems, const void* recv, size_t recvElems, scDataType_t dt,
                  const char* sendName = "sendbuf") {
  const size_t esz = dtypeSize(dt);
  // No object can span more than PTRDIFF_MAX bytes; a larger count is a bad
  // argument, not something to start copying from.
  const size_t n = std::max(sendElems, recvElems), maxElems = size_t(PTRDIFF_MAX) / esz;
  SC_ARG(n <= SIZE_MAX / esz, "element count ", n, " of ", dtypeName(dt), " overflows size_t bytes");
  SC_ARG(n <= maxElems, "element count ", n, " of ", dtypeName(dt), " exceeds the largest possible buffer (", maxElems,
         " elements)");
  if (sendElems) {
    SC_ARG(send != nullptr, sendName, " is NULL with a non-zero count");
    comm->backend->checkPointer(send, sendName);
  }
  if (recvElems) {
    SC_ARG(recv != nullptr, "recvbuf is NULL with a non-zero count");
    comm->backend->checkPointer(recv, "recvbuf");
  }
}

size_t mulChecked(size_t a, size_t b) {
  SC_ARG(a == 0 || b <= SIZE_MAX / a, "count ", b, " times ", a, " ranks overflows size_t");
  return a * b;
}

// recvbuf either is exactly the collective's in-place position (inPlace, as
// sparcoll.h defines it per collective) or shares no byte with sendbuf: the
// schedules read sendbuf after writing recvbuf, so any other overlap returned
// garbage without an error. `rule()` says what in place means for this call;
// it is formatted only for the error (a call that passes builds no string).
template <typename Rule>
void checkOverlap(const void* send, size_t sendElems, const void* recv, size_t recvElems, scDataType_t dt, bool inPlace,
                  const Rule& rule) {
  const size_t esz = dtypeSize(dt), sb = sendElems * esz, rb = recvElems * esz;
  if (inPlace || !overlaps(send, sb, recv, rb)) return;
  const uintptr_t s = reinterpret_cast<uintptr_t>(send), r = reinterpret_cast<uintptr_t>(recv);
  SC_THROW(scInvalidArgument, "recvbuf (", rb, " bytes) overlaps sendbuf (", sb, " bytes) at recvbuf = sendbuf ",
           r >= s ? "+ " : "- ", r >= s ? r - s : s - r, " bytes, which is not in place (", rule(),
           "): pass disjoint buffers or the in-place form");
}

void finishAvg(Ctx& c, scAlgo_t algo, void* buf, size_t n) {
  if (c.op == scAvg && c.size > 1 && !(algo == scAlgoNative && c.comm.transport->nativeHasAvg()))
    c.divide(buf, n, c.size);
}

// sparcoll's own schedules may run as plans (Transport::plans): their steps
// never depend on the data. A native call is the library's own; one rank
// moves nothing.
bool planned(const scComm& comm, scAlgo_t a) { return a != scAlgoNative && comm.size() > 1; }

// Native calls get sum when the library has no avg; finishAvg divides.
scRedOp_t nativeOp(const Ctx& c) { return c.op == scAvg && !c.comm.transport->nativeHasAvg() ? scSum : c.op; }

}  // namespace
}  // namespace sc

using namespace sc;

extern "C" scResult_t scAllReduce(const void* send, void* recv, size_t count, scDataType_t dt, scRedOp_t op,
                                  scAlgo_t algo, scComm_t comm, void* stream) {
  return scCall(comm, [&] {
    checkCall(comm, dt, stream);
    checkOp(op);
    checkBuffers(comm, send, count, recv, count, dt);
    const scAlgo_t a = chooseAlgo(*comm, Coll::AllReduce, algo, count * dtypeSize(dt));
    checkOverlap(send, count, recv, count, dt, send == recv, [] { return "recvbuf == sendbuf"; });
    setCall(*comm, {"scAllReduce", count, dt, op, algoName(a)});
    if (count == 0) return;
    Ctx c(*comm, dt, op, stream, planned(*comm, a));
    if (c.size == 1) {
      c.copy(recv, send, count);
      return;
    }
    switch (a) {
      case scAlgoRing: ringAllReduce(c, send, recv, count); break;
      case scAlgoRabenseifner: rabenseifnerAllReduce(c, send, recv, count); break;
      case scAlgoRecDbl: recdblAllReduce(c, send, recv, count); break;
      case scAlgoNative: comm->transport->nativeAllReduce(send, recv, count, dt, nativeOp(c), stream, c.dl); break;
      default: SC_THROW(scInternalError, "unresolved algorithm");
    }
    finishAvg(c, a, recv, count);
    c.run();
  });
}

extern "C" scResult_t scReduceScatter(const void* send, void* recv, size_t recvcount, scDataType_t dt, scRedOp_t op,
                                      scAlgo_t algo, scComm_t comm, void* stream) {
  return scCall(comm, [&] {
    checkCall(comm, dt, stream);
    checkOp(op);
    const size_t total = mulChecked(comm->size(), recvcount);
    checkBuffers(comm, send, total, recv, recvcount, dt);
    const scAlgo_t a = chooseAlgo(*comm, Coll::ReduceScatter, algo, total * dtypeSize(dt));
    const size_t rsOff = size_t(comm->rank()) * recvcount * dtypeSize(dt);
    checkOverlap(send, total, recv, recvcount, dt, static_cast<const char*>(send) + rsOff == recv, [&] {
      return cat("recvbuf == sendbuf + rank*recvcount elements = sendbuf + ", rsOff, " bytes on rank ", comm->rank());
    });
    setCall(*comm, {"scReduceScatter", recvcount, dt, op, algoName(a)});
    if (recvcount == 0) return;
    Ctx c(*comm, dt, op, stream, planned(*comm, a));
    if (c.size == 1) {
      c.copy(recv, send, recvcount);
      return;
    }
    switch (a) {
      case scAlgoRing: {
        char* work = c.scratch(Scratch::Work, total);
        ringReduceScatter(c, send, work, Blocks{total, size_t(c.size)});
        c.copy(recv, c.at(work, c.rank * recvcount), recvcount);
        break;
      }
      case scAlgoRabenseifner: halvingReduceScatter(c, send, recv, recvcount); break;
      case scAlgoNative:
        comm->transport->nativeReduceScatter(send, recv, recvcount, dt, nativeOp(c), stream, c.dl);
        break;
      default: SC_THROW(scInternalError, "unresolved algorithm");
    }
    finishAvg(c, a, recv, recvcount);
    c.run();
  });
}

extern "C" scResult_t scAllGather(const void* send, void* recv, size_t sendcount, scDataType_t dt, scAlgo_t algo,
                                  scComm_t comm, void* stream) {
  return scCall(comm, [&] {
    checkCall(comm, dt, stream);
    const size_t total = mulChecked(comm->size(), sendcount);
    checkBuffers(comm, send, sendcount, recv, total, dt);
    const scAlgo_t a = chooseAlgo(*comm, Coll::AllGather, algo, total * dtypeSize(dt));
    const size_t agOff = size_t(comm->rank()) * sendcount * dtypeSize(dt);
    checkOverlap(send, sendcount, recv, total, dt, static_cast<const char*>(recv) + agOff == send, [&] {
      return cat("sendbuf == recvbuf + rank*sendcount elements = recvbuf + ", agOff, " bytes on rank ", comm->rank());
    });
    setCall(*comm, {"scAllGather", sendcount, dt, -1, algoName(a)});
    if (sendcount == 0) return;
    Ctx c(*comm, dt, scSum, stream, planned(*comm, a));
    switch (a) {
      case scAlgoRing:
        c.copy(c.at(recv, c.rank * sendcount), send, sendcount);
        ringAllGather(c, recv, Blocks{total, size_t(c.size)}, send);
        break;
      case scAlgoRecDbl: doublingAllGather(c, send, recv, sendcount); break;
      case scAlgoNative: comm->transport->nativeAllGather(send, recv, sendcount, dt, stream, c.dl); break;
      default: SC_THROW(scInternalError, "unresolved algorithm");
    }
    c.run();
  });
}

extern "C" scResult_t scBroadcast(void* buf, size_t count, scDataType_t dt, int root, scAlgo_t algo, scComm_t comm,
                                  void* stream) {
  return scCall(comm, [&] {
    checkCall(comm, dt, stream);
    SC_ARG(root >= 0 && root < comm->size(), "root ", root, " is out of range on rank ", comm->rank(),
           ": the communicator has ", comm->size(), " ranks, root must be in [0, ", comm->size(), ")");
    checkBuffers(comm, buf, count, nullptr, 0, dt, "buf");
    const scAlgo_t a = chooseAlgo(*comm, Coll::Broadcast, algo, count * dtypeSize(dt));
    setCall(*comm, {"scBroadcast", count, dt, -1, algoName(a), uint64_t(root)});
    if (count == 0 || comm->size() == 1) return;
    Ctx c(*comm, dt, scSum, stream, planned(*comm, a));
    switch (a) {
      case scAlgoBinomial: binomialBroadcast(c, buf, count, root); break;
      case scAlgoScatterAllGather: scatterAllGatherBroadcast(c, buf, count, root); break;
      case scAlgoNative: comm->transport->nativeBroadcast(buf, count, dt, root, stream, c.dl); break;
      default: SC_THROW(scInternalError, "unresolved algorithm");
    }
    c.run();
  });
}

extern "C" scResult_t scBarrier(scComm_t comm, void* stream) {
  return scCall(comm, [&] {
    checkComm(comm);
    checkStream(comm, stream);
    setCall(*comm, {"scBarrier"});
    comm->transport->barrier(stream, comm->deadline());
  });
}

extern "C" scResult_t scAllReduceAlgoFor(scComm_t comm, size_t bytes, scAlgo_t* algo) {
  return scGuard(comm, [&] {
    checkComm(comm);
    SC_ARG(algo != nullptr, "algo output is NULL");
    *algo = chooseAlgo(*comm, Coll::AllReduce, scAlgoAuto, bytes);
  });
}
