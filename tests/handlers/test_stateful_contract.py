"""The stateful contract machine (tests/stateful_contract.py) over the in-memory store: both doors, one store, one
model. tests/integration runs the same machine on DynamoDB Local."""

from __future__ import annotations

import pytest
from hypothesis.stateful import run_state_machine_as_test

from tests.conftest import Engine
from tests.stateful_contract import IN_MEMORY_SETTINGS, StatefulContract


@pytest.mark.slow
def test_http_and_mcp_doors_keep_one_contract_in_memory(in_memory_engine: Engine) -> None:
    # hypothesis runs any factory of a machine, though its stubs ask for the class
    machine = lambda: StatefulContract(in_memory_engine)  # noqa: E731
    run_state_machine_as_test(machine, settings=IN_MEMORY_SETTINGS)  # type: ignore[arg-type]
