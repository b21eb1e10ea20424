#!/usr/bin/env python3
"""Checks DeepInfer's chat-template renderer against Hugging Face transformers.

transformers_fixture.json (next to this file) holds, for the Llama-3, Llama-3.1, Qwen2.5 and
Qwen3 templates (their sources are the repository's files under tests/fixtures/chat_template),
every conversation of tests/chat_template/conversations.json (system prompts, several turns,
tools offered, tool calls and results, reasoning, add_generation_prompt on and off) and the
string DeepInfer renders for it; a C++ test keeps those strings current. This script renders the
same contexts with transformers' own renderer, the function behind apply_chat_template
(transformers.utils.chat_template_utils.render_jinja_template), prints a pass/fail table per
template and exits 1 on any difference (2 when transformers is missing).

Reads repository files only; needs Python 3.9+, transformers and jinja2; no network.

    python3 tools/chat_template/check_transformers.py            # against transformers
    python3 tools/chat_template/check_transformers.py --jinja2   # self-check: plain jinja2 set
                                                                 # up as transformers sets it up
"""

import argparse
import copy
import json
import sys
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tools" / "chat_template" / "transformers_fixture.json"


def transformers_renderer():
    """render(source, messages, tools, add_generation_prompt, variables) through transformers."""
    try:
        import transformers
        from transformers.utils.chat_template_utils import render_jinja_template
    except ImportError as e:
        print(f"transformers is not importable ({e}); install transformers and jinja2", file=sys.stderr)
        sys.exit(2)
    import jinja2

    def render(source, messages, tools, add_generation_prompt, variables):
        rendered, _ = render_jinja_template(
            conversations=[messages],
            tools=tools,
            chat_template=source,
            add_generation_prompt=add_generation_prompt,
            **variables,
        )
        return rendered[0]

    return render, f"transformers {transformers.__version__} (render_jinja_template), jinja2 {jinja2.__version__}"


def jinja2_renderer():
    """The same environment transformers compiles templates in, from jinja2 alone (no transformers)."""
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    compiled = {}

    def render(source, messages, tools, add_generation_prompt, variables):
        if source not in compiled:
            compiled[source] = env.from_string(source)
        return compiled[source].render(
            messages=messages, tools=tools, documents=None, add_generation_prompt=add_generation_prompt, **variables
        )

    return render, f"jinja2 {jinja2.__version__} alone, configured as transformers configures it (self-check)"


def first_difference(a, b):
    n = min(len(a), len(b))
    i = next((k for k in range(n) if a[k] != b[k]), n)
    lo = max(0, i - 40)
    return i, a[lo : i + 40], b[lo : i + 40]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jinja2", action="store_true", help="render with plain jinja2 set up as transformers does")
    parser.add_argument("--verbose", action="store_true", help="every failing case, not the first three per template")
    args = parser.parse_args()
    render, what = jinja2_renderer() if args.jinja2 else transformers_renderer()

    fixture = json.loads(FIXTURE.read_text(encoding="utf-8"))
    cases = fixture["cases"]
    print(f"renderer: {what}")
    print(f"fixture:  {FIXTURE.relative_to(ROOT)} ({len(cases)} conversations)")
    print()
    rows, failures = [], []
    for t in fixture["templates"]:
        source = (ROOT / t["file"]).read_text(encoding="utf-8")
        expected = fixture["renders"][t["name"]]
        passed = failed = 0
        for c in cases:
            variables = dict(c["kwargs"])
            for key in ("bos_token", "eos_token"):
                if t[key] is not None:
                    variables[key] = t[key]
            want = expected[c["name"]]
            try:
                got = render(source, copy.deepcopy(c["messages"]), copy.deepcopy(c["tools"]), c["add_generation_prompt"],
                             variables)
                error = None
            except Exception as e:  # a template's raise_exception, or a renderer failure
                got, error = None, f"{type(e).__name__}: {e}"
            if isinstance(want, dict):  # we refuse this conversation: so must transformers, with our message
                message = error.split(": ", 1)[1] if error else ""
                ok = error is not None and message != "" and message in want["error"]
                why = f"expected an error like {want['error']!r}, got " + (repr(error) if error else "a render")
            elif error is not None:
                ok, why = False, f"the reference failed: {error}"
            else:
                ok = got == want
                if not ok:
                    at, ours, theirs = first_difference(want, got)
                    why = (f"first difference at character {at} (ours {len(want)} chars, reference {len(got)}):\n"
                           f"      ours:         {ours!r}\n      reference:    {theirs!r}")
            if ok:
                passed += 1
            else:
                failed += 1
                failures.append((t["name"], c["name"], why))
        rows.append((t["name"], t["file"], passed, failed))

    width = max(len(r[0]) for r in rows)
    print(f"{'template':<{width}}  {'pass':>4}  {'fail':>4}  result  source")
    for name, file, passed, failed in rows:
        print(f"{name:<{width}}  {passed:>4}  {failed:>4}  {'PASS' if failed == 0 else 'FAIL':<6}  {file}")
    shown = {}
    for tname, cname, why in failures:
        shown[tname] = shown.get(tname, 0) + 1
        if shown[tname] > 3 and not args.verbose:
            continue
        print(f"\n{tname} / {cname}: {why}")
    total_fail = sum(r[3] for r in rows)
    print(f"\n{sum(r[2] for r in rows)} passed, {total_fail} failed")
    return 1 if total_fail else 0


if __name__ == "__main__":
    sys.exit(main())
