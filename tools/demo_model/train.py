#!/usr/bin/env python3
"""Trains the demo DeepSeek-V4 model (issue 22) on the corpus of build_corpus.py: a byte-level BPE
tokenizer with DeepSeek-V4's added tokens, transformers' DeepseekV4ForCausalLM at a small size
with every V4 layer kind, and an MTP module (mtp_reference.py) trained jointly on the
next-next token. Writes the model directory, its README, and transformers' reference logits
for the CPU engine's CI test.

Run on a machine with torch (2.11), transformers (5.17) and tokenizers, from the repository root:
    python3 tools/demo_model/train.py --corpus .demo-corpus --out OUT [--minutes 6] [--seed 22]
    python3 tools/demo_model/train.py --corpus .demo-corpus --out OUT --smoke   # seconds, end to end
OUT/deepseek-v4-demo/    config.json, model.safetensors (transformers' names + mtp.0.*),
                         tokenizer.json, tokenizer_config.json, README.md   -> models/deepseek-v4-demo/
OUT/fixtures/<name>/     fixture.json, logits.f32 (+ mtp_logits.f32)         -> tests/fixtures/model_v4_demo/
OUT/train_log.txt, OUT/metrics.json
"""
import argparse
import json
import math
import os
import random
import sys
import time

import torch
import torch.nn.functional as F

import tokenizers
import transformers
from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers, trainers
from transformers import DeepseekV4Config, DeepseekV4ForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "fixtures"))
from mtp_reference import DeepseekV4MTP, MainCapture, load_mtp, mtp_state_dict  # noqa: E402

SEP = "\f\n"
BOS, EOS, PAD = "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜▁pad▁｜>"
# DeepSeek-V3's added tokens after BOS / EOS / pad, and V4's (tools/cli/tiny_model.cpp), in the
# order of their real ids (128799 ...). The demo keeps that order after its own BPE vocabulary,
# and the flags (normalized, special) of the real files.
ADDED = [
    ("<｜System｜>", False, False),  # V4.1 (128799)
    ("<｜fim▁hole｜>", True, False), ("<｜fim▁begin｜>", True, False), ("<｜fim▁end｜>", True, False),
    ("<｜User｜>", True, False), ("<｜Assistant｜>", True, False), ("<|EOT|>", True, True),
    ("<｜tool▁calls▁begin｜>", True, False), ("<｜tool▁calls▁end｜>", True, False),
    ("<｜tool▁call▁begin｜>", True, False), ("<｜tool▁call▁end｜>", True, False),
    ("<｜tool▁outputs▁begin｜>", True, False), ("<｜tool▁outputs▁end｜>", True, False),
    ("<｜tool▁output▁begin｜>", True, False), ("<｜tool▁output▁end｜>", True, False),
    ("<｜tool▁sep｜>", True, False),
    ("<think>", False, False), ("</think>", False, False), ("｜DSML｜", False, False),
    ("<｜latest_reminder｜>", False, False), ("<｜action｜>", False, False), ("<｜query｜>", False, False),
    ("<｜authority｜>", False, False), ("<｜domain｜>", False, False), ("<｜title｜>", False, False),
    ("<｜read_url｜>", False, False), ("<｜image｜>", False, False),
]
# DeepSeek-V3's tokenizer.json components, verbatim (our loader recognises these Split regexes).
V3_PIPELINE = json.loads(r'''{"normalizer": {"type": "Sequence", "normalizers": []}, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "\\p{N}{1,3}"}, "behavior": "Isolated", "invert": false}, {"type": "Split", "pattern": {"Regex": "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"}, "behavior": "Isolated", "invert": false}, {"type": "Split", "pattern": {"Regex": "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"}, "behavior": "Isolated", "invert": false}, {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]}, "post_processor": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": false, "use_regex": true}, "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true}}''')
TOKENIZER_CONFIG = {
    "add_bos_token": True, "add_eos_token": False,
    "bos_token": {"__type": "AddedToken", "content": BOS, "lstrip": False, "normalized": True, "rstrip": False,
                  "single_word": False},
    "eos_token": {"__type": "AddedToken", "content": EOS, "lstrip": False, "normalized": True, "rstrip": False,
                  "single_word": False},
    "pad_token": {"__type": "AddedToken", "content": EOS, "lstrip": False, "normalized": True, "rstrip": False,
                  "single_word": False},
    "clean_up_tokenization_spaces": False, "legacy": True, "model_max_length": 4096, "sp_model_kwargs": {},
    "unk_token": None, "tokenizer_class": "LlamaTokenizerFast",
}


