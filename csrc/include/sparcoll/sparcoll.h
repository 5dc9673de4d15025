/*
 * sparcoll — GPU-resident dense and sparse collectives.
 *
 * C API. Usable from C and C++ without CUDA or MPI headers: streams are passed
 * as `void*` (a cudaStream_t for device communicators, NULL for host ones) and
 * MPI communicators as a pointer to an MPI_Comm.
 *
 * Conventions (same as NCCL):
 *  - Every call returns an scResult_t; scSuccess is 0. On failure the
 *    communicator keeps a detailed message (with the file:line where it was
 *    raised) that scGetLastError() returns. Failures without a communicator
 *    (NULL comm, failed init) are kept per thread: scGetLastError(NULL).
 *  - A communicator is used by one thread at a time.
 *  - Buffers live where the communicator's transport expects them: host memory
 *    for the mpi transport and host-local communicators, device memory for the
 *    nccl transport and device-local communicators. A pointer of the wrong kind
 *    is rejected with scInvalidArgument when it can be detected (CUDA builds).
 *  - Every blocking wait has a deadline (scConfig_t.timeoutSeconds, default
 *    300 s, or env SPARCOLL_TIMEOUT). On expiry the call returns scTimeout and
 *    the communicator is aborted: every later call on it fails fast with
 *    scInvalidUsage and a message naming the original failure.
 *  - Device communicators are stream-ordered like NCCL: a call enqueues its work
 *    on `stream` and returns; host waits happen only where a size must be read
 *    back (sparse collectives) and are bounded by the same deadline. Calls on
 *    one communicator share its scratch memory: when they use different
 *    streams, order them (the later stream waits for an event recorded on the
 *    earlier one after the call), or the second call may overwrite data the
 *    first still reads.
 */
#ifndef SPARCOLL_SPARCOLL_H_
#define SPARCOLL_SPARCOLL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SPARCOLL_VERSION_MAJOR 0
#define SPARCOLL_VERSION_MINOR 1
#define SPARCOLL_VERSION_PATCH 0

/* C lets a caller pass any int where an enum is expected; in C++ a value
 * outside an enum's range is undefined behaviour unless the enum has a fixed
 * underlying type. SC_ENUM_BASE gives every sparcoll enum `int` under C++, so
 * the library can receive an out-of-range value from C and reject it. */
#ifndef SC_ENUM_BASE
#ifdef __cplusplus
#define SC_ENUM_BASE : int
#else
#define SC_ENUM_BASE
#endif
#endif

typedef struct scComm* scComm_t;

typedef enum SC_ENUM_BASE {
  scSuccess = 0,
  scInvalidArgument = 1, /* bad pointer, count, dtype, op, algo, ... */
  scInvalidUsage = 2,    /* call not valid in this state (aborted comm, missing feature) */
  scSystemError = 3,     /* OS / allocation failure */
  scCudaError = 4,
  scNcclError = 5,
  scMpiError = 6,
  scTimeout = 7,     /* a deadline expired; the communicator is now aborted */
  scRemoteError = 8, /* a peer reported a failure or a mismatch (e.g. sizes differ) */
  scInternalError = 9,
  scInterrupted = 10, /* scCommInterrupt or the interrupt check stopped the call; the communicator is aborted */
  scNumResults = 11
} scResult_t;

/* Same order as ncclDataType_t. float16/bfloat16 accumulate in float32. */
typedef enum SC_ENUM_BASE {
  scInt8 = 0,
  scUint8 = 1,
  scInt32 = 2,
  scUint32 = 3,
  scInt64 = 4,
  scUint64 = 5,
  scFloat16 = 6,
  scFloat32 = 7,
  scFloat64 = 8,
  scBfloat16 = 9,
  scNumTypes = 10
} scDataType_t;

/* Index type of sparse (index, value) pairs (sparse.h) and of top-k selections
 * (topk.h). uint32 addresses dim <= 2^32. The scTopkIndex* names are the same
 * values under the top-k API's names (scTopkIndex_t is this type), so a top-k
 * selection feeds scSparseAllReduce without a cast. */
