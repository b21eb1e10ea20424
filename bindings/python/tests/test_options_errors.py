"""Options and the exception hierarchy: every library error arrives as the DeepInferError
subclass of its status, with the library's message naming the field."""
import json

import pytest

import deepinfer
from deepinfer import Options

from conftest import V4_NAMES, load_v4


def test_options_round_trip_typed_values():
    o = Options()
    o.set_f64("temperature", 0.5)
    o.set_i64("max_tokens", 7)
    o.set_str("device", "cpu")
    o.set_json("stop", '["a", "b"]')
    assert o.get_f64("temperature") == 0.5
    assert o.get_i64("max_tokens") == 7
    assert o.get_str("device") == "cpu"
    assert json.loads(o.get_json("stop")) == ["a", "b"]
    assert o.get_i64("seed") is None  # known but unset
    c = o.clone()
    o.update_json('{"max_tokens": 9}')
    assert c.get_i64("max_tokens") == 7 and o.get_i64("max_tokens") == 9
    assert json.loads(c.to_json()) == {"temperature": 0.5, "max_tokens": 7, "device": "cpu",
                                       "stop": ["a", "b"]}


def test_unknown_key_is_unsupported_and_named():
    with pytest.raises(deepinfer.UnsupportedError) as e:
        Options().set_i64("no_such_key", 1)
    assert e.value.status == -3 and e.value.status_name == "DI_E_UNSUPPORTED"
    assert "no_such_key" in e.value.message
    assert isinstance(e.value, deepinfer.DeepInferError)


def test_wrong_type_is_invalid_argument():
    with pytest.raises(deepinfer.InvalidArgumentError) as e:
        Options().set_str("temperature", "hot")
    assert "temperature" in e.value.message
    assert isinstance(e.value, ValueError)


def test_bad_json_is_parse_error():
    with pytest.raises(deepinfer.ParseError):
        Options().set_json("stop", "[unclosed")


def test_closed_options_raise_state_error():
    o = Options()
    o.close()
    o.close()  # idempotent
    with pytest.raises(deepinfer.StateError):
        o.set_i64("max_tokens", 1)


def test_missing_model_is_not_found_or_io(tmp_path):
    with pytest.raises((deepinfer.NotFoundError, deepinfer.DeepInferIOError)) as e:
        deepinfer.Engine(tmp_path / "nothing-here")
    assert e.value.message


def test_engine_key_of_wrong_scope_is_named():
    with pytest.raises(deepinfer.DeepInferError) as e:
        deepinfer.Engine(load_v4(V4_NAMES[0])[0], temperature=0.5)
    assert "temperature" in e.value.message


def test_sampling_value_out_of_range_is_named(tiny_engine):
    with pytest.raises(deepinfer.InvalidArgumentError) as e:
        tiny_engine.submit([1, 2, 3], deepinfer.SamplingParams(top_p=1.5))
    assert "top_p" in e.value.message


def test_every_status_the_library_names_has_its_exception_class():
    # Scan a range wider than the enum: a code the library names but the binding does not map
    # would surface as the bare DeepInferError base class.
    from deepinfer.errors import _from_status
    named = {}
    for code in range(-64, 0):
        name = deepinfer.status_name(code)
        if name != "DI_UNKNOWN_STATUS":
            named[code] = name
    assert len(named) >= 12, named
    for code, name in named.items():
        e = _from_status(code, name, "m", '{"status": 400, "body": {"error": "x"}}')
        assert type(e) is not deepinfer.DeepInferError, name
        assert type(e).status == code and type(e).status_name == name
        assert str(e) == f"{name}: m" and e.http_status == 400 and e.body == {"error": "x"}
        assert getattr(deepinfer, type(e).__name__) is type(e)  # exported by the package
    plain = _from_status(-1, "DI_E_INVALID_ARG", "m", "not json")
    assert plain.detail == "not json" and plain.http_status is None and plain.body is None
