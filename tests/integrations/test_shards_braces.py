"""Brace patterns for shard lists (pfio.integrations.shards.braces)."""

import pytest

from pfio.integrations.shards import expand_urls


def test_numeric_range_keeps_zero_padding():
    urls = expand_urls("s3://b/train-{0000..0011}.tar")
    assert len(urls) == 12
    assert urls[0] == "s3://b/train-0000.tar" and urls[-1] == "s3://b/train-0011.tar"


def test_range_without_leading_zero_is_not_padded():
    assert expand_urls("x{8..11}") == ["x8", "x9", "x10", "x11"]


def test_range_with_step_and_descending():
    assert expand_urls("{0..6..3}") == ["0", "3", "6"]
    assert expand_urls("{3..1}") == ["3", "2", "1"]


def test_list_alternatives():
    assert expand_urls("s3://b/{train,val}.tar") == ["s3://b/train.tar", "s3://b/val.tar"]


def test_several_groups_combine_leftmost_slowest():
    assert expand_urls("{a,b}-{0..1}") == ["a-0", "a-1", "b-0", "b-1"]


def test_nested_groups():
    assert expand_urls("{train-{0..1},val}.tar") == ["train-0.tar", "train-1.tar", "val.tar"]


def test_a_list_of_urls_passes_through():
    urls = ["s3://b/{literal}.tar", "mem://x/y.tar"]
    assert expand_urls(urls) == urls


def test_a_pattern_without_braces_is_one_url():
    assert expand_urls("s3://b/one.tar") == ["s3://b/one.tar"]


@pytest.mark.parametrize("pattern", ["a{0..3", "a0..3}", "a}{0..1}", "a{}", "a{x}",
                                     "a{0..x}", "a{0..4..0}", "a{1..2..3..4}"])
def test_malformed_patterns_are_value_errors_naming_the_pattern(pattern):
    with pytest.raises(ValueError, match="malformed brace pattern") as info:
        expand_urls(pattern)
    assert repr(pattern) in str(info.value)


def test_non_string_urls_are_refused():
    with pytest.raises(ValueError, match="strings"):
        expand_urls(["a.tar", 3])
