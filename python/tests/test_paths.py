"""The installed package carries the C headers and libsparcoll.so: a C program
built with sparcoll.get_include() and sparcoll.get_library() runs an allreduce."""

import os
import shutil
import subprocess

import pytest

import sparcoll as sc

PROGRAM = r"""
#include <pthread.h>
#include <stdio.h>
#include <sparcoll/sparcoll.h>
static scComm_t comms[2];
static float out[2][4];
static void* rank(void* arg) {
  int r = (int)(size_t)arg;
  float x[4] = {1 + r, 2 + r, 3 + r, 4 + r};
  return scAllReduce(x, out[r], 4, scFloat32, scSum, scAlgoRing, comms[r], NULL) == scSuccess ? NULL : (void*)1;
}
int main(void) {
  int major, minor, patch;
  scGetVersion(&major, &minor, &patch);
  if (scCommInitLocal(comms, 2, NULL, NULL) != scSuccess) return 2;
  pthread_t t[2];
  void* res[2];
  for (int r = 0; r < 2; ++r) pthread_create(&t[r], NULL, rank, (void*)(size_t)r);
  for (int r = 0; r < 2; ++r) pthread_join(t[r], &res[r]);
  for (int r = 0; r < 2; ++r) scCommDestroy(comms[r]);
  if (res[0] || res[1]) return 3;
  printf("%d.%d.%d %g %g %g %g\n", major, minor, patch, out[1][0], out[1][1], out[1][2], out[1][3]);
  return 0;
}
"""


def test_headers_and_library_paths():
    inc, lib = sc.get_include(), sc.get_library()
    assert os.path.isfile(os.path.join(inc, "sparcoll", "sparcoll.h"))
    assert os.path.isfile(os.path.join(inc, "sparcoll", "sparcoll.hpp"))
    assert os.path.basename(lib).startswith("libsparcoll.so") and os.path.isfile(lib)


def test_c_program_against_the_installed_package(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src, exe = tmp_path / "prog.c", tmp_path / "prog"
    src.write_text(PROGRAM)
    lib = sc.get_library()
    subprocess.run([cc, str(src), "-o", str(exe), f"-I{sc.get_include()}", lib,
                    f"-Wl,-rpath,{os.path.dirname(lib)}", "-lpthread"], check=True)
    out = subprocess.run([str(exe)], check=True, stdout=subprocess.PIPE, text=True).stdout.split()
    assert out[0] == sc.__version__
    assert [float(v) for v in out[1:]] == [3.0, 5.0, 7.0, 9.0]


def test_library_loads_the_shared_cxx_runtime():
    """The installed libsparcoll.so needs libstdc++.so.6 and defines none of its
    symbols. A copy of the C++ runtime linked into it (a compiler without the
    libstdc++.so development link does that silently) crashed when an error
    message formatted a number in a process that had loaded PyTorch."""
    readelf, nm = shutil.which("readelf"), shutil.which("nm")
    if readelf is None or nm is None:
        pytest.skip("needs readelf and nm (binutils)")
    lib = sc.get_library()
    dyn = subprocess.run([readelf, "-d", lib], check=True, stdout=subprocess.PIPE, text=True).stdout
    if "libc++.so" in dyn:
        pytest.skip("built against libc++")
    assert any("NEEDED" in line and "libstdc++.so" in line for line in dyn.splitlines()), dyn
    syms = subprocess.run([nm, "-D", "--defined-only", lib], check=True, stdout=subprocess.PIPE, text=True).stdout
    assert "_ZNSt6locale" not in syms, "libsparcoll.so carries a copy of libstdc++ (defines std::locale)"


def test_a_number_in_an_error_message_formats():
    """An error whose message holds numbers (the overlap check's offsets) comes
    back as an exception, with torch loaded first when it is installed."""
    import numpy as np
    try:
        import torch  # noqa: F401  the process then holds torch's C++ runtime first
    except ImportError:
        pass
    from sparcoll import _capi, _sparcoll
    c = sc.local_group(1)[0]
    try:
        x = np.arange(64, dtype=np.float32)
        p = x.ctypes.data
        with pytest.raises(sc.SparcollError, match=r"recvbuf = sendbuf \+ 8 bytes"):
            _sparcoll.allreduce(c._h, p, p + 8, 16, _capi.DTYPES["float32"], _capi.OPS["sum"],
                                _capi.ALGOS["ring"], 0)
    finally:
        c.close()
