"""The keyword tokens, now :mod:`workbench.text.tokenize` (the keyword index, below the workspace,
tokenizes with them); its names are also read from here until every importer has moved."""

from ..text.tokenize import CHINESE_STOPWORDS, ENGLISH_STOPWORDS, TOKENIZER_VERSION, script_of, tokenize

__all__ = ["TOKENIZER_VERSION", "tokenize", "script_of", "ENGLISH_STOPWORDS", "CHINESE_STOPWORDS"]