typedef enum SC_ENUM_BASE {
  scIndexU32 = 0,
  scIndexU64 = 1,
  scNumIndexTypes = 2,
  scTopkIndexU32 = scIndexU32,
  scTopkIndexU64 = scIndexU64,
  scTopkNumIndexTypes = scNumIndexTypes
} scIndexType_t;

/* scAvg = sum followed by division by the number of ranks (integer types
 * truncate toward zero, as integer division does). Integer sum/prod wrap
 * (two's complement). scMax/scMin on floating types are IEEE 754-2019
 * maximum/minimum: a NaN operand gives NaN (one NaN: itself; several: the
 * quiet NaN), -0 < +0; the same bits for every algorithm (NCCL's native
 * excepted: ncclMax/ncclMin). */
typedef enum SC_ENUM_BASE { scSum = 0, scProd = 1, scMax = 2, scMin = 3, scAvg = 4, scNumOps = 5 } scRedOp_t;

/* Dense algorithms.
 *  ring         Patarasuk & Yuan: ring reduce-scatter + ring allgather,
 *               pipelined in slices (scConfig_t.pipelineBytes). 2(P-1) steps.
 *  rabenseifner recursive-halving reduce-scatter + recursive-doubling
 *               allgather; non-power-of-two P folds the first 2r ranks,
 *               r = P - 2^floor(log2 P). 2 log2 P' steps (+2 for the fold).
 *  recdbl       recursive doubling on the whole vector: log2 P' steps; for
 *               small messages.
 *  native       MPI_Allreduce / ncclAllReduce (the baseline; for broadcast
 *               MPI_Bcast / ncclBroadcast).
 *  auto         scConfig_t.algo / env SPARCOLL_ALGO when set, else the tuning
 *               file's rules, else the alpha-beta-gamma cost model (README,
 *               "Cost model"; scEstimateTime).
 *  binomial     broadcast only: MPICH's binomial tree on ranks relative to the
 *               root, ceil(log2 P) rounds, each message the whole buffer; for
 *               small messages.
 *  scatter_allgather  broadcast only (van de Geijn): a binomial scatter of
 *               the P balanced blocks, then a ring allgather of them; about
 *               2(P-1)/P of the buffer per rank, for large messages.
 * For scAllReduce: ring, rabenseifner, recdbl, native, auto.
 * For scReduceScatter: ring, rabenseifner (recursive halving), native, auto.
 * For scAllGather: ring, recdbl (recursive doubling), native, auto.
 * For scBroadcast: binomial, scatter_allgather, native, auto. */
typedef enum SC_ENUM_BASE {
  scAlgoAuto = 0,
  scAlgoRing = 1,
  scAlgoRabenseifner = 2,
  scAlgoRecDbl = 3,
  scAlgoNative = 4,
  scAlgoBinomial = 5,
  scAlgoScatterAllGather = 6,
  scNumAlgos = 7
} scAlgo_t;

typedef enum SC_ENUM_BASE { scTransportMpi = 0, scTransportNccl = 1, scTransportLocal = 2 } scTransport_t;

/* The mismatch check: before a checked call's first message the ranks
 * exchange what they called (collective, count, data type, op, algorithm and
 * the communicator's call number); on any difference every rank returns
 * scInvalidUsage naming the ranks and both calls. Unchecked calls of
 * sparcoll's own schedules still never take another call's messages (they are
 * tagged with the call), and report a message of the wrong size or call as
 * scRemoteError naming the peer; a mismatched call of the underlying library's
 * collective (algorithm native) is undefined there.
 *   default  SPARCOLL_CHECK when set (0 = off, 1 = all, native), else native
 *   native   host communicators' native calls only (the library's collective
 *            cannot be protected otherwise; one extra small exchange)
 *   all      every collective call on host communicators
 *   off      none */
typedef enum SC_ENUM_BASE { scCheckDefault = 0, scCheckNative = 1, scCheckAll = 2, scCheckOff = 3 } scCheck_t;

