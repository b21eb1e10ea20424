#!/usr/bin/env python3
"""Draft-logit fixtures for the CPU engine's MTP (speculative decoding) tests, from the PyTorch
references of the MTP modules: transformers runs the main model (it builds DeepseekV3ForCausalLM
and DeepseekV4ForCausalLM but not their MTP layers), the reference module the drafts.

    python3 tools/mtp_reference/make_fixture.py --out OUT [--only v3|v4] [--threads 8]

from the repository root, with torch (2.11) and transformers (5.17); CPU torch is enough (fp32,
about a minute). It writes

  OUT/model_deepseek_v3_mtp/deepseek_v3_mtp/   a random DeepSeek-V3 with an MTP layer
      config.json, model.safetensors             (transformers' names + model.layers.3.*, fp32)
      mtp_fixture.json, mtp_logits.f32, weight_names.txt
  OUT/model_v4_demo/mtp_chain/                  the trained demo model's (models/deepseek-v4-demo)
      mtp_fixture.json, mtp_logits.f32
  OUT/gen_log.txt

-> copy both folders into tests/fixtures/ (tests/model_families/mla_mtp_fixture_test.cpp and
tests/model_v4/v4_mtp_chain_test.cpp read them, and skip while they are absent).

mtp_fixture.json: vocab_size, logits_file and cases; each case has ids t[0..N], known_positions N
and chain_tokens d_0..d_{K-1}. mtp_logits.f32 holds, case after case, little-endian float32 rows
[N + K - 1, vocab]: first the MTP layer at every known position i (the main model's row i and
t[i+1], predicting t[i+2]), then draft step j = 1..K-1 (the module on its own previous output and
d_{j-1}, at position N-1+j, predicting d_j). d_j is the argmax of the row before; the C++ test
feeds these tokens rather than its own argmax, so a near tie cannot fork the comparison.
"""
import argparse
import json
import os
import sys

import torch

import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools", "fixtures"))
sys.path.insert(0, os.path.join(ROOT, "tools", "demo_model"))

from fixture_lib import MARGIN, fill_normal, write_weight_names  # noqa: E402

V3_BASE = "deepseek_v3_qlora_yarn"  # the shape of tools/fixtures/gen_model_families.py's V3 fixture
V3_NAME = "deepseek_v3_mtp"
V3_CASES = [(24, 5), (9, 4)]  # (ids length N + 1, draft depth K)
V3_SEED = 2101
V4_DEMO = os.path.join(ROOT, "models", "deepseek-v4-demo")
V4_CASES = [("demo_bible", 5), ("demo_chat", 4), ("demo_wordnet", 4)]
V4_MAX_IDS = 32


def capture_run(model, capture_cls, ids):
    """One main forward over ids [1, S] with the capture hooks; returns the capture."""
    cap = capture_cls(model)
    try:
        with torch.no_grad():
            model(ids, use_cache=False)
    finally:
        cap.remove()
    return cap


def draft_case(model, capture_cls, run_mtp, main_hidden, ids, depth, log):
    """The depth-1 rows at every known position and a chained draft of `depth` tokens.
    run_mtp(prev_hidden, next_ids, layer_kwargs) -> (logits, block output); main_hidden(cap) -> the
    main model's rows the MTP layer reads. The block runs over the whole sequence each step (no
    cache), which equals a cached run as it is causal; checked on the rows already computed."""
    N = ids.shape[1] - 1
    known = ids[:, :N]
    cap = capture_run(model, capture_cls, known)
    H = main_hidden(cap)
    with torch.no_grad():
        logits, out = run_mtp(H, ids[:, 1:], cap.layer_kwargs)
    rows = [logits[0].float()]
    tokens = [int(logits[0, -1].argmax())]
    hidden, nxt, prev = H, ids[:, 1:], out[:, -1:]
    for j in range(1, depth):
        seq = torch.cat([known, torch.tensor([tokens[:j]])], dim=1)
        kw = capture_run(model, capture_cls, seq).layer_kwargs
        hidden = torch.cat([hidden, prev], dim=1)
        nxt = torch.cat([nxt, torch.tensor([[tokens[j - 1]]])], dim=1)
        with torch.no_grad():
            step_logits, step_out = run_mtp(hidden, nxt, kw)
        causal = (step_logits[0, :N] - logits[0]).abs().max().item()
        if causal > 1e-4:
            raise RuntimeError(f"draft step {j} changed earlier rows by {causal:.3g}: the block is not run causally")
        rows.append(step_logits[0, -1:].float())
        tokens.append(int(step_logits[0, -1].argmax()))
        prev = step_out[:, -1:]
    rows = torch.cat(rows, dim=0)
    log(f"  case N={N} depth={depth}: chain {tokens}, max|logit| {rows.abs().max().item():.3g}")
    return {"ids": ids[0].tolist(), "known_positions": N, "chain_tokens": tokens}, rows