def model_config(vocab_size):
    """Every V4 layer kind: sliding-only, CSA (rate 4, with the indexer), HCA (rate 128, V4's
    rates), two hash-routed MoE layers then top-k MoE, hc_mult 4 as in V4; ~11M parameters."""
    return DeepseekV4Config(
        vocab_size=vocab_size, bos_token_id=0, eos_token_id=1, pad_token_id=None,
        hidden_size=256, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=1, head_dim=64,
        partial_rotary_factor=0.25, q_lora_rank=128, o_groups=2, o_lora_rank=64,
        moe_intermediate_size=192, n_routed_experts=8, num_experts_per_tok=2, n_shared_experts=1,
        layer_types=["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention",
                     "compressed_sparse_attention"],
        mlp_layer_types=["hash_moe", "hash_moe", "moe", "moe"],
        compress_rates={"compressed_sparse_attention": 4, "heavily_compressed_attention": 128},
        sliding_window=128, hc_mult=4, hc_sinkhorn_iters=20, swiglu_limit=10.0,
        index_n_heads=8, index_head_dim=32, index_topk=32,
        rope_theta=10000.0, compress_rope_theta=160000.0, max_position_embeddings=4096,
        scoring_func="sqrtsoftplus", norm_topk_prob=True, routed_scaling_factor=1.5,
        rms_norm_eps=1e-6, hc_eps=1e-6, tie_word_embeddings=False, num_nextn_predict_layers=0,
        initializer_range=0.02, use_cache=True,
    )


class Log:
    def __init__(self, path):
        self.f = open(path, "w")

    def __call__(self, s):
        print(s, flush=True)
        self.f.write(s + "\n")
        self.f.flush()


def read_docs(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in f.read().split(SEP) if d.strip()]


# --- tokenizer -----------------------------------------------------------------------------------

def train_tokenizer(texts, vocab_size, out_dir, log):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(tokenizers.Regex(s["pattern"]["Regex"]), behavior="isolated")
        for s in V3_PIPELINE["pre_tokenizer"]["pretokenizers"][:3]
    ] + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trainer = trainers.BpeTrainer(vocab_size=vocab_size - len(ADDED), special_tokens=[BOS, EOS, PAD],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), min_frequency=2,
                                  show_progress=False)
    strip = [BOS, EOS, PAD] + [a[0] for a in ADDED]

    def plain():
        for t in texts:
            for s in strip:
                t = t.replace(s, "\n")
            yield t

    tok.train_from_iterator(plain(), trainer, length=len(texts))
    tok.add_tokens([AddedToken(c, normalized=n, special=s) for c, n, s in ADDED])
    j = json.loads(tok.to_str())
    j.update(V3_PIPELINE)
    flags = {BOS: (False, True), EOS: (False, True), PAD: (False, True)}
    flags.update({c: (n, s) for c, n, s in ADDED})
    for a in j["added_tokens"]:
        a["normalized"], a["special"] = flags[a["content"]]
        a["single_word"] = a["lstrip"] = a["rstrip"] = False
    text = json.dumps(j, ensure_ascii=False)
    tok = Tokenizer.from_str(text)  # validates the patched file
    with open(os.path.join(out_dir, "tokenizer.json"), "w", encoding="utf-8") as f:
        f.write(text)
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(TOKENIZER_CONFIG, f, indent=1, ensure_ascii=False)
    ids = {c: tok.token_to_id(c) for c in [BOS, EOS, PAD] + [a[0] for a in ADDED]}
    assert ids[BOS] == 0 and ids[EOS] == 1 and ids[PAD] == 2, ids
    log(f"tokenizer: {tok.get_vocab_size()} tokens; added ids {min(ids.values())}..{max(ids.values())}: "
        f"User {ids['<｜User｜>']} Assistant {ids['<｜Assistant｜>']} <think> {ids['<think>']} "
        f"</think> {ids['</think>']}")
    return tok


