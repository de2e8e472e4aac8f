"""An independent secret corpus for masking: gitleaks's rule test cases placed in the lines ML logs have.

``gitleaks_cases.json`` (written by ``extract_gitleaks.py``; source and version at its top) holds, per
gitleaks rule, true-positive secrets and false-positive strings. Here every true positive is written into
the contexts a training log prints secrets in (``CONTEXTS``: an environment dump, ``export``, argparse's
``Namespace(...)``, JSON and YAML configs, a URL's user-info, ``curl -H "Authorization: Bearer ..."`` and
``curl -u``, a W&B message, a traceback's source line, a ``[rank0]:`` line, a DeepSpeed launcher command,
an HTTP request dump). The variable name is the rule's id as an environment variable
(``gitlab-pat`` -> ``GITLAB_PAT_TOKEN``: a name without a secret word gets ``_TOKEN``, as nobody names a
secret variable ``GITLAB_RRT``), so the secret word sits anywhere in the name (``..._API_KEY_LONG_LIVED``).

A placed secret *leaks* when the output holds it, or any 8-character piece of it (as written in that
context: JSON-escaped in JSON...), other than pieces of its public vendor prefix (``glpat-``,
``sntrys_eyJpYXQiO``) or pieces the rest of the line holds anyway.

``NORMAL_LINES`` are ordinary training-log lines (NCCL ids, GPU UUIDs, hashes, checkpoints, metrics) that
masking must leave unchanged. Run this file to print the measured shares (the figures in SECURITY.md)::

    .venv/bin/python tests/secrets/gitleaks_corpus.py
"""

from __future__ import annotations

import difflib
import json
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from lsprotocol.types import PositionEncodingKind
from pygls.workspace.position_codec import PositionCodec

from faultline.diagnosis import Diagnosis
from faultline.lsp.diagnostics import DiagnosticOptions, build_diagnostics
from faultline.lsp.hover import render_event_plain
from faultline.lsp.lines import LineIndex
from faultline.lsp.settings import Severities
from faultline.masking import MASK, mask_secrets
from faultline.render import render_html, render_json, render_markdown, render_text
from faultline.render.json_out import diagnosis_json
from faultline.render.markdown import render_event_markdown

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # run as a script: tests/ on the path, as pytest puts it
    sys.path.insert(0, str(HERE.parent))
from hardening.secrets_corpus import engine_strings  # noqa: E402  (the engine objects' strings, shared)

CASES_FILE = HERE / "gitleaks_cases.json"
PIECE = 8  # a leaked piece this long is a leak

SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "PWD", "CREDENTIAL", "CREDENTIALS", "CREDS",
                "AUTH", "APIKEY")


def load() -> dict[str, object]:
    data: dict[str, object] = json.loads(CASES_FILE.read_text(encoding="utf-8"))
    return data


def variable_name(rule_id: str) -> str:
    name = re.sub(r"[^A-Za-z0-9]+", "_", rule_id).upper().strip("_")
    if name[0].isdigit():
        name = "APP_" + name
    if not set(name.split("_")) & set(SECRET_WORDS):
        name += "_TOKEN"
    return name


@dataclass(frozen=True)
class Case:
    rule: str
    secret: str
    prefix: str  # the rule's public vendor prefix (may stay readable)
    public_regex: str  # a regex for the public start of each secret (a webhook URL's host), or ""
    unique: bool  # the rule finds the secret by its shape alone (a vendor prefix), not by a nearby name
    name: str  # the variable name the contexts use

    @property
    def multiline(self) -> bool:
        return "\n" in self.secret


def cases(data: dict[str, object] | None = None) -> list[Case]:
    data = data if data is not None else load()
    rules = data["rules"]
    assert isinstance(rules, dict)
    out = []
    for rule_id, rule in rules.items():
        for secret in rule["tps"]:
            out.append(Case(rule_id, secret, rule["public_prefix"], rule.get("public_regex", ""), rule["unique"],
                            variable_name(rule_id)))
    return out


def false_positives(data: dict[str, object] | None = None) -> list[tuple[str, str]]:
    data = data if data is not None else load()
    rules = data["rules"]
    assert isinstance(rules, dict)
    return [(rule_id, fp) for rule_id, rule in rules.items() for fp in rule["fps"]]


# --------------------------------------------------------------------------------------------------------
# Contexts: each writes a case into a log line and says how the secret is written there (or None when the
# context does not fit the secret, e.g. a URL's user-info for a secret with '/').

