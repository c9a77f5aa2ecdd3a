"""The Python examples of the repository's README run as written (from the repository
root, where their relative paths point) and the package README's example too."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def python_blocks(readme: Path) -> list[str]:
    # A block inside a list item is indented like the item's text.
    return [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", readme.read_text(), flags=re.S)]


def test_readmes_have_examples() -> None:
    assert len(python_blocks(ROOT / "README.md")) >= 3
    assert len(python_blocks(ROOT / "python" / "README.md")) >= 1


@pytest.mark.parametrize(
    "readme,index",
    [("README.md", i) for i in range(len(python_blocks(ROOT / "README.md")))]
    + [("python/README.md", i) for i in range(len(python_blocks(ROOT / "python" / "README.md")))],
)
def test_readme_example_runs(readme: str, index: int) -> None:
    blocks = python_blocks(ROOT / readme)
    # A later block may use names of an earlier one (the README reads top to bottom).
    code = "\n".join(blocks[: index + 1])
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
