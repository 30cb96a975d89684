"""The stateful contract machine (tests/stateful_contract.py) over moto: both doors, one store, one model."""

from __future__ import annotations

from hypothesis.stateful import run_state_machine_as_test

from tests.conftest import Engine
from tests.stateful_contract import SETTINGS, StatefulContract


def test_http_and_mcp_doors_keep_one_contract_on_moto(moto_engine: Engine) -> None:
    run_state_machine_as_test(lambda: StatefulContract(moto_engine.client), settings=SETTINGS)