typedef struct {
  size_t size;              /* sizeof(scConfig_t): lets the struct grow compatibly (the size
                               before tuningFile is accepted; tuningFile is then not read) */
  scTransport_t transport;  /* for scCommInitMpi: mpi (host buffers) or nccl (device buffers);
                               ignored by scCommInitLocal and scCommInitRank */
  int device;               /* nccl: CUDA device, -1 = the node-local rank's (scCommInitMpi)
                               or the calling thread's current device (scCommInitRank) */
  double timeoutSeconds;    /* <= 0: env SPARCOLL_TIMEOUT, else 300 */
  scAlgo_t algo;            /* what scAlgoAuto resolves to; scAlgoAuto = cost model */
  size_t pipelineBytes;     /* ring slice size in bytes; 0 = default (1 MiB host, 4 MiB device),
                               else 8 .. 2^30 (1 GiB); env SPARCOLL_PIPELINE_BYTES overrides */
  const char* tuningFile;   /* a tuning file (README, "Cost model"), read once at creation;
                               NULL or "" = env SPARCOLL_TUNING_FILE, else built-in defaults.
                               A bad file fails the creation (scInvalidArgument naming the
                               file and the key). Every rank must read the same file. */
  scCheck_t check;          /* which calls the mismatch check covers (scCheck_t) */
  const char* topologyFile; /* the network's tree (JSON, version 1: scripts/cluster's format),
                               read once at creation; NULL or "" = env SPARCOLL_TOPOLOGY_FILE,
                               else none (rings in rank order). With a file, every rank's
                               machine (gethostname, or env SPARCOLL_HOSTNAME) must be one of
                               its hosts, every ring runs in the tree's depth-first order
                               of the hosts (ties by rank) and scCommGetLinkTraffic counts
                               each directed link's bytes. Host communicators only (mpi,
                               local); every rank must read the same contents. Errors
                               (bad file, unknown machine, differing files) fail the
                               creation on every rank with scInvalidArgument or
                               scInvalidUsage. Read only when size covers it (a caller
                               built before it passes the older size). */
} scConfig_t;

#define SC_CONFIG_INITIALIZER \
  { sizeof(scConfig_t), scTransportMpi, -1, 0.0, scAlgoAuto, 0, NULL, scCheckDefault, NULL }

typedef struct {
  uint64_t bytesSent, bytesRecv, msgsSent, msgsRecv;
  /* The part of bytesSent / msgsSent that went to a rank on another node.
   * Counted by the schedules that know the nodes: the neighbourhood
   * collectives (neighbor.h), by their topology's nodes. */
  uint64_t interNodeBytesSent, interNodeMsgsSent;
  /* Reads by the host of sizes that the data determines: the sparse
   * allreduce's counts (header, count rounds, result size) and sparse DSOP's.
   * On a device
   * communicator each read waits for the stream, a host round trip; the
   * dense collectives make none. */
  uint64_t hostReads;
  /* The structure of the calls: on a device a round costs mostly these, not
   * bytes, so they are what a schedule is held to (the schedules are shared
   * by the host and device backends, so the counts of a device call are
   * those of the same call on the host but where noted).
   *  rounds         rounds of point-to-point messages the schedules posted
   *                 (a round holding at least one message);
   *  rendezvous     handshakes of this rank's host with another rank's
   *                 host: each message of the mpi and local transports (its
   *                 partner must have posted or taken it), each barrier;
   *                 on device buffers of the local transport one per dense
   *                 collective call, whatever its rounds (every rank's
   *                 schedule is enqueued at one meeting); nccl's messages
   *                 are ordered on the device and count none;
   *  hostSyncs      waits of the host for the device (a stream synchronize,
   *                 a host read of a device-resident size); 0 on host
   *                 communicators;
   *  eventsCreated  CUDA events the transports created; they are pooled, so a
   *                 call creates none once the pool holds the few that its
   *                 rounds have in flight at once (after a call or two of
   *                 the same shape);
   *  scratchAllocs  the communicator's scratch buffers (re)allocated; they
   *                 are kept and grow only, so 0 once a call of the same
   *                 shape has run. */
  uint64_t rounds, rendezvous, hostSyncs, eventsCreated, scratchAllocs;
  /* With a topology file (scConfig_t.topologyFile): the bytes of this rank's
   * own sends over the directed tree link they load most (each message
   * crosses the links on the path between the two ranks' hosts; ranks on one
   * host cross none). The maximum over links of the sum over ranks needs
   * every rank's counts: scCommGetLinkTraffic. 0 without a topology. */
  uint64_t maxLinkBytes;
  /* The part of msgsRecv reduced as it arrived: the local transport reads the
   * sender's buffer (host memory, or ranks on one device) and adds it
   * straight into the destination, with no staging buffer and no second pass
   * (the ring's reduce-scatter, recursive halving). 0 on mpi and nccl. */
  uint64_t msgsReduced;
} scStats_t;

