"""sparcoll: dense and sparse collectives for numpy, torch and cupy arrays.

    import sparcoll as sc
    comm = sc.Communicator.from_mpi()               # one rank per MPI process
    y = comm.allreduce(x)                           # numpy in, numpy out
    comms = sc.local_group(4)                       # 4 ranks for 4 threads of this process
    comm = sc.Communicator.from_unique_id(n, uid, rank)  # nccl without MPI; uid = sc.get_unique_id() on one rank

See the README's Python section for the full API.
"""

from . import _sparcoll
from . import errors as _errors
from .comm import Communicator, get_unique_id, local_group
from .errors import (
    CollectiveTimeoutError,
    CudaError,
    InternalError,
    InvalidArgumentError,
    InvalidUsageError,
    MpiError,
    NcclError,
    RemoteError,
    SparcollError,
    SystemFailureError,
)

__version__ = "%d.%d.%d" % tuple(_sparcoll.version)

# Area functions exist only when the library was built with them.
if _sparcoll.features["dsop"]:
    from . import _dsop

    _dsop.attach(Communicator)

__all_areas__ = []
if _sparcoll.features["sparse"]:
    from . import _sparse
    from ._sparse import SparseReduction  # noqa: F401

    _sparse.attach(Communicator)
    __all_areas__ += ["SparseReduction"]

if _sparcoll.features["topk"]:
    from ._topk import TopkFeedback, topk  # noqa: F401

    __all_areas__ += ["topk", "TopkFeedback"]

#: What this build contains: {"cuda", "mpi", "nccl", "sparse", "topk", "dsop"} -> bool.
features = dict(_sparcoll.features)

__all__ = ["Communicator", "get_unique_id", "local_group", "features"] + list(_errors.__all__) + __all_areas__
