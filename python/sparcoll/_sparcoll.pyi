"""Type stubs of the extension module sparcoll._sparcoll (internal: raw
addresses, element counts and C enum values; the sparcoll package wraps it).
tests/test_import_order.py checks that these stubs and the module agree."""

from typing import ClassVar, Dict, List, Optional, Sequence, Tuple

version: Tuple[int, int, int]
#: How the library was built: "cuda", "mpi", "nccl" -> bool.
features: Dict[str, bool]

# The C enums (python/src/enums.cpp, dlpack.cpp). Functions take and return
# their int values; the sparcoll package maps names to them (sparcoll/_capi.py).
class _Enum:
    __members__: ClassVar[Dict[str, "_Enum"]]
    def __init__(self, value: int) -> None: ...
    def __int__(self) -> int: ...
    def __index__(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def value(self) -> int: ...

class Result(_Enum):
    scSuccess: ClassVar["Result"]
    scInvalidArgument: ClassVar["Result"]
    scInvalidUsage: ClassVar["Result"]
    scSystemError: ClassVar["Result"]
    scCudaError: ClassVar["Result"]
    scNcclError: ClassVar["Result"]
    scMpiError: ClassVar["Result"]
    scTimeout: ClassVar["Result"]
    scRemoteError: ClassVar["Result"]
    scInternalError: ClassVar["Result"]
    scInterrupted: ClassVar["Result"]

class DataType(_Enum):
    int8: ClassVar["DataType"]
    uint8: ClassVar["DataType"]
    int32: ClassVar["DataType"]
    uint32: ClassVar["DataType"]
    int64: ClassVar["DataType"]
    uint64: ClassVar["DataType"]
    float16: ClassVar["DataType"]
    float32: ClassVar["DataType"]
    float64: ClassVar["DataType"]
    bfloat16: ClassVar["DataType"]
    @property
    def itemsize(self) -> int: ...

class IndexType(_Enum):
    uint32: ClassVar["IndexType"]
    uint64: ClassVar["IndexType"]

class RedOp(_Enum):
    sum: ClassVar["RedOp"]
    prod: ClassVar["RedOp"]
    max: ClassVar["RedOp"]
    min: ClassVar["RedOp"]
    avg: ClassVar["RedOp"]

class Algo(_Enum):
    auto: ClassVar["Algo"]
    ring: ClassVar["Algo"]
    rabenseifner: ClassVar["Algo"]
    recdbl: ClassVar["Algo"]
    native: ClassVar["Algo"]
    binomial: ClassVar["Algo"]
    scatter_allgather: ClassVar["Algo"]

class Transport(_Enum):
    mpi: ClassVar["Transport"]
    nccl: ClassVar["Transport"]
    local: ClassVar["Transport"]

class SparseAlgo(_Enum):
    auto: ClassVar["SparseAlgo"]
    ssar_recdbl: ClassVar["SparseAlgo"]
    ssar_split_allgather: ClassVar["SparseAlgo"]
    dsar_split_allgather: ClassVar["SparseAlgo"]
    dsar_early_switch: ClassVar["SparseAlgo"]
    dense: ClassVar["SparseAlgo"]

class DsopAlgo(_Enum):
    auto: ClassVar["DsopAlgo"]
    allgather: ClassVar["DsopAlgo"]
    allreduce: ClassVar["DsopAlgo"]
    allreduce_ring: ClassVar["DsopAlgo"]
    g_rabenseifner: ClassVar["DsopAlgo"]
    all_scatter: ClassVar["DsopAlgo"]

class NbrAlgo(_Enum):
    auto: ClassVar["NbrAlgo"]
    naive: ClassVar["NbrAlgo"]
    combining: ClassVar["NbrAlgo"]
    hierarchical: ClassVar["NbrAlgo"]
    native: ClassVar["NbrAlgo"]

class Collective(_Enum):
    allreduce: ClassVar["Collective"]
    reduce_scatter: ClassVar["Collective"]
    allgather: ClassVar["Collective"]
    sparse_allreduce: ClassVar["Collective"]
    dsop: ClassVar["Collective"]
    broadcast: ClassVar["Collective"]

class TopkMethod(_Enum):
    approx: ClassVar["TopkMethod"]
    approx_at_most: ClassVar["TopkMethod"]
    exact: ClassVar["TopkMethod"]
    threshold: ClassVar["TopkMethod"]
    bracket: ClassVar["TopkMethod"]

class TopkOutput(_Enum):
    variable: ClassVar["TopkOutput"]
    fixed: ClassVar["TopkOutput"]

class DLDeviceType(_Enum):
    cpu: ClassVar["DLDeviceType"]
    cuda: ClassVar["DLDeviceType"]
    cuda_host: ClassVar["DLDeviceType"]
    cuda_managed: ClassVar["DLDeviceType"]

class DLDataTypeCode(_Enum):
    int: ClassVar["DLDataTypeCode"]
    uint: ClassVar["DLDataTypeCode"]
    float: ClassVar["DLDataTypeCode"]
    bfloat: ClassVar["DLDataTypeCode"]

#: scSparseSortInput (scSparseOptions_t.flags).
SPARSE_SORT_INPUT: int

class Comm:
    @property
    def rank(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def is_device(self) -> bool: ...
    @property
    def device(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def last_error(self) -> str: ...
    def stats(self) -> Dict[str, int]: ...
    def reset_stats(self) -> None: ...
    def algo_for(self, bytes: int) -> int: ...
    def estimate(self, collective: int, algo: int, count: int, dtype: int, density: float) -> Tuple[float, int]: ...

def init_mpi(mpi_comm_addr: int, transport: int, device: int, timeout: float, algo: int,
             pipeline_bytes: int, tuning_file: Optional[str] = None,
             topology_file: Optional[str] = None) -> Comm: ...
def get_unique_id() -> bytes: ...
def init_rank(nranks: int, unique_id: bytes, rank: int, device: int, timeout: float, algo: int,
              pipeline_bytes: int, tuning_file: Optional[str] = None,
              topology_file: Optional[str] = None) -> Comm: ...
def init_local(n: int, devices: Optional[Sequence[int]], timeout: float, algo: int,
               pipeline_bytes: int, tuning_file: Optional[str] = None,
               topology_file: Optional[str] = None) -> List[Comm]: ...
def allreduce(comm: Comm, send: int, recv: int, count: int, dtype: int, op: int, algo: int, stream: int) -> None: ...
def reduce_scatter(comm: Comm, send: int, recv: int, recvcount: int, dtype: int, op: int, algo: int,
                   stream: int) -> None: ...
def allgather(comm: Comm, send: int, recv: int, sendcount: int, dtype: int, algo: int, stream: int) -> None: ...
def broadcast(comm: Comm, buf: int, count: int, dtype: int, root: int, algo: int, stream: int) -> None: ...
def barrier(comm: Comm, stream: int) -> None: ...
def abort(comm: Comm) -> None: ...
def interrupt(comm: Comm) -> None: ...
def shrink(comm: Comm, exclude: List[int]) -> Comm: ...
def error_string(code: int) -> str: ...
def dlpack_describe(capsule: object) -> dict: ...

# sparse allreduce
class SparseResultHandle:
    def __init__(self, comm: Comm) -> None: ...
    def close(self) -> None: ...
    def describe(self) -> Tuple[bool, int, int, int, int, int]: ...

def sparse_allreduce(comm: Comm, indices: int, values: int, nnz: int, dim: int, itype: int, vtype: int, op: int,
                     algo: int, flags: int, switch_density: float, early_group_size: int, out: int,
                     stream: int) -> None: ...
def sparse_allreduce_to_sparse(comm: Comm, indices: int, values: int, nnz: int, dim: int, itype: int, vtype: int,
                               op: int, algo: int, flags: int, switch_density: float, early_group_size: int,
                               result: SparseResultHandle, stream: int) -> Tuple[bool, int, int, int, int, int]: ...
def sparse_allreduce_static(comm: Comm, indices: int, values: int, nnz: int, nnz_ptr: int, capacity: int, dim: int,
                            itype: int, vtype: int, op: int, out: int, status: int, stream: int) -> None: ...
def sparse_static_advised(comm: Comm, capacity: int, dim: int, itype: int, vtype: int) -> bool: ...
def sparse_algo_for(comm: Comm, nnz_per_rank: Sequence[int], dim: int, itype: int, vtype: int, flags: int,
                    switch_density: float, early_group_size: int, dense_output: bool) -> int: ...

# top-k
class TopkStateHandle:
    step: int
    def __init__(self, n: int, dtype: int, device: int) -> None: ...
    def close(self) -> None: ...
    def residual_ptr(self) -> int: ...
    def reset(self, stream: int) -> None: ...
    def select_feedback(self, grad: int, method: int, k: int, bucket: int, output: int, index_type: int, seed: int,
                        samples: int, indices: int, values: int, capacity: int, stream: int) -> Tuple[int, int]: ...
    def select_feedback_async(self, grad: int, method: int, k: int, bucket: int, output: int, index_type: int,
                              seed: int, samples: int, indices: int, values: int, capacity: int, counts: int,
                              stream: int) -> None: ...

def topk_max_output(n: int, method: int, k: int, bucket: int, output: int, index_type: int, seed: int, step: int,
                    samples: int) -> int: ...
def topk_select(v: int, n: int, dtype: int, method: int, k: int, bucket: int, output: int, index_type: int,
                seed: int, step: int, samples: int, indices: int, values: int, capacity: int,
                stream: int) -> Tuple[int, int]: ...

# DSOP
def dsop(comm: Comm, a: int, n: int, b: int, m: int, G: int, dtype: int, algo: int, stream: int) -> None: ...
def dsop_sparse(comm: Comm, a_idx: int, a_val: int, a_nnz: int, n: int, b_idx: int, b_val: int, b_nnz: int, m: int,
                G: int, dtype: int, algo: int, stream: int) -> None: ...
def dsop_output_type(dtype: int) -> int: ...
def dsop_algo_for(comm: Comm, n: int, m: int, dtype: int) -> int: ...

# neighbourhood collectives
class TopologyHandle:
    def __init__(self, comm: Comm, sources: Sequence[int], destinations: Sequence[int]) -> None: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    def degrees(self) -> Tuple[int, int]: ...
    def friend_group(self) -> Tuple[int, int, List[int]]: ...
    def cost_terms(self, algo: int) -> Tuple[Tuple[float, float], Tuple[float, float], Tuple[float, float],
                                             Tuple[float, float]]: ...
    def algo_for(self, bytes: int) -> int: ...
    def estimate(self, bytes: int, algo: int) -> Tuple[float, int]: ...

def neighbor_allgather(topo: TopologyHandle, send: int, sendcount: int, recv: int, dtype: int, algo: int,
                       stream: int) -> None: ...
def neighbor_allgatherv(topo: TopologyHandle, send: int, sendcount: int, recv: int, recvcounts: Sequence[int],
                        displs: Sequence[int], dtype: int, algo: int, stream: int) -> None: ...

# the cost model without a communicator (sparcoll.model)
class CostModel:
    def __init__(self, tuning_file: Optional[str], transport: int, device: bool, nranks: int, machines: int,
                 algo: int) -> None: ...
    def estimate(self, collective: int, algo: int, count: int, dtype: int, density: float) -> Tuple[float, int]: ...
    def neighbor_time(self, terms: Sequence[Sequence[float]], bytes: int) -> float: ...
    def close(self) -> None: ...
