"""A PyTorch reference of DeepSeek-V4's multi-token-prediction (MTP) module, built from
transformers' own DeepSeek-V4 pieces (transformers builds the main model but drops `mtp.*`).

DeepSeek's published design (the V3 report's MTP, V4's hyper-connected form), one module:
    e  = enorm(embed(t[i+1]))                    # the NEXT token's embedding, normed
    h  = hnorm(H[i])                              # the main model's last hc_mult-wide state at i
                                                  # (before its hc head), normed per stream
    x  = e_proj(e)[:, :, None, :] + h_proj(h)     # [B, S, hc_mult, hidden]
    x  = block(x)                                 # one full V4 decoder layer: sliding attention,
                                                  # top-k MoE, hc_attn / hc_ffn
    logits = lm_head(norm(hc_head(x)))            # its own hc head and norm; embed and lm_head
                                                  # are the main model's
so position i predicts token i+2. The block runs at the main model's positions (rope position i
for the pair (H[i], t[i+1])), with the main model's causal sliding-window mask. Drafts longer
than one apply the same module again on its own output state and the token it just proposed.

Checkpoint names (DeepSeek's, under "mtp.0."): e_proj.weight, h_proj.weight, enorm.weight,
hnorm.weight, norm.weight, hc_head_fn, hc_head_base, hc_head_scale, and the block's
attn.* / ffn.* / attn_norm / ffn_norm / hc_attn_* / hc_ffn_* exactly as a main layer names them.
`mtp_state_dict` produces them through transformers' own save path (see its docstring).
"""
import copy
import os
import sys
import tempfile

import torch
from torch import nn

from transformers import DeepseekV4Config, DeepseekV4ForCausalLM
from transformers.models.deepseek_v4 import modeling_deepseek_v4 as v4

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures"))
from fixture_lib import appended_layer_tensors  # noqa: E402


def mtp_config(config: DeepseekV4Config) -> DeepseekV4Config:
    """The main config extended by one layer, the MTP block's: sliding attention, top-k MoE
    (DeepSeek numbers MTP layers after the main ones, past the hash-routed ones)."""
    c = copy.deepcopy(config)
    c.num_hidden_layers = config.num_hidden_layers + 1
    c.layer_types = list(config.layer_types) + ["sliding_attention"]
    c.mlp_layer_types = list(config.mlp_layer_types) + ["moe"]
    return c


class DeepseekV4MTP(nn.Module):
    def __init__(self, config: DeepseekV4Config):
        super().__init__()
        self.layer_idx = config.num_hidden_layers
        ext = mtp_config(config)
        h = config.hidden_size
        self.e_proj = nn.Linear(h, h, bias=False)
        self.h_proj = nn.Linear(h, h, bias=False)
        self.enorm = v4.DeepseekV4RMSNorm(h, eps=config.rms_norm_eps)
        self.hnorm = v4.DeepseekV4RMSNorm(h, eps=config.rms_norm_eps)
        self.block = v4.DeepseekV4DecoderLayer(ext, self.layer_idx)
        self.hc_head = v4.DeepseekV4HyperHead(config)
        self.norm = v4.DeepseekV4RMSNorm(h, eps=config.rms_norm_eps)

    def forward(self, hidden_streams, next_ids, embed, lm_head, layer_kwargs):
        """hidden_streams: [B, S, hc, H], the main model's input to its hc head; next_ids: [B, S],
        token i+1 at position i; embed / lm_head: the main model's; layer_kwargs: what the main
        model passed its layers (position_embeddings, position_ids, attention_mask), without a
        cache. Returns (logits [B, S, V] predicting token i+2 at i, the block's output streams)."""
        e = self.enorm(embed(next_ids))
        x = self.e_proj(e).unsqueeze(2) + self.h_proj(self.hnorm(hidden_streams))
        kwargs = dict(layer_kwargs)
        kwargs["past_key_values"] = None
        x = self.block(x, input_ids=next_ids, **kwargs)
        return lm_head(self.norm(self.hc_head(x))), x


