"""The keyword tokenizer: stopwords, literal identifiers and paths, Chinese segmentation."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from workbench.text.tokenize import CHINESE_STOPWORDS, ENGLISH_STOPWORDS, script_of, tokenize


def test_english_words_are_lower_cased_and_stopwords_removed():
    assert tokenize("The Cache is in front of the Database") == ["cache", "front", "database"]


def test_sentence_punctuation_is_not_part_of_a_word():
    assert tokenize("Restart Redis. Then, check Kafka!") == ["restart", "redis", "check", "kafka"]


def test_error_code_is_one_literal_token():
    assert tokenize("connect failed: ECONNREFUSED") == ["connect", "failed", "econnrefused"]


def test_snake_case_identifier_stays_whole_and_adds_its_words():
    tokens = tokenize("snake_case_names")
    assert tokens[0] == "snake_case_names"
    assert tokens[1:] == ["snake", "case", "names"]


def test_absolute_path_is_one_token_with_segments_and_words():
    tokens = tokenize("edit /etc/redis/redis.conf later")
    assert tokens[0] == "edit" and tokens[-1] == "later"
    assert "etc/redis/redis.conf" in tokens
    assert "redis.conf" in tokens
    assert {"etc", "redis", "conf"} <= set(tokens)


def test_relative_path_yields_file_name_and_its_words():
    tokens = tokenize("src/auth/token_cache.py")
    assert tokens[0] == "src/auth/token_cache.py"
    assert {"token_cache.py", "token", "cache", "py", "src", "auth"} <= set(tokens)


def test_camel_case_adds_its_words():
    assert tokenize("TokenCache") == ["tokencache", "token", "cache"]


def test_versions_and_numbers_stay_whole():
    assert tokenize("Redis 7.2 on port 6379 since 2024-01-05") == ["redis", "7.2", "port", "6379", "since", "2024-01-05"]


def test_stopword_inside_an_identifier_is_kept_in_the_whole_token():
    assert tokenize("is_ready") == ["is_ready", "ready"]


def test_chinese_is_segmented_into_words():
    tokens = tokenize("缓存雪崩导致数据库过载")
    assert "缓存" in tokens and "数据库" in tokens
    assert "".join(tokens) == "缓存雪崩导致数据库过载"


def test_chinese_stopwords_and_punctuation_are_dropped():
    tokens = tokenize("这是缓存的问题，也是数据库的问题。")
    assert not set(tokens) & CHINESE_STOPWORDS
    assert "，" not in tokens and "。" not in tokens
    assert "缓存" in tokens and "数据库" in tokens


def test_mixed_text_segments_chinese_and_keeps_english_rule():
    tokens = tokenize("Redis的缓存雪崩 and ECONNREFUSED错误")
    assert tokens[0] == "redis"
    assert "econnrefused" in tokens and "缓存" in tokens
    assert "and" not in tokens and "的" not in tokens


def test_script_of_tells_chinese_from_latin():
    assert script_of("缓存") == "cjk"
    assert script_of("Redis 缓存") == "cjk"
    assert script_of("cache stampede 7.2") == "latin"
    assert script_of("") == "latin"


def test_english_only_use_does_not_import_jieba():
    code = (
        "import sys; from workbench.text.tokenize import tokenize; "
        "tokenize('ECONNREFUSED in src/auth/token_cache.py'); print('jieba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@given(st.text())
def test_tokens_are_never_blank_stopwords_or_upper_case(text):
    for token in tokenize(text):
        assert token.strip() == token and token
        assert token == token.lower()
        assert token not in ENGLISH_STOPWORDS and token not in CHINESE_STOPWORDS


@given(st.lists(st.sampled_from(list("abRzXY_./-: 019,") + ["缓存", "雪崩", "的", "数据库"]), max_size=30).map("".join))
def test_every_token_is_a_piece_of_the_lower_cased_text(text):
    lowered = text.lower()
    for token in tokenize(text):
        assert token in lowered
