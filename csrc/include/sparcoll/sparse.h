/*
 * sparcoll — sparse allreduce (SparCML; Renggli, "Efficient Sparse AllReduce
 * for Scalable Machine Learning", ETH Zurich 2017, chapter 3).
 *
 * Every rank holds k_i (index, value) pairs of a vector of dimension `dim`;
 * every rank ends with the element-wise sum (or average) over the ranks. The
 * size K of the union of the index sets is unknown in advance: k <= K <=
 * min(dim, P*k). Self-contained C; included by sparcoll.h.
 *
 * Sparse streams. Internally a vector over an index range is either sparse
 * (sorted, unique indices + values) or dense (every value). A stream switches
 * to dense whenever the sparse form would not be smaller than the dense one
 * (the thesis's delta = len*vsize/(isize+vsize) entries), checked before every
 * size-changing operation (merge, split, concatenation); scSparseOptions_t may
 * lower that threshold (compute-aware setting: the thesis measured that sparse
 * summation already costs as much as dense summation near 6 % density).
 *
 * Sizes are data dependent, so every step first exchanges counts (one small
 * round, 8 bytes per message) and then the payload; a sparse payload is two
 * messages (indices, values). Every call starts with a header round (an
 * allgather of 40 bytes per rank: nnz, dim, types, options, input check) in
 * which ranks learn every k_i and detect bad or mismatched arguments, so an
 * error on one rank is reported on all ranks instead of leaving peers hanging
 * (scSparseAllReduceStatic, below, bounds every count by a capacity instead
 * and needs neither that round nor any count read).
 * On device communicators each step reads back one small block of counts
 * (one device-to-host copy, after waiting for the stream, bounded by the
 * deadline): a step costs one extra latency (alpha) plus that read, typically
 * 10-30 us on a GPU. Reads (scStats_t.hostReads counts them): the header; one
 * per recursive-doubling stage (own merged count and the partner's together)
 * and one for the result's count; one per sparse recursive-halving stage of
 * scDsarEarlySwitch (the split takes the merged count from device memory);
 * the split algorithms read the split's counts once and the owners' sums once
 * (device owners sum their pieces with one sort after the last arrives, host
 * owners merge each piece as it arrives; SPARCOLL_SPARSE_OWNER_SUM=merge|sort
 * overrides, with bit-identical results).
 *
 * Buffers follow the communicator: host memory on host communicators (mpi,
 * host-local), device memory on device communicators (nccl, device-local).
 * Calls on device communicators are stream-ordered, but return only after the
 * last size read, i.e. when the remaining work is the final copy/densify.
 */
#ifndef SPARCOLL_SPARSE_H_
#define SPARCOLL_SPARSE_H_

#include <stddef.h>
#include <stdint.h>

#include "sparcoll/sparcoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Index type of the (index, value) pairs: scIndexType_t, in sparcoll.h. */

/* Algorithms (thesis section 3.3; Table 3.1 gives their alpha-beta costs).
 *  scSsarRecDbl          recursive doubling on sparse streams, sparse merge after each
 *                        stage; log2 P' stages (non-power-of-two P folds: +2 steps).
 *                        Bandwidth log2(P) k (K = k) ... (P-1) k (K = P k) elements.
 *  scSsarSplitAllGather  split the index space into P ranges, send each range straight
 *                        to its owner (all to all), owners sum as pieces arrive, then a
 *                        sparse recursive-doubling allgather where merging is
 *                        concatenation. 2(P-1)/P k ... P k elements.
 *  scDsarSplitAllGather  as above, but owners densify their range and the dense ring
 *                        allgather finishes. <= k + (P-1)/P dim elements.
 *  scDsarEarlySwitch     recursive-halving reduce-scatter whose first log2(G) stages run
 *                        on sparse streams (groups of G ranks), then densify early, dense
 *                        halving across the groups, dense recursive-doubling allgather.
 *  scSparseDense         densify, then the dense allreduce (scAllReduce's scAlgoAuto).
 *  scSparseAuto          a tuning file's sparse_allreduce rule when one matches (bytes =
 *                        dim x value size, density = the mean k_i / dim), else the cost
 *                        model: expected union size under a uniform model,
 *                        f(k, N, P) = N (1 - prod_i (1 - k_i/N)) with the measured k_i of
 *                        the header round, and the communicator's alpha-beta-gamma model.
 *                        The model never picks a sparse algorithm when dense is predicted
 *                        faster. */
