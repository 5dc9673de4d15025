/*
 * sparcoll — top-k selection with error feedback (Renggli, "Efficient Sparse
 * AllReduce for Scalable Machine Learning", §2.4 TopK SGD with error correction,
 * §2.4.1 and §4.3.3 approximate top-k in expectation).
 *
 * Self-contained C header (needs only stddef.h/stdint.h, sparcoll.h's
 * scResult_t / scDataType_t / scIndexType_t, which it includes).
 *
 * What a call does
 *   Given a vector v of n elements (a gradient, or gradient + residual with
 *   error feedback) it selects a subset of indices and writes the selection as
 *   a *sparse stream*: `indices` strictly increasing (sorted, unique; uint32 or
 *   uint64) and `values` the selected entries, in the vector's dtype. This is
 *   exactly the (indices, values, nnz) input of the sparse allreduce
 *   (scSparseAllReduce in sparcoll/sparse.h).
 *
 * Methods (k is always the total over the whole vector, as in torch.topk)
 *   scTopkBracket       the default and the recommended fast method: the exact
 *                       top-k of the nonzero magnitudes found in one pass over
 *                       the vector. s random samples (cfg.samples; 0 = r n/k
 *                       with r = k/256 clamped to [64, 256], between 1024 and
 *                       2^18 and at most n/8) bracket the k-th
 *                       largest magnitude between two cuts; one pass lists the
 *                       elements above the lower cut, and the k largest of
 *                       them (ties to the smaller index) are kept. Returns at
 *                       most k entries, never a zero: min(k, nonzeros) unless
 *                       the sample's lower cut lands above the k-th magnitude
 *                       (probability about 3e-7 per call), when it returns
 *                       the fewer entries above the cut (each among the top k).
 *                       Far more candidates than expected (many equal
 *                       magnitudes) make it run the exact select instead.
 *   scTopkExact         exact top-k by magnitude over the whole vector. Ties in
 *                       |v_i| are broken by the smaller index, so the result is
 *                       unique; exactly k entries (zeros included when fewer
 *                       than k are nonzero). The same pass as bracket, plus the
 *                       radix select over the whole vector whenever the sample
 *                       missed (its speed is bracket's on almost every call).
 *   scTopkThreshold     DGC-style: the threshold t is the ceil(k*s/n)-th largest
 *                       magnitude of s random samples (cfg.samples; 0 =
 *                       max(1024, n/100) capped at n); the candidates |v_i| >= t
 *                       are kept; if there are more than k of them, the exact
 *                       top-k of the candidates (= exact top-k of v) is kept.
 *                       Returns at most k entries (about half the calls fewer).
 *   scTopkApprox        bucketed approximate top-k *in expectation*. The vector
 *                       is cut into buckets of cfg.bucket elements (the last may
 *                       be partial; 0 = the shortest bucket whose full buckets
 *                       own at least 32 slots each, about 32 n/k, the whole
 *                       vector when k < 32). Bucket [s, e) gets the integer share
 *                       k_b = floor(k*e/n) - floor(k*s/n) (shares sum to k exactly and
 *                       differ from k*len/n by less than one). Element i is selected
 *                       independently with probability
 *                         p_i = k_b|v_i| / ||v||_1                 if ||v||_inf <= ||v||_1 / k_b
 *                         p_i = k_b(|v_i|+eps) / (||v||_1 + L*eps)  otherwise,
 *                       eps = (k_b||v||_inf - ||v||_1)/(L - k_b), L the bucket length,
 *                       so every p_i <= 1 and exactly k_b are selected in
 *                       expectation (norms of the bucket). Sampling in
 *                       proportion to |v_i| keeps a small share of what the
 *                       largest entries hold: on normal data about 2k/n of
 *                       ||v||^2, 17 % of exact top-k's at k = n/1000 (README).
 *   scTopkApproxAtMost  the cheaper variant without the L-infinity norm:
 *                       p_i = min(1, k_b|v_i| / ||v||_1); at most k_b in expectation.
 *
 * Exact, reproducible randomness
 *   Random numbers come from the counter-based Philox4x32-10 generator keyed by
 *   cfg.seed; the counter is (element index / 4, step), word (index % 4). The
 *   selection probability is evaluated in exact integer arithmetic (the bucket's
 *   magnitudes are quantized to 31-bit fixed point relative to its largest finite
 *   magnitude, read from the IEEE bit patterns; sums are integer sums, so their
 *   order does not matter; the test u < p_i is an exact integer comparison).
 *   Hence a given (seed, step, input) selects bit-for-bit the same elements on
 *   the CPU and on the GPU, whatever the reduction order or FMA contraction.
 *   (Quantization means magnitudes below 2^-31 of the bucket's maximum count as
 *   zero in the norms.)
 *
 * Output modes (bucketed methods; exact/threshold are always variable)
 *   scTopkVariable      every selected element, compacted, sorted by index.
 *   scTopkFixedPerBucket  exactly k entries in total: bucket [s, e) owns output
 *                       slots [floor(k*s/n), floor(k*e/n)), k_b slots. A bucket that
 *                       selected more than k_b keeps its first k_b selected entries
 *                       (by index); one that selected fewer is padded with its
 *                       first unselected indices carrying the value 0 (so indices
 *                       stay sorted and unique, and the sum is unchanged). As in the
 *                       thesis, every bucket knows its slot without a global scan.
 *
 * Error feedback (scTopkSelectFeedback with an scTopkState_t)
 *   acc = g + r (in the dtype: float32/float64 natively, float16/bfloat16 via
 *   float32 rounded to nearest even); the selected entries of acc are sent; the
 *   new residual is acc with the sent entries set to +0. Conservation holds bit
 *   for bit: for every i, sent_i + r_new_i == acc_i == fl(g_i + r_old_i) (one of
 *   the two is zero). Entries that are selected but do not fit (fixed-mode
 *   truncation, or an output capacity too small in variable mode) are *not*
 *   sent and stay in the residual: no gradient mass is ever lost.
 *
 * NaN / Inf (deterministic treatment, not rejected)
 *   Magnitudes are ordered by their IEEE bit patterns: NaN > Inf > every finite
 *   value. Bucketed methods always select non-finite entries (p = 1) and leave
 *   them out of the norms; exact/threshold rank them first. So a non-finite
 *   gradient entry is sent (and surfaces in the reduced result, where loss
 *   scaling detects it) and never parks in the residual.
 *
 * Host or device
 *   Where the work runs is decided by the memory of the input: a device (or
 *   managed) pointer runs the CUDA kernels on `stream` (a cudaStream_t; NULL =
 *   the legacy default stream) on the device owning the pointer; a host pointer
 *   runs the CPU implementation and requires stream == NULL. All buffers of a
 *   call must be of the same kind (checked in CUDA builds; a state checks the
 *   pointers of a call once and again only when they change). With a state
 *   object, the state's memory decides. Without CUDA every pointer is host
 *   memory.
 *
 * Streams, waits and CUDA graphs
 *   A device call enqueues all its work on `stream` and leaves its counts
 *   (scTopkCounts_t) in device memory. It waits for the stream only to fill a
 *   non-NULL `info`, or, for a stateless bucketed call with variable output and
 *   capacity < n, to tell whether the output overflowed (scInvalidUsage); the
 *   wait is bounded by env SPARCOLL_TIMEOUT (default 300 s). Pass info = NULL
 *   to stay asynchronous, or use the *Async calls, which never wait and write
 *   the counts to device memory the caller gives. Scratch comes from
 *   sparcoll's own stream-ordered pool (the device's default pool is not
 *   touched); a state keeps its scratch across calls, so from a state's second
 *   call of a size on it allocates nothing, and its calls can be captured into
 *   a CUDA graph and replayed (each replay advances nothing on the host: the
 *   step counter of a captured call is the one at capture). Calls on one state
 *   must be ordered by the caller (one stream, or events), as for its residual.
 *
 * Errors
 *   Every call returns scSuccess or an error code; the detailed message is
 *   scGetLastError(NULL) (kept per thread). scInvalidArgument: NULL pointers,
 *   k == 0 (unless n == 0), k > n, bucket > 2^32, more than 2^31-1
 *   buckets, a dtype other than float32/float64/float16/bfloat16, uint32 indices
 *   with n > 2^32, capacity < k, fixed output with a non-bucketed method, an
 *   unknown method/mode, a malformed config (size), mixed memory kinds or a
 *   non-NULL stream with host buffers. scInvalidUsage: more entries selected than
 *   `capacity` in a stateless call (the first `capacity` are written;
 *   info->selected says how many there were). scCudaError: a CUDA failure.
 */
