"""serve's access log filter (local.access_log.PathOnly): uvicorn's access line keeps its path and loses its query
string; a line of any other shape is not written at all, rather than written with a credential it may hold."""

from __future__ import annotations

import logging

from local.access_log import PathOnly, log_config


def access_record(*args: object) -> logging.LogRecord:
    return logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d', args, None)


def test_the_access_line_names_the_path_without_its_query_string() -> None:
    record = access_record("127.0.0.1:5000", "GET", "/mcp?access_token=amt_x_secret&state=s", "1.1", 401)

    assert PathOnly().filter(record)
    assert record.getMessage() == '127.0.0.1:5000 - "GET /mcp HTTP/1.1" 401'


def test_a_line_of_another_shape_is_not_written() -> None:
    record = logging.LogRecord("uvicorn.access", logging.INFO, __file__, 1, "%s", ("/mcp?access_token=x",), None)

    assert not PathOnly().filter(record)


def test_uvicorn_is_configured_with_the_filter_on_its_access_log_only() -> None:
    config = log_config()

    assert config["loggers"]["uvicorn.access"]["filters"] == ["path_only"]
    assert "filters" not in config["loggers"]["uvicorn"]
    assert config["filters"]["path_only"]["()"] is PathOnly
