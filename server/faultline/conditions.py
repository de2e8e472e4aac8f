"""Conditions on a fix step or environment variable: offered only when the failure's own fields say it applies.

A signature's fix may hold a step that only helps in some cases ("set expandable_segments when much memory is
reserved but unallocated"). Such a step carries ``when``, a condition on a field its pattern captured:

    when = "unallocated >= 1 GiB"      # a size, in any unit the message uses (KiB/MiB/GiB/TiB, KB/MB/GB, B)
    when = "exitcode == -9"            # a number
    when = "hysteresis"                # the field was captured at all

The mini-language is parsed when the library loads (a malformed condition is a problem with file and line) and
is data: nothing in it is evaluated as code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CONDITION = re.compile(r"^\s*(?P<field>[A-Za-z_][A-Za-z0-9_]{0,63})\s*(?:(?P<op>>=|<=|==|!=|>|<)\s*"
                        r"(?P<number>-?\d+(?:\.\d+)?)\s*(?P<unit>[KMGTP]i?B|B)?)?\s*$")
_VALUE = re.compile(r"^\s*(?P<number>-?\d+(?:\.\d+)?)\s*(?P<unit>[KMGTP]i?B|B)?\b")
_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15,
          "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50}


@dataclass(frozen=True)
class Condition:
    field: str
    op: str | None  # None: the field was captured
    number: float = 0.0
    unit: str | None = None
    source: str = ""

    def holds(self, fields: dict[str, str]) -> bool:
        return self.why(fields) is not None

    def why(self, fields: dict[str, str]) -> str | None:
        """Why it holds for these fields ("unallocated = 6.30 GiB, at least 1 GiB"), or None when it does not."""
        value = fields.get(self.field)
        if value is None or value == "":
            return None
        if self.op is None:
            return f"{self.field} = {value}"
        m = _VALUE.match(value)
        if m is None:
            return None
        have = float(m.group("number")) * _UNITS.get(m.group("unit") or "", 1)
        want = self.number * _UNITS.get(self.unit or "", 1)
        ok = {">=": have >= want, "<=": have <= want, "==": have == want, "!=": have != want, ">": have > want,
              "<": have < want}[self.op]
        if not ok:
            return None
        return f"{self.field} = {value.strip()}, {self.op} {self.number:g}{' ' + self.unit if self.unit else ''}"


def parse_condition(text: str) -> Condition:
    """A condition from its text; ``ValueError`` says what is wrong with it."""
    m = _CONDITION.match(text)
    if m is None:
        raise ValueError(f"'{text[:80]}' is not a condition: expected 'field', or 'field OP number [unit]' with OP "
                         "one of >= <= == != > < and unit one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB")
    if m.group("op") is None:
        return Condition(m.group("field"), None, source=text)
    return Condition(m.group("field"), m.group("op"), float(m.group("number")), m.group("unit"), text)
