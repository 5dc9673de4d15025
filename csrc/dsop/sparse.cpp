// Sparse DSOP: only the non-zeros of the a_i, b_i travel.
//  1. allgather the non-zero counts (2 words per rank);
//  2. gather every rank's (index, value) pairs with direct grouped exchanges
//     (an allgatherv: each rank sends its own pairs to every peer);
//  3. every rank forms R = union of the a indices, C = union of the b indices
//     (the same on every rank) and widens the gathered vectors to dense
//     vectors over R and C: the support of G is inside R x C;
//  4. the dense DSOP runs on the compressed |R| x |C| problem — allgather
//     (every rank computes all of it, no matrix traffic) or g_rabenseifner
//     (row blocks over R, ring allgather of |R||C| elements);
//  5. G is zeroed and the compressed matrix scattered into it.
// Traffic per rank: (P-1)(2*8 + (nnz_a + nnz_b)(8 + s_in)) bytes for the
// vectors, plus for g_rabenseifner |R||C| - rows_R(r+1)|C| output elements.
#include <vector>

#include "core/api_guard.h"
#include "dsop/algos.h"
#include "dsop/sparse.h"

namespace sc::dsop {

void runSparse(scComm& comm, scDataType_t in, const SparseInput& s, scDsopAlgo_t algo, void* stream) {
  Ctx v(comm, in, scSum, stream), g(comm, outputType(in), scSum, stream), u(comm, scUint64, scSum, stream);
  const int P = comm.size(), r = comm.rank();
  const size_t Pn = size_t(P);
  Backend& be = *comm.backend;

  // 1. counts, read back to size the buffers.
  uint64_t* cnt = reinterpret_cast<uint64_t*>(u.scratch(Scratch::DsopCounts, 2 * Pn));
  const uint64_t mine[2] = {s.aNnz, s.bNnz};
  be.copy(cnt + 2 * size_t(r), mine, sizeof mine, stream);
  allGatherVectors(u, cnt, 2);
  std::vector<uint64_t> counts(2 * Pn);
  // Wait (bounded) before the copy: a device-to-host copy into pageable memory
  // blocks the host until the stream's earlier work is done, without a
  // deadline, and that work waits on the peers.
  comm.hostSync(stream, u.dl);
  be.copy(counts.data(), cnt, 2 * Pn * sizeof(uint64_t), stream);
  comm.hostSync(stream, u.dl);
  std::vector<size_t> aOff(P + 1, 0), bOff(P + 1, 0);
  for (size_t q = 0; q < Pn; ++q) {
    SC_REQUIRE(counts[2 * q] <= s.n && counts[2 * q + 1] <= s.m, scRemoteError, "rank ", q, " reports ", counts[2 * q],
               " + ", counts[2 * q + 1], " non-zeros for n = ", s.n, ", m = ", s.m,
               " (do all ranks pass the same n and m?)");
    aOff[q + 1] = aOff[q] + counts[2 * q];
    bOff[q + 1] = bOff[q] + counts[2 * q + 1];
  }
  const size_t nA = aOff[P], nB = bOff[P], T = nA + nB;

  // 2. gather the pairs. Index layout: a indices, b indices, then R and C.
  uint64_t* I = reinterpret_cast<uint64_t*>(u.scratch(Scratch::DsopIndices, 2 * T));
  char* V = v.scratch(Scratch::DsopValues, T);
  uint64_t *AI = I, *BI = I + nA, *Rset = I + T, *Cset = I + T + nA;
  char *AV = V, *BV = v.at(V, nA);
  be.copy(AI + aOff[r], s.aIdx, s.aNnz * 8, stream);
  be.copy(BI + bOff[r], s.bIdx, s.bNnz * 8, stream);
  v.copy(v.at(AV, aOff[r]), s.aVal, s.aNnz);
  v.copy(v.at(BV, bOff[r]), s.bVal, s.bNnz);
  groupedExchange(v, [&](int to, int from, std::vector<P2POp>& ops) {
    ops.push_back(u.send(to, s.aIdx, s.aNnz));
    ops.push_back(v.send(to, s.aVal, s.aNnz));
    ops.push_back(u.send(to, s.bIdx, s.bNnz));
    ops.push_back(v.send(to, s.bVal, s.bNnz));
    ops.push_back(u.recv(from, AI + aOff[from], counts[2 * size_t(from)]));
    ops.push_back(v.recv(from, v.at(AV, aOff[from]), counts[2 * size_t(from)]));
    ops.push_back(u.recv(from, BI + bOff[from], counts[2 * size_t(from) + 1]));
    ops.push_back(v.recv(from, v.at(BV, bOff[from]), counts[2 * size_t(from) + 1]));
  });

  // 3. the supports and the compressed dense vectors (P x |R| and P x |C|).
  const size_t nR = sortUnique(comm, AI, nA, Rset, stream);
  const size_t nC = sortUnique(comm, BI, nB, Cset, stream);
  be.zero(s.G, s.n * s.m * g.esz, stream);
  if (nR == 0 || nC == 0) return;  // G = 0 on every rank (the unions agree)
  char* Ad = v.scratch(Scratch::DsopDense, P * (nR + nC));
  char* Bd = v.at(Ad, P * nR);
  be.zero(Ad, P * (nR + nC) * v.esz, stream);
  for (size_t q = 0; q < Pn; ++q) {
    densify(comm, Rset, nR, AI + aOff[q], v.at(AV, aOff[q]), counts[2 * q], v.at(Ad, q * nR), v.esz, stream);
    densify(comm, Cset, nC, BI + bOff[q], v.at(BV, bOff[q]), counts[2 * q + 1], v.at(Bd, q * nC), v.esz, stream);
  }

  // 4. dense DSOP on the compressed matrix, 5. scatter into G.
  char* Gc = g.scratch(Scratch::DsopCompact, nR * nC);
  Problem pc{v, g, nullptr, nullptr, nR, nC, Gc};
  const Pairs pairs{Ad, nR, Bd, nC, size_t(P)};
  if (algo == scDsopAuto)
    algo = predictSeconds(comm.model, scDsopAllGather, nR, nC, in) <=
                   predictSeconds(comm.model, scDsopGRabenseifner, nR, nC, in)
               ? scDsopAllGather
               : scDsopGRabenseifner;
  if (algo == scDsopAllGather) pc.product(pairs, Rect{0, nR, 0, nC}, Gc, nC, false);
  else rowBlocksAllGather(pc, pairs, false);
  scatterCompact(comm, Gc, Rset, nR, Cset, nC, s.G, s.m, g.esz, stream);
}

}  // namespace sc::dsop