typedef enum SC_ENUM_BASE {
  scSparseAuto = 0,
  scSsarRecDbl = 1,
  scSsarSplitAllGather = 2,
  scDsarSplitAllGather = 3,
  scDsarEarlySwitch = 4,
  scSparseDense = 5,
  scNumSparseAlgos = 6
} scSparseAlgo_t;

/* scSparseOptions_t.flags */
enum {
  /* Sort the input by index and sum duplicate indices (stable: duplicates are
   * summed in input order) instead of rejecting unsorted or duplicate indices.
   * nnz may then exceed dim. */
  scSparseSortInput = 1u
};

/* The compute-aware switch density (the thesis's measured break-even point of
 * sparse vs dense summation, Figure 5.6). */
#define SC_SPARSE_SWITCH_COMPUTE_AWARE 0.0625

/* Per-call options. Every rank must pass the same options (checked). */
typedef struct {
  size_t size;    /* sizeof(scSparseOptions_t): lets the struct grow compatibly */
  unsigned flags; /* scSparseSortInput */
  /* Dense switch. A stream over len indices stays sparse only while its sparse
   * form is smaller than the dense one AND, when switchDensity > 0, it holds at
   * most switchDensity*len entries. 0: the size rule alone (thesis's delta). */
  double switchDensity;
  /* scDsarEarlySwitch: number G of ranks (power of two) merged sparsely before
   * the switch to dense; 0: chosen by the model (the largest G whose expected
   * union stays below the switch threshold). Clamped to the power-of-two part of P. */
  int earlyGroupSize;
} scSparseOptions_t;

#define SC_SPARSE_OPTIONS_INITIALIZER \
  { sizeof(scSparseOptions_t), 0u, 0.0, 0 }

/* Sparse allreduce with a dense result.
 *  indices, values  nnz sorted, unique indices < dim (itype) and their values
 *                   (vtype), in the communicator's memory. Either may be NULL when
 *                   nnz == 0. Not modified.
 *  op               scSum or scAvg (sum divided by the number of ranks; integers
 *                   truncate); other ops are rejected (the neutral element is 0).
 *  denseOut         dim values of vtype; must not overlap the inputs.
 * Errors (reported on every rank with the same code; the communicator stays usable):
 *  scInvalidArgument  unsorted or duplicate indices (unless scSparseSortInput), an
 *                     index >= dim, nnz > dim, NULL pointers with nnz > 0, NULL
 *                     denseOut with dim > 0, unknown itype/vtype/op/algo, uint32
 *                     indices with dim > 2^32, dim/types/op/algo/options that
 *                     differ across ranks (detected in the header round), a
 *                     non-NULL stream on a host communicator, memory of the wrong kind.
 *  scTimeout etc.     as for the dense collectives (the communicator is aborted). */
scResult_t scSparseAllReduce(const void* indices, const void* values, size_t nnz, size_t dim, scIndexType_t itype,
                             scDataType_t vtype, scRedOp_t op, scSparseAlgo_t algo, void* denseOut, scComm_t comm,
                             void* stream);

/* scSparseAllReduce with options (opts may be NULL: defaults). */
scResult_t scSparseAllReduceEx(const void* indices, const void* values, size_t nnz, size_t dim, scIndexType_t itype,
                               scDataType_t vtype, scRedOp_t op, scSparseAlgo_t algo, const scSparseOptions_t* opts,
                               void* denseOut, scComm_t comm, void* stream);

/* --- sparse results ---------------------------------------------------------
 * A library-owned result: either sparse (nnz sorted unique indices + values;
 * every index not listed is zero, a listed value may be zero) or dense (dim
 * values) when the reduction switched to dense. Its buffers live in the memory
 * of the communicator it was created for (device memory for device
 * communicators) and are reused, growing as needed, by later calls with the
 * same handle; the pointers returned by the accessors stay valid until the
 * next call that writes the handle or scSparseResultDestroy. On device
 * communicators the values are ready in stream order. A handle is independent
 * of the communicator's lifetime and may serve any communicator of the same
 * memory kind (and device). */