/* A static string naming the result code ("invalid argument", ...); never NULL. */
const char* scGetErrorString(scResult_t result);
/* Detailed message of the last failure on `comm` (NULL: this thread's last
 * failure without a communicator). Never NULL; "" when there was none. */
const char* scGetLastError(scComm_t comm);
/* The library's version (SPARCOLL_VERSION_* of the build it was made from); any pointer may be NULL. */
void scGetVersion(int* major, int* minor, int* patch);
/* One line naming the library and what it runs on, for result files:
 * "sparcoll 0.1.0; commit 1a2b3c4d5e6f; mpi Open MPI v4.1.4; cuda none; nccl none"
 * (the commit of the source tree at configure time, "+changes" when it had
 * uncommitted changes, "unknown" outside git; the MPI, CUDA and NCCL versions
 * those libraries report at run time, "none" when not built with them). A
 * static string; safe before and without any communicator or MPI_Init. */
const char* scGetBuildInfo(void);

/* One communicator per MPI rank. mpiComm points to an MPI_Comm (NULL = MPI_COMM_WORLD);
 * MPI must be initialised. The communicator duplicates it. With cfg->transport ==
 * scTransportNccl the NCCL communicator is bootstrapped over it (rank 0 creates the
 * unique id and broadcasts it); the device is cfg->device or the node-local rank.
 * Builds without MPI return scInvalidUsage (for nccl, use scCommInitRank below). */
scResult_t scCommInitMpi(scComm_t* comm, const void* mpiComm, const scConfig_t* cfg);

/* NCCL-style creation of an nccl-transport communicator, without MPI (the shape
 * of ncclGetUniqueId + ncclCommInitRank). One process calls scGetUniqueId and
 * hands the id to every rank by any means (a file, a socket, torch.distributed,
 * MPI); each rank then calls scCommInitRank with the same id and nranks and its
 * own rank. The process that made the id hosts NCCL's bootstrap and must take
 * part (usually as rank 0) until every rank's init has returned.
 *
 * scUniqueId is opaque, 128 bytes (NCCL_UNIQUE_ID_BYTES), copied by value.
 * scGetUniqueId needs no GPU. Builds without NCCL fail both calls with
 * scInvalidUsage. */
#define SC_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[SC_UNIQUE_ID_BYTES];
} scUniqueId;

/* A fresh id for scCommInitRank: call it on one rank and send the id to the
 * others (it holds the address NCCL bootstraps from). nccl builds only. */
scResult_t scGetUniqueId(scUniqueId* id);

/* Collective over the nranks ranks: rank `rank` (in [0, nranks)) of a
 * communicator on device buffers, on CUDA device cfg->device (-1 = the calling
 * thread's current device, as NCCL does). cfg may be NULL (defaults);
 * cfg->transport is ignored (always nccl). The NCCL init is nonblocking and
 * bounded by the deadline (cfg->timeoutSeconds / SPARCOLL_TIMEOUT): if a rank
 * never joins, the call returns scTimeout after aborting the half-made NCCL
 * communicator. Bad arguments (NULL comm, nranks < 1, rank out of range, wrong
 * cfg->size, an all-zero id) give scInvalidArgument; no usable GPU gives
 * scCudaError; a failed NCCL init gives scNcclError. *comm is NULL on failure. */
scResult_t scCommInitRank(scComm_t* comm, int nranks, scUniqueId id, int rank, const scConfig_t* cfg);

/* nranks communicators for nranks threads of this process (comms[i] is rank i).
 * devices == NULL: host memory. Otherwise devices[i] is rank i's CUDA device;
 * several ranks may share one device. Each communicator must then be used from its
 * own thread, concurrently, as with MPI ranks. */