Context = Callable[[Case], "tuple[str, str] | None"]
_USERINFO_OK = re.compile(r"[A-Za-z0-9._~!$&'()*+,;=%-]+")
_SHELL_WORD = re.compile(r"[A-Za-z0-9._~+/=:@%,{}^!#-]+")


def _shell_quoted(value: str) -> str | None:
    if _SHELL_WORD.fullmatch(value):
        return value
    if '"' not in value and "$" not in value and "`" not in value and "\\" not in value:
        return f'"{value}"'
    if "'" not in value:
        return f"'{value}'"
    return None


def _env(case: Case) -> tuple[str, str] | None:
    return None if re.search(r"\s", case.secret) else (f"{case.name}={case.secret}", case.secret)


def _export(case: Case) -> tuple[str, str] | None:
    s = case.secret
    if re.search(r"\s", s):
        return None
    if '"' not in s and "$" not in s and "`" not in s and "\\" not in s:
        return f'+ export {case.name}="{s}"', s
    return (f"+ export {case.name}='{s}'", s) if "'" not in s else None


def _namespace(case: Case) -> tuple[str, str]:
    shown = repr(case.secret)
    return (f"Namespace(batch_size=32, bf16=True, gradient_accumulation_steps=4, learning_rate=0.0003, "
            f"{case.name.lower()}={shown}, output_dir='/mnt/ckpt/llama-8b-sft', seed=42)", shown[1:-1])


def _json(case: Case) -> tuple[str, str]:
    line = json.dumps({"model_name_or_path": "meta-llama/Llama-3.1-8B", "per_device_train_batch_size": 8,
                       case.name.lower(): case.secret, "num_train_epochs": 3})
    return line, json.dumps(case.secret)[1:-1]


def _yaml(case: Case) -> tuple[str, str] | None:
    s = case.secret
    if "\n" in s:
        return None
    if re.match(r"[-?:,\[\]{}#&*!|>'\"%@`]", s) or ": " in s or " #" in s or s != s.strip():
        shown = "'" + s.replace("'", "''") + "'"
        return f"  {case.name.lower()}: {shown}", shown[1:-1]
    return f"  {case.name.lower()}: {s}", s


def _url_userinfo(case: Case) -> tuple[str, str] | None:
    if not _USERINFO_OK.fullmatch(case.secret):
        return None
    return (f"Looking in indexes: https://pypi.org/simple, https://trainer:{case.secret}@pypi.internal.example.com"
            f"/simple", case.secret)


def _curl_bearer(case: Case) -> tuple[str, str] | None:
    if re.search(r"[\s\"\\$`]", case.secret):
        return None
    return (f'+ curl -sS -X POST -H "Authorization: Bearer {case.secret}" -H "Content-Type: application/json" '
            f"https://api.example.com/v1/runs", case.secret)


def _wandb(case: Case) -> tuple[str, str] | None:
    if re.search(r"\s", case.secret):
        return None
    return (f"wandb: ERROR Error while calling W&B API: permission denied for key={case.secret} "
            f"(<Response [403]>)", case.secret)


def _traceback(case: Case) -> tuple[str, str]:
    shown = repr(case.secret)
    return (f'    client = Client(base_url="https://api.example.com", {case.name.lower()}={shown}, timeout=30)',
            shown[1:-1])


def _rank_line(case: Case) -> tuple[str, str] | None:
    if "\n" in case.secret or "'" in case.secret:
        return None
    return (f"[rank0]: 2024-05-01 12:00:01,234 - trainer - INFO - using {case.name.lower()}='{case.secret}' "
            f"for the artifact store", case.secret)


def _launcher(case: Case) -> tuple[str, str] | None:
    word = _shell_quoted(case.secret)
    if word is None or case.secret.startswith("-") or "\n" in case.secret:
        return None
    flag = case.name.lower().replace("_", "-")
    return (f"[2024-05-01 12:00:00,123] [INFO] [launch.py:146:main] cmd = /usr/bin/python3 -u train.py "
            f"--deepspeed ds_config.json --{flag} {word} --bf16 --num_train_epochs 3", case.secret)


