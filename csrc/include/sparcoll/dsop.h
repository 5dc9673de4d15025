/*
 * sparcoll — DSOP: distributed sum of outer products.
 *
 * Each of the P ranks of a communicator holds a vector a_i (length n) and a
 * vector b_i (length m). Every rank ends with the n x m row-major matrix
 *
 *     G = sum over ranks i of  a_i b_i^T        G[r*m + c] = sum_i a_i[r] * b_i[c]
 *
 * (Enderlin, Heim, Schubiger, Stephan, Ziegler: "Optimization of Distributed
 * Sum of Outer Products", ETH Zurich). This is the gradient synchronisation of
 * a layer whose gradient is an outer product, without forming P full matrices.
 *
 * Element types. `dtype` is the type of a and b:
 *   scFloat32 -> G is float32      scFloat64  -> G is float64
 *   scFloat16 -> G is float32      scBfloat16 -> G is float32
 * (16-bit inputs travel as 16 bits, products are computed and summed in float32.)
 * Integer types are rejected with scInvalidArgument.
 *
 * Rounding. Each element of G is a sum of terms a_q[x] b_q[y] (and, inside the
 * algorithms, of partial sums) in the output type. The engine that forms them
 * fixes the order and the fusing: the host loop multiplies and adds in pair
 * order; the CUDA kernel uses fused multiply-adds from 0 and adds an existing
 * partial sum last; cuBLAS (SPARCOLL_DSOP_GEMM) uses its own order. So host and
 * device results, and the two device engines, may differ in the last bits of
 * non-integer data; each is within (K + 1) u sum_q |a_q[x] b_q[y]| of the exact
 * value, to first order (K terms, u the output type's unit roundoff), and
 * integer-valued data small enough to be exact gives exact results everywhere.
 * The matrix is always bit-identical across the ranks of one call.
 *
 * Buffers follow sparcoll.h: host memory on host communicators (mpi, host
 * local), device memory on device communicators (nccl, device local), where
 * the call is stream-ordered on `stream` like every other collective. G must
 * not overlap a or b. Every rank must pass the same n, m, dtype and algo.
 *
 * This header is self-contained C; sparcoll.h includes it.
 */
#ifndef SPARCOLL_DSOP_H_
#define SPARCOLL_DSOP_H_

#include <stddef.h>
#include <stdint.h>

#include "sparcoll/sparcoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/* DSOP algorithms. Elements sent per rank, for n, m divisible by P
 * (s = element size; exact figures for any n, m in the README):
 *  allgather        allgather all (a_i, b_i); every rank sums all P outer
 *                   products (the paper's baseline).       (P-1)(n+m)
 *  allreduce        local outer product, then the dense allreduce of the
 *                   communicator (scConfig_t.algo / SPARCOLL_ALGO / model,
 *                   including native = MPI_Allreduce / ncclAllReduce — the
 *                   paper's allreduce baseline).          2(P-1)/P nm (ring)
 *  allreduce_ring   ring reduce-scatter + ring allgather with the outer
 *                   product fused in: each block of a_i b_i^T is computed
 *                   right when the ring needs it, accumulated into the
 *                   received partial sum (no scratch, no separate pass).
 *                                                         2(P-1)/P nm
 *  g_rabenseifner   the paper's Generalized Rabenseifner: allgather the
 *                   vectors, each rank computes its contiguous row block of G
 *                   (rows balanced: block sizes differ by at most one row,
 *                   ranks may own none when n < P), ring allgather of the
 *                   blocks.                     (P-1)(n+m) + (P-1)/P nm
 *  all_scatter      the paper's future work: rank q receives only its rows of
 *                   every a_i plus every b_i (grouped send/recv rounds),
 *                   computes its row block, ring allgather of the blocks.
 *                                          (P-1)/P n + (P-1) m + (P-1)/P nm
 *  auto             a tuning file's dsop rule when one matches (bytes = n m times
 *                   the output element size), else the communicator's
 *                   alpha-beta-gamma model (README "Cost model"); see
 *                   scDsopAlgoFor. scDsopSparse's auto (allgather or
 *                   g_rabenseifner on the compressed matrix) is the model's. */
