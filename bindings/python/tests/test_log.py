"""The library's log records reach Python: a callable gets the load phases of an engine (its
cache line equals what the engine reports), logging integration maps the levels, a bad level is
an InvalidArgumentError, and the handler survives records from the engine's threads."""
import logging

import pytest

import deepinfer

from conftest import V4_FIXTURES, V4_NAMES


def test_handler_receives_the_load_phases_of_an_engine():
    got = []
    deepinfer.set_log_handler(lambda level, message: got.append((level, message)), "info")
    try:
        with deepinfer.Engine(str(V4_FIXTURES / V4_NAMES[0])) as engine:
            info = engine.info()
    finally:
        deepinfer.set_log_handler(None, "warn")
    messages = [m for _, m in got]
    assert any(m.startswith("config: ") and "model_type deepseek_v4" in m for m in messages), messages
    assert any(m.startswith("weights: loaded in ") for m in messages), messages
    assert any(m.startswith("engine ready: ") for m in messages), messages
    kv = [m for m in messages if m.startswith("kv cache: ")]
    limits = info["limits"]
    assert kv and kv[0].startswith(f"kv cache: {limits['num_kv_blocks']} blocks of {limits['block_size']} tokens")
    assert {level for level, _ in got} == {"info"}


def test_logging_integration_and_level_filter(caplog):
    logger = logging.getLogger("deepinfer.test")
    deepinfer.log_to_logging(logger, "info")
    try:
        with caplog.at_level(logging.INFO, logger="deepinfer.test"):
            deepinfer.Engine(str(V4_FIXTURES / V4_NAMES[0])).close()
        assert any(r.levelno == logging.INFO and r.getMessage().startswith("engine ready: ") for r in caplog.records)
        caplog.clear()
        deepinfer.log_to_logging(logger, "warn")
        with caplog.at_level(logging.DEBUG, logger="deepinfer.test"):
            deepinfer.Engine(str(V4_FIXTURES / V4_NAMES[0])).close()
        assert [r for r in caplog.records if r.name == "deepinfer.test"] == []
    finally:
        deepinfer.set_log_handler(None, "warn")


def test_bad_levels_and_handlers_are_refused():
    with pytest.raises(deepinfer.InvalidArgumentError):
        deepinfer.set_log_handler(print, "loud")
    with pytest.raises(deepinfer.InvalidArgumentError):
        deepinfer.set_log_handler(print, 9)
    with pytest.raises(TypeError):
        deepinfer.set_log_handler("not callable")
