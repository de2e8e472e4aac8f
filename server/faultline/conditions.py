"""Conditions on a fix step or environment variable: offered only when the failure's own fields say it applies.

A signature's fix may hold a step that only helps in some cases ("set expandable_segments when much memory is
reserved but unallocated"). Such a step carries ``when``, a condition on a field its pattern captured:

    when = "unallocated >= 1 GiB"      # a size, in any unit the message uses (KiB/MiB/GiB/TiB, KB/MB/GB, B)
    when = "exitcode == -9"            # a number
    when = "hysteresis"                # the field was captured at all
    when = "size > total"              # two captured fields compared (both sizes, or both numbers)

The mini-language is parsed when the library loads (a malformed condition is a problem with file and line) and
is data: nothing in it is evaluated as code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CONDITION = re.compile(r"^\s*(?P<field>[A-Za-z_][A-Za-z0-9_]{0,63})\s*(?:(?P<op>>=|<=|==|!=|>|<)\s*"
                        r"(?:(?P<number>-?\d+(?:\.\d+)?)\s*(?P<unit>[KMGTP]i?B|B)?|(?P<other>[A-Za-z_][A-Za-z0-9_]{0,63})))?"
                        r"\s*$")
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
    other: str | None = None  # compared with this captured field instead of ``number``

    def holds(self, fields: dict[str, str]) -> bool:
        return self.why(fields) is not None

    def why(self, fields: dict[str, str]) -> str | None:
        """Why it holds for these fields ("unallocated = 6.30 GiB, at least 1 GiB"), or None when it does not."""
        value = fields.get(self.field)
        if value is None or value == "":
            return None
        if self.op is None:
            return f"{self.field} = {value}"
        have = _quantity(value)
        if have is None:
            return None
        want: float | None
        if self.other is None:
            want = self.number * _UNITS.get(self.unit or "", 1)
            against = f"{self.number:g}{' ' + self.unit if self.unit else ''}"
        else:
            other_value = (fields.get(self.other) or "").strip()
            want = _quantity(other_value)
            against = f"{self.other} = {other_value}"
        if want is None:
            return None
        ok = {">=": have >= want, "<=": have <= want, "==": have == want, "!=": have != want, ">": have > want,
              "<": have < want}[self.op]
        if not ok:
            return None
        return f"{self.field} = {value.strip()}, {self.op} {against}"


def _quantity(value: str) -> float | None:
    """A captured value as a number, sizes in bytes ("6.30 GiB" -> 6764573491.2); None when it is no number."""
    m = _VALUE.match(value)
    if m is None:
        return None
    return float(m.group("number")) * _UNITS.get(m.group("unit") or "", 1)


def parse_condition(text: str) -> Condition:
    """A condition from its text; ``ValueError`` says what is wrong with it."""
    m = _CONDITION.match(text)
    if m is None:
        raise ValueError(f"'{text[:80]}' is not a condition: expected 'field', or 'field OP number [unit]' with OP "
                         "one of >= <= == != > < and unit one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, or 'field OP field'")
    if m.group("op") is None:
        return Condition(m.group("field"), None, source=text)
    if m.group("other") is not None:
        return Condition(m.group("field"), m.group("op"), source=text, other=m.group("other"))
    return Condition(m.group("field"), m.group("op"), float(m.group("number")), m.group("unit"), text)
