"""Recipe, Prepared and Parser: API request bodies to DeepSeek prompts, and model output back to
the API's events (as dicts) and final response.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _native
from ._handle import NativeHandle
from .sampling import options_from

PROTOCOLS = {
    "chat": _native.PROTOCOL_CHAT_COMPLETIONS,
    "chat.completions": _native.PROTOCOL_CHAT_COMPLETIONS,
    "responses": _native.PROTOCOL_RESPONSES,
    "messages": _native.PROTOCOL_MESSAGES,
}

FINISH_CODES = {None: 0, "stop": 1, "length": 2, "stop_sequence": 3, "cancelled": 4, "error": 5}


def _body_text(body: Union[str, bytes, dict]) -> Union[str, bytes]:
    return json.dumps(body) if isinstance(body, dict) else body


class Prepared(NativeHandle):
    """One API request made ready for the engine (immutable)."""

    def __init__(self, native: _native.Prepared):
        self._native = native

    prompt = property(lambda self: self._native.prompt)
    token_ids = property(lambda self: self._native.token_ids)
    special_ranges = property(lambda self: self._native.special_ranges)
    stream = property(lambda self: self._native.stream)
    sampling = property(lambda self: json.loads(self._native.sampling_json))
    stop_sequences = property(lambda self: json.loads(self._native.stop_sequences_json))
    constraint = property(lambda self: json.loads(self._native.constraint_json))
    parser_options = property(lambda self: json.loads(self._native.parser_options_json))
    images = property(lambda self: json.loads(self._native.images_json))
    info = property(lambda self: json.loads(self._native.info_json))

    def parser(self, **overrides) -> "Parser":
        """A parser for this request's output (its protocol, tools, stop strings, control tokens;
        token ids are decoded with the recipe's tokenizer). Keyword arguments replace parser
        options, e.g. ``request_id="abc"``."""
        return Parser._wrap(_native.Parser(self._native, json.dumps(overrides) if overrides else ""))

    def image_data(self, index: int) -> Optional[bytes]:
        """Image ``index`` as the model takes it (WebP bytes), or None past the last image."""
        return self._native.image_data(index)


class Recipe(NativeHandle):
    """``Recipe(tokenizer_path, recipe_encoding="dsv4", recipe_model=..., ...)``; recipe_model
    defaults to the model folder's name (what ``deepinfer serve`` calls it), "deepseek-v4" with
    no path;
    keyword arguments are the recipe keys of ``deepinfer.options_schema()``. An empty path loads
    no tokenizer (prepared requests then carry the prompt text only)."""

    def __init__(self, tokenizer_path: Union[str, os.PathLike] = "", **options):
        self._native = _native.Recipe(os.fspath(tokenizer_path), options_from(options))

    def prepare(self, protocol: str, body: Union[str, bytes, dict]) -> Prepared:
        """Validates and renders an API request body. A rejected request raises a DeepInferError
        whose ``http_status`` and ``body`` are the API's error response."""
        try:
            code = PROTOCOLS[protocol]
        except KeyError:
            raise ValueError(f"protocol: expected one of {sorted(PROTOCOLS)}, got {protocol!r}")
        return Prepared(self._native.prepare(code, _body_text(body)))


def _event(pair) -> Dict[str, Any]:
    name, data = pair
    try:
        payload: Any = json.loads(data)
    except ValueError:
        payload = data  # Chat Completions' closing "[DONE]"
    return {"event": name, "data": payload, "raw": data}


class Parser(NativeHandle):
    """Model output in (text, token ids, or engine chunks), API events out as dicts
    ``{"event": name or None, "data": parsed JSON or "[DONE]", "raw": data text}``."""

    def __init__(self, options: Union[str, dict, None] = None):
        if options is None:
            options = {}
        self._native = _native.Parser(json.dumps(options) if isinstance(options, dict)
                                      else options)

    @classmethod
    def _wrap(cls, native: "_native.Parser") -> "Parser":
        parser = cls.__new__(cls)
        parser._native = native
        return parser

    def push(self, chunk: Union[str, bytes, "_native.Chunk"] = "", *,
             token_ids: Sequence[int] = (), finish_reason: Optional[str] = None,
             prompt_tokens: int = -1, cached_prompt_tokens: int = -1,
             completion_tokens: int = -1, error_message: str = "") -> List[Dict[str, Any]]:
        """Feeds one piece of output (an engine Chunk as it came, or text with the keyword
        fields) and returns the events it completes, in order (pushed eagerly, not lazily)."""
        if isinstance(chunk, _native.Chunk):
            pairs = self._native.push_chunk(chunk)
        else:
            if finish_reason not in FINISH_CODES:
                raise ValueError(f"finish_reason: expected one of {list(FINISH_CODES)}, "
                                 f"got {finish_reason!r}")
            pairs = self._native.push(chunk, list(token_ids), FINISH_CODES[finish_reason],
                                      prompt_tokens, cached_prompt_tokens, completion_tokens,
                                      error_message)
        return [_event(p) for p in pairs]

    def finish(self) -> List[Dict[str, Any]]:
        """Ends the output (as a normal stop) and returns the remaining events."""
        return [_event(p) for p in self._native.finish()]

    def response(self) -> Dict[str, Any]:
        """The non-streaming response body (after the output ended)."""
        return json.loads(self._native.response())

    @property
    def ended(self) -> bool:
        return self._native.ended
