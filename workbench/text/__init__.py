"""The ground floor for text, importing nothing of ours: text from documents made safe to show
(:mod:`.safe_text`), YAML read with bounds (:mod:`.safe_yaml`), exact sentences and decision cues
(:mod:`.sentences`), the name keys that make two names one entity (:mod:`.name_keys`) and the
tokens of keyword search (:mod:`.tokenize`).

Import from the modules.
"""
