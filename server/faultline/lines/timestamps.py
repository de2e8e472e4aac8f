"""Parse the time stamps that training logs carry, into comparable :class:`Timestamp` values.

Formats: c10 ``[E1129 18:02:21.123456789 File.cpp:616]`` (month not zero-padded, no year), glog and
torch logging ``E1129 18:02:21.123456 1234 file.py:12]``, ISO 8601 / Python logging
``2024-05-01 12:00:00,123``, torchrun's summary ``2024-05-01_12:00:00``, NCCL ``[2024-05-01 12:00:00]``,
vLLM ``05-01 12:00:00``, ``dmesg -T`` ``[Wed May  1 12:00:00 2024]`` and kernel uptime ``[ 8559.603724]``.
Sub-second digits are kept but the reasoning compares across hosts with a skew tolerance.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..model import Timestamp

if TYPE_CHECKING:
    from ..model import Event

# Day-of-year offsets of a leap year, so that Feb 29 is representable whatever the real year.
_MONTH_START = [0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335]
_MONTHS = {m: i + 1 for i, m in enumerate(
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"])}

_ISO = re.compile(
    r"(?P<y>(?:19|20)\d\d)-(?P<mo>\d\d)-(?P<d>\d\d)[T _](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)(?:[.,](?P<f>\d{1,9}))?")
_MMDD = re.compile(r"(?P<mmdd>\d{3,4}) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)(?:\.(?P<f>\d{1,9}))?")
_MM_DD = re.compile(r"(?P<mo>\d\d)-(?P<d>\d\d) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)")
_DMESG_T = re.compile(
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<mon>[A-Z][a-z]{2}) +(?P<d>\d{1,2}) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d) (?P<y>\d{4})")


def _seconds(month: int, day: int, hour: int, minute: int, second: int, frac: str | None) -> float | None:
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 61):
        return None
    value = ((_MONTH_START[month - 1] + day - 1) * 24 + hour) * 3600 + minute * 60 + second
    if frac:
        value += int(frac) / 10 ** len(frac)
    return float(value)


def parse_iso(text: str) -> Timestamp | None:
    """``2024-05-01 12:00:00,123``, ``2024-05-01T12:00:00.123Z``, ``2024-05-01_12:00:00``."""
    m = _ISO.match(text)
    if not m:
        return None
    secs = _seconds(int(m["mo"]), int(m["d"]), int(m["h"]), int(m["mi"]), int(m["s"]), m["f"])
    return None if secs is None else Timestamp(int(m["y"]), secs, m.group(0))


def parse_mmdd(text: str) -> Timestamp | None:
    """c10/glog ``1129 18:02:21.123456789`` (MMDD with the month possibly one digit)."""
    m = _MMDD.match(text)
    if not m:
        return None
    mmdd = m["mmdd"]
    month, day = int(mmdd[:-2]), int(mmdd[-2:])
    secs = _seconds(month, day, int(m["h"]), int(m["mi"]), int(m["s"]), m["f"])
    return None if secs is None else Timestamp(None, secs, m.group(0))


def parse_month_day(text: str) -> Timestamp | None:
    """vLLM ``05-01 12:00:00`` (no year)."""
    m = _MM_DD.match(text)
    if not m:
        return None
    secs = _seconds(int(m["mo"]), int(m["d"]), int(m["h"]), int(m["mi"]), int(m["s"]), None)
    return None if secs is None else Timestamp(None, secs, m.group(0))


def parse_dmesg_wallclock(text: str) -> Timestamp | None:
    """``dmesg -T``: ``Wed May  1 12:00:00 2024``."""
    m = _DMESG_T.match(text)
    if not m or m["mon"] not in _MONTHS:
        return None
    secs = _seconds(_MONTHS[m["mon"]], int(m["d"]), int(m["h"]), int(m["mi"]), int(m["s"]), None)
    return None if secs is None else Timestamp(int(m["y"]), secs, m.group(0))


_SYSLOG = re.compile(r"(?P<mon>[A-Z][a-z]{2}) +(?P<d>\d{1,2}) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)")


def parse_syslog(text: str) -> Timestamp | None:
    """syslog ``Jun 18 03:41:57`` (no year)."""
    m = _SYSLOG.match(text)
    if not m or m["mon"] not in _MONTHS:
        return None
    secs = _seconds(_MONTHS[m["mon"]], int(m["d"]), int(m["h"]), int(m["mi"]), int(m["s"]), None)
    return None if secs is None else Timestamp(None, secs, m.group(0))


def uptime(text: str) -> Timestamp | None:
    """Kernel ``8559.603724`` seconds since boot: orders lines of one host only."""
    try:
        return Timestamp(None, float(text), f"[{text}]", uptime=True)
    except ValueError:
        return None


_ANYWHERE = re.compile(
    r"(?:19|20)\d\d-\d\d-\d\d[T _]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?")


def find_timestamp(text: str) -> Timestamp | None:
    """A full ISO date-time anywhere in a message (e.g. torchrun's ``time : 2024-05-01_12:00:00``)."""
    m = _ANYWHERE.search(text, 0, 400)
    return parse_iso(m.group(0)) if m else None


def default_year(stamps: Iterable[Timestamp | None]) -> int:
    """The year for stamps that carry none: the most common year among those that do (2000 if none)."""
    years = Counter(s.year for s in stamps if s is not None and s.year)
    return years.most_common(1)[0][0] if years else 2000


def absolute_seconds(stamp: Timestamp, default_year: int) -> float:
    """A comparable number for stamps of one run (uptime stamps are not comparable: callers check)."""
    year = stamp.year if stamp.year is not None else default_year
    return year * 366 * 86400.0 + stamp.seconds


def comparable_seconds(stamp: Timestamp | None, default_year: int) -> float | None:
    """A time to compare across the lines of a run, or None: no stamp, or a kernel uptime stamp."""
    if stamp is None or stamp.uptime:
        return None
    return absolute_seconds(stamp, default_year)


def effective_times(events: list[Event], default_year: int) -> dict[int, float]:
    """A time for every event (by ``id``): its own stamp, else that of the nearest earlier (then later)
    stamped event of the same file, since lines of one file are in the order they were written."""
    own = {id(e): absolute_seconds(e.time, default_year) for e in events if e.time and not e.time.uptime}
    result: dict[int, float] = {}
    by_file: dict[str, list[Event]] = {}
    for e in sorted(events, key=lambda ev: ev.order):
        by_file.setdefault(e.file, []).append(e)
    for file_events in by_file.values():
        last: float | None = None
        pending: list[Event] = []
        for e in file_events:
            if id(e) in own:
                last = own[id(e)]
                for waiting in pending:  # nothing stamped before them: just before the next stamp
                    result[id(waiting)] = last - 1e-3
                pending = []
                result[id(e)] = last
            elif last is not None:
                result[id(e)] = last
            else:
                pending.append(e)
    return result
