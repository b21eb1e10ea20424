"""A PyTorch reference of DeepSeek-V3's multi-token-prediction (MTP) module, built from
transformers' own DeepSeek-V3 pieces (transformers builds the main model and ignores
`model.layers.61.*`, the MTP layer of the released checkpoint).

DeepSeek's design (the V3 technical report, §2.2 "Multi-Token Prediction"; checkpoint names from
the released model), one module at layer index L = num_hidden_layers:
    e  = enorm(embed(t[i+1]))                  # the NEXT token's embedding, normed
    h  = hnorm(H[i])                           # the main model's hidden row at i (see below)
    x  = eh_proj(cat([e, h], -1))              # [B, S, hidden]; eh_proj is [hidden, 2 * hidden],
                                               # the embedding half first (vLLM's deepseek_mtp.py
                                               # and SGLang's deepseek_nextn.py concatenate so)
    x  = block(x)                              # one full decoder layer: MLA attention, then MoE
                                               # (or dense MLP when L < first_k_dense_replace)
    logits = shared_head.head(shared_head.norm(x))
so position i predicts token i+2; the block runs at the main model's positions (rope position i
for the pair (H[i], t[i+1])) with the causal mask. H is the main model's final hidden state
after its final norm (model.norm): what the modeling code DeepSeek ships with its MTP checkpoints
feeds the layer, and what vLLM and SGLang hand it. A draft longer than one applies the same
module again on its own normed output shared_head.norm(x) (the counterpart of model.norm's
output, which hnorm was fit on; vLLM recycles it so) and the token it proposed.

Checkpoint names under "model.layers.<L>.": enorm.weight, hnorm.weight, eh_proj.weight,
shared_head.norm.weight, shared_head.head.weight (a copy of lm_head), embed_tokens.weight (a copy
of the embedding), and the block's self_attn.* / mlp.* / input_layernorm / post_attention_layernorm
exactly as a main layer names them. `mtp_state_dict` writes them through transformers' own save
path for the block.
"""
import copy
import os
import sys

import torch
from torch import nn

from transformers import DeepseekV3ForCausalLM
from transformers.models.deepseek_v3 import modeling_deepseek_v3 as v3

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
from fixture_lib import appended_layer_tensors  # noqa: E402


def call_layer(layer, x, layer_kwargs):
    """A decoder layer over x with the kwargs a main layer got (position embeddings, mask,
    positions), without a cache; transformers' layers return a tensor or a tuple by version."""
    kw = dict(layer_kwargs)
    for k in ("past_key_value", "past_key_values"):
        if k in kw:
            kw[k] = None
    if "use_cache" in kw:
        kw["use_cache"] = False
    out = layer(x, **kw)
    return out[0] if isinstance(out, tuple) else out


class DeepseekV3MTP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.layer_idx = config.num_hidden_layers
        h, eps = config.hidden_size, config.rms_norm_eps
        self.enorm = v3.DeepseekV3RMSNorm(h, eps=eps)
        self.hnorm = v3.DeepseekV3RMSNorm(h, eps=eps)
        self.eh_proj = nn.Linear(2 * h, h, bias=False)
        # Built from the extended config, so that per-layer lists (if this transformers has any)
        # cover index L; dense or MoE by layer index as a main layer.
        self.block = v3.DeepseekV3DecoderLayer(extended_config(config), self.layer_idx)
        self.shared_head_norm = v3.DeepseekV3RMSNorm(h, eps=eps)

    def forward(self, prev_hidden, next_ids, embed, head, layer_kwargs):
        """prev_hidden: [B, S, H] (the main model's normed final hidden rows, or this module's
        earlier outputs); next_ids: [B, S], the token after each position; embed / head: the
        main model's embedding and lm_head; layer_kwargs: what the main model passed its last
        layer for S positions. Returns (logits [B, S, V], shared_head.norm of the block's output
        [B, S, H]: the prev_hidden of a chained draft step)."""
        e = self.enorm(embed(next_ids))
        x = self.eh_proj(torch.cat([e, self.hnorm(prev_hidden)], dim=-1))
        x = call_layer(self.block, x, layer_kwargs)
        y = self.shared_head_norm(x)
        return head(y), y


class MainCapture:
    """Hooks on a DeepseekV3ForCausalLM keeping what the MTP module needs from one forward: the
    final norm's input and output, and the last layer's input, output and kwargs."""

    def __init__(self, model):
        self.pre_norm = self.post_norm = self.last_in = self.last_out = self.layer_kwargs = None
        last = model.model.layers[-1]
        self.handles = [
            model.model.norm.register_forward_hook(self._norm),
            last.register_forward_pre_hook(self._layer_pre, with_kwargs=True),
            last.register_forward_hook(self._layer_post),
        ]

    def _norm(self, module, args, out):
        self.pre_norm, self.post_norm = args[0], out

    def _layer_pre(self, module, args, kwargs):
        self.last_in = args[0] if args else kwargs["hidden_states"]
        self.layer_kwargs = {k: v for k, v in kwargs.items() if k != "hidden_states"}

    def _layer_post(self, module, args, out):
        self.last_out = out[0] if isinstance(out, tuple) else out

    def remove(self):
        for h in self.handles:
            h.remove()


def extended_config(config):
    """The main config with one more decoder layer: the MTP block's slot, so transformers' own
    save path names its tensors as model.layers.<L>.*. Per-layer lists (layer_types,
    mlp_layer_types where a version has them) get the last layer's entry again: the MTP layer
    is past first_k_dense_replace like the last decoder layer of every DeepSeek-V3."""
    L = config.num_hidden_layers
    if L - 1 < config.first_k_dense_replace:
        raise ValueError("the reference assumes the last decoder layer is MoE, as the MTP layer is")
    c = copy.deepcopy(config)
    c.num_hidden_layers = L + 1
    for k, v in list(vars(c).items()):
        if isinstance(v, list) and len(v) == L and k.endswith("layer_types"):
            setattr(c, k, list(v) + [v[-1]])
    return c


def mtp_state_dict(model, mtp):
    """The MTP module's tensors under DeepSeek's names (model.layers.<L>.*), fp32, including the
    embed_tokens and shared_head.head copies DeepSeek's checkpoint carries."""
    prefix = f"model.layers.{model.config.num_hidden_layers}."
    block = appended_layer_tensors(DeepseekV3ForCausalLM, extended_config(model.config), model, mtp.block)
    out = {prefix + k: v for k, v in block.items()}
    own = {"enorm.weight": mtp.enorm.weight, "hnorm.weight": mtp.hnorm.weight, "eh_proj.weight": mtp.eh_proj.weight,
           "shared_head.norm.weight": mtp.shared_head_norm.weight,
           "shared_head.head.weight": model.lm_head.weight, "embed_tokens.weight": model.model.embed_tokens.weight}
    for k, v in own.items():
        out[prefix + k] = v.detach().float().cpu()
    return {k: v.contiguous() for k, v in out.items()}
