"""Reading logs: exact line numbers whatever the input, bounded work, no crash on hostile bytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from faultline import inputs
from faultline.engine import Engine
from faultline.model import Verdict
from faultline.render.json_out import diagnosis_json
from faultline.scan import chunks, lookback
from faultline.scan import scanner as scanner_module

OOM = (b"[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
       b"GPU 2 has a total capacity of 79.14 GiB of which 1.00 GiB is free.")


def test_line_numbers_survive_chunk_boundaries(engine: Engine, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 64)
    lines = [f"step {i} loss 2.{i}".encode() for i in range(300)]
    lines.insert(217, OOM)
    diagnosis = engine.diagnose_text(b"\n".join(lines), "run.log")
    assert diagnosis.root_cause is not None
    assert (diagnosis.root_cause.line, diagnosis.root_cause.rank) == (218, 2)


def test_line_counts_and_last_lines_do_not_depend_on_chunk_sizes(engine: Engine, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Lines are counted once per chunk, partly while numbering the candidate lines: the totals, the events'
    line numbers and the last line are those of a count of the whole input."""
    import random

    rng = random.Random(11)
    kinds = ["", "  ", "[rank1]: step 3 loss 2.0", "plain text", "Error here", "[rank2]: " + OOM.decode()]
    for _ in range(60):
        lines = [rng.choice(kinds) for _ in range(rng.randint(1, 120))] + [f"[rank3]: done {rng.random()}"]
        data = ("\n".join(lines) + "\n").encode()
        seen = []
        for chunk in (16, 100, 1 << 20):
            monkeypatch.setattr(chunks, "CHUNK_BYTES", chunk)
            scan = scanner_module.Scanner(engine.matcher, max_line_bytes=1024)
            summary = scan.scan(inputs.Source.from_text(data, "x.log"))
            assert (summary.lines, summary.last_line) == (len(lines), len(lines))
            seen.append([(event.line, event.signature_id) for event in scan.sink.output.events])
        assert seen[0] == seen[1] == seen[2]
        assert [line for line, _ in seen[0]] == [i + 1 for i, text in enumerate(lines) if "OutOfMemory" in text]


