"""LLM: offline batch generation in the shape of vLLM's ``LLM.generate``.

All prompts are submitted at once (the engine batches them continuously), then each request is
drained; outputs come back in prompt order.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple, Union

from .engine import Engine, Request
from .sampling import SamplingParams


@dataclass
class CompletionOutput:
    index: int
    text: str = ""
    token_ids: List[int] = field(default_factory=list)
    # The sampled tokens' log-probabilities, when SamplingParams.logprobs was set.
    logprobs: Optional[List[float]] = None
    # Per token: [(token id, logprob)] most likely first, when logprobs > 0.
    top_logprobs: Optional[List[List[Tuple[int, float]]]] = None
    finish_reason: Optional[str] = None
    error_message: str = ""


@dataclass
class RequestOutput:
    request_id: int
    prompt: Optional[str]
    prompt_token_ids: List[int]
    outputs: List[CompletionOutput]
    cached_prompt_tokens: int = 0

    @property
    def finished(self) -> bool:
        return all(o.finish_reason is not None for o in self.outputs)


Prompt = Union[str, Sequence[int]]


class LLM:
    """``LLM(model).generate(prompts, SamplingParams(...))``; keyword arguments are engine keys.
    ``model`` may also be a running Engine, which the LLM then uses without owning it."""

    def __init__(self, model: Union[str, os.PathLike, Engine], **engine_options):
        self._owns_engine = not isinstance(model, Engine)
        if self._owns_engine:
            self.engine = Engine(model, **engine_options)
        else:
            if engine_options:
                raise ValueError("engine options apply only when the LLM creates the engine")
            self.engine = model

    def generate(self, prompts: Union[Prompt, Sequence[Prompt]],
                 params: Optional[SamplingParams] = None) -> List[RequestOutput]:
        if isinstance(prompts, str) or (isinstance(prompts, Sequence) and prompts
                                        and isinstance(prompts[0], int)):
            prompts = [prompts]
        params = params or SamplingParams()
        n = params.n or 1
        submitted: List[Tuple[Optional[str], List[int], Request]] = []
        try:
            for p in prompts:
                ids = self.engine._prompt_ids(p)
                submitted.append((p if isinstance(p, str) else None, ids,
                                  self.engine.submit(ids, params)))
            return [self._collect(text, ids, req, n) for text, ids, req in submitted]
        finally:
            for _, _, req in submitted:
                req.close()

    @staticmethod
    def _collect(prompt: Optional[str], ids: List[int], req: Request, n: int) -> RequestOutput:
        outs = [CompletionOutput(index=i) for i in range(n)]
        cached = 0
        for chunk in req:
            o = outs[chunk.index]
            o.text += chunk.text
            o.token_ids.extend(chunk.token_ids)
            if chunk.logprobs is not None:
                o.logprobs = (o.logprobs or []) + chunk.logprobs
            if chunk.top_logprobs is not None:
                o.top_logprobs = (o.top_logprobs or []) + chunk.top_logprobs
            if chunk.finish_reason is not None:
                o.finish_reason = chunk.finish_reason
                o.error_message = chunk.error_message
            cached = max(cached, chunk.cached_prompt_tokens)
        return RequestOutput(request_id=req.id, prompt=prompt, prompt_token_ids=ids,
                             outputs=outs, cached_prompt_tokens=cached)

    def close(self) -> None:
        """Closes the engine if this LLM created it."""
        if self._owns_engine:
            self.engine.close()

    def __enter__(self) -> "LLM":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
