"""Unit tests of the language server's pure parts: line mapping, launch-script edits, settings and the
log-document heuristic."""

from __future__ import annotations

from pathlib import Path

from lsprotocol.types import DiagnosticSeverity

from faultline.library import EnvVar
from faultline.lsp.documents import document_name, is_log_document, looks_like_training_output, uri_path
from faultline.lsp.launch_script import find_launch_scripts, launcher_line, plan_env_edit, sets_variable
from faultline.lsp.lines import LineIndex
from faultline.lsp.settings import Settings

ENV = (EnvVar("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"), EnvVar("NCCL_DEBUG", "INFO"))


def test_line_index_without_carriage_returns_is_one_to_one() -> None:
    index = LineIndex.build("a\nbé\n\nlast")
    assert index.line_count == 4 and index.engine_first is None
    assert [index.line_text(n) for n in range(4)] == ["a", "bé", "", "last"]
    assert index.editor_line(2) == 1 and index.engine_line(1) == 2
    assert index.line_text(99) == "" and index.editor_line(99) == 3


def test_line_index_maps_progress_bar_rewrites_to_the_visible_segment() -> None:
    # engine lines (\n only): 1 = "10%\r20%\r", 2 = "boom", 3 = "x\r\n"; the editor also breaks at lone \r
    index = LineIndex.build("10%\r20%\r\nboom\nx\r\ny")
    assert [index.line_text(n) for n in range(index.line_count)] == ["10%", "20%", "boom", "x", "y"]
    assert index.editor_line(1) == 1  # the last non-empty segment, what a terminal shows
    assert index.editor_line(2) == 2 and index.engine_line(2) == 2
    assert index.engine_line(0) == 1 and index.engine_line(1) == 1
    assert index.editor_line(3) == 3 and index.editor_line(4) == 4


def test_launcher_line_follows_continuations_back() -> None:
    script = "#!/bin/bash\n# torchrun is started below\nexport A=1\nsrun -N2 \\\n  torchrun train.py\n"
    assert launcher_line(script) == 3
    assert launcher_line("python train.py\n") is None
    assert launcher_line("  python3 -u -m torch.distributed.run --nproc-per-node 8 train.py\n") == 0
    assert launcher_line("accelerate launch train.py\n") == 0
    assert launcher_line("echo torchrunner\n") is None


def test_sets_variable_ignores_comments_and_other_names() -> None:
    text = "# export NCCL_DEBUG=INFO\nexport MY_NCCL_DEBUG=1\nPYTORCH_CUDA_ALLOC_CONF=x torchrun t.py\n"
    assert not sets_variable(text, "NCCL_DEBUG")
    assert sets_variable(text, "PYTORCH_CUDA_ALLOC_CONF")
    assert sets_variable("export -n NCCL_DEBUG\n", "NCCL_DEBUG")


def test_env_edit_in_a_script_keeps_indentation_and_line_endings() -> None:
    script = "#!/bin/bash\r\nif true; then\r\n    export NCCL_DEBUG=WARN\r\n    deepspeed train.py\r\nfi\r\n"
    edit = plan_env_edit(Path("run.sh"), script, ENV, "faultline: memory/cuda-oom: fix")
    assert edit is not None
    assert edit.line == 3 and edit.already_set == ("NCCL_DEBUG",) and edit.added == ("PYTORCH_CUDA_ALLOC_CONF",)
    assert edit.text == ("    # faultline: memory/cuda-oom: fix\r\n"
                         "    export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\r\n")


def test_env_edit_quotes_values_for_the_shell_and_for_dotenv() -> None:
    odd = (EnvVar("NCCL_SOCKET_IFNAME", "^lo,docker0"), EnvVar("EXTRA", "a b"))
    script = plan_env_edit(Path("run.slurm"), "torchrun t.py\n", odd, "c")
    assert script is not None and "export NCCL_SOCKET_IFNAME='^lo,docker0'\nexport EXTRA='a b'\n" in script.text
    dotenv = plan_env_edit(Path(".env"), "A=1", odd, "c")
    assert dotenv is not None and dotenv.needs_leading_newline and dotenv.line == 1
    assert dotenv.text == '# c\nNCCL_SOCKET_IFNAME="^lo,docker0"\nEXTRA="a b"\n'
    assert plan_env_edit(Path("run.sh"), "python train.py\n", odd, "c") is None


def test_find_launch_scripts_prefers_scripts_near_the_log(tmp_path: Path) -> None:
    (tmp_path / "jobs" / "big").mkdir(parents=True)
    (tmp_path / "logs").mkdir()
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "run.sh").write_text("torchrun x.py\n")
    (tmp_path / "jobs" / "big" / "run.sbatch").write_text("#!/bin/bash\nsrun torchrun x.py\n")
    (tmp_path / "jobs" / "notes.sh").write_text("echo hello\n")
    (tmp_path / "launch.sh").write_text("torchrun x.py\n")
    (tmp_path / ".env").write_text("A=1\n")
    found = find_launch_scripts([tmp_path], near=tmp_path / "jobs" / "big" / "out.log")
    assert found == [tmp_path / "jobs" / "big" / "run.sbatch", tmp_path / "launch.sh", tmp_path / ".env"]
    assert find_launch_scripts([tmp_path], near=tmp_path / "logs" / "x.log")[0] == tmp_path / "launch.sh"


