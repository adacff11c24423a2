"""The built-in rulesets, one package each: its engine (``engine.py``, the ruleset class, with
the modules it is built of beside it: its state, its views' Structs, its scoring), its house
bots (``bots.py``) and its rules text (``RULES.md``). A package imports only ``referee.games``
(what every ruleset shares) and itself; ``referee.games`` registers them.

The registry is imported first, so that a ruleset's package imported on its own finds it whole.
"""

from ..games import RULESETS as _RULESETS  # noqa: F401  (the registry first: see above)
