"""The README's newcomer path, run as written, so it cannot go stale.

Code blocks marked `<!-- readme-test: NAME -->` in README.md or in a page of
docs/ (docs/*.md: the Python page holds the quick start) are copied out and
run: the Python quick start under mpirun with 2 and 3 ranks (it asserts its own
results), the torch.distributed backend snippet under mpirun with 3 ranks, the
local-group snippet as a script, and the "Start here" Python one-liner with the
venv's interpreter. Every mpirun line in the README, in docs/*.md and in
the examples' docstrings must have the one documented form.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "python" / "examples"
MPIRUN_FORM = "OMPI_MCA_mpi_yield_when_idle=1 mpirun --oversubscribe -np"

pytestmark = pytest.mark.readme


def _readme() -> str:
    if not README.exists():
        pytest.skip("README.md not found (tests run outside the repository)")
    return README.read_text()


def _docs() -> dict:
    """README.md, then every page of docs/ (name -> text): where the marked snippets may be."""
    texts = {"README.md": _readme()}
    texts.update({f"docs/{p.name}": p.read_text() for p in sorted(DOCS.glob("*.md"))})
    return texts


def _all_docs() -> str:
    return "\n".join(_docs().values())


def snippet(name: str) -> str:
    """The fenced code block right after the marker `<!-- readme-test: name -->`, in README.md or docs/*.md."""
    found = [m for text in _docs().values()
             for m in re.finditer(rf"<!-- readme-test: {re.escape(name)} -->\n```\w*\n(.*?)\n```", text, re.S)]
    assert found, f"neither README.md nor docs/*.md has a code block marked <!-- readme-test: {name} -->"
    assert len(found) == 1, f"the marker <!-- readme-test: {name} --> appears {len(found)} times"
    return found[0].group(1) + "\n"


def test_every_snippet_marker_has_its_code_block():
    """The markers the tests run, each once, each followed by a fenced block (no build needed)."""
    for name in ("start", "quickstart", "backend", "local"):
        assert snippet(name).strip(), name


def _env() -> dict:
    # What the README's mpirun form sets, plus what tests need in containers:
    # no single-copy shared memory (not permitted everywhere) and one BLAS thread.
    return dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1", OMPI_MCA_btl_vader_single_copy_mechanism="none",
                OMP_NUM_THREADS="1", SPARCOLL_TIMEOUT=os.environ.get("SPARCOLL_TIMEOUT", "120"))


def _as_root(cmd):
    """The README: as root (in a container), Open MPI also wants --allow-run-as-root."""
    if os.geteuid() == 0 and "--allow-run-as-root" not in cmd:
        i = cmd.index("mpirun")
        cmd = cmd[:i + 1] + ["--allow-run-as-root"] + cmd[i + 1:]
    return cmd


def _run(cmd, cwd, timeout=300):
    proc = subprocess.run(cmd, cwd=cwd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"{shlex.join(cmd)} failed (rc {proc.returncode}):\n{proc.stdout[-8000:]}"
    return proc.stdout


def _need_mpi():
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun not found")
    pytest.importorskip("mpi4py")


@pytest.mark.mpi
@pytest.mark.parametrize("np_", [2, 3])
def test_quickstart_under_mpirun(tmp_path, np_):
    """The Quick start as the README says to run it: saved as demo.py, mpirun -np 2 and 3."""
    _need_mpi()
    (tmp_path / "demo.py").write_text(snippet("quickstart"))
    line = re.search(r"`(OMPI_MCA_mpi_yield_when_idle=1 mpirun [^`]*python demo\.py)`", _all_docs())
    assert line, "the Quick start's mpirun line (`... python demo.py`) is missing from README.md and docs/*.md"
    cmd = shlex.split(line.group(1))[1:]                      # the env assignment is in _env()
    cmd = _as_root(cmd)
    cmd[cmd.index("-np") + 1] = str(np_)
    cmd[cmd.index("python")] = sys.executable
    out = _run(cmd, tmp_path)
    # mpirun forwards the ranks' output as it comes, so lines may interleave: count, don't anchor.
    assert out.count("{'bytes_sent'") == np_, out[-4000:]


@pytest.mark.mpi
@pytest.mark.torch
def test_torch_backend_snippet(tmp_path):
    """The torch.distributed backend snippet, under the README's mpirun form with 3 ranks."""
    _need_mpi()
    pytest.importorskip("torch")
    (tmp_path / "backend.py").write_text(snippet("backend"))
    _run(_as_root(["mpirun", "--oversubscribe", "-np", "3", sys.executable, "backend.py"]), tmp_path)


def test_local_group_snippet(tmp_path):
    (tmp_path / "local.py").write_text(snippet("local"))
    _run([sys.executable, "local.py"], tmp_path)


@pytest.mark.mpi
def test_start_here_python_one_liner(tmp_path):
    """Step 4 of "Start here": the one-liner, with this venv's interpreter for ~/sparcoll-venv's."""
    _need_mpi()
    line = next((ln for ln in snippet("start").splitlines() if "python -c" in ln), None)
    assert line, "the Start here block has no `python -c` line"
    cmd = shlex.split(line)
    assert cmd[0] == "OMPI_MCA_mpi_yield_when_idle=1", line
    cmd = _as_root(cmd[1:])
    py = next(i for i, a in enumerate(cmd) if a.endswith("/python"))
    cmd[py] = sys.executable
    np_ = int(cmd[cmd.index("-np") + 1])
    out = _run(cmd, tmp_path)
    np = pytest.importorskip("numpy")
    expect = str(np.arange(4, dtype=np.float32) * np_)      # "[ 0.  4.  8. 12.]" for 4 ranks
    assert out.count(expect) == np_, f"expected {np_} lines with {expect}:\n{out[-4000:]}"


def _mpirun_lines(text):
    """(line, the line before it) of every mpirun command line in text."""
    lines = text.splitlines()
    for k, ln in enumerate(lines):
        if re.search(r"(^|[\s`])mpirun -np|(^|[\s`])mpirun --oversubscribe", ln):
            yield ln, lines[k - 1] if k else ""


def test_every_mpirun_line_has_the_documented_form():
    texts = _docs()
    texts.update({f"python/examples/{p.name}": p.read_text() for p in sorted(EXAMPLES.glob("*.py"))})
    bad = []
    for name, text in texts.items():
        for ln, prev in _mpirun_lines(text):
            # The variable may also lead a wrapper (`VAR=1 scripts/netem-run ... -- mpirun ...`)
            # or the line before, continued with a backslash.
            env = "OMPI_MCA_mpi_yield_when_idle=1"
            before = ln[:ln.find("mpirun --oversubscribe -np")] if "mpirun --oversubscribe -np" in ln else None
            continued = prev.rstrip().endswith("\\") and env in prev
            if before is None or not (env in before or continued):
                bad.append(f"{name}: {ln.strip()}")
    assert not bad, f"mpirun lines not of the form `{MPIRUN_FORM} N ...`:\n" + "\n".join(bad)
