"""The stateful contract machine (tests/stateful_contract.py) over Amazon DynamoDB Local: both doors, one store,
one model, on the engine whose order, conditions and errors are the reference (moto's are not)."""

from __future__ import annotations

import pytest
from hypothesis.stateful import run_state_machine_as_test

from tests.conftest import Engine
from tests.stateful_contract import DYNAMODB_LOCAL_SETTINGS, StatefulContract


@pytest.mark.slow
def test_http_and_mcp_doors_keep_one_contract_on_dynamodb_local(ddb_local_engine: Engine) -> None:
    # hypothesis runs any factory of a machine, though its stubs ask for the class
    machine = lambda: StatefulContract(ddb_local_engine)  # noqa: E731
    run_state_machine_as_test(machine, settings=DYNAMODB_LOCAL_SETTINGS)  # type: ignore[arg-type]
