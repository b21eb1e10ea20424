"""SamplingParams: vLLM-style sampling settings, turned into the library's sampling options.

Only fields that were set reach the library, so its defaults (and its range checks, which name
the field) stay the single source of truth.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Dict, List, Optional, Union

from . import _native


@dataclass
class SamplingParams:
    n: Optional[int] = None
    temperature: Optional[float] = None
    top_p: Optional[float] = None
    top_k: Optional[int] = None
    min_p: Optional[float] = None
    max_tokens: Optional[int] = None
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

    def to_dict(self) -> dict:
        """The library's sampling keys for the fields that are set."""
        out: dict = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if v is None:
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
            elif f.name in ("temperature", "top_p", "min_p", "presence_penalty",
                            "frequency_penalty", "repetition_penalty"):
                out[f.name] = float(v)
            else:
                out[f.name] = v
        return out

    def to_options(self) -> _native.Options:
        """A di_options holding these settings; an out-of-range value raises when submitted."""
        opts = _native.Options()
        opts.update_json(json.dumps(self.to_dict()))
        return opts


def options_from(settings: Optional[dict]) -> Optional[_native.Options]:
    """A di_options from a dict of library keys (engine or recipe scope), or None."""
    if not settings:
        return None
    opts = _native.Options()
    opts.update_json(json.dumps(settings))
    return opts
