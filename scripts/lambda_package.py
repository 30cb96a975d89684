"""Puts one Lambda function's own code into its artifact: exactly the modules of our packages its entrypoint imports
(directly or not, as import-linter's graph library grimp reads them), their packages' __init__ files and `static/`
files, and the
project's distribution metadata, so `importlib.metadata.version("agent-memory")` answers on Lambda as it does locally.

Usage (the Makefile's build-% target, from a copy of src/): lambda_package.py ENTRY_MODULE SRC_DIR ARTIFACTS_DIR
"""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "adapters", "handlers", "local")
# A package's files that are not Python but ship with it (served as they are) live in this directory of it.
STATIC = "static"


def closure(entry: str, src: Path) -> set[str]:
    """`entry` and every module of our packages it imports, with the packages holding them."""
    sys.path.insert(0, str(src))
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    modules = {entry, *graph.find_upstream_modules(entry)}
    packages = {".".join(module.split(".")[:depth]) for module in modules for depth in range(1, module.count(".") + 1)}
    return {module for module in modules | packages if module.split(".")[0] in PACKAGES}


def source_file(module: str, src: Path) -> Path:
    path = src.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def write_dist_info(target: Path) -> Path:
    """A minimal .dist-info (METADATA with name and version) for the project, as an installer would write."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    name, version = project["name"], project["version"]
    dist_info = target / f"{name.replace('-', '_')}-{version}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    return dist_info


def static_files(modules: set[str], src: Path) -> list[Path]:
    """The files a carried package serves as they are (its `static/` directory, e.g. the console's page)."""
    directories = [src.joinpath(*module.split(".")) / STATIC for module in modules]
    return sorted(
        path for directory in directories if directory.is_dir() for path in directory.rglob("*") if path.is_file()
    )


def main(entry: str, src: Path, target: Path) -> int:
    modules = closure(entry, src)
    for origin in [*(source_file(module, src) for module in sorted(modules)), *static_files(modules, src)]:
        destination = target / origin.relative_to(src)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(origin, destination)
    write_dist_info(target)
    print(f"{entry}: {len(modules)} modules of {', '.join(PACKAGES)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], Path(sys.argv[2]).resolve(), Path(sys.argv[3]).resolve()))
