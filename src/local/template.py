"""The table definition read from template.yaml, so local engines build the table the deployed stack declares."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

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