def tokenize(tok, docs, chat):
    """Plain documents become BOS + text + EOS (as generate's prompt gets BOS); rendered chats
    already carry BOS and end with EOS."""
    out = []
    for enc, d in zip(tok.encode_batch(docs, add_special_tokens=False), docs):
        ids = enc.ids
        if chat:
            if not ids or ids[0] != 0 or ids[-1] != 1:
                raise RuntimeError(f"a rendered chat does not start with BOS and end with EOS: {d[:80]!r}")
        else:
            ids = [0] + ids + [1]
        out.append(ids)
    return out


def flat(docs_ids):
    return torch.tensor([i for d in docs_ids for i in d], dtype=torch.long)


def chunks(stream, seq_len, limit):
    n = min(limit, (len(stream) - 1) // seq_len)
    return stream[: n * seq_len].view(n, seq_len)


# --- model ---------------------------------------------------------------------------------------

def build(config, seed, device):
    torch.manual_seed(seed)
    model = DeepseekV4ForCausalLM(config)
    mtp = DeepseekV4MTP(config)
    mtp.apply(model._init_weights)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        # transformers leaves the hash table at zero (a checkpoint brings it): a fixed random
        # choice of distinct experts per token, as DeepSeek's hash routing is.
        for layer in model.model.layers:
            gate = layer.mlp.gate
            if hasattr(gate, "tid2eid"):
                rows = [torch.randperm(config.n_routed_experts, generator=gen)[: gate.tid2eid.shape[1]]
                        for _ in range(gate.tid2eid.shape[0])]
                gate.tid2eid.copy_(torch.stack(rows).to(gate.tid2eid.dtype))
    return model.to(device), mtp.to(device)


def forward_losses(model, mtp, cap, x):
    """Main next-token loss, MTP next-next-token loss, and both logits."""
    logits = model(input_ids=x, use_cache=False).logits
    next_ids = torch.cat([x[:, 1:], x[:, -1:]], dim=1)  # the last position's is never scored
    mtp_logits, _ = mtp(cap.streams, next_ids, model.model.embed_tokens, model.lm_head, cap.layer_kwargs)
    V = logits.shape[-1]
    main = F.cross_entropy(logits[:, :-1].float().reshape(-1, V), x[:, 1:].reshape(-1))
    nxt = F.cross_entropy(mtp_logits[:, :-2].float().reshape(-1, V), x[:, 2:].reshape(-1))
    return main, nxt, logits, mtp_logits


@torch.no_grad()
def evaluate(model, mtp, cap, sets, batch):
    """Per set: perplexity of the main model, MTP next-next accuracy, and the MTP acceptance
    rate: the fraction of positions i where the MTP head's greedy token for i+2 (given the true
    token i+1) equals the main model's greedy token at i+1."""
    model.eval()
    mtp.eval()
    res = {}
    for name, data in sets.items():
        nll = n = acc_main = agree = acc_mtp = n_mtp = 0.0
        for i in range(0, data.shape[0], batch):
            x = data[i:i + batch]
            main, nxt, logits, mtp_logits = forward_losses(model, mtp, cap, x)
            m = (x.shape[1] - 1) * x.shape[0]
            nll += main.item() * m
            n += m
            g_main = logits.argmax(-1)
            g_mtp = mtp_logits.argmax(-1)
            acc_main += (g_main[:, :-1] == x[:, 1:]).sum().item()
            agree += (g_mtp[:, :-2] == g_main[:, 1:-1]).sum().item()
            acc_mtp += (g_mtp[:, :-2] == x[:, 2:]).sum().item()
            n_mtp += (x.shape[1] - 2) * x.shape[0]
        res[name] = {"tokens": int(n), "perplexity": math.exp(nll / n), "main_top1": acc_main / n,
                     "mtp_acceptance": agree / n_mtp, "mtp_top1": acc_mtp / n_mtp}
    model.train()
    mtp.train()
    return res


def lr_at(step, total, warmup, peak):
    if step < warmup:
        return peak * (step + 1) / warmup
    frac = min(1.0, (step - warmup) / max(1, total - warmup))
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))


# --- outputs -------------------------------------------------------------------------------------

