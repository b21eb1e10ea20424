"""LLM: offline batch generation in the shape of vLLM's ``LLM.generate`` and ``LLM.chat``.

All prompts are submitted at once (the engine batches them continuously), then each request is
drained; outputs come back in prompt order. ``chat`` renders each conversation with the recipe
(the DeepSeek prompt format, tools included) and parses the output back into answer text,
reasoning and tool calls.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from .engine import Engine, Request
from .errors import InvalidArgumentError
from .sampling import CHAT_BODY_FIELDS, SamplingParams


@dataclass
class Logprob:
    """vLLM's Logprob: a token's log-probability, its rank among the alternatives (1 = most
    likely; None when not known) and its text."""
    logprob: float
    rank: Optional[int] = None
    decoded_token: Optional[str] = None


@dataclass
class CompletionOutput:
    index: int
    text: str = ""
    token_ids: List[int] = field(default_factory=list)
    # vLLM's shape, when SamplingParams.logprobs was set: per generated token, {token id:
    # Logprob} for the sampled token and the top `logprobs` alternatives.
    logprobs: Optional[List[Dict[int, Logprob]]] = None
    cumulative_logprob: Optional[float] = None
    # Per token: [(token id, logprob)] most likely first, when logprobs > 0.
    top_logprobs: Optional[List[List[Tuple[int, float]]]] = None
    finish_reason: Optional[str] = None
    error_message: str = ""
    # LLM.chat only: the reasoning before the answer and the tool calls (OpenAI's shape:
    # [{"id", "type": "function", "function": {"name", "arguments"}}]), as the recipe parsed them.
    reasoning_content: Optional[str] = None
    tool_calls: Optional[List[Dict[str, Any]]] = None


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
Message = Dict[str, Any]

class LLM:
    """``LLM(model).generate(prompts, SamplingParams(...))`` / ``.chat(messages, ...)``; keyword
    arguments are engine keys. ``model`` may also be a running Engine, which the LLM then uses
    without owning it."""

    def __init__(self, model: Union[str, os.PathLike, Engine], **engine_options):
        self._owns_engine = not isinstance(model, Engine)
        if self._owns_engine:
            self.engine = Engine(model, **engine_options)
        else:
            if engine_options:
                raise ValueError("engine options apply only when the LLM creates the engine")
            self.engine = model
        self._recipe = None

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

    @property
    def model_name(self) -> str:
        """The model's name in chat requests and responses: its folder's name, as `deepinfer
        serve` calls it by default."""
        return os.path.basename(os.path.normpath(self.engine.model)) or "deepinfer"

    def get_recipe(self):
        """The recipe ``chat`` renders with (made on first use from the model's tokenizer)."""
        if self._recipe is None:
            from .recipe import Recipe
            self._recipe = Recipe(self.engine.model, recipe_model=self.model_name)
        return self._recipe

    def chat(self, messages: Union[Sequence[Message], Sequence[Sequence[Message]]],
             sampling_params: Optional[SamplingParams] = None, *,
             tools: Optional[List[Dict[str, Any]]] = None,
             chat_template_kwargs: Optional[Dict[str, Any]] = None) -> List[RequestOutput]:
        """vLLM's ``LLM.chat``: one conversation (a list of OpenAI-style messages) or a list of
        them, rendered by the recipe as Chat Completions requests with ``tools``; returns one
        RequestOutput per conversation whose outputs carry the answer as ``text`` plus
        ``reasoning_content`` and ``tool_calls``. ``chat_template_kwargs`` may set
        ``thinking`` (bool). A request the recipe rejects raises InvalidArgumentError (or the
        error its status names) with the API's ``http_status`` and ``body``."""
        if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
            raise InvalidArgumentError(f"messages: expected a list of messages, got {messages!r}")
        conversations = [messages] if messages and isinstance(messages[0], dict) else list(messages)
        params = sampling_params or SamplingParams()
        bodies = [self._chat_body(c, params, tools, chat_template_kwargs) for c in conversations]
        recipe = self.get_recipe()
        prepared = [recipe.prepare("chat", b) for b in bodies]
        submitted: List[Request] = []
        try:
            for p in prepared:
                submitted.append(self.engine.submit(p))
            return [self._collect_chat(p, req, params.n or 1) for p, req in zip(prepared, submitted)]
        finally:
            for req in submitted:
                req.close()
            for p in prepared:
                p.close()

    def _chat_body(self, conversation, params: SamplingParams, tools, template_kwargs) -> dict:
        params.to_dict()  # the same type checks as generate
        body: Dict[str, Any] = {"model": self.model_name, "messages": list(conversation)}
        for name in CHAT_BODY_FIELDS:
            v = getattr(params, name)
            if v is not None:
                body[name] = v
        if params.logprobs is not None:
            body["logprobs"] = True
            if params.logprobs:
                body["top_logprobs"] = params.logprobs
        if params.logit_bias:
            body["logit_bias"] = {str(k): float(b) for k, b in params.logit_bias.items()}
        constraint = params.constraint()
        if "constraint_json_schema" in constraint:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "output", "schema": constraint["constraint_json_schema"], "strict": True}}
        elif "constraint_json_object" in constraint:
            body["response_format"] = {"type": "json_object"}
        elif constraint:
            raise InvalidArgumentError("structured_outputs: LLM.chat takes json or json_object "
                                       "(the answer of a chat reply); regex, choice and grammar "
                                       "need LLM.generate")
        if tools:
            body["tools"] = tools
        if template_kwargs:
            unknown = sorted(set(template_kwargs) - {"thinking"})
            if unknown:
                raise InvalidArgumentError(f"chat_template_kwargs: unknown keys {unknown}")
            body["thinking"] = {"type": "enabled" if template_kwargs["thinking"] else "disabled"}
        return body

    def _collect_chat(self, prepared, req: Request, n: int) -> RequestOutput:
        ids = list(prepared.token_ids)
        # One parser per completion, sharing an id so the tool-call ids agree across choices.
        parsers = [prepared.parser(request_id=f"{req.id:x}") for _ in range(n)]
        try:
            out = self._collect(None, ids, req, n, on_chunk=lambda c: parsers[c.index].push(c))
            for o, parser in zip(out.outputs, parsers):
                parser.finish()
                message = parser.response()["choices"][0]["message"]
                o.text = message.get("content") or ""
                o.reasoning_content = message.get("reasoning_content")
                o.tool_calls = message.get("tool_calls")
            return out
        finally:
            for parser in parsers:
                parser.close()

    def _token_text(self, token_id: int) -> Optional[str]:
        try:
            return self.engine.tokenizer.decode([token_id])
        except Exception:  # a model without tokenizer.json: ids only
            return None

    def _collect(self, prompt: Optional[str], ids: List[int], req: Request, n: int,
                 on_chunk=None) -> RequestOutput:
        outs = [CompletionOutput(index=i) for i in range(n)]
        cached = 0
        for chunk in req:
            if on_chunk is not None:
                on_chunk(chunk)
            o = outs[chunk.index]
            o.text += chunk.text
            o.token_ids.extend(chunk.token_ids)
            if chunk.logprobs is not None:
                tops = chunk.top_logprobs or [[] for _ in chunk.token_ids]
                o.logprobs = o.logprobs or []
                o.cumulative_logprob = o.cumulative_logprob or 0.0
                for tok, lp, top in zip(chunk.token_ids, chunk.logprobs, tops):
                    o.logprobs.append(self._logprob_dict(tok, lp, top))
                    o.cumulative_logprob += lp
            if chunk.top_logprobs is not None:
                o.top_logprobs = (o.top_logprobs or []) + chunk.top_logprobs
            if chunk.finish_reason is not None:
                o.finish_reason = chunk.finish_reason
                o.error_message = chunk.error_message
            cached = max(cached, chunk.cached_prompt_tokens)
        return RequestOutput(request_id=req.id, prompt=prompt, prompt_token_ids=ids,
                             outputs=outs, cached_prompt_tokens=cached)

    def _logprob_dict(self, token: int, logprob: float,
                      top: Sequence[Tuple[int, float]]) -> Dict[int, Logprob]:
        # As vLLM: the alternatives with their ranks, and the sampled token (its rank known when
        # it is among them).
        d: Dict[int, Logprob] = {}
        for rank, (tid, lp) in enumerate(top, start=1):
            d.setdefault(tid, Logprob(lp, rank, self._token_text(tid)))
        if token not in d:
            d[token] = Logprob(logprob, None, self._token_text(token))
        return d

    def close(self) -> None:
        """Closes the recipe, and the engine if this LLM created it."""
        if self._recipe is not None:
            self._recipe.close()
        if self._owns_engine:
            self.engine.close()

    def __enter__(self) -> "LLM":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
