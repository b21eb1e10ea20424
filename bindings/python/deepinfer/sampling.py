"""SamplingParams: vLLM-style sampling settings, turned into the library's sampling options.

Only fields that were set reach the library, so its defaults (and its range checks, which name
the field) stay the single source of truth. Two defaults are vLLM's rather than the library's:
``max_tokens`` is 16 (the library's open limit fills the context), and structured output is
given as vLLM gives it (``structured_outputs=StructuredOutputsParams(json=...)`` or the older
``guided_json`` / ``guided_regex`` / ``guided_choice`` / ``guided_grammar`` fields).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, fields
from numbers import Integral, Real
from typing import Any, Dict, List, Optional, Union

from . import _native
from .errors import InvalidArgumentError


@dataclass
class StructuredOutputsParams:
    """vLLM's StructuredOutputsParams: set exactly one of the fields."""
    json: Optional[Union[str, dict]] = None  # a JSON Schema (dict or its JSON text)
    regex: Optional[str] = None
    choice: Optional[List[str]] = None       # the output is one of these strings
    grammar: Optional[str] = None            # EBNF (GBNF/Lark-like, start rule `root`)
    json_object: Optional[bool] = None       # any JSON object


_GUIDED = {"guided_json": "json", "guided_regex": "regex", "guided_choice": "choice",
           "guided_grammar": "grammar"}
# Characters the library's regex dialect (an ECMAScript subset) treats as syntax.
_REGEX_SYNTAX = set("\\^$.|?*+()[]{}/")


def _choice_regex(choices: List[str]) -> str:
    # As vLLM builds it: the alternatives, each escaped, as one group.
    return "(" + "|".join("".join("\\" + c if c in _REGEX_SYNTAX else c for c in s)
                          for s in choices) + ")"


def _constraint(source: str, spec: Dict[str, Any]) -> Dict[str, Any]:
    """The one constraint_* key of a structured-output spec."""
    given = {k: v for k, v in spec.items() if v is not None and v is not False}
    if len(given) != 1:
        raise InvalidArgumentError(f"{source}: expected exactly one of json, regex, choice, "
                                   f"grammar, json_object; got {sorted(given) or 'none'}")
    (kind, value), = given.items()
    if kind == "json":
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError as e:
                raise InvalidArgumentError(f"{source}.json: not JSON ({e})") from None
        if not isinstance(value, (dict, bool)):
            raise InvalidArgumentError(f"{source}.json: expected a JSON Schema, got {value!r}")
        return {"constraint_json_schema": value}
    if kind == "json_object":
        return {"constraint_json_object": 1}
    if kind == "choice":
        if not isinstance(value, (list, tuple)) or not value or \
                not all(isinstance(c, str) and c for c in value):
            raise InvalidArgumentError(f"{source}.choice: expected non-empty strings, got {value!r}")
        return {"constraint_regex": _choice_regex(list(value))}
    if not isinstance(value, str) or not value:
        raise InvalidArgumentError(f"{source}.{kind}: expected a non-empty string, got {value!r}")
    return {"constraint_regex" if kind == "regex" else "constraint_ebnf": value}


