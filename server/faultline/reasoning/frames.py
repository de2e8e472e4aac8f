"""Where a generic exception was raised: the traceback frames above the root-cause line, the deepest one, and the
deepest one in the user's own code.

A Python exception that no specific signature describes still has an address. The answer names it
(``train.py:90 in __getitem__``), and the fix starts there: in the user's own code, look at that line; inside
a library, look at what the user's last frame passed to it.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..library import Fix
from ..lines.prefixes import parse_line
from ..model import Event, Frame, RaiseSite
from .components import KNOWN_PACKAGES, advice_for_module, advice_for_source, component_advice, known_package
from .root_cause import SPECIFIC_PRIORITY  # below it a signature names only the exception's class
from .state import Reasoning

REREAD_MAX_BYTES = 8 * 1024 * 1024  # a second read of this much costs a few milliseconds
TRACEBACK_LINES = 80  # the lines read above the root line: a deep traceback with its source lines

_MAX_MESSAGE_LINES = 3
_FRAME = re.compile(r'^\s*File "(?P<path>[^"\n]+)", line (?P<line>\d+), in (?P<func>\S+)')
TRACEBACK_HEADER = "Traceback (most recent call last):"
# Paths of code the user did not write: installed packages, then the standard library and the interpreter.
_PACKAGE = re.compile(r"[/\\](?:site|dist)-packages[/\\](?P<package>[\w.-]+)")
_STDLIB = re.compile(r"[/\\]lib[/\\]python\d[\d.]*[/\\]|^<frozen |^<string>$|^<stdin>$")
# A compiled (Cython) module's frame names its source relative to the package's root, as the package was built:
# "cupy/cuda/runtime.pyx", "python/ray/_raylet.pyx" (Ray's source tree), "pyarrow/error.pxi".
_CYTHON = re.compile(r"^(?:python[/\\])?(?P<package>[A-Za-z_]\w{0,60})[/\\][^\n]{0,300}\.(?:pyx|pxi|pxd)$")


def parse_frame(text: str) -> Frame | None:
    m = _FRAME.match(text)
    if m is None:
        return None
    path = m.group("path")
    installed = _PACKAGE.search(path)
    package = installed.group("package") if installed else ("python" if _STDLIB.search(path) else known_package(path))
    if package is None and (compiled := _CYTHON.match(path)) is not None:
        package = compiled.group("package")
    if package is not None and "." in package:  # an egg or dist-info folder name: the package is its head
        package = package.split("-")[0].split(".")[0]
    return Frame(path, int(m.group("line")), m.group("func"), package)


def frames_above(lines: list[str], rank: int | None = None) -> list[Frame]:
    """The frames of the traceback that ends just above the exception line (the last of ``lines``), outermost
    first; empty when the lines above are not a traceback. Lines another rank printed are skipped (a combined
    log interleaves ranks); prefixes are read off as the scanner reads them."""
    frames: list[Frame] = []
    strays = 0  # message lines between the frames and the exception line (a multi-line message)
    for text in reversed(lines):
        context, message = parse_line(text)
        if rank is not None and context.best_rank is not None and context.best_rank != rank:
            continue
        frame = parse_frame(message)
        if frame is not None:
            frames.append(frame)
            continue
        if TRACEBACK_HEADER in message:
            break
        if message[:1] in (" ", "\t") or message.lstrip().startswith(("^", "~")):
            continue  # a frame's source line or its caret marks
        if frames:
            break  # an unindented line that is no frame: the traceback began below it
        strays += 1
        if strays > _MAX_MESSAGE_LINES:
            break
    frames.reverse()
    return frames


def raise_site(frames: list[Frame]) -> RaiseSite | None:
    if not frames:
        return None
    own = next((f for f in reversed(frames) if f.package is None), None)
    library = next((f for f in reversed(frames) if f.package is not None), None)
    return RaiseSite(frames[-1], own, library)


def locate_raise(r: Reasoning) -> None:
    """The traceback frames above the root line, read again from its source (scan/window.py). A root that only a
    generic signature describes (an exception named by its class) gets a fix that starts at its frame; a specific
    signature keeps its own fix, and its frames are read only from an input of at most ``REREAD_MAX_BYTES`` (a
    root deep in a huge log would cost a second read up to it)."""
    root = r.diagnosis.root_cause
    lookup = r.lines_before_lookup
    sig = r.diagnosis.root_signature
    if root is None or lookup is None or sig is None:
        return
    generic = sig.priority < SPECIFIC_PRIORITY
    summary = r.files.get(root.file)
    if not generic and (summary is None or summary.bytes > REREAD_MAX_BYTES):
        return
    lines = lookup(root.file, root.line, TRACEBACK_LINES)
    if not lines:
        return
    frames = frames_above(lines, root.rank)
    site = raise_site(frames)
    if site is None:
        return
    r.diagnosis.frames = site
    if generic:
        advice = component_advice(frames) or _advice_for_exception(root) or _advice_for_reading(frames, root)
        r.diagnosis.root_signature = replace(sig, fix=_fix_at(sig.fix, site, advice))


# Exceptions a reader raises on input that is not what it expects (a cut download, a Git LFS pointer, another format).
_BAD_INPUT = re.compile(r"(?:^|\.)(?:ValueError|UnicodeDecodeError|JSONDecodeError|EOFError|UnpicklingError|BadZipFile"
                        r"|SafetensorError|HeaderTooLarge|DecodeError|ParserError|ScannerError|TOMLDecodeError)$")
# A library function that reads or parses its input.
_READER = re.compile(r"(?:^|_)(?:load|loads|read|parse|decode|deserializ\w*|unpickl\w*|from_pretrained|from_file"
                     r"|open)(?:_|$)", re.IGNORECASE)


def _advice_for_reading(frames: list[Frame], root: Event) -> str | None:
    """A value or decoding error raised inside a library while one of its functions read its input
    (``tiktoken/load.py in load_tiktoken_bpe``, ``json/decoder.py in decode`` under ``from_pretrained``): what it
    read is not what it expects."""
    if not _BAD_INPUT.search(root.fields.get("exc", "")):
        return None
    library = []  # the library frames under the deepest frame of the user's own code
    for frame in reversed(frames):
        if frame.package is None:
            break
        library.append(frame)
    reader = next((f for f in library if _READER.search(f.function)), None)
    if reader is None:
        return None
    return (f"It was raised while {reader.package} read its input ({reader}): check that the "
            "file it was given is complete and in the format it expects (a download that was cut short or that "
            "another process was still writing, a Git LFS pointer instead of the file, a file of another version or "
            "model), then download or regenerate that file.")


def _fix_at(fix: Fix, site: RaiseSite, advice: str | None) -> Fix:
    """The class's fix, with a first step at the frame that raised it, then the advice of the component it was
    raised in (reasoning/components.py), when it is a known one."""
    deepest, own = site.deepest, site.own
    if deepest.package is None:
        first = (f"The exception is raised by your code at {deepest}: start there, with the values on that line "
                 "(print or breakpoint() just before it, on the failing rank).")
    elif own is not None:
        first = (f"The exception is raised inside {deepest.package} ({deepest}), called from your code at {own}: "
                 f"check what that line passes to {deepest.package} (shapes, dtypes, devices, types, paths) and "
                 f"the {deepest.package} version it was written for.")
    else:
        first = (f"The exception is raised inside {deepest.package} ({deepest}) with none of your own code in the "
                 f"traceback: check the configuration or the command line given to it, and the versions of "
                 f"{deepest.package} and its dependencies (search its issue tracker for the message; when it is a bug "
                 f"fixed in a later release, upgrade {deepest.package}).")
    return Fix(fix.summary, (first, *((advice,) if advice else ()), *fix.steps), fix.env)


def advise_at_source(r: Reasoning) -> None:
    """No traceback above the root line, but the line itself names a known library component: a native failure's
    source file (an assertion's ``deepspeed_py_aio_handle.cpp:159``) or an exception's qualified class
    (``megatron.core.dist_checkpointing.core.CheckpointingException``). That component's checklist comes first
    in the fix."""
    root, sig = r.diagnosis.root_cause, r.diagnosis.root_signature
    if root is None or sig is None or r.diagnosis.frames is not None:
        return
    source = root.fields.get("file", "")
    advice = (advice_for_source(source) if source else None) or _advice_for_exception(root)
    if advice is None and sig.priority < SPECIFIC_PRIORITY:
        advice = _advice_for_library_class(root)
    if advice is not None and advice not in sig.fix.steps:
        r.diagnosis.root_signature = replace(sig, fix=Fix(sig.fix.summary, (advice, *sig.fix.steps), sig.fix.env))


def _advice_for_library_class(root: Event) -> str | None:
    """A generic exception with no traceback in the paste whose qualified class is a known library's
    (``jaxlib.xla_extension.XlaRuntimeError``, ``tensorflow.python.framework.errors_impl.UnknownError``): it was
    raised inside that library, so the fix starts with what was given to it and its version, as for a traceback
    that holds none of the user's frames."""
    exc = root.fields.get("exc", "")
    package = exc.split(".", 1)[0] if "." in exc else ""
    if package not in KNOWN_PACKAGES:
        return None
    return (f"The exception's class is {package}'s ({exc}), and the paste holds no frame of your code: check the "
            f"configuration or the arguments given to {package}, and the versions of {package} and its dependencies "
            f"(search its issue tracker for the message; when it is a bug fixed in a later release, upgrade "
            f"{package}).")


def _advice_for_exception(root: Event) -> str | None:
    """The advice of the component whose module an exception's qualified class name starts with."""
    exc = root.fields.get("exc", "")
    if exc.count(".") < 2:  # a package, a module and the class at least
        return None
    return advice_for_module(exc.rsplit(".", 1)[0])