def test_the_last_line_is_the_last_non_blank_one_whatever_the_chunks(engine: Engine, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The last line a file shows (a silent rank's last words) is its last line with visible text, also when
    the end of the file is blank: spaces, a final ``\r``, colour codes, control or Unicode space characters,
    in one chunk or spread over several."""
    import random

    from faultline.lines.normalize import normalize_line
    from faultline.masking import mask_secrets

    rng = random.Random(7)
    kinds = ["", "  ", "\t", "\r", "\x07", "\x1b[0m", "\x1b[31m\x1b[0m  ", "\u00a0", "\u3000 ", "abc\r   ", "   \rxyz",
             "[rank1]: step 3", "plain", "x\r\n", " \x00 ", "\x7f", "\x85"]
    for _ in range(300):
        lines = [rng.choice(kinds) for _ in range(rng.randint(0, 40))]
        data = ("\n".join(lines) + rng.choice(["", "\n", "\n\n", "\r", "  "])).encode()
        raw_lines = data.split(b"\n")
        if raw_lines[-1] == b"":
            raw_lines.pop()
        expected = (0, "")
        for number, raw in enumerate(raw_lines, start=1):
            text = normalize_line(raw, 2000)
            if text.strip():
                expected = (number, mask_secrets(text))
        for chunk in (3, 8, 50, 1 << 20):
            monkeypatch.setattr(chunks, "CHUNK_BYTES", chunk)
            summary = scanner_module.Scanner(engine.matcher, max_line_bytes=1024).scan(
                inputs.Source.from_text(data, "x.log"))
            assert (summary.last_line, summary.last_text) == expected, (chunk, data)


def test_a_buffer_of_blank_lines_is_passed_over_at_once() -> None:
    buf = b"last words\n" + b" \t\r\n" * 2_000_000
    assert chunks.last_visible_byte(buf, len(buf) - 1) == len(b"last words") - 1
    assert chunks.last_visible_byte(b"\n \n\x07\n", 4) == -1


def test_crlf_ansi_and_progress_bars(engine: Engine) -> None:
    text = (b"\x1b[32mepoch 1\x1b[0m\r\n 10%|#  |\r 90%|######### |\r\n"
            b"\x1b[31m" + OOM + b"\x1b[0m\r\n")
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 3
    assert "\x1b" not in diagnosis.root_cause.text


def test_huge_line_keeps_numbering_and_is_reported(engine: Engine, tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    with open(path, "wb") as out:
        out.write(b"start\n")
        out.write(b"tensor([" + b"0.1234, " * 400_000 + b"]) RuntimeError: value\n")  # a 3 MB line
        out.write(OOM + b"\n")
    small = Engine(engine.library, max_line_bytes=64 * 1024)
    diagnosis = small.diagnose_paths([path])
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 3
    assert any("longer than" in note for note in diagnosis.notes)


def test_binary_junk_and_invalid_utf8_do_not_crash(engine: Engine) -> None:
    junk = bytes(b for b in range(256) if b != 10) * 200 + b"\xff\xfe\xfa" + b"\n" + OOM + b"\n" + b"\x00" * 5000
    diagnosis = engine.diagnose_text(junk, "junk.bin")
    assert diagnosis.verdict is Verdict.FAILURE
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 2


def test_empty_and_whitespace_input_is_never_an_all_clear(engine: Engine) -> None:
    for text in (b"", b"\n\n\n", b"   ", b"\x1b[0m\r  \n"):
        diagnosis = engine.diagnose_text(text, "empty.log")
        assert diagnosis.verdict is Verdict.UNKNOWN
        assert any("nothing was read" in r.text for r in diagnosis.reasons)


def test_no_trailing_newline(engine: Engine) -> None:
    diagnosis = engine.diagnose_text(b"hello\n" + OOM, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 2


def test_folder_of_per_rank_logs_attributes_ranks_from_names(engine: Engine, tmp_path: Path) -> None:
    for rank in range(4):
        text = b"step 1\nstep 2\n"
        if rank == 2:
            text += b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.\n"
        (tmp_path / f"train_rank{rank}.log").write_bytes(text)
    (tmp_path / "model.pt").write_bytes(b"\x00\x01" * 100)
    diagnosis = engine.diagnose_paths([tmp_path])
    assert diagnosis.initiating_rank == 2
    assert diagnosis.root_cause is not None and diagnosis.root_cause.file.endswith("train_rank2.log")
    assert set(diagnosis.ranks) == {0, 1, 2, 3}
    assert any("model.pt" in note and "binary" in note for note in diagnosis.notes)


def test_secrets_never_reach_events(engine: Engine) -> None:
    text = OOM + b" HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH12\n"
    diagnosis = engine.diagnose_text(text, "run.log")
    assert "hf_abcdefghij" not in str(diagnosis_json(diagnosis))


def _random_combined_log(seed: int, lines: int = 3000) -> bytes:
    """Ranks' stamped and unstamped lines, unprefixed agent lines, stamp-less stretches, and stamps that only a
    full parse sees (split by colour codes or control characters, in Unicode digits), interleaved."""
    import random

    rng = random.Random(seed)
    out = []
    for i in range(lines):
        kind = rng.random()
        rank = rng.choice([0, 1, 2, 3, 37])
        second = i // 50
        clock = f"08:{second // 60:02d}:{second % 60:02d}"
        if kind < 0.2:
            out.append(f"[rank{rank}]:[E1129 {clock}.{i:06d} X.cpp:1] stamped {i}")
        elif kind < 0.45:
            out.append(f"[rank{rank}]:   File \"train.py\", line {i}, in step")
        elif kind < 0.52:
            out.append(f"W1129 {clock}.{i:06d} 4424 api.py:897] agent {i}")
        elif kind < 0.55:
            out.append(f"\x1b[33mW1129 08\x1b[0m:{second // 60:02d}\x1b[0m:{second % 60:02d}.1 4424 api.py:1] colour {i}")
        elif kind < 0.57:
            out.append(f"W1129 08\x07:{second // 60:02d}\x07:{second % 60:02d}.1 4424 api.py:1] bell {i}")
        elif kind < 0.59:
            out.append("time : 2024-11-29_٠٨:١٢:٠٠ arabic-indic digits")
        elif kind < 0.61:
            out.append(f"[ {i}.123456] kernel uptime stamp")
        elif kind < 0.65:
            out.append(f"[default{rank}]:[W1129 08:00:{second % 60:02d}.1 Y.cpp:2] tee stamped {i}")
        elif kind < 0.7:
            out.append(f"[default{rank}]:[rank{rank}]: tee unstamped {i}")
        elif kind < 0.72:
            out.extend(f"frame #{k}: c10::Error::Error() + 0x98 (0x7f40951c7b9e28 in libc10.so)"
                       for k in range(rng.choice([5, 250])))
        elif kind < 0.76:
            out.append(f"[rank{rank}]:I1129 {clock}.{i:06d} 4644 train.py:241] step={i} loss=9.8830")
        elif kind < 0.78:  # a second rank prefix wins: the line is rank 37's
            out.append(f"[rank{rank}]:[W1129 {clock}.1 Z.cpp:3] [rank37]: re-prefixed {i}")
        elif kind < 0.8:  # a colour code and a non-ASCII byte after the rank prefix
            out.append(f"[rank{rank}]:\x1b[0m[E1129 {clock}.{i:06d} X.cpp:1] colour after the rank {i}")
        elif kind < 0.81:
            out.append(f"[rank{rank}]:[ra\u0085nk37]:[E1129 {clock}.{i:06d} X.cpp:1] a C1 control in a prefix {i}")
        else:
            out.append(f"terminate called after throwing an instance of 'c10::DistBackendError' {i}")
    return ("\n".join(out) + "\n").encode()


def _full_walk(buf: bytes, start: int, context: object, contexts: dict[int, object]) -> object:
    """The look-back's definition: every earlier line, parsed, up to LOOKBACK_LINES back."""
    from faultline.lines.normalize import normalize_line
    from faultline.lines.prefixes import parse_line

    end = start - 1
    for _ in range(lookback.LOOKBACK_LINES):
        if end <= 0:
            return None
        line_start = buf.rfind(b"\n", 0, end) + 1
        if line_start not in contexts:
            contexts[line_start] = parse_line(normalize_line(buf[line_start:end], 2000))[0]
        earlier: Any = contexts[line_start]
        if earlier.time is not None and not earlier.time.uptime and lookback._same_writer(earlier, context):  # type: ignore[arg-type]
            return earlier.time
        end = line_start - 1
    return None


def test_lookback_shortcuts_give_the_answer_of_parsing_every_line() -> None:
    """The memo of earlier look-backs (one per writer) and the skipped parse of lines without a clock time are
    shortcuts only: every answer equals a walk that parses every line."""
    from faultline.lines.normalize import normalize_line
    from faultline.lines.prefixes import parse_line

    for seed in range(4):
        buf = _random_combined_log(seed)
        parsed: dict[int, object] = {}
        previous: dict[object, object] = {}
        contexts: dict[int, object] = {}
        start, line_no, found = 0, 1, 0
        while start < len(buf):
            end = buf.index(b"\n", start)
            context, _ = parse_line(normalize_line(buf[start:end], 2000))
            if context.time is None:  # the scanner looks back only from unstamped lines
                answer = lookback.lookback_time(buf, start, line_no, context, parsed,  # type: ignore[arg-type]
                                                       previous)  # type: ignore[arg-type]
                assert answer == _full_walk(buf, start, context, contexts), (seed, line_no, buf[start:end])
                found += answer is not None
            start, line_no = end + 1, line_no + 1
        assert found > 100  # the test exercised look-backs that found a time


def test_text_is_read_as_its_utf8_bytes_a_piece_at_a_time(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import random

    monkeypatch.setattr(inputs._TextStream, "PIECE_CHARS", 7)
    rng = random.Random(3)
    alphabet = ["a", "\n", "é", "🙂", "混", "\udc80", "\udcff", " "]
    for _ in range(200):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(60)))
        stream = inputs.Source.from_text(text).open()
        out = bytearray()
        while True:
            target = bytearray(rng.choice([1, 2, 5, 13, 64]))
            count = stream.readinto(memoryview(target))
            if not count:
                break
            out += target[:count]
        assert bytes(out) == text.encode("utf-8", errors="surrogateescape")


def test_a_lone_surrogate_that_no_byte_explains_does_not_fail_the_diagnosis(engine: Engine) -> None:
    diagnosis = engine.diagnose_text("step 1 \ud83d broken emoji\n[rank2]: torch.OutOfMemoryError: CUDA out of memory.\n")
    assert diagnosis.initiating_rank == 2


def test_newlines_counted_in_pieces_equal_one_count() -> None:
    import random

    rng = random.Random(5)
    buf = bytearray(rng.choice(b"ab\n") for _ in range(3 * chunks._COUNT_PIECE_BYTES + 17))
    for start, end in [(0, len(buf)), (1, len(buf) - 1), (5, 5), (100, chunks._COUNT_PIECE_BYTES + 3),
                       (chunks._COUNT_PIECE_BYTES - 1, 2 * chunks._COUNT_PIECE_BYTES + 1)]:
        assert chunks.count_newlines(buf, start, end) == buf.count(b"\n", start, end), (start, end)


# The record prefixes of glog (src/logging.cc LogMessage::Init: severity letter, MMDD, time, thread id, file:line])
# and of TensorFlow's tsl logging (tsl/platform/default/logging.cc: "%s.%06d: %c %s:%d] ").
GLOG_ERROR = b"E1102 21:14:35.939002  2183 fleet_wrapper.cc:353] fleet pull sparse did not complete, status[-1]"
TSL_ERROR = (b"2024-07-29 17:14:59.920189: E external/xla/xla/service/rendezvous.cc:38] This thread has been "
             b"waiting for `initialize clique for rank 6` for 10 seconds and may be stuck")


def test_an_error_level_record_without_an_error_word_is_failure_evidence(engine: Engine, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """At a line's start, after a newline, at a chunk's start: never "no failure", and the line is a suspect."""
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 64)
    for text, line in ((GLOG_ERROR, 1), (TSL_ERROR, 1), (b"I1102 21:14:35.0 1 a.cc:1] ok\n" * 9 + GLOG_ERROR, 10),
                       (b"step 1 loss 2.1\n" * 7 + TSL_ERROR, 8)):
        diagnosis = engine.diagnose_text(text, "run.log")
        assert diagnosis.verdict is Verdict.UNKNOWN
        assert [s.line for s in diagnosis.suspicious] == [line]
        assert "error-level record" in diagnosis.suspicious[0].reason


def test_a_level_letter_on_a_line_of_another_level_is_not_suspicious(engine: Engine) -> None:
    for text in (b"W1102 21:14:35.889020  1432 input_messenger.cpp:213] E1 retry",
                 b"I1102 21:14:35.889020  1432 a.cc:1] epoch: E 12 done", b"E1 scored 0.93\nnote: E flat"):
        assert engine.diagnose_text(text, "run.log").suspicious == []


def test_a_stream_relogged_at_error_level_keeps_the_level_inside() -> None:
    """A logger that redirects stderr ("%(asctime)s | %(levelname)s | %(name)s | %(message)s") logs uvicorn's
    INFO lines at ERROR: not a failure. What it re-logs without a level of its own stays suspicious."""
    engine = Engine.load(jobs=1)
    started = (b"2023-09-03 13:06:49 | ERROR | stderr | INFO:     Started server process [76682]\n"
               b"2023-09-03 13:06:49 | ERROR | stderr | INFO:     Uvicorn running on http://0.0.0.0:10000\n")
    assert engine.diagnose_text(started, "controller.log").verdict is Verdict.NO_FAILURE
    crashed = started + b"2023-09-03 13:07:02 | ERROR | stderr | RuntimeError: the worker stopped answering\n"
    diagnosis = engine.diagnose_text(crashed, "controller.log")
    assert diagnosis.verdict is Verdict.UNKNOWN and diagnosis.suspicious[0].line == 3


def test_where_an_error_was_raised_ranks_below_what_it_says() -> None:
    """c10::Error's stack head and frames, and a traceback's source lines, are listed after the statement."""
    engine = Engine.load(jobs=1)
    # torch: c10/util/Exception.cpp (the "Exception raised from" head, "frame #N:" lines under it)
    text = (b"Exception raised from recvBytes at /pytorch/torch/csrc/distributed/c10d/Utils.hpp:676 (most recent "
            b"call first):\n"
            b"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f87a2d785e8 in libc10.so)\n"
            b"E1102 21:14:35.939002  2183 fleet_wrapper.cc:353] fleet pull sparse failed, status[-1]\n")
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.suspicious and diagnosis.suspicious[0].line == 3


def test_a_frame_line_behind_a_prefix_is_not_suspicious() -> None:
    """vLLM's logger re-logs a traceback line by line behind "ERROR <time> [engine.py:458] ": its frame and caret
    lines are not suspects, as they are not without the prefix."""
    engine = Engine.load(jobs=1)
    prefix = "ERROR 09-01 02:20:44 [engine.py:458] "
    text = "".join(prefix + line + "\n" for line in (
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.12/dist-packages/vllm/engine/multiprocessing/engine.py", line 446, in run_mp_engine',
        "    engine = MQLLMEngine.from_vllm_config(",
        "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"))  # cut there: no exception line, so unknown
    lines = {s.line for s in engine.diagnose_text(text, "server.log").suspicious}
    assert lines and not lines & {2, 4}


def test_progress_before_a_short_last_chunk_still_counts(engine: Engine) -> None:
    """Text is scanned with its length in characters as the size hint; in UTF-8 it is longer, so the stream's last
    chunk holds only its final bytes. The progress line just before them is still near the end of the stream, and
    the verdict is the same whichever way the text is given. Progress long before the end still does not count."""
    bar = "Epoch 0:   1%|▋▋▋▋▋▋▋▋▋▋| {n}/4943 [00:11<21:31,  3.79it/s, loss=7.11]"
    api = "wandb: ERROR Error while calling W&B API: internal database error (<Response [500]>)"
    text = "\n".join([bar.format(n=44), api, bar.format(n=160), api]) + "\n"
    as_text, as_bytes = engine.diagnose_text(text, "train.log"), engine.diagnose_text(text.encode(), "train.log")
    assert as_text.files[0].progress_line == as_bytes.files[0].progress_line == 3
    assert as_text.verdict is as_bytes.verdict is Verdict.NO_FAILURE
    far = bar.format(n=44) + "\n" + ("x" * 100 + "\n") * 50 + "RuntimeError: boom\n"
    assert engine.diagnose_text(far, "train.log").files[0].progress_line == 0
