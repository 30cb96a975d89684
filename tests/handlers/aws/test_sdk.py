"""How the MCP function imports the SDK's server (handlers.aws.sdk), on a package of the test's own: a package bound
without its `__init__` imports its submodules, runs the `__init__` on the first lookup of a name it lacks, and then
holds everything the `__init__` made; a module standing in for another becomes it on first use."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from handlers.aws.sdk import ModuleOnFirstUse, PackageInitOnFirstLookup, bind_without_init

PACKAGE = "sdk_probe_package"
MODULE = "sdk_probe_module"


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A package whose `__init__` counts its runs in `runs.txt` and imports its own submodule."""
    root = tmp_path / PACKAGE
    root.mkdir()
    (root / "__init__.py").write_text(
        "from pathlib import Path\n"
        "_runs = Path(__file__).with_name('runs.txt')\n"
        "_runs.write_text(str(int(_runs.read_text() if _runs.exists() else '0') + 1))\n"
        f"from {PACKAGE} import server as server\n"
        "from .client import Client as Client\n"
    )
    (root / "server.py").write_text("SERVED = True\n")
    (root / "client.py").write_text("class Client: ...\n")
    (tmp_path / f"{MODULE}.py").write_text("NAME = 'plain'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield root
    for name in [name for name in sys.modules if name.startswith((PACKAGE, MODULE))]:
        del sys.modules[name]


def runs(package: Path) -> int:
    counted = package / "runs.txt"
    return int(counted.read_text()) if counted.exists() else 0


def test_a_package_bound_without_init_imports_a_submodule_and_runs_no_init(package: Path) -> None:
    bind_without_init(PACKAGE)

    from sdk_probe_package.server import SERVED  # type: ignore[import-not-found]  # made by the fixture

    assert SERVED is True
    assert runs(package) == 0
    assert f"{PACKAGE}.client" not in sys.modules


def test_the_first_lookup_of_a_name_the_package_lacks_runs_its_init_once_in_place(package: Path) -> None:
    bind_without_init(PACKAGE)
    import sdk_probe_package  # type: ignore[import-not-found]  # made by the fixture
    from sdk_probe_package import Client

    assert Client.__name__ == "Client"
    assert sdk_probe_package.server.SERVED is True
    assert sys.modules[PACKAGE] is sdk_probe_package
    assert runs(package) == 1


@pytest.mark.usefixtures("package")
def test_a_name_that_is_no_installed_package_or_is_imported_already_is_left_as_it_is() -> None:
    imported = sys.modules["json"]

    bind_without_init("sdk_probe_no_such_package")
    bind_without_init(MODULE)  # a module, not a package
    bind_without_init("json")  # a package, imported already

    assert "sdk_probe_no_such_package" not in sys.modules
    assert MODULE not in sys.modules
    assert sys.modules["json"] is imported


def test_a_package_module_without_a_spec_has_no_names_to_find() -> None:
    orphan = PackageInitOnFirstLookup("sdk_probe_orphan")

    with pytest.raises(AttributeError):
        _ = orphan.anything


@pytest.mark.usefixtures("package")
def test_a_module_standing_in_for_another_becomes_it_on_first_use_even_while_bound_in_its_place() -> None:
    stand_in = ModuleOnFirstUse(MODULE)
    sys.modules[MODULE] = stand_in

    assert stand_in.NAME == "plain"
    assert sys.modules[MODULE] is not stand_in  # the real module, imported on that first use
    assert ModuleOnFirstUse("json").JSONDecodeError is sys.modules["json"].JSONDecodeError
