"""referee: a REST/JSON referee service for dice-game bot tournaments."""

__version__ = "0.1.0"
