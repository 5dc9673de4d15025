"""Array views of library-owned memory (top-k residuals, sparse results)."""


class HostView:
    """Exposes library-owned host memory to numpy while keeping its owner alive."""

    def __init__(self, owner, ptr: int, n: int, typestr: str):
        self._owner = owner
        self.__array_interface__ = {"data": (ptr, False), "shape": (n,), "typestr": typestr, "version": 3}


class DeviceView:
    """Exposes library-owned CUDA memory (torch.as_tensor / cupy.asarray) while keeping its owner alive."""

    def __init__(self, owner, ptr: int, n: int, typestr: str):
        self._owner = owner
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": (n,), "typestr": typestr, "version": 3,
                                         "strides": None, "stream": None}