class MainCapture:
    """Hooks on a DeepseekV4ForCausalLM that keep what the MTP module needs from one forward:
    the input of the final hc head (the hc_mult-wide state) and the kwargs of the last layer."""

    def __init__(self, model: DeepseekV4ForCausalLM):
        self.streams = None
        self.layer_kwargs = None
        self.handles = [
            model.model.hc_head.register_forward_hook(self._head),
            model.model.layers[-1].register_forward_pre_hook(self._layer, with_kwargs=True),
        ]

    def _head(self, module, args, out):
        self.streams = args[0]

    def _layer(self, module, args, kwargs):
        self.layer_kwargs = {k: kwargs[k] for k in ("position_embeddings", "position_ids", "attention_mask")
                             if k in kwargs}

    def remove(self):
        for h in self.handles:
            h.remove()


def mtp_state_dict(model: DeepseekV4ForCausalLM, mtp: DeepseekV4MTP, dtype=torch.bfloat16, mtp_index: int = 0):
    """The MTP module's tensors under DeepSeek's names ("mtp.<i>."), cast to `dtype`.
    The block's names come from transformers' own save path: a copy of the model with the block
    appended as its last layer is saved with save_pretrained, whose reverse conversion writes
    DeepSeek's names ("model.layers.<L>.attn.wq_a.weight", ...), and "model.layers.<L>." becomes
    "mtp.<i>."."""
    p = f"mtp.{mtp_index}."
    block = appended_layer_tensors(DeepseekV4ForCausalLM, mtp_config(model.config), model, mtp.block)
    out = {p + k: v for k, v in block.items()}
    own = {"e_proj.weight": mtp.e_proj.weight, "h_proj.weight": mtp.h_proj.weight,
           "enorm.weight": mtp.enorm.weight, "hnorm.weight": mtp.hnorm.weight, "norm.weight": mtp.norm.weight,
           "hc_head_fn": mtp.hc_head.hc_fn, "hc_head_base": mtp.hc_head.hc_base,
           "hc_head_scale": mtp.hc_head.hc_scale}
    for k, v in own.items():
        out[p + k] = v.detach().cpu()
    return {k: (v.to(dtype) if v.is_floating_point() else v).contiguous() for k, v in out.items()}


def load_mtp(model: DeepseekV4ForCausalLM, tensors: dict, mtp_index: int = 0) -> DeepseekV4MTP:
    """The inverse of mtp_state_dict, for checks and fixtures: an fp32 MTP module from
    DeepSeek-named tensors. The block's tensors go back through transformers' own load path
    (from_pretrained of the extended model, whose conversion maps DeepSeek's names)."""
    from safetensors.torch import load_file, save_file

    p = f"mtp.{mtp_index}."
    L = model.config.num_hidden_layers
    mtp = DeepseekV4MTP(model.config).float()
    own = {"e_proj.weight": mtp.e_proj.weight, "h_proj.weight": mtp.h_proj.weight,
           "enorm.weight": mtp.enorm.weight, "hnorm.weight": mtp.hnorm.weight, "norm.weight": mtp.norm.weight,
           "hc_head_fn": mtp.hc_head.hc_fn, "hc_head_base": mtp.hc_head.hc_base,
           "hc_head_scale": mtp.hc_head.hc_scale}
    with torch.no_grad():
        for k, param in own.items():
            param.copy_(tensors[p + k].float())
    with tempfile.TemporaryDirectory() as d:
        model.save_pretrained(d, safe_serialization=True)
        main = {}
        for fn in sorted(os.listdir(d)):
            if fn.endswith(".safetensors"):
                main.update(load_file(os.path.join(d, fn)))
                os.remove(os.path.join(d, fn))
        for fn in os.listdir(d):
            if fn.endswith(".index.json"):
                os.remove(os.path.join(d, fn))
        for k, v in tensors.items():
            if k.startswith(p) and k[len(p):] not in own:
                main[f"model.layers.{L}." + k[len(p):]] = v
        mtp_config(model.config).save_pretrained(d)
        save_file({k: v.contiguous() for k, v in main.items()}, os.path.join(d, "model.safetensors"),
                  metadata={"format": "pt"})
        ext = DeepseekV4ForCausalLM.from_pretrained(d, dtype=torch.float32)
    mtp.block.load_state_dict(ext.model.layers[L].state_dict())
    return mtp