typedef struct scSparseResult* scSparseResult_t;

/* Creates an empty result (nnz 0, sparse) for communicators like `comm`. */
scResult_t scSparseResultCreate(scComm_t comm, scSparseResult_t* result);
/* Frees the handle and its buffers (NULL is a no-op). */
scResult_t scSparseResultDestroy(scSparseResult_t result);

/* Sparse allreduce with a sparse result written to `result` (same arguments and
 * errors as scSparseAllReduceEx). A result that went dense internally but has
 * few enough non-zeros to be sparse again is returned sparse. */
scResult_t scSparseAllReduceToSparse(const void* indices, const void* values, size_t nnz, size_t dim,
                                     scIndexType_t itype, scDataType_t vtype, scRedOp_t op, scSparseAlgo_t algo,
                                     const scSparseOptions_t* opts, scSparseResult_t result, scComm_t comm,
                                     void* stream);

/* Accessors (after a successful scSparseAllReduceToSparse). */
scResult_t scSparseResultIsDense(scSparseResult_t result, int* isDense);
/* Sparse: number of listed entries; dense: dim. */
scResult_t scSparseResultNnz(scSparseResult_t result, size_t* nnz);
/* The call's dim (the dense length). */
scResult_t scSparseResultDim(scSparseResult_t result, size_t* dim);
/* Sparse: nnz indices of the call's itype; dense: NULL. */
scResult_t scSparseResultIndices(scSparseResult_t result, const void** indices);
/* Sparse: nnz values; dense: dim values (the call's vtype). */
scResult_t scSparseResultValues(scSparseResult_t result, const void** values);
/* The algorithm that produced the result (auto resolved). */
scResult_t scSparseResultAlgo(scSparseResult_t result, scSparseAlgo_t* algo);

/* What scSparseAuto picks for these per-rank non-zero counts (nnzPerRank has one
 * entry per rank of comm; the same model and inputs as a call, no communication).
 * denseOutput: 1 for scSparseAllReduce(Ex), 0 for scSparseAllReduceToSparse (a
 * sparse result then needs no densification, which the model counts). */
scResult_t scSparseAlgoFor(scComm_t comm, const size_t* nnzPerRank, size_t dim, scIndexType_t itype, scDataType_t vtype,
                           const scSparseOptions_t* opts, int denseOutput, scSparseAlgo_t* algo);