def test_settings_keep_good_values_and_report_bad_ones(tmp_path: Path) -> None:
    settings, problems = Settings().updated({"faultline": {
        "signatureFolders": ["sigs", "~/more"], "severity": {"rootCause": "warning", "collateral": "loud"},
        "debounceMs": -5, "maxDocumentBytes": 1000, "enabled": "yes", "logLevel": "trace"}}, tmp_path)
    assert settings.signature_folders == (str(tmp_path / "sigs"), str(Path("~/more").expanduser()))
    assert settings.severity.root_cause == DiagnosticSeverity.Warning
    assert settings.severity.collateral == DiagnosticSeverity.Warning  # unchanged: "loud" is refused
    assert settings.debounce_ms == 300 and settings.max_document_bytes == 1000 and settings.enabled
    assert settings.log_level == "debug"
    assert len(problems) == 3 and any(p.startswith("severity.collateral") for p in problems)
    assert Settings().updated(None) == (Settings(), [])
    assert Settings().updated([1])[1] == ["settings: expected an object, got list"]


def test_which_documents_are_logs() -> None:
    training = "[rank0]: step 10 loss 2.3\nNCCL INFO Channel 00\n"
    assert is_log_document("file:///a/b.bin", "log", "")
    assert is_log_document("file:///a/train.out", "plaintext", training)
    assert is_log_document("file:///a/train.log.1", "plaintext", training)
    assert not is_log_document("file:///a/notes.txt", "plaintext", "Error: out of coffee\n")
    assert not is_log_document("file:///a/train.py", "python", training)
    assert looks_like_training_output("Epoch 3 | loss 0.1\n")
    assert uri_path("file:///tmp/a%20b/c.log") == "/tmp/a b/c.log"
    assert uri_path("file:///C:/logs/x.log") == "C:/logs/x.log"
    assert document_name("untitled:Untitled-1") == "untitled:Untitled-1"


def test_client_units_equal_pygls_counting_in_every_encoding() -> None:
    from lsprotocol.types import PositionEncodingKind
    from pygls.workspace.position_codec import PositionCodec

    from faultline.lsp.lines import client_units

    samples = ["", "ascii only", "é · ü — ß", "emoji 🙂 and 𝔘nicode beyond the BMP 😀😀", "\udc80 lone surrogate",
               "混合 text 🚀 " * 50]
    for encoding in (PositionEncodingKind.Utf8, PositionEncodingKind.Utf16, PositionEncodingKind.Utf32, "weird"):
        codec = PositionCodec(encoding)
        for text in samples:
            assert client_units(text, codec) == codec.client_num_units(text), (encoding, text)


def test_diagnostics_serialized_in_the_worker_read_as_pygls_would_write_them() -> None:
    import json

    from lsprotocol import types
    from pygls.protocol import JsonRPCNotification, default_converter

    from faultline.lsp.log_documents import publish_body

    position = types.Position(3, 0)
    diagnostics = [types.Diagnostic(
        range=types.Range(position, types.Position(3, 12)), message="Root cause · rank 5 · é 🙂",
        severity=types.DiagnosticSeverity.Error, code="cuda-oom", source="faultline",
        code_description=types.CodeDescription(href="file:///sig.toml"),
        related_information=[types.DiagnosticRelatedInformation(
            types.Location("file:///a.log", types.Range(position, position)), "Collateral")]),
        types.Diagnostic(range=types.Range(types.Position(9, 1), types.Position(9, 4)),
                         message='"diagnostics": [] in a message', severity=types.DiagnosticSeverity.Warning),
        types.Diagnostic(range=types.Range(position, position), message="third")]
    uri = 'file:///logs/%22diagnostics%22:%20[]/a.log'
    converter = default_converter()  # type: ignore[no-untyped-call]
    for listed in (diagnostics, diagnostics[:1], []):
        for version in (7, None):
            notification = JsonRPCNotification(method=types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, jsonrpc="2.0",
                                               params=types.PublishDiagnosticsParams(uri, listed, version))
            pygls_writes = json.dumps(notification, default=converter.unstructure)
            body = publish_body(uri, version, listed)
            assert json.loads(body) == json.loads(pygls_writes)
            params = converter.unstructure(types.PublishDiagnosticsParams(uri, listed, version))
            assert body == json.dumps({"params": params, "method": types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
                                       "jsonrpc": "2.0"})  # the same text as one json.dumps of it all
            assert body.isascii()  # Content-Length counts characters


def test_an_edits_debounce_counts_from_its_arrival() -> None:
    """The wait before re-diagnosing an edit starts when its message reached the handlers: the time taken to
    apply it to the document (tens of milliseconds for a large one) is part of the wait."""
    import asyncio

    from faultline.lsp.server import create_server

    async def delays() -> list[float]:
        server = create_server()
        loop = asyncio.get_running_loop()
        uri = "file:///run.log"
        server.logs.opened(uri, "log", 1)
        debounce = server.settings.debounce_ms / 1000
        found = []
        for spent in (None, 0.1, debounce + 1):
            server.protocol.message_started = None if spent is None else loop.time() - spent
            server.logs.changed(uri, 2)
            timer = server.logs._docs[uri].timer
            assert timer is not None
            found.append(timer.when() - loop.time())
            timer.cancel()
        return found

    untimed, after_a_tenth, overdue = asyncio.run(delays())
    debounce = Settings().debounce_ms / 1000
    assert debounce - 0.02 < untimed <= debounce
    assert debounce - 0.12 < after_a_tenth <= debounce - 0.1
    assert overdue <= 0
