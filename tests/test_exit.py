"""A test run leaves nothing open for the interpreter to find at exit: no event loop, socket or file is left for the
garbage collector, which would say so in a ResourceWarning after the last test (pytest's own warning filters end with
the session, so only a run in a subprocess sees them)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import SERVE_ROOT, serve_env

# A test that holds what leaked: the MCP function's event loop, made when its module is imported (tests/handlers/
# conftest.py imports it) whether or not a test invokes the function, and a TestClient. It invokes no Lambda handler,
# whose tests close the thread's loop themselves, nor an async test, whose loop handling can hide the leak.
HOLDERS = [
    "tests/handlers/console/test_console_route.py::test_console_redirects_to_its_directory_so_relative_files_resolve"
]


def test_a_run_of_the_tests_that_hold_loops_and_sockets_leaves_none_open_at_exit() -> None:
    command = [sys.executable, "-W", "always::ResourceWarning", "-m", "pytest", "-q", "-n", "0", "-p", "no:randomly"]
    done = subprocess.run(
        [*command, *HOLDERS],
        cwd=SERVE_ROOT,
        env=serve_env(),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )

    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "1 passed" in said, said
    assert "ResourceWarning" not in said, said
    assert "unclosed" not in said, said
