"""Local running: the table definition read from template.yaml, and an embedded DynamoDB-compatible engine."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import yaml
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

TEMPLATE = Path(__file__).resolve().parents[2] / "template.yaml"
TABLE_RESOURCE = "MemoryTable"


class _TemplateLoader(yaml.SafeLoader):
    """Reads CloudFormation YAML, keeping each short-form intrinsic (`!Ref`, `!Sub`, ...) as its plain value."""


def _intrinsic(loader: yaml.SafeLoader, tag_suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    assert isinstance(node, yaml.MappingNode)
    return loader.construct_mapping(node, deep=True)


_TemplateLoader.add_multi_constructor("!", _intrinsic)


def load_template(path: Path = TEMPLATE) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        template: dict[str, Any] = yaml.load(handle, Loader=_TemplateLoader)  # noqa: S506  # a SafeLoader subclass
    return template


def table_definition(path: Path = TEMPLATE) -> dict[str, Any]:
    """The table's `Properties` exactly as the deployed stack declares them."""
    properties: dict[str, Any] = load_template(path)["Resources"][TABLE_RESOURCE]["Properties"]
    return properties


class _QuietHandler(WSGIRequestHandler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass  # every API call is a POST to "/": a line each says nothing


class EmbeddedDynamoDB:
    """moto's DynamoDB served on loopback by a single thread (moto's threaded server can lose concurrent updates).

    Data lives in memory and is gone when the process ends.
    """

    def __init__(self, port: int, host: str = "127.0.0.1") -> None:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

        app = DomainDispatcherApplication(create_backend_app)
        self._server: BaseWSGIServer = make_server(host, port, app, threaded=False, request_handler=_QuietHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="embedded-dynamodb", daemon=True)

    @property
    def endpoint_url(self) -> str:
        return f"http://{self._server.host}:{self._server.port}"

    def start(self) -> EmbeddedDynamoDB:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
