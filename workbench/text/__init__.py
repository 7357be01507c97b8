"""The ground floor for text: what every layer above reads text with (keyword tokens so far).

Import from the modules.
"""