/* --- static-size sparse allreduce ---------------------------------------------
 * For inputs whose size is bounded in advance: every rank sends at most
 * `capacity` (index, value) pairs (fixed-output top-k: capacity = k), the same
 * capacity on every rank. There is no header round and no size exchange: each
 * rank packs one block [count | capacity indices | capacity values] (8 bytes +
 * each array rounded up to 8 bytes), one dense allgather of the P blocks runs
 * (scAllGather's automatic schedule, on every transport), and every rank then
 * sums all P x capacity slots locally: the dense output is zeroed and each
 * index gets its contributions summed left to right in rank order, and in list
 * order within a rank (a stable sort by index, then one in-order sum per
 * index; no atomics), so every rank, CPU or GPU, ends with the same bits.
 * Lists may be unsorted and may repeat an index (repeats are summed). The
 * count travels inside the block, so no rank reads any count on the host:
 * with the count in device memory (nnzPtr) a device call is enqueued on
 * `stream` and returns without waiting for it (scStats_t.hostReads stays 0
 * when `status` is given). Traffic per rank is what the allgather of P blocks
 * sends (ring: (P - 1) x block bytes).
 *
 * Why a separate entry point and not a scSparseAlgo_t: the other algorithms
 * need no capacity but measure every rank's count on the host first (the
 * header round); this one needs a capacity and never looks at counts on the
 * host. Like NCCL's calls, it is stream-ordered end to end, so it can follow
 * a device top-k (scTopkSelectAsync writes scTopkCounts_t.nnz, a valid nnzPtr)
 * without a synchronisation, and be captured into a CUDA graph with it.
 *
 *  indices, values  the rank's pairs (itype indices, vtype values) in the
 *                   communicator's memory: the first nnz are used. With nnzPtr
 *                   they must hold `capacity` readable entries (the count is not
 *                   known when the copy is enqueued); with a host nnz, nnz.
 *  nnz, nnzPtr      the count: nnzPtr == NULL: the host value nnz; else one
 *                   uint64_t in the communicator's memory (device memory on
 *                   device communicators), read in stream order.
 *  capacity         1 .. 2^40, equal on every rank.
 *  dim              equal on every rank; itype scIndexU32 needs dim < 2^32.
 *  op               scSum, or scAvg (the sum divided by P once at the end).
 *  denseOut         dim values; must not overlap the inputs' capacity entries.
 *  status           NULL, or one uint64_t in the communicator's memory that the
 *                   caller sets to 0 once: a call whose data is bad writes its
 *                   status word there if it is still 0 (the first failure is
 *                   kept until the caller clears it), in stream order.
 * Data errors (a count > capacity, an index >= dim) are found where the blocks
 * are summed. Such a block (count) or entry (index) is skipped, and the status
 * word is SC_STATIC_STATUS(rank, position, kind) of the first bad slot in rank
 * order; every rank sees the same blocks, so every rank finds the same error.
 * Host communicators: every rank also returns scInvalidArgument naming the
 * rank, the count or the index (at once: the blocks are host memory, no wait).
 * Device communicators: with status, nothing is read: the call succeeds and
 * the caller checks the word when it chooses (e.g. once per step with the loss,
 * before the optimizer update applies denseOut) — denseOut then holds the sum of
 * the valid entries; without status, the call waits for the stream and reads
 * the error word (one host read) and returns scInvalidArgument on every rank.
 * Arguments a rank can check alone (NULL pointers, memory of the wrong kind,
 * overlap) are carried in the block too: that rank fails with its message and
 * the others with scInvalidArgument naming it (kind 3). Bad types, op,
 * capacity or dim, which every rank must pass alike, fail at once; arguments
 * that differ across ranks (capacity, dim, types, op) make different calls and
 * fail as the dense collectives' mismatches do (scRemoteError "mismatched
 * calls", or the mismatch check's scInvalidUsage). */
#define SC_STATIC_STATUS(rank, pos, kind) (((uint64_t)(rank) << 42) | ((uint64_t)(pos) << 2) | (uint64_t)(kind))
#define SC_STATIC_STATUS_RANK(s) ((int)((s) >> 42))
#define SC_STATIC_STATUS_POS(s) (((s) >> 2) & ((((uint64_t)1) << 40) - 1))
#define SC_STATIC_STATUS_KIND(s) ((int)((s)&3))
enum {
  scStaticCountOverCapacity = 1, /* the rank's count exceeds capacity (position 0) */
  scStaticIndexOutOfRange = 2,   /* indices[position] >= dim on the rank */
  scStaticBadArgument = 3        /* the rank's own argument checks failed (position 0) */
};

/* The static-size sparse allreduce described above. */
scResult_t scSparseAllReduceStatic(const void* indices, const void* values, size_t nnz, const uint64_t* nnzPtr,
                                   size_t capacity, size_t dim, scIndexType_t itype, scDataType_t vtype, scRedOp_t op,
                                   void* denseOut, uint64_t* status, scComm_t comm, void* stream);

/* Whether the static-size path is predicted faster than the dense allreduce of
 * dim values on comm (the cost model of scSparseAuto: the allgather of P blocks
 * plus sorting P x capacity pairs, against densifying plus scAllReduce's auto).
 * *useStatic: 1 or 0. No communication. */
scResult_t scSparseStaticAdvised(scComm_t comm, size_t capacity, size_t dim, scIndexType_t itype, scDataType_t vtype,
                                 int* useStatic);

/* "auto", "ssar_recdbl", "ssar_split_allgather", "dsar_split_allgather",
 * "dsar_early_switch", "dense"; "?" for an unknown value. */
const char* scSparseAlgoName(scSparseAlgo_t algo);

#ifdef __cplusplus
}
#endif

#endif /* SPARCOLL_SPARSE_H_ */