def _http_header(case: Case) -> tuple[str, str] | None:
    if re.search(r"[\s'\\]", case.secret):
        return None
    return (f"send: b'POST /api/v1/runs HTTP/1.1\\r\\nHost: api.example.com\\r\\nX-Api-Key: {case.secret}\\r\\n"
            f"Content-Type: application/json\\r\\nContent-Length: 512\\r\\n\\r\\n'", case.secret)


def _curl_user(case: Case) -> tuple[str, str] | None:
    word = _shell_quoted(case.secret)
    if word is None or "\n" in case.secret:
        return None
    return (f"+ curl -fsS -u trainer:{word} -T model-00001-of-00004.safetensors "
            f"https://artifacts.example.com/upload/", case.secret)


def _block(case: Case) -> tuple[str, str] | None:
    """A multi-line secret (a key block) printed as it is (``cat key.pem``, a config dump)."""
    return (case.secret, case.secret) if case.multiline else None


CONTEXTS: dict[str, Context] = {
    "env": _env, "export": _export, "namespace": _namespace, "json": _json, "yaml": _yaml,
    "url-userinfo": _url_userinfo, "curl-bearer": _curl_bearer, "wandb": _wandb, "traceback": _traceback,
    "rank0": _rank_line, "launcher": _launcher, "http-header": _http_header, "curl-user": _curl_user,
    "block": _block,
}


def bare(case: Case) -> tuple[str, str] | None:
    """A vendor-prefixed token alone in a message, with no name or header next to it (a harder context,
    measured separately: only rules that find their secret by shape are placed in it)."""
    if not case.unique or re.search(r"\s", case.secret):
        return None
    return f"[rank3]: ValueError: request rejected by the registry for {case.secret} (HTTP 401)", case.secret


@dataclass(frozen=True)
class Placed:
    case: Case
    context: str
    line: str
    shown: str  # the secret as written in the line

    def pieces(self) -> list[str]:
        """The 8-character windows of the secret as written, but for its public parts: the vendor prefix, a
        webhook's host, a key block's armour lines (``-----BEGIN RSA PRIVATE KEY-----``)."""
        shown, prefix = self.shown, self.case.prefix
        public = len(prefix) if prefix and shown.startswith(prefix) else 0
        if self.case.public_regex and (m := re.match(self.case.public_regex, shown)):
            public = max(public, m.end())
        rest = self.line.replace(shown, "\0")
        if len(shown) <= PIECE:
            return [shown]
        secret = re.sub(r"-----(?:BEGIN|END) [A-Z0-9 ]+-----", lambda m: "\0" * len(m.group()), shown)
        secret = "\0" * public + secret[public:]
        return [piece for i in range(len(shown) - PIECE + 1)
                if "\0" not in (piece := secret[i:i + PIECE]) and piece not in rest]

    def leaks_in(self, output: str) -> bool:
        return any(piece in output for piece in self.pieces())


def placed(case: Case, contexts: dict[str, Context] | None = None) -> list[Placed]:
    out = []
    for name, context in (contexts if contexts is not None else CONTEXTS).items():
        written = context(case)
        if written is not None:
            out.append(Placed(case, name, *written))
    return out


def all_placed(corpus: Iterable[Case] | None = None) -> list[Placed]:
    return [p for case in (corpus if corpus is not None else cases()) for p in placed(case)]


def all_bare(corpus: Iterable[Case] | None = None) -> list[Placed]:
    return [p for case in (corpus if corpus is not None else cases()) for p in placed(case, {"bare": bare})]


