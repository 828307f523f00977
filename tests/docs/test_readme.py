"""Every code block of README.md runs, so the README cannot drift from the code.

The runner reads the fenced blocks of each Markdown file in ``DOCS``:

* ``python`` blocks are executed in order in one namespace per file (a later block may
  use what an earlier one defined), in a scratch directory where ``samples/`` is the
  repository's (so ``s2s dump samples/x.py:f`` and files a block writes work);
* ``sh`` blocks run line by line: ``s2s ...`` through the CLI in-process (exit status 0
  expected), ``python FILE ...`` with this interpreter; a line that is anything else
  fails, so that a block that cannot run here is marked instead;
* a block preceded by the comment ``<!-- readme: skip (reason) -->`` (on the line just
  before its fence) is not run, e.g. ``pip install`` and commands that need a GPU;
* blocks in other languages (or none: output, error messages) are text.

A block that fails names the file and the line its fence is on.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md"]
SKIP = re.compile(r"^<!--\s*readme:\s*skip\b.*-->\s*$")
FENCE = re.compile(r"^(\s*)```\s*([\w+-]*)\s*$")


@dataclass
class Block:
    path: Path
    line: int          # 1-based line of the opening fence
    lang: str
    code: str
    skip: bool


def blocks(path: Path):
    """The fenced code blocks of a Markdown file, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, start = m.group(1), m.group(2).lower(), i
        body = []
        i += 1
        while i < len(lines) and not re.match(rf"^{indent}```\s*$", lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        if i == len(lines):
            raise AssertionError(f"{path.name}:{start + 1}: unclosed code fence")
        prev = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        out.append(Block(path, start + 1, lang, "\n".join(body) + "\n", bool(SKIP.match(prev))))
        i += 1
    return out


def test_the_runner_reads_fences_and_markers(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("text\n\n```python\nx = 1\n```\n\n<!-- readme: skip (needs a GPU) -->\n"
                   "```sh\ns2s dump gpu.py:k --mode ptx\n```\n\n```\noutput\n```\n")
    found = blocks(doc)
    assert [(b.line, b.lang, b.skip) for b in found] == [(3, "python", False),
                                                           (8, "sh", True), (12, "", False)]
    assert found[0].code == "x = 1\n"
    with pytest.raises(AssertionError, match="unclosed"):
        (tmp_path / "bad.md").write_text("```python\nx = 1\n")
        blocks(tmp_path / "bad.md")


@pytest.fixture()
def scratch(tmp_path, monkeypatch):
    (tmp_path / "samples").symlink_to(ROOT / "samples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("S2S_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _run_sh(block: Block, scratch: Path):
    from s2s.cli.main import main

    for k, raw in enumerate(block.code.splitlines()):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{block.path.name}:{block.line + 1 + k}"
        argv = shlex.split(line, comments=True)
        if argv[0] == "s2s":
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = main(argv[1:])
            assert rc == 0, f"{where}: `{line}` exited {rc}: {err.getvalue()}"
        elif argv[0] in ("python", "python3") and len(argv) > 1 and argv[1].endswith(".py"):
            proc = subprocess.run([sys.executable, *argv[1:]], capture_output=True, text=True,
                                  cwd=scratch, timeout=600)
            assert proc.returncode == 0, f"{where}: `{line}` failed: {proc.stderr[-2000:]}"
        else:
            raise AssertionError(f"{where}: the runner does not run `{line}`; mark the block "
                                 "with <!-- readme: skip (reason) --> if it cannot run here")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_block_runs(doc, scratch, monkeypatch):
    # the blocks run as the body of an importable module, as a user's script does
    # (pickle sends its functions by reference; s2s reads their source from the file)
    module = types.ModuleType("readme_" + re.sub(r"\W", "_", doc.stem))
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    ran = 0
    for block in blocks(doc):
        if block.skip:
            continue
        if block.lang == "python":
            code = compile("\n" * (block.line) + block.code, str(doc), "exec")
            with contextlib.redirect_stdout(io.StringIO()):
                exec(code, namespace)
            ran += 1
        elif block.lang in ("sh", "bash", "shell", "console"):
            _run_sh(block, scratch)
            ran += 1
    assert ran >= 5, f"{doc.name}: only {ran} runnable blocks"
