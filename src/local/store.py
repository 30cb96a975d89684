"""The store a local command uses: its settings from the command line over the environment's."""

from __future__ import annotations

import argparse

from handlers import bootstrap


def settings_for(args: argparse.Namespace, endpoint_url: str | None) -> bootstrap.Settings:
    return bootstrap.Settings(
        table_name=args.table, region=bootstrap.settings_from_env().region, endpoint_url=endpoint_url
    )