# Ordinary lines of training logs: masking must return each unchanged.
NORMAL_LINES: list[str] = [
    "gpu-st-p4d-24xlarge-1:48213:48301 [3] NCCL INFO ncclCommInitRank comm 0x55d1c6b0 rank 3 nranks 16 cudaDev 3 "
    "nvmlDev 3 busId 0000:b3:00.0 commId 0x7d5a1e2f3c4b5a69 localSize 8 - Init COMPLETE",
    "gpu-node-07:48213:48301 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[4] via P2P/CUMEM/read busId 0000:10:1c.0",
    "gpu-node-07:48213:48301 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB eth0:10.1.2.3<0>",
    "gpu-node-07:48213:48213 [0] NCCL INFO cudaDriverVersion 12040 NCCL version 2.21.5+cuda12.4",
    "[rank3]:[E1129 18:02:21.123456789 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=404464, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000)",
    "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-5f3a8c2e-1b4d-4e6f-9a0b-7c8d9e0f1a2b)",
    "GPU 7: NVIDIA A100-SXM4-80GB (UUID: GPU-0c1f6b2e-83d4-9a5b-7e6f-1a2b3c4d5e6f)",
    "CUDA_VISIBLE_DEVICES=GPU-5f3a8c2e-1b4d-4e6f-9a0b-7c8d9e0f1a2b,GPU-0c1f6b2e-83d4-9a5b-7e6f-1a2b3c4d5e6f",
    "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 (HEAD -> main, origin/main)",
    "PyTorch version: 2.5.1+cu124 (git_version a8d6afb511a69687bbb2b7e88a3cf67917e1697e)",
    "transformers version 4.46.3, git sha 9d5f9b7ab0c2e6f1f9c2d4b5a6e7f8091a2b3c4d",
    "wandb: Syncing run glorious-sun-42 to https://wandb.ai/mlteam/llama-sft/runs/3k9z2xq1",
    "wandb: Run data is saved locally in /root/wandb/run-20240512_101010-3k9z2xq1",
    "wandb: Find logs at: ./wandb/run-20240512_101010-3k9z2xq1/logs",
    "Saving model checkpoint to /mnt/ckpt/llama-8b-sft/checkpoint-1500",
    "[2024-05-01 12:30:11,402] [INFO] [engine.py:3512:_save_zero_checkpoint] zero checkpoint saved "
    "/mnt/ckpt/run7/global_step1500/zero_pp_rank_0_mp_rank_00_optim_states.pt",
    "Loading checkpoint shards: 100%|##########| 4/4 [00:12<00:03,  3.02s/it] model-00004-of-00004.safetensors",
    "{'loss': 1.8342, 'grad_norm': 0.9731, 'learning_rate': 2.9e-05, 'epoch': 0.42, 'step': 1500}",
    "[default3]:[rank3]: step 631 | loss 2.4031 | lr 2.9e-4 | grad_norm 0.98 | 1.92 s/step | 34,012 tokens/s",
    "Epoch 3/10:  42%|####2     | 2100/5000 [12:01<16:35,  2.91it/s, loss=0.412, acc=0.883]",
    "Downloading (…)model-00001-of-00004.safetensors: 100%|██████████| 4.98G/4.98G [00:41<00:00, 121MB/s]",
    "Collecting torch==2.5.1 Downloading torch-2.5.1-cp311-cp311-manylinux1_x86_64.whl (906.4 MB) "
    "sha256=b3b7d5f1e0c2a4b6d8f0e2c4a6b8d0f2e4c6a8b0d2f4e6c8a0b2d4f6e8c0a2b4",
    "Created wheel for flash-attn: filename=flash_attn-2.6.3-cp311-cp311-linux_x86_64.whl size=187219571 "
    "sha256=4a1c7e3f9b2d6a8c0e5f1b3d7a9c2e4f6b8d0a1c3e5f7b9d2a4c6e8f0b1d3a5c7",
    "huggingface_hub: Downloading blob sha256:0e9e39f249a16976918f6564b8830bc894c89659a8d6afb511a69687bbb2b7e8",
    "OSError: /home/user/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B/snapshots/"
    "0e9e39f249a16976918f6564b8830bc894c89659/model-00001-of-00004.safetensors: No such file",
    "FileNotFoundError: [Errno 2] No such file or directory: "
    "'/tmp/tmp3c1f9a2e-5b7d-4e8f-a0b1-c2d3e4f5a6b7/rank_0/optimizer.pt'",
    "TORCHELASTIC_RUN_ID=7d1e4c2a-9b3f-4e5d-8c6a-0f1e2d3c4b5a torchrun --nnodes=2 --nproc_per_node=8",
    "run_id: 9f3c1e7a2b4d4c6e8f0a1b3c5d7e9f10  experiment_id: 412  mlflow.source.git.commit: "
    "3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "MASTER_ADDR=10.1.2.3 MASTER_PORT=29500 WORLD_SIZE=16 RANK=3 LOCAL_RANK=3 NODE_RANK=0",
    "SLURM_JOB_ID=4410923 SLURM_JOB_NODELIST=gpu-st-[001-004] SLURM_STEP_ID=0",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
    "79.10 GiB of which 1.21 GiB is free. Process 48213 has 77.88 GiB memory in use.",
    "RuntimeError: CUDA error: an illegal memory access was encountered at 0x7f3a2c000000",
    "NVRM: Xid (PCI:0000:b3:00): 79, pid=48213, name=python, GPU has fallen off the bus.",
    "size mismatch for model.embed_tokens.weight: copying a param with shape torch.Size([128256, 4096]) from "
    "checkpoint, the shape in current model is torch.Size([32000, 4096]).",
    "tokenizer_config: eos_token: <|eot_id|>, pad_token_id=128001, bos_token_id=128000, max_new_tokens=512",
    "generated token=128009 after 512 steps, tokens/s: 34012.5, num_tokens=1048576",
    "KeyError: 'model.layers.0.self_attn.q_proj.weight'",
    "docker: pulling image nvcr.io/nvidia/pytorch:24.05-py3@sha256:9d5f9b7ab0c2e6f1f9c2d4b5a6e7f8091a2b3c4d"
    "5e6f708192a3b4c5d6e7f8091a2b",
    "Job 7a3d2c1b-4e5f-4a6b-8c7d-9e0f1a2b3c4d submitted to queue gpu-a100 (priority 50)",
    "gs://ml-ckpt-bucket/llama-8b/2024-05-01T12-00-00Z/step_000500/model.safetensors uploaded (15.2 GB)",
    "s3://ml-artifacts/runs/3k9z2xq1/checkpoint-1500/pytorch_model.bin copied in 41.2s",
    "INFO:root:Dataset md5 9e107d9d372bb6826bd81d3542a419d6 matches the manifest",
    "[W socket.cpp:464] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already "
    "in use).",
    "Using /root/.cache/torch_extensions/py311_cu124 as PyTorch extensions root...",
    "secret_name: hf-token  secretKeyRef: hf-token  key_length=32  num_key_value_heads=8",
    "GOOGLE_APPLICATION_CREDENTIALS=/var/secrets/google/key.json HF_HOME=/mnt/hf_cache",
    "use_auth_token=True, token=None, trust_remote_code=False, revision=main",
    "[rank2]: torch.distributed.DistStoreError: Timed out initializing process group in store based barrier on "
    "rank 2, for key: store_based_barrier_key:1 (world_size=4, num_workers_joined=3, timeout=0:30:00)",
    "[__fx_graph_cache] fx graph cache hit for key fk3dqnxgs4ubw6jrb3lfw5t2ycbyqbb5xfmlw3nznvqq2rixvxd2",
    "torch._dynamo: cache_key=a3f9c2e1b7d64e0f8a2b5c7d9e1f3a5b recompiling frame forward (reason: guard failure)",
    "Triton autotune: key=(4096, 4096, 'torch.bfloat16') best config BLOCK_M: 128, BLOCK_N: 256, num_warps: 8",
    "DataCollator: text_key: input_ids, label_key: labels, pad_to_multiple_of=8, max_length=4096",
    "tokenizer.pad_token = tokenizer.eos_token  # set pad_token to eos_token (pad_token_id=128009)",
    "[rank0]: RuntimeError: Missing key: layers.0.attention.wq.weight.",  # torch.distributed.checkpoint state_dict.py
]