#ifndef SPARCOLL_TOPK_H_
#define SPARCOLL_TOPK_H_

#include <stddef.h>
#include <stdint.h>

#include "sparcoll/sparcoll.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum SC_ENUM_BASE {
  scTopkApprox = 0,       /* bucketed, exactly k_b per bucket in expectation (L1 + Linf) */
  scTopkApproxAtMost = 1, /* bucketed, p = min(1, k_b|v|/L1): at most k_b in expectation */
  scTopkExact = 2,        /* exact top-k by magnitude, ties to the smaller index */
  scTopkThreshold = 3,    /* sampled threshold (DGC), exact top-k of candidates when too many */
  scTopkBracket = 4,      /* default: exact top-k of the nonzeros through a sampled bracket, one pass */
  scTopkNumMethods = 5
} scTopkMethod_t;

typedef enum SC_ENUM_BASE {
  scTopkVariable = 0,       /* all selected entries, compacted, sorted by index */
  scTopkFixedPerBucket = 1, /* exactly k entries: k_b per bucket, truncated / zero-padded */
  scTopkNumOutputs = 2
} scTopkOutput_t;

/* Width of the output indices: the sparse allreduce's index type itself
 * (scTopkIndexU32 == scIndexU32, scTopkIndexU64 == scIndexU64), so
 * scSparseAllReduce(indices, values, info.nnz, n, cfg.indexType, ...) takes the
 * selection unchanged. */