scResult_t scCommInitLocal(scComm_t* comms, int nranks, const int* devices, const scConfig_t* cfg);

/* Destroys comm. scInvalidUsage for a handle destroyed already (or never
 * created) and while another thread is inside a call on comm (the message
 * names the call). Safe against any call of another thread meanwhile: queries
 * (scCommRank, estimates, scGetLastError...) are waited for, and a call made
 * after it returns scInvalidUsage. Topologies made on comm then refuse every
 * call but scTopologyDestroy. */
scResult_t scCommDestroy(scComm_t comm);

/* Aborts comm on this rank, as a failed call would: its peers are told (best
 * effort, without blocking) and a peer waiting on this rank fails with
 * scRemoteError naming it within about a second instead of at its deadline.
 * Every later call on comm returns scInvalidUsage; destroy it as usual. Not
 * while another thread is inside a call on comm (scInvalidUsage). */
scResult_t scCommAbort(scComm_t comm);

/* Interrupts comm from any thread or from a signal handler: async-signal-safe,
 * lock-free, and allowed while another thread is inside a call on comm (the
 * one case scCommAbort refuses). A call blocked in a wait on comm returns
 * scInterrupted within about 100 ms, the communicator aborted as a failed call
 * leaves it (peers waiting on this rank fail with scRemoteError naming it); a
 * call that is not waiting notices at its next wait, and the next call made
 * after an interrupt fails at once. comm must stay live meanwhile: do not
 * destroy it concurrently. */
scResult_t scCommInterrupt(scComm_t comm);

/* A process-wide check that a blocked call runs on its own thread about every
 * 100 ms while it waits (never on a call that does not wait): a nonzero return
 * interrupts the call as scCommInterrupt would. For language runtimes whose
 * signal handlers run on the waiting thread (Python: PyErr_CheckSignals).
 * NULL removes it. Set it before the calls it should watch; the check must not
 * call into sparcoll. */
typedef int (*scInterruptCheck_t)(void* arg);
/* Installs the process-wide interrupt check described above (NULL: none). */
scResult_t scSetInterruptCheck(scInterruptCheck_t check, void* arg);

/* A new communicator of comm's ranks less the nexclude ranks in excludeRanks
 * (distinct, in [0, size), this rank not among them), renumbered in rank
 * order, with comm's configuration: how a job goes on without a dead rank.
 * Called by every rank not excluded, with the same list; the excluded ranks
 * take no part. comm may have been aborted (by a failed call or
 * scCommAbort); it stays valid until destroyed. A rank that does not join
 * within the timeout fails the call with scTimeout naming it; different lists
 * give scInvalidUsage. Transports: local; nccl with NCCL >= 2.27
 * (ncclCommShrink); mpi only with an MPI offering the fault-tolerance
 * extension (ULFM's MPIX_Comm_shrink, which can exclude only failed ranks),
 * else scInvalidUsage. */
scResult_t scCommShrink(scComm_t comm, const int* excludeRanks, int nexclude, scComm_t* newcomm);
/* This rank's number in comm, 0 .. size - 1. */
scResult_t scCommRank(scComm_t comm, int* rank);
/* The number of ranks of comm. */
scResult_t scCommSize(scComm_t comm, int* size);
/* 1 when the communicator works on device buffers. */
scResult_t scCommIsDevice(scComm_t comm, int* isDevice);
/* The CUDA device the communicator's buffers and streams must be on, or -1 for a
 * host communicator. scCommInitMpi places rank r on its node-local GPU, so ask
 * rather than assume device 0. */
scResult_t scCommDevice(scComm_t comm, int* device);
/* Traffic and structure counted by sparcoll's own schedules (point-to-point
 * bytes and messages this rank sent/received, rounds, handshakes, host syncs,
 * events, scratch allocations), summed over the calls since creation or the
 * last reset. Native calls are not counted: the library hides them. */
