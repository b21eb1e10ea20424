"""Tokenizer through the binding: byte-level pieces rebuild the text, control tokens only where
allowed, segments report their template ranges, bad ids are errors naming the index."""
import threading

import pytest

import deepinfer
from deepinfer import Tokenizer

TEXTS = ["Hello, world!", "  leading spaces\nand lines\t", "naïve café — 東京 🚀", ""]


@pytest.fixture(scope="module")
def tok(tiny_tokenizer):
    return tiny_tokenizer


@pytest.mark.parametrize("text", TEXTS)
def test_pieces_concatenate_to_the_utf8_bytes(tok, text):
    ids = tok.encode(text, added_tokens=False)
    assert b"".join(tok.token_to_piece(i) for i in ids) == text.encode()
    assert tok.decode(ids) == text


def test_control_tokens_only_when_added_tokens_are_recognised(tok):
    bos = tok.special_ids["bos_id"]
    spelled = "<｜begin▁of▁sentence｜>"
    assert tok.token_id(spelled) == bos
    assert tok.encode(spelled, added_tokens=True) == [bos]
    plain = tok.encode(spelled, added_tokens=False)
    assert bos not in plain and len(plain) > 1
    assert tok.decode(plain) == spelled
    assert tok.decode([bos] + plain, skip_special=True) == spelled
    assert tok.token_id("no such token at all") is None


def test_add_special_prepends_bos_as_configured(tok):
    s = tok.special_ids
    with_special = tok.encode("abc", add_special=True)
    without = tok.encode("abc")
    if s["add_bos_token"]:
        assert with_special == [s["bos_id"]] + without
    else:
        assert with_special == without


def test_segments_report_template_ranges(tok):
    segs = [("<｜User｜>", True), ("<｜User｜> is text here", False), ("<｜Assistant｜>", True)]
    ids, ranges = tok.encode_segments(segs)
    a = tok.encode(segs[0][0])
    b = tok.encode(segs[1][0], added_tokens=False)
    c = tok.encode(segs[2][0])
    assert ids == a + b + c
    assert ranges == [(0, len(a)), (len(a) + len(b), len(ids))]


def test_bad_input_is_an_error_not_a_crash(tok, tmp_path):
    with pytest.raises(deepinfer.InvalidArgumentError) as e:
        tok.decode([1, tok.vocab_size + 5])
    assert "1" in e.value.message
    with pytest.raises(deepinfer.InvalidArgumentError):
        tok.token_to_piece(-1)
    with pytest.raises((deepinfer.NotFoundError, deepinfer.DeepInferIOError)):
        Tokenizer(str(tmp_path))
    (tmp_path / "tokenizer.json").write_text("{ not json")
    with pytest.raises(deepinfer.ParseError):
        Tokenizer(str(tmp_path))


def test_concurrent_encoding_from_threads(tok):
    text = "concurrency " * 50
    expect = tok.encode(text)
    results = []

    def work():
        results.append(all(tok.encode(text) == expect for _ in range(20)))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 4


def test_closed_tokenizer_raises(tiny_model):
    t = Tokenizer(tiny_model)
    t.close()
    t.close()
    with pytest.raises(deepinfer.StateError):
        t.encode("x")
