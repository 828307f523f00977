"""Package list for setuptools; all other metadata is in pyproject.toml.

Two import packages are installed: ``s2s`` (the compiler, folder ``s2s/``)
and ``s2s_runtime`` (the run-time support, folder ``runtime/``).  The second
is renamed on install, which ``[tool.setuptools.packages.find]`` cannot
express, so the lists are computed here, subpackages included, so that new
subpackages need no edit.
"""

from setuptools import find_namespace_packages, setup

compiler = find_namespace_packages(include=["s2s", "s2s.*"], exclude=["*__pycache__*"])
runtime = ["s2s_runtime"] + [
    "s2s_runtime." + name
    for name in find_namespace_packages(where="runtime", exclude=["*__pycache__*"])
]

setup(
    packages=compiler + runtime,
    package_dir={"s2s_runtime": "runtime"},
)
