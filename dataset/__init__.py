"""The dataset pipeline: step records and their schema, planning, generation, filtering and SFT rendering.

Builds on the strategy engine (``strategies``) and the language (``leir``); knows nothing of TVM, whose
verification it receives as a callable, or of Django.
"""