def save_model(model, mtp, config, model_dir, log):
    """config.json + model.safetensors (transformers' names from save_pretrained, then mtp.0.*)
    next to the tokenizer files already in model_dir; save_pretrained leaves those alone."""
    from safetensors.torch import load_file, save_file
    main = DeepseekV4ForCausalLM(config)
    main.load_state_dict({k: v.detach().cpu() for k, v in model.state_dict().items()})
    main = main.to(torch.bfloat16)
    main.save_pretrained(model_dir, safe_serialization=True)
    path = os.path.join(model_dir, "model.safetensors")
    tensors = load_file(path)
    extra = mtp_state_dict(main, mtp.cpu(), dtype=torch.bfloat16)
    clash = set(tensors) & set(extra)
    if clash:
        raise RuntimeError(f"MTP names clash with the main model's: {sorted(clash)[:4]}")
    tensors.update(extra)
    save_file(tensors, path, metadata={"format": "pt"})
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    cfg["num_nextn_predict_layers"] = 1  # our loader takes mtp.0.* only when the config says so
    with open(os.path.join(model_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    log(f"saved {len(tensors)} tensors ({len(extra)} mtp.0.*), {os.path.getsize(path) / 1e6:.2f} MB")


def load_reference(model_dir):
    """transformers' view of the saved directory, fp32 on the CPU, and the MTP module read back
    from the same file by DeepSeek's names."""
    from safetensors.torch import load_file
    ref = DeepseekV4ForCausalLM.from_pretrained(model_dir, dtype=torch.float32,
                                                attn_implementation="eager").eval()
    tensors = load_file(os.path.join(model_dir, "model.safetensors"))
    mtp = load_mtp(ref, {k: v for k, v in tensors.items() if k.startswith("mtp.0.")}).eval()
    return ref, mtp


def greedy(model, ids, n, stop=None):
    """Greedy by repeated full forwards (argmax of the full-sequence logits, no cache)."""
    seq = list(ids)
    for _ in range(n):
        with torch.no_grad():
            nxt = int(model(torch.tensor([seq]), use_cache=False).logits[0, -1].argmax())
        seq.append(nxt)
        if stop is not None and nxt == stop:
            break
    return seq[len(ids):]


def write_fixture(ref, mtp, tok, name, text, add_bos, gen_len, out_dir, log, with_mtp=True):
    from gen_deepseek_v4 import Margins
    from fixture_lib import MARGIN
    prompt = ([0] if add_bos else []) + tok.encode(text, add_special_tokens=False).ids
    new = greedy(ref, prompt, gen_len)
    all_ids = torch.tensor([prompt + new])
    cap = MainCapture(ref)
    margins = Margins(ref)
    with torch.no_grad():
        logits = ref(all_ids, use_cache=False).logits[0].float()
        next_ids = torch.cat([all_ids[:, 1:], all_ids[:, -1:]], dim=1)
        mtp_logits, _ = mtp(cap.streams, next_ids, ref.model.embed_tokens, ref.lm_head, cap.layer_kwargs)
    margins.remove()
    cap.remove()
    P = len(prompt)
    top2 = torch.topk(logits[P - 1:P - 1 + gen_len], 2, dim=-1).values
    argmax_gap = (top2[:, 0] - top2[:, 1]).min().item()
    same = logits[P - 1:P - 1 + gen_len].argmax(-1).tolist() == new
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "logits.f32"), "wb") as f:
        f.write(logits.contiguous().numpy().astype("<f4").tobytes())
    rows_mtp = all_ids.shape[1] - 1
    if with_mtp:
        with open(os.path.join(d, "mtp_logits.f32"), "wb") as f:
            f.write(mtp_logits[0, :rows_mtp].float().contiguous().numpy().astype("<f4").tobytes())
    rot = ref.model.rotary_emb
    meta = {
        "name": name,
        "model_dir": "models/deepseek-v4-demo",
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "prompt_text": text,
        "prompt_add_bos": add_bos,
        "prompt_ids": prompt,
        "greedy_ids": new,
        "logits_file": "logits.f32",
        "logits_rows": int(logits.shape[0]),
        "vocab_size": int(logits.shape[1]),
        "logits_cover": "prompt_ids followed by greedy_ids, one row per token",
        "mtp_logits_file": "mtp_logits.f32" if with_mtp else None,
        "mtp_logits_rows": rows_mtp,
        "mtp_logits_cover": "row i: the MTP module (mtp.0.*) on the main model's state at i and token i+1, "
                            "predicting token i+2 (mtp_reference.py)",
        "max_abs_logit": logits.abs().max().item(),
        "greedy_method": "full-forward loop (argmax of full-sequence logits)",
        "min_topk_margin": margins.min_gap,
        "min_topk_margin_where": margins.where,
        "min_argmax_gap": argmax_gap,
        "rope_inv_freq": {k: getattr(rot, f"{k}_inv_freq").tolist() for k in rot.layer_types},
        "rope_attention_scaling": {k: float(getattr(rot, f"{k}_attention_scaling")) for k in rot.layer_types},
    }
    with open(os.path.join(d, "fixture.json"), "w") as f:
        json.dump(meta, f, indent=1, ensure_ascii=False)
    ok = margins.min_gap >= MARGIN and argmax_gap >= MARGIN and same
    log(f"fixture {name}: {len(prompt)} + {len(new)} tokens, min top-k margin {margins.min_gap:.3g} "
        f"({margins.where}), min argmax gap {argmax_gap:.3g}, greedy == argmax: {same}"
        + ("" if ok else "  WARNING: margin below fixture_lib.MARGIN, rounding could flip a choice"))
    return ok


