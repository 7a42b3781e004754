"""The frontend: Python source -> ``ast`` -> the typed program, checked against the operator
table; every rejected program leaves as a located ``DSLError``."""
from .parser import parse_program

__all__ = ["parse_program"]