typedef enum SC_ENUM_BASE {
  scDsopAuto = 0,
  scDsopAllGather = 1,
  scDsopAllReduce = 2,
  scDsopAllReduceRing = 3,
  scDsopGRabenseifner = 4,
  scDsopAllScatter = 5,
  scNumDsopAlgos = 6
} scDsopAlgo_t;

/* G = sum_i a_i b_i^T on every rank (see above).
 *   a       n elements of dtype on this rank; not modified
 *   b       m elements of dtype on this rank; not modified
 *   G       n*m elements of the output type (float32 for 16-bit dtypes), row-major;
 *           overwritten on every rank with the same (bit-identical) matrix
 *   stream  a cudaStream_t on device communicators, NULL on host ones
 * Errors (reported before any message is sent, the communicator stays usable):
 *   scInvalidArgument  n == 0 or m == 0, NULL a/b/G, n*m*sizeof(output) or the
 *                      scratch sizes overflow size_t, unsupported or unknown
 *                      dtype, unknown algo, G overlapping a or b, a pointer of
 *                      the wrong memory kind, non-NULL stream on a host comm.
 * Other codes as for every collective (scTimeout, scMpiError, ...). Scratch:
 * P(n+m) input elements (all_scatter: P(n/P + m)), kept by the communicator. */
scResult_t scDsop(const void* a, size_t n, const void* b, size_t m, void* G, scDataType_t dtype, scDsopAlgo_t algo,
                  scComm_t comm, void* stream);

/* Sparse inputs: a_i given by aNnz (index, value) pairs, indices < n, strictly
 * increasing; likewise b_i. Only the non-zeros travel: the pairs are allgathered
 * (with their counts), every rank forms R = union of the a indices and
 * C = union of the b indices, and the dense algorithm runs on the compressed
 * |R| x |C| matrix (its row blocks are the only matrix traffic), which is then
 * scattered into the dense n x m output G (zeros elsewhere).
 *   aIdx/aVal  aNnz indices (uint64) and values (dtype); may be NULL when aNnz == 0
 *   algo       scDsopAuto, scDsopAllGather (each rank computes all of the
 *              compressed matrix, no matrix traffic) or scDsopGRabenseifner;
 *              others are rejected with scInvalidArgument
 * Device communicators: the index union is sorted on the device; its size is
 * read back to the host once (a host wait bounded by the deadline).
 * Errors (scInvalidArgument, before any message): as scDsop, plus aNnz > n or
 * bNnz > m, NULL indices/values with non-zeros, unsorted / duplicate /
 * out-of-range indices (on device communicators checked by a kernel whose flag
 * is read back), G overlapping any input, and algorithms other than the three above.
 * Traffic per rank: (P-1)(16 + (aNnz + bNnz)(8 + s_in)) bytes for the vectors,
 * plus for g_rabenseifner the row blocks of the |R| x |C| matrix. */
scResult_t scDsopSparse(const uint64_t* aIdx, const void* aVal, size_t aNnz, size_t n, const uint64_t* bIdx,
                        const void* bVal, size_t bNnz, size_t m, void* G, scDataType_t dtype, scDsopAlgo_t algo,
                        scComm_t comm, void* stream);

/* The algorithm scDsopAuto resolves to for these sizes on this communicator
 * (the same on every rank that has the same configuration). */
scResult_t scDsopAlgoFor(scComm_t comm, size_t n, size_t m, scDataType_t dtype, scDsopAlgo_t* algo);

/* "auto", "allgather", "allreduce", "allreduce_ring", "g_rabenseifner",
 * "all_scatter"; "?" for an unknown value. */
const char* scDsopAlgoName(scDsopAlgo_t algo);

/* The output element type for input dtype (float32 for 16-bit inputs), or
 * scInvalidArgument for a dtype DSOP does not support. */
scResult_t scDsopOutputType(scDataType_t dtype, scDataType_t* out);

#ifdef __cplusplus
}
#endif

#endif /* SPARCOLL_DSOP_H_ */