typedef scIndexType_t scTopkIndex_t;

typedef struct {
  size_t size; /* sizeof(scTopkConfig_t); use SC_TOPK_CONFIG_INITIALIZER */
  scTopkMethod_t method;
  size_t k;                /* total number of elements to select (1 <= k <= n) */
  size_t bucket;           /* bucketed methods: bucket length, 1 .. 2^32; 0 (default) = derived
                              from k/n, at least 32 slots per full bucket */
  scTopkOutput_t output;   /* bucketed methods only; exact/threshold are variable */
  scTopkIndex_t indexType; /* uint32 (n <= 2^32) or uint64 */
  uint64_t seed;           /* Philox key */
  uint64_t step;           /* stateless calls: iteration number, < 2^63, mixed into the
                              random counter (state calls use the state's own counter) */
  size_t samples;          /* bracket, exact, threshold: number of samples (with replacement);
                              0 = bracket, exact: r n/k, r = k/256 in [64, 256],
                              within [1024, 2^18] and at most n/8;
                              threshold: max(1024, n/100); both capped at n */
} scTopkConfig_t;

#define SC_TOPK_CONFIG_INITIALIZER \
  { sizeof(scTopkConfig_t), scTopkBracket, 0, 0, scTopkVariable, scTopkIndexU32, 0, 0, 0 }

typedef struct {
  size_t nnz;      /* entries written to indices/values (fixed output: k, pads included) */
  size_t selected; /* entries the method selected (bucketed: k in expectation) */
  size_t deferred; /* selected entries that were not written: beyond a bucket's k_b
                      slots (fixed output) or beyond capacity (variable output).
                      With error feedback they stay in the residual. */
} scTopkInfo_t;

/* The counts of a call, as the *Async calls write them (in the memory of the
 * call's buffers: device memory for a device call). */
typedef struct {
  uint64_t nnz;      /* entries written */
  uint64_t selected; /* entries the method selected */
  uint64_t deferred; /* selected but not written (kept in the residual with feedback) */
} scTopkCounts_t;

/* The output capacity that can never overflow for a vector of n elements:
 * k for exact, threshold and fixed-per-bucket output; n for bucketed variable
 * output (the expected count is k, the worst case n). Validates cfg. */
