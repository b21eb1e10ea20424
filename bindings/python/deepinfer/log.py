"""libdeepinfer's log records in Python: a callable, or the standard `logging` module.

    deepinfer.set_log_handler(lambda level, message: print(level, message))
    deepinfer.log_to_logging()   # records go to logging.getLogger("deepinfer")

The handler runs on the thread that logged (the one creating an engine, or an engine's own
threads), one record at a time, and must not call set_log_handler itself.
"""
from __future__ import annotations

import logging
from typing import Callable, Optional, Union

from ._load import load_native

_native = load_native()

_LEVELS = {"error": _native.LOG_ERROR, "warn": _native.LOG_WARN, "warning": _native.LOG_WARN,
           "info": _native.LOG_INFO, "debug": _native.LOG_DEBUG}
_TO_LOGGING = {_native.LOG_ERROR: logging.ERROR, _native.LOG_WARN: logging.WARNING,
               _native.LOG_INFO: logging.INFO, _native.LOG_DEBUG: logging.DEBUG}
LEVEL_NAMES = {v: k for k, v in _LEVELS.items() if k != "warning"}


def _level(level: Union[str, int]) -> int:
    if isinstance(level, str):
        if level.lower() not in _LEVELS:
            from .errors import _from_status
            raise _from_status(-1, "DI_E_INVALID_ARG",
                               f"level: expected error, warn, info or debug, got {level!r}", "")
        return _LEVELS[level.lower()]
    return int(level)


def set_log_handler(handler: Optional[Callable[[str, str], None]], level: Union[str, int] = "info") -> None:
    """Sends records of `level` and more severe to handler(level_name, message); None: stderr."""
    if handler is None:
        _native.set_log_handler(None, _level(level))
        return
    if not callable(handler):
        raise TypeError(f"set_log_handler: expected a callable or None, got {type(handler).__name__}")
    _native.set_log_handler(lambda lv, msg: handler(LEVEL_NAMES.get(lv, str(lv)), msg), _level(level))


def log_to_logging(logger: Optional[logging.Logger] = None, level: Union[str, int] = "info") -> logging.Logger:
    """Routes records into `logger` (default logging.getLogger("deepinfer")) at their levels."""
    target = logger or logging.getLogger("deepinfer")
    _native.set_log_handler(lambda lv, msg: target.log(_TO_LOGGING.get(lv, logging.INFO), msg), _level(level))
    return target
