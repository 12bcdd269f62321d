"""Multi-step search over LEIR programs: policies, search algorithms and the evaluation harness.

A tuner run starts from a source program, asks a policy (a rule-based one, or an LLM behind an
OpenAI-compatible endpoint) for the next one-step strategy, verifies each state through ``verifier``, and
records the trajectory with its best speedup. It shows what the Step-TP data is for. It depends on
``leir`` and ``verifier`` only, never on Django; ``curation`` stores its runs.
"""