scResult_t scTopkMaxOutput(size_t n, const scTopkConfig_t* cfg, size_t* capacity);

/* Stateless selection on v (n elements of dtype). Writes the sparse stream to
 * indices[0..nnz) (cfg->indexType) and values[0..nnz) (dtype), capacity >= k
 * entries each. The input is not modified. With bucketed variable output more
 * than capacity entries can be selected: then the first capacity (by index) are
 * written and scInvalidUsage is returned (info->deferred > 0). info may be
 * NULL. Randomness: (cfg->seed, cfg->step). Buffers must not overlap. */
scResult_t scTopkSelect(const void* v, size_t n, scDataType_t dtype, const scTopkConfig_t* cfg, void* indices,
                        void* values, size_t capacity, scTopkInfo_t* info, void* stream);

/* Error-feedback state: owns the residual r (n elements of dtype, initially 0)
 * of one tensor and the step counter of its random stream. device < 0: host
 * memory; otherwise the residual lives on that CUDA device (CUDA builds). */
typedef struct scTopkState* scTopkState_t;

/* A state for a tensor of n elements of dtype (see above), its residual zero and its step 0. */
scResult_t scTopkStateCreate(scTopkState_t* state, size_t n, scDataType_t dtype, int device);
/* NULL is accepted (no-op). Device residuals and scratch are freed after a device sync. */
scResult_t scTopkStateDestroy(scTopkState_t state);
/* The residual buffer (owned by the state, valid until destroy; n elements, on
 * the state's device or host). The caller may read or overwrite it, ordered on
 * the streams it uses with the state. */
scResult_t scTopkStateResidual(scTopkState_t state, void** residual);
/* Residual := 0 (enqueued on stream for device states) and step := 0. */
scResult_t scTopkStateReset(scTopkState_t state, void* stream);
/* The step counter: the next call uses it, then increments it. Set it to
 * restore a checkpoint (< 2^63). */
scResult_t scTopkStateGetStep(scTopkState_t state, uint64_t* step);
/* Sets the step counter (see scTopkStateGetStep). */
scResult_t scTopkStateSetStep(scTopkState_t state, uint64_t step);

/* Fused error feedback (thesis Algorithm 2): acc = grad + r; select on acc with
 * cfg (its step field is ignored: the state's counter is used and incremented);
 * write the sent entries (values of acc) as a sparse stream; r := acc with the
 * sent entries zeroed. grad has the state's n and dtype and memory kind.
 * Entries selected beyond capacity stay in the residual (success; info->selected
 * > info->nnz). capacity >= k. */
scResult_t scTopkSelectFeedback(scTopkState_t state, const void* grad, const scTopkConfig_t* cfg, void* indices,
                                void* values, size_t capacity, scTopkInfo_t* info, void* stream);

/* Stream-ordered forms of scTopkSelect and scTopkSelectFeedback: the same
 * selection, with the counts written to `counts` (one scTopkCounts_t in the
 * memory of the buffers, enqueued on stream) instead of returned. They never
 * wait for the stream, and on a state allocate nothing after its first call of
 * a size: capturable into a CUDA graph. A stateless bucketed call with
 * variable output needs capacity >= n (scTopkMaxOutput), since no overflow
 * could be reported; with a state, entries beyond capacity stay in the
 * residual, as in scTopkSelectFeedback. Host buffers: counts is host memory,
 * written before the call returns. */
scResult_t scTopkSelectAsync(const void* v, size_t n, scDataType_t dtype, const scTopkConfig_t* cfg, void* indices,
                             void* values, size_t capacity, scTopkCounts_t* counts, void* stream);
/* The stream-ordered scTopkSelectFeedback (above). */
scResult_t scTopkSelectFeedbackAsync(scTopkState_t state, const void* grad, const scTopkConfig_t* cfg, void* indices,
                                     void* values, size_t capacity, scTopkCounts_t* counts, void* stream);

/* The method's name ("exact", "approx", ...), a static string; "unknown" for a value that is no method. */
const char* scTopkMethodName(scTopkMethod_t method);

#ifdef __cplusplus
}
#endif

#endif /* SPARCOLL_TOPK_H_ */