scResult_t scCommGetStats(scComm_t comm, scStats_t* stats);
/* Sets every counter of scCommGetStats (and the link counts) back to zero. */
scResult_t scCommResetStats(scComm_t comm);
/* The topology file's links (scConfig_t.topologyFile), counted like scStats_t
 * (since creation or scCommResetStats): bytes[l] = the bytes this rank's own
 * sends put on directed link l. Links are numbered by the file's order: host
 * i (hosts[i]) has 2i (host to its switch) and 2i+1 (switch to host); switch
 * j (switches[j]) has 2H+2j (to its parent) and 2H+2j+1 (from its parent),
 * H hosts; the root's pair stays 0. *nlinks: in, the room in bytes (bytes may
 * be NULL when it is 0); out, the number of links, 2(H+S), 0 without a
 * topology. Fewer entries than that are filled when the room is short. */
scResult_t scCommGetLinkTraffic(scComm_t comm, uint64_t* bytes, int* nlinks);
/* The ring order: order[i] = the rank at ring position i, size() entries
 * (0, 1, ... without a topology file). Every rank gets the same. */
scResult_t scCommGetRingOrder(scComm_t comm, int* order);
/* The algorithm scAlgoAuto would choose for an allreduce of `bytes` bytes
 * (scEstimateTime gives its predicted time too). */
scResult_t scAllReduceAlgoFor(scComm_t comm, size_t bytes, scAlgo_t* algo);
/* An algorithm's name: "auto", "ring", "rabenseifner", "recdbl", "native",
 * "binomial", "scatter_allgather" (the spelling of SPARCOLL_ALGO, tuning
 * files, the benchmarks and the Python package); "?" for a value out of
 * range. Never NULL; the strings are static. */
const char* scAlgoName(scAlgo_t algo);
/* The algorithm scAlgoName spells `name` (exactly, case-sensitive).
 * scInvalidArgument when name or algo is NULL or the name is unknown; the
 * message (scGetLastError(NULL)) lists the valid names. *algo is left
 * unchanged on failure. No communicator is involved. */
scResult_t scAlgoFromName(const char* name, scAlgo_t* algo);
/* A data type's name as the library's messages and the benchmarks spell it:
 * "int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float",
 * "double", "bfloat16"; "?" for a value out of range. Never NULL; static. */
const char* scDataTypeName(scDataType_t dtype);
/* The data type `name` spells: scDataTypeName's names, and the aliases "char",
 * "int", "float16", "f16", "fp16", "float32", "f32", "fp32", "float64", "f64",
 * "fp64", "bf16". Failures as scAlgoFromName's. */
scResult_t scDataTypeFromName(const char* name, scDataType_t* dtype);
/* A reduction's name: "sum", "prod", "max", "min", "avg"; "?" out of range. */
const char* scRedOpName(scRedOp_t op);
/* The reduction `name` spells (scRedOpName's names). Failures as scAlgoFromName's. */
scResult_t scRedOpFromName(const char* name, scRedOp_t* op);

/* The collectives the cost model prices (scEstimateTime). */
typedef enum SC_ENUM_BASE {
  scCollAllReduce = 0,
  scCollReduceScatter = 1,
  scCollAllGather = 2,
  scCollSparseAllReduce = 3,
  scCollDsop = 4,
  scCollBroadcast = 5,
  scNumCollectives = 6
} scCollective_t;

/* The cost model's prediction for one call on this communicator, without
 * running it (like ncclGroupSimulateEnd). Local: no communication.
 *  coll     which collective; count and dt mean what they mean in its call:
 *           allreduce count, reduce-scatter recvcount, allgather sendcount,
 *           broadcast count;
 *           sparse allreduce: count = the dimension N, dt = the value type,
 *           density = each rank's non-zeros / N in (0, 1] (every rank the
 *           same, indices uniform, a dense output, the smallest index type
 *           that addresses N, default scSparseOptions_t); DSOP: a square
 *           problem, n = m = count, dt = the input type. density is ignored
 *           but for the sparse allreduce.
 *  algo     the collective's own algorithm enum value (scAlgo_t,
 *           scSparseAlgo_t, scDsopAlgo_t); 0 = auto. An algorithm the
 *           collective does not offer is scInvalidArgument, as in the call.
 *  seconds  predicted time of `algo` (of auto's pick when algo is 0).
 *  autoAlgo what auto would run: for the dense collectives scConfig_t.algo /
 *           SPARCOLL_ALGO first, then a rule of the tuning file when one
 *           matches, else the model's fastest. May be NULL.
 * The model's parameters come from the environment, the tuning file and the
 * built-in defaults, at the inter-node level when the communicator's ranks
 * span more than one machine (counted at creation on MPI-bootstrapped
 * communicators; 1 otherwise; env SPARCOLL_MACHINES overrides), else intra-node
 * (README, "Cost model"). Native algorithms, which the model cannot see
 * inside, are priced as ring (broadcast's as scatter_allgather, its
 * bandwidth-optimal schedule). */
