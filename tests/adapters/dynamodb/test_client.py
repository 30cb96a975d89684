"""The process's DynamoDB client: built without listing every AWS service's models, still honouring AWS_DATA_PATH,
and a second client of the process built from the models the first parsed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import botocore.loaders
import botocore.session
import pytest

from adapters.dynamodb import make_client


def test_the_client_loads_dynamodb_models_from_aws_data_path_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A newer DynamoDB API version on the data path, as an operator might install one: it is the one loaded.
    loader = botocore.session.get_session().get_component("data_loader")
    newer = tmp_path / "dynamodb" / "2099-01-01"
    newer.mkdir(parents=True)
    for type_name in ("service-2", "endpoint-rule-set-1"):
        model = loader.load_service_model("dynamodb", type_name)
        if type_name == "service-2":
            model["metadata"]["apiVersion"] = "2099-01-01"
        (newer / f"{type_name}.json").write_text(json.dumps(model))
    monkeypatch.setenv("AWS_DATA_PATH", str(tmp_path))

    client = make_client("http://127.0.0.1:9", "us-east-1")

    assert client.meta.service_model.api_version == "2099-01-01"
    assert client.meta.service_model.service_name == "dynamodb"


def test_the_client_never_lists_every_services_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_DATA_PATH", str(tmp_path))  # a search path no client of this process loaded from yet
    listed: list[str] = []
    real_listdir = os.listdir

    def listdir(path: str) -> list[str]:
        listed.append(str(path))
        return real_listdir(path)

    monkeypatch.setattr("botocore.loaders.os.listdir", listdir)

    make_client("http://127.0.0.1:9", "us-east-1")

    data = Path(botocore.__file__).parent / "data"
    assert str(data) not in listed  # the directory of every service's models


def test_a_second_client_of_the_process_parses_no_model_file_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_DATA_PATH", str(tmp_path))  # a search path no client of this process loaded from yet
    make_client("http://127.0.0.1:9", "us-east-1")
    parsed: list[str] = []
    real_load_file = botocore.loaders.JSONFileLoader.load_file

    def load_file(self: botocore.loaders.JSONFileLoader, file_path: str) -> Any:
        parsed.append(file_path)
        return real_load_file(self, file_path)

    monkeypatch.setattr(botocore.loaders.JSONFileLoader, "load_file", load_file)

    second = make_client("http://127.0.0.1:9", "eu-west-1")

    assert parsed == []
    assert (second.meta.service_model.service_name, second.meta.region_name) == ("dynamodb", "eu-west-1")