# --------------------------------------------------------------------------------------------------------
# End to end: the secret on the line that becomes the root cause of a failure log, and every surface that
# shows a diagnosis (the engine's objects, the four reports, the language server).

_ROOTS = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
          "79.10 GiB of which 1.21 GiB is free. ",
          "RuntimeError: failed to upload checkpoint-1500 to the artifact store: ")
ROOT_LINE = 6


def failure_log(placed: Placed, index: int) -> str:
    """A two-rank failure whose root cause (line 6) carries the placed secret."""
    lines = ["[rank0]: step 100 | loss 2.314 | lr 3.0e-04 | grad_norm 0.98",
             "[rank1]: step 100 | loss 2.298 | lr 3.0e-04 | grad_norm 1.01",
             "[rank0]: Traceback (most recent call last):",
             '[rank0]:   File "/workspace/train.py", line 211, in <module>',
             "[rank0]:     trainer.train()",
             f"[rank0]: {_ROOTS[index % 2]}{placed.line}",
             "[rank1]:[E1129 18:12:20.100000000 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective "
             "operation timeout: WorkNCCL(SeqNum=404464, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
             "Timeout(ms)=600000) ran for 600025 milliseconds before timing out."]
    return "\n".join(lines) + "\n"


def end_to_end_cases(corpus: list[Case] | None = None) -> list[Placed]:
    """Every single-line true positive once, the contexts taken in turn (each context about 40 times)."""
    names = list(CONTEXTS)
    out = []
    for index, case in enumerate(c for c in (corpus if corpus is not None else cases()) if not c.multiline):
        for step in range(len(names)):
            context = names[(index + step) % len(names)]
            written = CONTEXTS[context](case)
            if written is not None:
                out.append(Placed(case, context, *written))
                break
    return out