def write_fixture(d, name, cases, rows, vocab, extra, log):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "mtp_logits.f32"), "wb") as f:
        for r in rows:
            f.write(r.detach().cpu().contiguous().numpy().astype("<f4").tobytes())
    meta = {
        "name": name,
        **extra,
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "vocab_size": int(vocab),
        "logits_file": "mtp_logits.f32",
        "logits_cover": "per case: the MTP layer at each known position i (predicting ids[i+2]), then draft "
                        "steps 1..K-1 chained on the module's own output and chain_tokens[j-1]",
        "cases": cases,
    }
    with open(os.path.join(d, "mtp_fixture.json"), "w") as f:
        json.dump(meta, f, indent=1)
    log(f"  wrote {d}: {sum(r.shape[0] for r in rows)} rows")


def build_v3(out_dir, log):
    from gen_model_families import CONFIGS, INIT_RULES, Margins, make_config, randomize
    from safetensors.torch import load_file, save_file
    from transformers import DeepseekV3ForCausalLM

    from deepseek_v3_mtp import DeepseekV3MTP, MainCapture, call_layer, mtp_state_dict

    spec = dict(next(s for s in CONFIGS if s["name"] == V3_BASE))
    spec["name"] = V3_NAME
    config = make_config(spec, log)
    L = config.num_hidden_layers
    for attempt in range(40):
        seed = V3_SEED + 7919 * attempt
        torch.manual_seed(seed)
        gen = torch.Generator().manual_seed(seed)
        model = DeepseekV3ForCausalLM(config).float().eval()
        mtp = DeepseekV3MTP(config).float().eval()
        with torch.no_grad():
            randomize(model, gen, log)
            for name, t in mtp.state_dict().items():
                fill_normal(name, t, gen, INIT_RULES)
        margins = [Margins(model, "deepseek_v3"), Margins(mtp, "deepseek_v3")]
        embed, head = model.model.embed_tokens, model.lm_head

        def run_mtp(prev, nxt, kw):
            return mtp(prev, nxt, embed, head, kw)

        cases, rows = [], []
        for n_ids, depth in V3_CASES:
            ids = torch.randint(2, config.vocab_size, (1, n_ids), generator=gen)
            c, r = draft_case(model, MainCapture, run_mtp, lambda cap: cap.post_norm, ids, depth, log)
            cases.append(c)
            rows.append(r)
        for m in margins:
            m.remove()
        gap = min(m.min_gap for m in margins)
        log(f"{V3_NAME} seed {seed}: min router top-k margin {gap:.3g} "
            f"({margins[0].where or margins[1].where})")
        if gap >= MARGIN:
            break
    else:
        raise RuntimeError(f"{V3_NAME}: no seed with clear top-k margins")

    # The capture's kwargs drive a main layer as the model does: the block is called the same way.
    cap = capture_run(model, MainCapture, torch.tensor([cases[0]["ids"][:-1]]))
    with torch.no_grad():
        again = call_layer(model.model.layers[-1], cap.last_in, cap.layer_kwargs)
    diff = (again - cap.last_out).abs().max().item()
    log(f"  last main layer re-run through call_layer: max|diff| {diff:.3g}")
    if diff > 1e-5:
        raise RuntimeError("call_layer does not reproduce a main layer: the block would be run wrongly")

    d = os.path.join(out_dir, "model_deepseek_v3_mtp", V3_NAME)
    os.makedirs(d, exist_ok=True)
    model.save_pretrained(d, safe_serialization=True)
    path = os.path.join(d, "model.safetensors")
    tensors = load_file(path)
    extra = mtp_state_dict(model, mtp)
    clash = sorted(set(tensors) & set(extra))
    if clash:
        raise RuntimeError(f"MTP tensor names clash with the main model's: {clash[:3]}")
    tensors.update(extra)
    save_file({k: v.contiguous() for k, v in tensors.items()}, path, metadata={"format": "pt"})
    for fn in os.listdir(d):
        if fn.endswith(".index.json"):  # one file holds everything
            os.remove(os.path.join(d, fn))
    cfg_path = os.path.join(d, "config.json")
    with open(cfg_path) as f:
        cfg = json.load(f)
    cfg.pop("num_mtp_layers", None)
    cfg["num_nextn_predict_layers"] = 1  # layer L is the MTP layer
    with open(cfg_path, "w") as f:
        json.dump(cfg, f, indent=2)
    write_weight_names(d, log)
    log(f"  {len(extra)} MTP tensors (model.layers.{L}.*)")
    write_fixture(d, V3_NAME, cases, rows, config.vocab_size,
                  {"model_dir": ".", "seed": seed,
                   "made_from": f"tools/fixtures/gen_model_families.py's {V3_BASE} config; the MTP layer by "
                                "tools/mtp_reference/deepseek_v3_mtp.py",
                   "main_hidden": "model.norm output (post final norm)"}, log)


