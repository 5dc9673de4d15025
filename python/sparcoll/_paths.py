"""Where the installed package keeps the C headers and libsparcoll.so, for C and
C++ code built against the package (an extension, a test program)."""

from __future__ import annotations

import glob
import os

from .errors import InvalidUsageError

_HERE = os.path.dirname(os.path.abspath(__file__))


def get_include() -> str:
    """The directory to add to the include path: it holds ``sparcoll/sparcoll.h``
    (the C API, one include) and ``sparcoll/sparcoll.hpp`` (C++)."""
    inc = os.path.join(_HERE, "include")
    if not os.path.isfile(os.path.join(inc, "sparcoll", "sparcoll.h")):
        raise InvalidUsageError(f"no C headers in {inc}: this sparcoll was not installed by pip from "
                                "python/ (a build tree has them in csrc/include; `cmake --install` puts them "
                                "under <prefix>/include)")
    return inc


def get_library() -> str:
    """The path of the package's ``libsparcoll.so``, which its extension links:
    link C or C++ code against this file (with an rpath to its directory)."""
    libs = sorted(glob.glob(os.path.join(_HERE, "libsparcoll.so*")))
    if not libs:
        raise InvalidUsageError(f"no libsparcoll.so in {_HERE}: this sparcoll was not installed by pip from python/")
    return libs[0]
