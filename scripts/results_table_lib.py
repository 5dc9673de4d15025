"""scripts/results-table's reading of bench/results/: a result file (Src) whose every failed
look-up is a ResultError naming the file, the number formatting the table uses, and the row
registry (@row). A file named NAME.gz is read gzip-decompressed (bench/results keeps its large
raw files compressed)."""
import gzip
import json
import re
import zlib
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


class ResultError(Exception):
    """A result file is missing or does not say what a row expects."""


class Row(dict):
    """A table row (src, what: where it was read); a missing column is an error naming the file."""

    def __missing__(self, col):
        self.src.fail(f"a '{col}' column in the {self.what}")


def read_text(path):
    """A result file's text; NAME.gz gzip-decompressed."""
    path = Path(path)
    if path.suffix != ".gz":
        return path.read_text(encoding="utf-8")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read()


def write_text(path, text):
    """Write a result file's text; NAME.gz gzip-compressed (as `gzip -9n`: no name, no time)."""
    path = Path(path)
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data, 9, mtime=0) if path.suffix == ".gz" else data)


class Src:
    """One raw result file; every failed look-up raises ResultError naming the file."""

    def __init__(self, results, rel):
        self.rel, self.path, self._text = rel, Path(results) / rel, None

    def fail(self, what):
        raise ResultError(f"bench/results/{self.rel}: expected {what}")

    @property
    def text(self):
        if self._text is None:
            if not self.path.is_file():
                raise ResultError(f"bench/results/{self.rel}: file missing (a row of the table reads it)")
            try:
                self._text = read_text(self.path)
            except (OSError, EOFError, zlib.error, UnicodeDecodeError) as e:
                self.fail(f"{'gzip-compressed ' if self.path.suffix == '.gz' else ''}UTF-8 text ({e})")
        return self._text

    def find(self, pattern, what, text=None):
        m = re.search(pattern, self.text if text is None else text, re.M)
        return m if m else self.fail(f"{what} (a line matching /{pattern}/)")

    def findall(self, pattern, what, text=None):
        ms = list(re.finditer(pattern, self.text if text is None else text, re.M))
        return ms if ms else self.fail(f"{what} (lines matching /{pattern}/)")

    def num(self, s, what):
        try:
            return Decimal(str(s).strip().rstrip("%x"))
        except InvalidOperation:
            self.fail(f"a number for {what}, found {s!r}")

    def table(self, header, what, text=None, md=False):
        """Rows (dicts by column name) of the first table whose header line matches `header`:
        whitespace-aligned (only the first column may hold spaces; '#' lines inside are skipped)
        or, with md, a Markdown table. It ends at the first line with another number of cells."""
        cells = lambda s: [c.strip() for c in s.strip().strip("|").split("|")] if s.startswith("|") else []
        lines = (self.text if text is None else text).splitlines()
        for i, line in enumerate(lines):
            if re.match(header, line):
                cols, rows = cells(line) if md else line.split(), []
                for body in lines[i + 2 if md else i + 1:]:
                    if body.startswith("#") and not md:
                        continue
                    fields = cells(body) if md else body.strip().rsplit(None, len(cols) - 1)
                    if len(fields) != len(cols):
                        break
                    rows.append(Row(zip(cols, fields)))
                    rows[-1].src, rows[-1].what = self, what
                return rows if rows else self.fail(f"rows under the {what} header")
        return self.fail(f"the {what} (a header line matching /{header}/)")

    def pick(self, rows, what, **cond):
        """The first row whose columns equal cond."""
        for r in rows:
            if all(r.get(k) == v for k, v in cond.items()):
                return r
        return self.fail(f"a row of the {what} with " + ", ".join(f"{k} = {v}" for k, v in cond.items()))


# ---- number formatting: decimal, half-up, as written in the files ----

def rnd(x, places=0, rounding=ROUND_HALF_UP):
    return str(Decimal(x).quantize(Decimal(1).scaleb(-places), rounding))


def plain(x):
    """A decimal without trailing zeros: 0.100 -> 0.1, 10.0 -> 10."""
    return format(Decimal(x).normalize(), "f")


def pow2(n):
    n = int(n)
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else str(n)


def span(values, places=0):
    lo, hi = rnd(min(values), places), rnd(max(values), places)
    return lo if lo == hi else f"{lo}–{hi}"


# ---- the registry: rows in table order (scripts/results_table_rows.py fills it) ----

ROWS = []


def row(*files):
    def register(fn):
        ROWS.append((fn, files))
        return fn
    return register


def json_records(src):
    """Every JSON line of src, parsed; a line that does not parse is an error naming the file."""
    out = []
    for m in src.findall(r"^\{.*\}$", "JSON lines"):
        try:
            out.append(json.loads(m[0]))
        except ValueError:
            src.fail(f"JSON lines that parse (line starting {m[0][:40]!r})")
    return out