@dataclass
class SamplingParams:
    n: Optional[int] = None
    temperature: Optional[float] = None
    top_p: Optional[float] = None
    top_k: Optional[int] = None
    min_p: Optional[float] = None
    # vLLM's default. None: no limit but the context.
    max_tokens: Optional[int] = 16
    min_tokens: Optional[int] = None
    seed: Optional[int] = None
    presence_penalty: Optional[float] = None
    frequency_penalty: Optional[float] = None
    repetition_penalty: Optional[float] = None
    stop: Optional[Union[str, List[str]]] = None
    stop_token_ids: Optional[List[int]] = None
    ignore_eos: Optional[bool] = None
    skip_special_tokens: Optional[bool] = None
    logit_bias: Optional[Dict[int, float]] = None
    # vLLM's meaning: None = no logprobs; k >= 0 = the sampled token's logprob plus k alternatives.
    logprobs: Optional[int] = None
    # Structured output: a StructuredOutputsParams or a dict of its fields ...
    structured_outputs: Optional[Union[StructuredOutputsParams, Dict[str, Any]]] = None
    # ... or one of vLLM's older guided_* fields.
    guided_json: Optional[Union[str, dict]] = None
    guided_regex: Optional[str] = None
    guided_choice: Optional[List[str]] = None
    guided_grammar: Optional[str] = None

    def _check_types(self) -> None:
        # Python types are checked here, so that a wrong one is the same typed error a wrong
        # value gets from the library (InvalidArgumentError naming the field).
        for name in _FLOATS:
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, Real)):
                raise InvalidArgumentError(f"{name}: expected a number, got {v!r}")
        for name in _INTS:
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, Integral)):
                raise InvalidArgumentError(f"{name}: expected an integer, got {v!r}")

    def constraint(self) -> Dict[str, Any]:
        """The constraint_* sampling key the structured-output fields ask for ({} for none)."""
        guided = {_GUIDED[k]: getattr(self, k) for k in _GUIDED if getattr(self, k) is not None}
        so = self.structured_outputs
        if so is not None and guided:
            raise InvalidArgumentError("structured_outputs: give it or the guided_* fields, not "
                                       f"both (got {sorted('guided_' + k for k in guided)})")
        if so is not None:
            if isinstance(so, StructuredOutputsParams):
                so = {f.name: getattr(so, f.name) for f in fields(so)}
            if not isinstance(so, dict):
                raise InvalidArgumentError("structured_outputs: expected a "
                                           f"StructuredOutputsParams or a dict, got {so!r}")
            known = {f.name for f in fields(StructuredOutputsParams)}
            unknown = sorted(set(so) - known)
            if unknown:
                raise InvalidArgumentError(f"structured_outputs: unknown fields {unknown}")
            return _constraint("structured_outputs", so)
        if guided:
            if len(guided) > 1:
                raise InvalidArgumentError("guided_*: expected one of guided_json, guided_regex, "
                                           f"guided_choice, guided_grammar; got {sorted(guided)}")
            (kind, _), = guided.items()
            return _constraint("guided_" + kind, guided)
        return {}

    def to_dict(self) -> dict:
        """The library's sampling keys for the fields that are set."""
        self._check_types()
        out: dict = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None or f.name == "structured_outputs" or f.name in _GUIDED:
                continue
            if f.name == "logprobs":
                out["logprobs"] = 1
                if v:
                    out["top_logprobs"] = int(v)
            elif f.name == "stop":
                out["stop"] = [v] if isinstance(v, str) else list(v)
            elif f.name in ("ignore_eos", "skip_special_tokens"):
                out[f.name] = 1 if v else 0
            elif f.name == "logit_bias":
                out["logit_bias"] = {str(k): float(b) for k, b in v.items()}
            elif f.name in _FLOATS:
                out[f.name] = float(v)
            else:
                out[f.name] = v
        out.update(self.constraint())
        return out

    def to_options(self) -> _native.Options:
        """A di_options holding these settings; an out-of-range value raises when submitted."""
        opts = _native.Options()
        opts.update_json(json.dumps(self.to_dict()))
        return opts


# The number fields, by their declared types (the dataclass is the one list of them).
_FLOATS = tuple(f.name for f in fields(SamplingParams) if f.type == "Optional[float]")
_INTS = tuple(f.name for f in fields(SamplingParams) if f.type == "Optional[int]")
# The fields a Chat Completions body carries as they are (vLLM's extras included); LLM.chat maps
# the others itself.
CHAT_BODY_FIELDS = tuple(f.name for f in fields(SamplingParams)
                         if f.name not in ("skip_special_tokens", "logit_bias", "logprobs",
                                           "structured_outputs") and f.name not in _GUIDED)


def options_from(settings: Optional[dict]) -> Optional[_native.Options]:
    """A di_options from a dict of library keys (engine or recipe scope), or None."""
    if not settings:
        return None
    opts = _native.Options()
    opts.update_json(json.dumps(settings))
    return opts