using namespace sc;
using namespace sc::dsop;

extern "C" scResult_t scDsopSparse(const uint64_t* aIdx, const void* aVal, size_t aNnz, size_t n, const uint64_t* bIdx,
                                   const void* bVal, size_t bNnz, size_t m, void* G, scDataType_t dtype,
                                   scDsopAlgo_t algo, scComm_t comm, void* stream) {
  return scCall(comm, [&] {
    checkCall(comm, dtype, algo, n, m, G, stream);
    SC_ARG(algo == scDsopAuto || algo == scDsopAllGather || algo == scDsopGRabenseifner, "algorithm '",
           scDsopAlgoName(algo), "' is not available for sparse DSOP (auto, allgather, g_rabenseifner)");
    SC_ARG(aNnz <= n && bNnz <= m, "more non-zeros than elements (aNnz = ", aNnz, ", n = ", n, ", bNnz = ", bNnz,
           ", m = ", m, ")");
    SC_ARG(n <= SIZE_MAX - m && n + m <= SIZE_MAX / 16 / size_t(comm->size()),
           "the gathered sparse vectors overflow size_t");
    auto vec = [&](const uint64_t* idx, const void* val, size_t nnz, size_t limit, const char* name) {
      if (nnz == 0) return;
      SC_ARG(idx != nullptr && val != nullptr, name, " indices or values are NULL with ", nnz, " non-zeros");
      comm->backend->checkPointer(idx, name);
      comm->backend->checkPointer(val, name);
      SC_ARG(indicesValid(*comm, idx, nnz, limit, stream), name, " indices must be strictly increasing and below ",
             limit);
    };
    vec(aIdx, aVal, aNnz, n, "a");
    vec(bIdx, bVal, bNnz, m, "b");
    const size_t gBytes = n * m * dtypeSize(outputType(dtype)), si = dtypeSize(dtype);
    SC_ARG(!overlaps(G, gBytes, aIdx, aNnz * 8) && !overlaps(G, gBytes, aVal, aNnz * si) &&
               !overlaps(G, gBytes, bIdx, bNnz * 8) && !overlaps(G, gBytes, bVal, bNnz * si),
           "G overlaps the sparse inputs");
    setCall(*comm, {"scDsopSparse", n, dtype, -1, scDsopAlgoName(algo), m});
    runSparse(*comm, dtype, SparseInput{aIdx, aVal, aNnz, n, bIdx, bVal, bNnz, m, G}, algo, stream);
  });
}