scResult_t scEstimateTime(scComm_t comm, scCollective_t coll, int algo, size_t count, scDataType_t dt, double density,
                          double* seconds, int* autoAlgo);

/* The cost model without a communicator, for tools that predict scales they do
 * not have at hand: the model a communicator of nranks ranks spanning
 * `machines` machines (1 <= machines <= nranks) would hold if it were created
 * here with cfg — cfg->transport (local included), cfg->algo,
 * cfg->tuningFile and the environment, read now as at a communicator's
 * creation (SPARCOLL_MACHINES aside: machines is given). cfg may be NULL (mpi,
 * defaults). isDevice: 1 for device memory (nccl needs 1, mpi 0). A bad tuning
 * file fails here with the message a communicator's creation would give.
 * Estimates take scEstimateTime's arguments and give its results. Failures
 * are reported per thread (scGetLastError(NULL)). Destroy accepts NULL. */
typedef struct scCostModel* scCostModel_t;
/* A cost model as a communicator of nranks over `machines` machines would have it. */
scResult_t scCostModelCreate(scCostModel_t* model, const scConfig_t* cfg, int nranks, int machines, int isDevice);
/* scEstimateTime's prediction, from the model instead of a communicator. */
scResult_t scCostModelEstimateTime(scCostModel_t model, scCollective_t coll, int algo, size_t count, scDataType_t dt,
                                   double density, double* seconds, int* autoAlgo);
/* Frees the model; NULL is accepted. */
scResult_t scCostModelDestroy(scCostModel_t model);

/* recvbuf[i] = op over ranks of sendbuf[i], i < count. In place when sendbuf == recvbuf.
 * For the three collectives below, buffers that overlap other than in the
 * in-place form are scInvalidArgument. */
scResult_t scAllReduce(const void* sendbuf, void* recvbuf, size_t count, scDataType_t dtype, scRedOp_t op,
                       scAlgo_t algo, scComm_t comm, void* stream);
/* sendbuf holds nranks*recvcount elements; rank r receives block r reduced.
 * In place when recvbuf == sendbuf + rank*recvcount (NCCL's convention). */
scResult_t scReduceScatter(const void* sendbuf, void* recvbuf, size_t recvcount, scDataType_t dtype, scRedOp_t op,
                           scAlgo_t algo, scComm_t comm, void* stream);
/* recvbuf holds nranks*sendcount elements, block r from rank r.
 * In place when sendbuf == recvbuf + rank*sendcount. */
scResult_t scAllGather(const void* sendbuf, void* recvbuf, size_t sendcount, scDataType_t dtype, scAlgo_t algo,
                       scComm_t comm, void* stream);
/* buf holds count elements on every rank; on return every rank's buf holds
 * what root's held (in place; root's buf is the source, its contents unchanged).
 * Every rank passes the same count, dtype, root and algo. root must be in
 * [0, nranks), else scInvalidArgument naming it. Algorithms: binomial,
 * scatter_allgather, native, auto (scAlgo_t); the others are
 * scInvalidArgument. */
scResult_t scBroadcast(void* buf, size_t count, scDataType_t dtype, int root, scAlgo_t algo, scComm_t comm,
                       void* stream);
/* Waits (bounded by the deadline) until every rank of the communicator called it. */
scResult_t scBarrier(scComm_t comm, void* stream);

#ifdef __cplusplus
}
#endif

/* Area APIs (each header is self-contained C, included here so sparcoll.h is the one include). */
#include "sparcoll/sparse.h"
#include "sparcoll/topk.h"
#include "sparcoll/dsop.h"
#include "sparcoll/neighbor.h"

#endif /* SPARCOLL_SPARCOLL_H_ */