def build_v4(out_dir, log):
    from safetensors.torch import load_file
    from transformers import DeepseekV4ForCausalLM

    from mtp_reference import MainCapture, load_mtp  # tools/demo_model: the V4 MTP reference

    if not os.path.exists(os.path.join(V4_DEMO, "model.safetensors")):
        raise RuntimeError(f"{V4_DEMO}/model.safetensors is absent")
    ref = DeepseekV4ForCausalLM.from_pretrained(V4_DEMO, dtype=torch.float32, attn_implementation="eager").eval()
    tensors = load_file(os.path.join(V4_DEMO, "model.safetensors"))
    mtp = load_mtp(ref, {k: v for k, v in tensors.items() if k.startswith("mtp.0.")}).eval()
    embed, head = ref.model.embed_tokens, ref.lm_head

    def run_mtp(prev, nxt, kw):
        return mtp(prev, nxt, embed, head, kw)

    cases, rows = [], []
    for name, depth in V4_CASES:
        with open(os.path.join(ROOT, "tests", "fixtures", "model_v4_demo", name, "fixture.json")) as f:
            meta = json.load(f)
        ids = (meta["prompt_ids"] + meta["greedy_ids"])[:V4_MAX_IDS]
        c, r = draft_case(ref, MainCapture, run_mtp, lambda cap: cap.streams, torch.tensor([ids]), depth, log)
        c["from"] = name
        cases.append(c)
        rows.append(r)
    d = os.path.join(out_dir, "model_v4_demo", "mtp_chain")
    write_fixture(d, "mtp_chain", cases, rows, ref.config.vocab_size,
                  {"model_dir": "models/deepseek-v4-demo",
                   "main_hidden": "the hc_mult-wide streams before the final hc head"}, log)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", choices=["v3", "v4"])
    ap.add_argument("--threads", type=int, default=8)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(args.threads)
    lines = []

    def log(s):
        print(s, flush=True)
        lines.append(s)

    log(f"transformers {transformers.__version__} torch {torch.__version__}")
    failed = 0
    for key, build in (("v3", build_v3), ("v4", build_v4)):
        if args.only and args.only != key:
            continue
        try:
            build(args.out, log)
        except Exception:  # noqa: BLE001
            import traceback
            failed += 1
            log(f"{key} FAILED:\n" + traceback.format_exc())
    with open(os.path.join(args.out, "gen_log.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