def readme(model_dir, config, n_params, metrics, args, command, manifest, samples):
    ev = metrics["heldout"]
    rows = "\n".join(
        f"| {k} | {v['tokens']} | {v['perplexity']:.2f} | {v['main_top1']:.3f} | {v['mtp_top1']:.3f} | "
        f"{v['mtp_acceptance']:.3f} |" for k, v in ev.items())
    kinds = ", ".join(f"{i}: {a} + {m}" for i, (a, m) in
                      enumerate(zip(config.layer_types, config.mlp_layer_types)))
    with open(os.path.join(args.corpus, "wordnet_license.txt")) as f:
        wordnet_licence = f.read().rstrip()
    text = f"""# deepseek-v4-demo

A small DeepSeek-V4 model that was really trained (issue 22), so that the examples print English
and a chat reply has non-empty `content`. It is a demonstration model: {n_params / 1e6:.1f}M
parameters trained for {metrics['gpu_minutes']:.1f} GPU minutes on a King James Bible + WordNet
corpus; it knows a few phrasings and makes things up freely.

## Architecture

transformers' `DeepseekV4ForCausalLM` (transformers {transformers.__version__}, torch
{torch.__version__}): hidden {config.hidden_size}, {config.num_hidden_layers} layers ({kinds}),
{config.num_attention_heads} heads of {config.head_dim} (rope on a quarter), q_lora_rank
{config.q_lora_rank}, {config.o_groups} output groups of rank {config.o_lora_rank}, sliding window
{config.sliding_window}, compress rates CSA {config.compress_rates['compressed_sparse_attention']} /
HCA {config.compress_rates['heavily_compressed_attention']}, indexer {config.index_n_heads} heads of
{config.index_head_dim} choosing {config.index_topk}, {config.n_routed_experts} routed experts (top
{config.num_experts_per_tok}) of width {config.moe_intermediate_size} + 1 shared, hc_mult
{config.hc_mult}, vocabulary {config.vocab_size}. Weights in bf16.

One MTP layer (`mtp.0.*`, DeepSeek's names; `num_nextn_predict_layers: 1`): e_proj / h_proj over
the normed next-token embedding and the normed hc-wide final state, one decoder block (sliding
attention, top-k MoE), its own hc head and norm; embedding and lm_head shared. Its PyTorch
reference is `tools/demo_model/mtp_reference.py`. transformers ignores `mtp.*` on load.

The tokenizer is a byte-level BPE trained on the corpus with DeepSeek-V3's pre-tokenizer, BOS /
EOS / pad at ids 0 / 1 / 2 as in DeepSeek's files, and DeepSeek-V3's and V4's added tokens
(`<｜User｜>`, `<｜Assistant｜>`, `<think>`, `</think>`, `｜DSML｜`, ...) after the BPE vocabulary
in the order of their real ids, so the recipe's prompts tokenize into them as for the real model.

## Training

    {command}

Seed {args.seed}; {metrics['steps']} steps of {args.batch} x {args.seq_len} tokens
({metrics['tokens_seen'] / 1e6:.1f}M tokens), AdamW (lr {args.lr}, betas 0.9/0.95, weight decay 0.1,
clip 1.0), {args.warmup} warmup steps then cosine to 10%, bf16 autocast, loss = next-token CE +
{args.mtp_weight} x MTP next-next-token CE, {args.chat_fraction:.0%} of the rows drawn from the chat
transcripts. GPU time {metrics['gpu_minutes']:.1f} min on {metrics['device']}. The run is seeded;
GPU scatter kernels are not bit-deterministic, so a rerun matches closely, not exactly. Pass
`--steps {metrics['steps']}` to repeat the same number of steps on another GPU.

## Held-out evaluation

Held-out split of the same sources (every 40th Bible chapter and WordNet synset, and chats made
only from those), fp32 on the saved bf16 weights. Acceptance: the fraction of positions where the
MTP head's greedy token for i+2 (given the true token i+1) equals the main model's greedy token
at i+1, i.e. what a one-token MTP draft would get accepted under greedy decoding.

| set | tokens | perplexity | main top-1 | MTP top-1 (i+2) | MTP acceptance |
|---|---|---|---|---|---|
{rows}

## Samples (transformers, greedy)

{samples}

## Corpus provenance and licences

Built by `tools/demo_model/build_corpus.py` from Debian 12 packages
({', '.join(f'{k} {v}' for k, v in manifest.get('packages', {}).items())}):

- The King James Version of the Bible (1611), public domain; text from `bible-kjv-text`, read with
  the `bible` program of `bible-kjv` (GPL-2+, run only, not shipped).
- WordNet 3.0 glosses and examples from `wordnet-base`. WordNet 3.0 Copyright 2006 by Princeton
  University. All rights reserved. Its licence, which must accompany copies:

```
{wordnet_licence}
```

- Chat transcripts generated from the two (definitions, synonyms, verse recitation and
  completion, greetings), rendered with `deepinfer render --encoding dsv4 --messages`.
"""
    with open(os.path.join(model_dir, "README.md"), "w") as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", default=".demo-corpus")
    ap.add_argument("--out", required=True)
    ap.add_argument("--minutes", type=float, default=6.0, help="training time budget (sets --steps)")
    ap.add_argument("--steps", type=int, default=0, help="fixed step count (overrides --minutes)")
    ap.add_argument("--smoke", action="store_true", help="a few steps on a slice of the corpus")
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--vocab", type=int, default=6144)
    ap.add_argument("--seq-len", type=int, default=512)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--mtp-weight", type=float, default=0.3)
    ap.add_argument("--chat-fraction", type=float, default=0.3)
    args = ap.parse_args()
    # The README's command names the output folder OUT: where it was fetched from is no one's business.
    argv = list(sys.argv[1:])
    for i, a in enumerate(argv):
        if a == "--out" and i + 1 < len(argv):
            argv[i + 1] = "OUT"
        elif a.startswith("--out="):
            argv[i] = "--out=OUT"
    command = "python3 tools/demo_model/train.py " + " ".join(argv)
    if args.smoke:
        args.steps, args.warmup, args.batch, args.seq_len = 6, 2, 4, 256

    random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    os.makedirs(args.out, exist_ok=True)
    log = Log(os.path.join(args.out, "train_log.txt"))
    log(f"torch {torch.__version__} transformers {transformers.__version__} tokenizers {tokenizers.__version__} "
        f"device {device} {torch.cuda.get_device_name() if device == 'cuda' else ''}")
    t_start = time.time()

    docs = {n: read_docs(os.path.join(args.corpus, n + ".txt"))
            for n in ("train", "heldout", "chats_train", "chats_heldout")}
    if args.smoke:
        docs = {k: v[: (60 if "chat" not in k else 300)] for k, v in docs.items()}
    with open(os.path.join(args.corpus, "manifest.json")) as f:
        manifest = json.load(f)
    docs["chats_train"] = [d.rstrip("\n") for d in docs["chats_train"]]
    docs["chats_heldout"] = [d.rstrip("\n") for d in docs["chats_heldout"]]
    log("documents: " + ", ".join(f"{k} {len(v)}" for k, v in docs.items()))

    model_dir = os.path.join(args.out, "deepseek-v4-demo")
    os.makedirs(model_dir, exist_ok=True)
    tok = train_tokenizer(docs["train"] + docs["chats_train"], args.vocab, model_dir, log)
    ids = {k: tokenize(tok, v, chat="chat" in k) for k, v in docs.items()}
    streams = {k: flat(v) for k, v in ids.items()}
    log("tokens: " + ", ".join(f"{k} {len(v)}" for k, v in streams.items()) +
        f"; {sum(map(len, docs['train'])) / max(1, len(streams['train'])):.2f} chars/token on train")

    config = model_config(tok.get_vocab_size())
    config._attn_implementation = "eager"
    model, mtp = build(config, args.seed, device)
    n_main = sum(p.numel() for p in model.parameters())
    n_mtp = sum(p.numel() for p in mtp.parameters())
    log(f"parameters: main {n_main / 1e6:.2f}M + MTP {n_mtp / 1e6:.2f}M (bf16 {2 * (n_main + n_mtp) / 1e6:.1f} MB)")
    cap = MainCapture(model)

    train_text = streams["train"].to(device)
    train_chat = streams["chats_train"].to(device)
    held = {"text": chunks(streams["heldout"], args.seq_len, 8 if args.smoke else 400).to(device),
            "chat": chunks(streams["chats_heldout"], args.seq_len, 8 if args.smoke else 400).to(device)}

    decay = [p for p in list(model.parameters()) + list(mtp.parameters()) if p.dim() >= 2]
    no_decay = [p for p in list(model.parameters()) + list(mtp.parameters()) if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95), eps=1e-8, fused=(device == "cuda"))
    gen = torch.Generator(device=device).manual_seed(args.seed)

    def batch():
        n_chat = int(round(args.batch * args.chat_fraction))
        rows = []
        for src, n in ((train_text, args.batch - n_chat), (train_chat, n_chat)):
            if n == 0:
                continue
            starts = torch.randint(0, len(src) - args.seq_len, (n,), device=device, generator=gen)
            rows.append(src[starts[:, None] + torch.arange(args.seq_len, device=device)[None, :]])
        return torch.cat(rows)

    total = args.steps
    budget = args.minutes * 60
    step = 0
    t_train = time.time()
    t_calib = None
    model.train()
    mtp.train()
    while total == 0 or step < total:
        lr = lr_at(step, total if total else 10 ** 9, args.warmup, args.lr)
        for g in opt.param_groups:
            g["lr"] = lr
        x = batch()
        with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=(device == "cuda")):
            main_loss, mtp_loss, _, _ = forward_losses(model, mtp, cap, x)
        loss = main_loss + args.mtp_weight * mtp_loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(decay + no_decay, 1.0)
        opt.step()
        step += 1
        if step == 5:
            if device == "cuda":
                torch.cuda.synchronize()
            t_calib = time.time()
        if total == 0 and step == 25:
            # The step count follows from the budget once the speed is known, then stays fixed,
            # so the schedule is a plain cosine over a known length (and --steps repeats it).
            if device == "cuda":
                torch.cuda.synchronize()
            per_step = (time.time() - t_calib) / 20
            total = max(step + 1, int((budget - (time.time() - t_train)) / per_step) + step)
            log(f"{per_step * 1e3:.0f} ms/step -> {total} steps in {args.minutes} min")
        if step % 50 == 0 or step == 1 or (total and step == total):
            log(f"step {step}/{total or '?'} lr {lr:.2e} loss {main_loss.item():.3f} mtp {mtp_loss.item():.3f} "
                f"|g| {gnorm.item():.2f} {time.time() - t_train:.0f}s")
    if device == "cuda":
        torch.cuda.synchronize()
    gpu_minutes = (time.time() - t_train) / 60
    log(f"trained {step} steps in {gpu_minutes:.2f} min")
    cap.remove()

    save_model(model, mtp, config, model_dir, log)
    model_bytes = sum(os.path.getsize(os.path.join(model_dir, f)) for f in os.listdir(model_dir))

    # Everything below uses transformers' reading of the saved files, fp32: the numbers describe
    # the committed weights.
    ref, ref_mtp = load_reference(model_dir)
    ref_gpu, mtp_gpu = ref.to(device), ref_mtp.to(device)
    cap = MainCapture(ref_gpu)
    heldout = evaluate(ref_gpu, mtp_gpu, cap, held, max(1, args.batch // 2))
    for k, v in heldout.items():
        log(f"held-out {k}: {v}")
    # The MTP module read back by name must be the one trained (bf16-rounded).
    with torch.no_grad():
        x = held["text"][:2]
        trained = DeepseekV4MTP(config)
        trained.load_state_dict({k: v.detach().to(torch.bfloat16).float() for k, v in mtp.state_dict().items()})
        trained = trained.to(device).eval()
        ref_gpu(input_ids=x, use_cache=False)
        next_ids = torch.cat([x[:, 1:], x[:, -1:]], dim=1)
        a, _ = trained(cap.streams, next_ids, ref_gpu.model.embed_tokens, ref_gpu.lm_head, cap.layer_kwargs)
        b, _ = mtp_gpu(cap.streams, next_ids, ref_gpu.model.embed_tokens, ref_gpu.lm_head, cap.layer_kwargs)
        diff = (a - b).abs().max().item()
    log(f"MTP read back from mtp.0.* vs trained module: max|diff| {diff:.3g}")
    if diff > 1e-3:
        raise RuntimeError("the saved mtp.0.* tensors do not read back as the trained MTP module")
    cap.remove()
    ref_gpu.cpu()
    mtp_gpu.cpu()

    # (g) sanity samples, then (f) the fixtures for the CPU engine's CI test.
    samples = []
    for text in ["In the beginning God created", "And Jesus said unto them,", "light (noun):"]:
        out = greedy(ref, [0] + tok.encode(text, add_special_tokens=False).ids, 8 if args.smoke else 48, stop=1)
        samples.append(f"    {text!r} -> {tok.decode(out, skip_special_tokens=False)!r}")
    chat = f"{BOS}<｜User｜>What does \"ark\" mean?<｜Assistant｜><think>"
    out = greedy(ref, tok.encode(chat, add_special_tokens=False).ids, 8 if args.smoke else 96, stop=1)
    reply = tok.decode(out, skip_special_tokens=False)
    samples.append(f"    chat {chat!r} -> {reply!r}")
    closed = "</think>" in reply and reply.split("</think>", 1)[1].replace(EOS, "").strip() != ""
    log("samples:\n" + "\n".join(samples) + f"\nchat reply closes its thinking with content: {closed}")

    fx_dir = os.path.join(args.out, "fixtures")
    gen_len = 4 if args.smoke else 8
    fixtures = [
        ("demo_bible", "In the beginning God created the heaven and the earth.", True),
        ("demo_chat", f"{BOS}<｜User｜>What does \"light\" mean?<｜Assistant｜><think>", False),
        ("demo_wordnet", "water (noun):", True),
    ]
    ok = all(write_fixture(ref, ref_mtp, tok, n, t, b, gen_len, fx_dir, log) for n, t, b in fixtures)
    # A long prompt: past the sliding window (128), one HCA entry (rate 128), 50 CSA entries for
    # the indexer to choose 32 of. Its logits alone are ~5 MB, so no MTP logits for it.
    long_ids = tok.encode(docs["heldout"][0], add_special_tokens=False).ids
    long_text = tok.decode(long_ids[: (60 if args.smoke else 200)])
    ok &= write_fixture(ref, ref_mtp, tok, "demo_long", long_text, True, gen_len, fx_dir, log, with_mtp=False)

    metrics = {"steps": step, "tokens_seen": step * args.batch * args.seq_len, "gpu_minutes": gpu_minutes,
               "device": torch.cuda.get_device_name() if device == "cuda" else "cpu", "heldout": heldout,
               "params_main": n_main, "params_mtp": n_mtp, "model_dir_bytes": model_bytes,
               "fixture_margins_ok": ok, "chat_closes_thinking": closed, "seed": args.seed,
               "wall_minutes": (time.time() - t_start) / 60, "command": command}
    readme(model_dir, config, n_main + n_mtp, metrics, args, command, manifest, "\n".join(samples))
    model_bytes = sum(os.path.getsize(os.path.join(model_dir, f)) for f in os.listdir(model_dir))
    metrics["model_dir_bytes"] = model_bytes
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump(metrics, f, indent=1)
    log(f"model dir {model_bytes / 1e6:.2f} MB" + ("  WARNING: over 25 MB" if model_bytes > 25e6 else ""))
    log(f"done in {(time.time() - t_start) / 60:.1f} min")


if __name__ == "__main__":
    main()