def language_server(diagnosis: Diagnosis, text: str) -> str:
    """Diagnostics, hovers (Markdown and plain) and a command's answer, as the server builds them."""
    diagnostics = build_diagnostics(diagnosis, LineIndex.build(text), "file:///run.log",
                                    PositionCodec(PositionEncodingKind.Utf16), DiagnosticOptions(Severities()))
    parts = [d.message for d in diagnostics]
    parts += [r.message for d in diagnostics for r in d.related_information or []]
    for event in diagnosis.events:
        parts += [render_event_markdown(event, diagnosis), render_event_plain(event, diagnosis)]
    parts.append(json.dumps(diagnosis_json(diagnosis), ensure_ascii=False))
    return "\n".join(parts)


SURFACES: dict[str, Callable[[Diagnosis, str], str]] = {
    "engine objects": lambda d, _text: engine_strings(d),
    "render_text": lambda d, _text: render_text(d, color=True),
    "render_json": lambda d, _text: render_json(d),
    "render_markdown": lambda d, _text: render_markdown(d),
    "render_html": lambda d, _text: render_html(d),
    "language server": language_server,
}


def cli_cases(per_context: int = 4) -> list[Placed]:
    """A few end-to-end cases of each context, spread over the rules (the CLI renders with the functions
    measured above, and each run costs a process's start-up work)."""
    by_context: dict[str, list[Placed]] = {}
    for placed in end_to_end_cases():
        by_context.setdefault(placed.context, []).append(placed)
    return [p for group in by_context.values() for p in group[::max(1, len(group) // per_context)][:per_context]]


# --------------------------------------------------------------------------------------------------------
# False positives: a gitleaks false positive may be masked only where the text is a credential by context.

# A masked span of a gitleaks false positive is accepted only where the text is a credential by its context.
_SLOT_BEFORE = re.compile(
    r"(?i)(?:token|secret|passw|pwd|credential|creds|key|auth|pass|sig|signature)[\w.\-]*[\"']?[^\S\n]*"
    r"(?:=>|:=|\?=|=|:)?[^\S\n]*[\"']?$"  # a secret-named value: name=, "name": ", --name
    r"|(?i:bearer|basic|token)[^\S\n]+$"  # an auth header's value
    r"|(?:-u|--user)(?:=|[^\S\n]+)[\"']?[^\s:]*:[\"']?$|://[^\s/@:]*:$")  # curl -u user:..., a URL's password
_AWS_PREFIXES = ("AKIA", "ASIA", "ABIA", "ACCA", "A3T")


def public_prefixes() -> tuple[str, ...]:
    rules = load()["rules"]
    assert isinstance(rules, dict)
    return (*_AWS_PREFIXES, *sorted({r["public_prefix"] for r in rules.values() if len(r["public_prefix"]) >= 3}))


def masked_spans(original: str, masked: str) -> list[tuple[int, int]]:
    """Where ``original`` was masked: the text between the parts of ``masked`` that ``****`` separates."""
    parts = masked.split(MASK)
    found = re.fullmatch("(.+?)".join(map(re.escape, parts)), original, re.DOTALL)
    if found is not None:
        return [found.span(i) for i in range(1, len(parts))]
    matcher = difflib.SequenceMatcher(None, original, masked, autojunk=False)  # masks that ate line breaks
    return [(a1, a2) for op, a1, a2, _b1, _b2 in matcher.get_opcodes() if op != "equal" and a2 > a1]


def fp_verdict(fp: str, prefixes: tuple[str, ...], mask: Callable[[str], str] = mask_secrets,
               ) -> tuple[str, list[str]]:
    """("unchanged" | "credential context" | "false positive", the spans masked outside a credential context)."""
    masked = mask(fp)
    if masked == fp:
        return "unchanged", []
    bad = []
    for start, end in masked_spans(fp, masked):
        span, before = fp[start:end], fp[max(0, start - 120):start]
        line_start = fp.rfind("\n", 0, start) + 1
        line_end = fp.find("\n", end) if fp.find("\n", end) != -1 else len(fp)
        if (_SLOT_BEFORE.search(before) or span.startswith(prefixes) or fp[line_start:line_end].strip() == span.strip()
                or re.search(r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----[^-]*$", fp[:start])
                or fp[max(0, start - 8):start].endswith(tuple(prefixes))):
            continue
        bad.append(f"{before[-40:]!r}[{span!r}]")
    return ("false positive" if bad else "credential context"), bad


# --------------------------------------------------------------------------------------------------------
# Measuring


@dataclass
class Share:
    masked: int = 0
    total: int = 0
    misses: list[Placed] | None = None

    def add(self, placed_case: Placed, leaked: bool) -> None:
        self.total += 1
        if leaked:
            self.misses = [*(self.misses or []), placed_case]
        else:
            self.masked += 1

    @property
    def share(self) -> float:
        return self.masked / self.total if self.total else 1.0

    def misses_by_rule(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for miss in self.misses or []:
            out.setdefault(miss.case.rule, []).append(miss.context)
        return out


def measure(mask: Callable[[str], str], placed_cases: Iterable[Placed]) -> Share:
    return measure_by_context(mask, placed_cases)[0]


def measure_by_context(mask: Callable[[str], str], placed_cases: Iterable[Placed]) -> tuple[Share, dict[str, Share]]:
    """The share masked over all placed cases, and per context (in the order the contexts first come)."""
    overall = Share()
    by_context: dict[str, Share] = {}
    for p in placed_cases:
        leaked = p.leaks_in(mask(p.line))
        overall.add(p, leaked)
        by_context.setdefault(p.context, Share()).add(p, leaked)
    return overall, by_context


def main(argv: list[str]) -> int:
    """Print the figures SECURITY.md states: the masked share per context and per output surface, the
    bare vendor tokens, the false positives. ``-v`` lists every changed false-positive string."""
    from faultline.engine import Engine

    data = load()
    corpus = cases(data)
    fps = false_positives(data)
    print(f"gitleaks {data['gitleaks_version']} ({data['gitleaks_commit']}): {len({c.rule for c in corpus})} rules, "
          f"{len(corpus)} true positives, {len(fps)} false-positive strings")
    placed_cases = all_placed(corpus)
    share, by_context = measure_by_context(mask_secrets, placed_cases)
    print(f"mask_secrets, {len(CONTEXTS)} contexts: {share.masked}/{share.total} = {share.share:.4f}")
    for name, s in by_context.items():
        print(f"  {name:14} {s.masked}/{s.total} = {s.share:.4f}")
    for rule, contexts in sorted(share.misses_by_rule().items()):
        print(f"  miss {rule}: {', '.join(contexts)}")
    bare_share = measure(mask_secrets, all_bare(corpus))
    print(f"vendor tokens alone on a line: {bare_share.masked}/{bare_share.total} = {bare_share.share:.4f}")
    for rule in sorted(bare_share.misses_by_rule()):
        print(f"  miss {rule}")
    engine = Engine.load()
    surfaces = {name: Share() for name in SURFACES}
    for index, p in enumerate(end_to_end_cases(corpus)):
        text = failure_log(p, index)
        diagnosis = engine.diagnose_text(text, "run.log")
        for name, surface in SURFACES.items():
            surfaces[name].add(p, p.leaks_in(surface(diagnosis, text)))
    for name, s in surfaces.items():
        print(f"end to end, {name:16} {s.masked}/{s.total} = {s.share:.4f}")
        for rule, contexts in sorted(s.misses_by_rule().items()):
            print(f"  miss {rule}: {', '.join(contexts)}")
    prefixes = public_prefixes()
    verdicts: dict[str, int] = {}
    for rule, fp in fps:
        verdict, bad = fp_verdict(fp, prefixes)
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
        if bad or (verdict != "unchanged" and "-v" in argv):
            print(f"  {verdict} {rule}: {fp[:100]!r} -> {mask_secrets(fp)[:100]!r} {bad}")
    print(f"gitleaks false positives: {verdicts}")
    normal = [line for line in NORMAL_LINES if mask_secrets(line) != line]
    print(f"normal lines changed: {len(normal)} of {len(NORMAL_LINES)}")
    for line in normal:
        print(f"  {line[:100]!r} -> {mask_secrets(line)[:100]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
