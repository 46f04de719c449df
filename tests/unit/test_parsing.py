"""Nesting and number bounds checked before tomllib or json sees the text."""

import json
import tomllib

import pytest

from clusterplan.errors import ConfigError
from clusterplan.parsing import MAX_DEPTH, MAX_DIGITS, check_depth, parse_json, parse_toml


def test_500_nested_brackets_in_toml_name_the_line():
    """500 `[` (a RecursionError in tomllib) is a ConfigError on the line that opens the 65th."""
    text = "a = 1\nv = " + "[" * 500 + "]" * 500
    with pytest.raises(ConfigError, match=f"nested more than {MAX_DEPTH} deep") as error:
        parse_toml(text, source="s.toml")
    assert (error.value.source, error.value.line) == ("s.toml", 2)


def test_100000_deep_json_is_refused():
    with pytest.raises(ConfigError, match="nested more than 64 deep"):
        parse_json('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", source="m.json")


def test_5000_digit_integer_names_its_digits_and_line():
    """Python refuses int() of more than 4,300 digits with a bare ValueError; this names the count."""
    with pytest.raises(ConfigError, match="a number of 5000 digits; at most 100") as error:
        parse_toml("x = 1\n\ny = " + "7" * 5000, source="s.toml")
    assert error.value.line == 3
    with pytest.raises(ConfigError, match="a number of 5000 digits"):
        parse_json('{"hidden_size": ' + "1" * 5000 + "}")


def test_underscores_do_not_count_as_digits():
    assert parse_toml("n = " + "_".join(["1"] * MAX_DIGITS))["n"] == int("1" * MAX_DIGITS)


def test_brackets_and_digits_inside_strings_and_comments_are_text():
    text = ('a = "' + "[" * 200 + '"\nb = \'' + "{" * 200 + "'\n# " + "[" * 200 + "\n"
            'c = """\n' + "9" * 300 + '\n"""\n')
    assert parse_toml(text) == tomllib.loads(text)
    assert parse_json('["' + "[" * 200 + '\\"", "' + "1" * 300 + '"]')[1] == "1" * 300


def test_depth_at_the_limit_parses():
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json(text) == json.loads(text)
    assert parse_toml(f"v = {text}")["v"] == json.loads(text)


def test_dotted_keys_nest_without_brackets():
    """`a.a.a... = 1` nests tables through keys: refused after parsing, as deep as brackets."""
    with pytest.raises(ConfigError, match="nested more than 64 deep"):
        parse_toml("a" + ".a" * 100 + " = 1")


def test_check_depth_walks_without_recursion():
    value: list = []
    for _ in range(10_000):
        value = [value]
    with pytest.raises(ConfigError):
        check_depth(value)


def test_no_line_when_asked():
    with pytest.raises(ConfigError) as error:
        parse_toml("v = " + "[" * 100, source="--set", key="cluster.num_nodes", first_line=None)
    assert str(error.value) == "--set: cluster.num_nodes: arrays and tables nested more than 64 deep"


def test_parser_errors_reach_the_caller():
    with pytest.raises(tomllib.TOMLDecodeError):
        parse_toml("v = [")
    with pytest.raises(json.JSONDecodeError):
        parse_json("[1,")


def test_closing_brackets_in_strings_do_not_hide_depth():
    """`[` x 60, a string of 60 `]`, again ten times: 600 levels that a count over the raw text would miss."""
    text = "".join("[" * 60 + '"' + "]" * 60 + '",' for _ in range(10)) + "1" + "]" * 600
    with pytest.raises(ConfigError, match="nested more than 64 deep"):
        parse_json(text, source="a.json")
    with pytest.raises(ConfigError, match="nested more than 64 deep"):
        parse_toml("v = " + text)
