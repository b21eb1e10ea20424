"""DeepInfer for Python: a thin binding of libdeepinfer's C ABI.

    import deepinfer
    llm = deepinfer.LLM("models/tiny-v4")
    out = llm.generate(["The capital of France is"], deepinfer.SamplingParams(max_tokens=16))
    print(out[0].outputs[0].text)

Engine.submit streams chunks (``for`` / ``async for``); Recipe.prepare turns API request bodies
into prompts and Parser turns model output into API events.
"""
from __future__ import annotations

import json as _json

from ._load import load_native

_native = load_native()
from ._native import Chunk, Options, Tokenizer
from .engine import Engine, Request
from .errors import (CancelledError, DeepInferError, DeepInferIOError, DeviceError,
                     InternalError, InvalidArgumentError, LimitError, NotFoundError,
                     OutOfMemoryError, ParseError, PermissionDeniedError, StateError,
                     UnsupportedError)
from .llm import LLM, CompletionOutput, RequestOutput
from .log import log_to_logging, set_log_handler
from .recipe import Parser, Prepared, Recipe
from .sampling import SamplingParams

if _native.abi_version() // 10000 != _native.ABI_VERSION // 10000 or \
        _native.abi_version() < _native.ABI_VERSION:
    raise ImportError(f"libdeepinfer ABI {_native.abi_version()} does not serve this binding "
                      f"(built for {_native.ABI_VERSION})")

__version__ = _native.version_string()


def build_info() -> dict:
    """What this build of libdeepinfer can do (version, CUDA, threads)."""
    return _json.loads(_native.build_info())


def options_schema() -> list:
    """Every option key: [{"key", "type", "scope", "doc"}]."""
    return _json.loads(_native.options_schema())


def status_name(status: int) -> str:
    return _native.status_name(status)


__all__ = [
    "LLM", "SamplingParams", "RequestOutput", "CompletionOutput", "Engine", "Request", "Chunk",
    "Recipe", "Prepared", "Parser", "Tokenizer", "Options", "build_info", "options_schema",
    "status_name", "set_log_handler", "log_to_logging", "DeepInferError", "InvalidArgumentError", "OutOfMemoryError",
    "UnsupportedError", "NotFoundError", "DeepInferIOError", "ParseError", "CancelledError",
    "InternalError", "LimitError", "StateError", "DeviceError", "PermissionDeniedError",
]
