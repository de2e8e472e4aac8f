"""A corpus of secrets embedded in failure logs, for testing that none reaches any output.

Import it from any test (engine, CLI, language server)::

    from hardening.secrets_corpus import build_secret_log, find_leaks, secret_cases  # tests/ is on sys.path

    log = build_secret_log()            # one multi-rank failure log carrying every secret
    ...                                 # diagnose / render / serve it
    assert find_leaks(output) == []     # names the kinds whose secret (or a 12-character piece) leaked

Every secret is fake: generated at import from a seeded RNG in the vendor's documented shape (prefix,
length, alphabet), so that the repository holds no string a secret scanner would flag and every run sees
the same values. The lines around them copy the shape of the messages the named libraries raise (the
module that raises each is named in ``source``); they are synthetic, not captured.

``NON_SECRETS`` lists lines with what a diagnosis needs (commit hashes, tensor shapes, CUDA addresses,
NCCL ids, pids, ports, paths, tokenizer settings) that masking must leave exactly as they are.
"""

from __future__ import annotations

import base64
import random
import string
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from faultline.diagnosis import Diagnosis

MASK = "****"
_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_B64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "-_"


def _rand(seed: str, alphabet: str, length: int) -> str:
    rng = random.Random(f"faultline-secrets/{seed}")
    return "".join(rng.choice(alphabet) for _ in range(length))


def _mixed(seed: str, alphabet: str, length: int) -> str:
    """Random text that holds an upper-case letter, a lower-case letter and a digit (as real keys do)."""
    for attempt in range(100):
        value = _rand(f"{seed}/{attempt}", alphabet, length)
        if any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value):
            return value
    raise AssertionError("unreachable: 100 draws without mixed characters")


def _pem_body(seed: str, lines: int, width: int = 64) -> list[str]:
    raw = base64.b64encode(random.Random(seed).randbytes(lines * width * 3 // 4 - 7)).decode()
    return [raw[i:i + width] for i in range(0, len(raw), width)]


@dataclass(frozen=True)
class SecretCase:
    """One secret kind: the secret, a log line that carries it, and what must stay readable."""

    kind: str
    secret: str  # must never appear in any output, nor any 12-character piece of it
    line: str  # the message part of a log line (a rank prefix is added by build_secret_log)
    keep: tuple[str, ...]  # parts of the line a reader needs: they must survive masking unchanged
    source: str  # the library module whose message the line imitates

    def pieces(self, width: int = 12) -> list[str]:
        """Every ``width``-character window of the secret: a partial leak is a leak."""
        if len(self.secret) <= width:
            return [self.secret]
        return [self.secret[i:i + width] for i in range(len(self.secret) - width + 1)]


def secret_cases() -> list[SecretCase]:
    """The corpus: at least 25 kinds, each in the message of an exception a training job could raise."""
    hf = "hf_" + _mixed("hf", _ALNUM, 34)
    openai_legacy = "sk-" + _mixed("openai", _ALNUM, 48)
    openai_project = "sk-proj-" + _mixed("openai-proj", _URLSAFE, 124)
    anthropic = "sk-ant-api03-" + _mixed("anthropic", _URLSAFE, 93) + "AA"
    ghp = "ghp_" + _mixed("ghp", _ALNUM, 36)
    github_pat = "github_pat_" + _mixed("ghpat1", _ALNUM, 22) + "_" + _mixed("ghpat2", _ALNUM, 59)
    ghs = "ghs_" + _mixed("ghs", _ALNUM, 36)
    glpat = "glpat-" + _mixed("glpat", _URLSAFE, 20)
    slack = "xoxb-" + _rand("slack1", string.digits, 12) + "-" + _rand("slack2", string.digits, 13) + "-" \
        + _mixed("slack3", _ALNUM, 24)
    webhook = "T0" + _rand("wh1", string.ascii_uppercase + string.digits, 8) + "/B0" \
        + _rand("wh2", string.ascii_uppercase + string.digits, 8) + "/" + _mixed("wh3", _ALNUM, 24)
    akia = "AKIA" + _rand("akia", string.ascii_uppercase + "234567", 16)
    aws_secret = _mixed("aws-secret", _B64, 40)
    aws_session = "IQoJb3JpZ2luX2VjE" + _mixed("aws-session", _B64, 340)
    gcp_key_body = "\\n".join(_pem_body("gcp", 6))
    gcp_key_id = _rand("gcp-id", _HEX, 40)
    google_api = "AIza" + _mixed("google", _URLSAFE, 35)
    google_oauth = "ya29." + _mixed("ya29", _URLSAFE, 150)
    azure_account_key = _mixed("azure", _B64, 86) + "=="
    azure_sig = _mixed("azure-sas", _ALNUM, 40) + "%2B" + _mixed("azure-sas2", _ALNUM, 10) + "%3D"
    wandb = _rand("wandb", _HEX, 40)
    wandb_cli = _rand("wandb-cli", _HEX, 40)
    comet = _mixed("comet", _ALNUM, 25)
    neptune = base64.b64encode(('{"api_address":"https://app.neptune.ai","api_url":"https://app.neptune.ai",'
                                '"api_key":"' + _rand("neptune", _HEX, 36) + '"}').encode()).decode().rstrip("=")
    mlflow_token = _mixed("mlflow", _URLSAFE, 32)
    databricks = "dapi" + _rand("dapi", _HEX, 32)
    url_password = _mixed("url-password", _ALNUM + "!*", 18)
    header = base64.b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=").replace("+", "-")
    payload = base64.b64encode(('{"sub":"trainer","exp":1715000000,"jti":"' + _rand("jwt", _HEX, 16) + '"}')
                               .encode()).decode().rstrip("=").replace("+", "-").replace("/", "_")
    jwt = f"{header}.{payload}.{_mixed('jwt-sig', _URLSAFE, 43)}"
    bearer = _mixed("bearer", _URLSAFE + ".", 48)
    basic = base64.b64encode(f"svc-trainer:{_mixed('basic', _ALNUM, 14)}".encode()).decode()
    rsa_body = "".join(_pem_body("rsa", 5))
    ssh_body = "".join(_pem_body("ssh", 4, 70))
    db_password = _mixed("db-password", _ALNUM + "#!", 16)
    flag_password = _mixed("flag-password", _ALNUM, 14)
    netrc = _rand("netrc", _HEX, 40)
    pypi = "pypi-AgEIcHlwaS5vcmc" + _mixed("pypi", _URLSAFE, 150)
    sentry = _rand("sentry", _HEX, 32)
    kaggle = _rand("kaggle", _HEX, 32)
    client_secret = "GOCSPX-" + _mixed("gocspx", _URLSAFE, 28)
    commit = "3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39"
    return [
        SecretCase("huggingface", hf,
                   f"huggingface_hub.errors.HfHubHTTPError: 401 Client Error: Unauthorized for url: "
                   f"https://huggingface.co/api/models/meta-llama/Llama-3.1-8B/revision/main (Request ID: "
                   f"Root=1-6650a1b2-4c5d6e7f8a9b0c1d2e3f4a5b) with HF_TOKEN {hf}",
                   ("401 Client Error", "https://huggingface.co/api/models/meta-llama/Llama-3.1-8B"),
                   "huggingface_hub/utils/_http.py"),
        SecretCase("openai", openai_legacy,
                   f"openai.AuthenticationError: Error code: 401 - {{'error': {{'message': 'Incorrect API key "
                   f"provided: {openai_legacy}. You can find your API key at https://platform.openai.com/account/"
                   f"api-keys.', 'type': 'invalid_request_error', 'code': 'invalid_api_key'}}}}",
                   ("Incorrect API key provided", "'code': 'invalid_api_key'"), "openai/_client.py"),
        SecretCase("openai-project", openai_project,
                   f"ValueError: judge config rejected: {{'model': 'gpt-4o', 'api_key': '{openai_project}', "
                   f"'max_tokens': 512}}", ("'model': 'gpt-4o'", "'max_tokens': 512"), "evaluation harness config"),
        SecretCase("anthropic", anthropic,
                   f"anthropic.AuthenticationError: Error code: 401 - invalid x-api-key {anthropic}",
                   ("Error code: 401",), "anthropic/_client.py"),
        SecretCase("github-classic", ghp,
                   f"subprocess.CalledProcessError: Command '['git', 'clone', 'https://{ghp}@github.com/org/"
                   f"private-data.git', '/data/repo']' returned non-zero exit status 128.",
                   ("github.com/org/private-data.git", "returned non-zero exit status 128"), "subprocess.py"),
        SecretCase("github-fine-grained", github_pat,
                   f"RuntimeError: pip install failed: git+https://x-access-token:{github_pat}@github.com/org/"
                   f"kernels.git@{commit}", ("pip install failed", commit), "pip"),
        SecretCase("github-actions", ghs,
                   f"ConnectionError: token {ghs} rejected by https://api.github.com/repos/org/repo/actions/runs/"
                   f"9912 (HTTP 401)", ("HTTP 401", "actions/runs/9912"), "requests/adapters.py"),
        SecretCase("gitlab", glpat,
                   f"RuntimeError: failed to fetch https://gitlab.example.com/api/v4/projects/42/repository/files/"
                   f"manifest.json/raw?ref=main&private_token={glpat}", ("projects/42", "raw?ref=main"),
                   "python-gitlab"),
        SecretCase("slack-token", slack,
                   f"slack_sdk.errors.SlackApiError: The request to the Slack API failed. (url: https://slack.com/"
                   f"api/chat.postMessage) token {slack} The server responded with: {{'ok': False, 'error': "
                   f"'invalid_auth'}}", ("'error': 'invalid_auth'",), "slack_sdk/web/base_client.py"),
        SecretCase("slack-webhook", webhook,
                   f"requests.exceptions.HTTPError: 404 Client Error: Not Found for url: https://hooks.slack.com/"
                   f"services/{webhook}", ("404 Client Error: Not Found",), "requests/models.py"),
        SecretCase("aws-access-key-id", akia,
                   f"botocore.exceptions.ClientError: An error occurred (InvalidAccessKeyId) when calling the "
                   f"PutObject operation: The AWS Access Key Id you provided does not exist in our records. "
                   f"AWSAccessKeyId: {akia}", ("InvalidAccessKeyId", "PutObject"), "botocore/client.py"),
        SecretCase("aws-secret-access-key", aws_secret,
                   f"ValueError: cannot create S3 client from {{'aws_secret_access_key': '{aws_secret}', "
                   f"'region_name': 'us-east-1'}}", ("'region_name': 'us-east-1'",), "boto3/session.py"),
        SecretCase("aws-session-token", aws_session,
                   f"botocore.exceptions.ClientError: An error occurred (ExpiredToken) when calling the GetObject "
                   f"operation: The provided token has expired. AWS_SESSION_TOKEN={aws_session}",
                   ("(ExpiredToken)", "GetObject"), "botocore/client.py"),
        SecretCase("gcp-service-account-private-key", gcp_key_body,
                   f"json.decoder.JSONDecodeError: Expecting ',' delimiter: line 9 column 3 (char 2291) in "
                   f"{{\"type\": \"service_account\", \"project_id\": \"ml-prod-4412\", \"private_key\": "
                   f"\"-----BEGIN PRIVATE KEY-----\\n{gcp_key_body}\\n-----END PRIVATE KEY-----\\n\", "
                   f"\"client_email\": \"trainer@ml-prod-4412.iam.gserviceaccount.com\"",
                   ("\"project_id\": \"ml-prod-4412\"", "trainer@ml-prod-4412.iam.gserviceaccount.com"),
                   "json/decoder.py"),
        SecretCase("gcp-private-key-id", gcp_key_id,
                   f"google.auth.exceptions.MalformedError: Service account info was not in the expected format: "
                   f"{{\"type\": \"service_account\", \"private_key_id\": \"{gcp_key_id}\", \"token_uri\": "
                   f"\"https://oauth2.googleapis.com/token\"}}",
                   ("Service account info was not in the expected format", "https://oauth2.googleapis.com/token"),
                   "google/oauth2/service_account.py"),
        SecretCase("google-api-key", google_api,
                   f"RuntimeError: judge call failed: 403 API_KEY_SERVICE_BLOCKED for key {google_api} on "
                   f"generativelanguage.googleapis.com", ("403 API_KEY_SERVICE_BLOCKED",),
                   "google/api_core/exceptions.py (PermissionDenied, re-raised)"),
        SecretCase("google-oauth-token", google_oauth,
                   f"google.auth.exceptions.RefreshError: ('invalid_grant: Token has been expired or revoked.', "
                   f"{{'access_token': '{google_oauth}'}})", ("invalid_grant",), "google/oauth2/_client.py"),
        SecretCase("gcp-oauth-client-secret", client_secret,
                   f"oauthlib.oauth2.rfc6749.errors.InvalidClientError: (invalid_client) client_secret={client_secret}",
                   ("(invalid_client)",), "oauthlib/oauth2/rfc6749/errors.py"),
        SecretCase("azure-connection-string", azure_account_key,
                   f"azure.core.exceptions.ClientAuthenticationError: Server failed to authenticate the request. "
                   f"conn='DefaultEndpointsProtocol=https;AccountName=mlcheckpoints;AccountKey={azure_account_key};"
                   f"EndpointSuffix=core.windows.net'", ("AccountName=mlcheckpoints", "EndpointSuffix=core.windows.net"),
                   "azure/core/exceptions.py"),
        SecretCase("azure-sas", azure_sig,
                   f"azure.core.exceptions.ResourceNotFoundError: The specified blob does not exist. url: "
                   f"https://mlcheckpoints.blob.core.windows.net/ckpt/step_1000/model.pt?sv=2022-11-02&ss=b&srt=o"
                   f"&sp=r&se=2025-01-01T00:00:00Z&spr=https&sig={azure_sig}", ("step_1000/model.pt", "sv=2022-11-02"),
                   "azure/storage/blob/_download.py"),
        SecretCase("wandb-api-key", wandb,
                   f"wandb.errors.errors.AuthenticationError: API key must be 40 characters long; "
                   f"WANDB_API_KEY={wandb}", ("API key must be 40 characters long",), "wandb/sdk/lib/apikey.py"),
        SecretCase("wandb-login-command", wandb_cli,
                   f"subprocess.CalledProcessError: Command 'wandb login --relogin {wandb_cli}' returned non-zero "
                   f"exit status 1.", ("returned non-zero exit status 1",), "subprocess.py"),
        SecretCase("comet", comet,
                   f"comet_ml.exceptions.CometRestApiException: invalid COMET_API_KEY={comet} (REST API returned 401)",
                   ("REST API returned 401",), "comet_ml/exceptions.py"),
        SecretCase("neptune", neptune,
                   f"neptune.exceptions.NeptuneInvalidApiTokenException: The provided API token is invalid: "
                   f"api_token=\"{neptune}\"", ("The provided API token is invalid",), "neptune/exceptions.py"),
        SecretCase("mlflow-token-in-url", mlflow_token,
                   f"mlflow.exceptions.MlflowException: API request to https://mlflow.internal.example/api/2.0/"
                   f"mlflow/runs/create?access_token={mlflow_token} failed with exception HTTPSConnectionPool("
                   f"host='mlflow.internal.example', port=443): Max retries exceeded",
                   ("port=443", "Max retries exceeded"), "mlflow/utils/rest_utils.py"),
        SecretCase("databricks-token", databricks,
                   f"mlflow.exceptions.RestException: INVALID_PARAMETER_VALUE: Invalid access token {databricks}",
                   ("INVALID_PARAMETER_VALUE",), "mlflow/exceptions.py"),
        SecretCase("basic-auth-url", url_password,
                   f"requests.exceptions.ConnectionError: HTTPSConnectionPool(host='mlflow.example.com', port=443): "
                   f"Max retries exceeded with url: https://trainer:{url_password}@mlflow.example.com/api/2.0/"
                   f"mlflow/experiments/get-by-name", ("port=443", "mlflow.example.com/api/2.0"), "requests/adapters.py"),
        SecretCase("jwt", jwt, f"jwt.exceptions.ExpiredSignatureError: Signature has expired: {jwt}",
                   ("Signature has expired",), "jwt/api_jwt.py"),
        SecretCase("bearer-header", bearer,
                   f"requests.exceptions.HTTPError: 403 Client Error: Forbidden for url: https://registry.internal/"
                   f"v2/models/manifests/latest (headers: {{'Authorization': 'Bearer {bearer}', 'Accept': "
                   f"'application/json'}})", ("403 Client Error: Forbidden", "'Accept': 'application/json'"),
                   "requests/models.py"),
        SecretCase("basic-auth-header", basic,
                   f"urllib.error.HTTPError: HTTP Error 401: Unauthorized (sent Authorization: Basic {basic})",
                   ("HTTP Error 401: Unauthorized",), "urllib/request.py"),
        SecretCase("pem-private-key", rsa_body,
                   f"ValueError: Could not deserialize key data. The data may be in an incorrect format: "
                   f"-----BEGIN RSA PRIVATE KEY-----{rsa_body}-----END RSA PRIVATE KEY-----",
                   ("Could not deserialize key data", "-----END RSA PRIVATE KEY-----"),
                   "cryptography/hazmat/backends/openssl/backend.py"),
        SecretCase("ssh-private-key", ssh_body,
                   f"paramiko.ssh_exception.SSHException: not a valid OPENSSH private key file: "
                   f"-----BEGIN OPENSSH PRIVATE KEY-----{ssh_body}", ("not a valid OPENSSH private key file",),
                   "paramiko/pkey.py"),
        SecretCase("password-flag", db_password,
                   f"subprocess.CalledProcessError: Command '['mysql', '-h', 'db.internal', '--password={db_password}',"
                   f" '-e', 'SELECT 1']' returned non-zero exit status 1.",
                   ("'db.internal'", "returned non-zero exit status 1"), "subprocess.py"),
        SecretCase("password-flag-spaced", flag_password,
                   f"RuntimeError: launcher failed: torchrun --nnodes 2 train.py --db-password {flag_password} "
                   f"--epochs 3", ("--nnodes 2", "--epochs 3"), "launcher script"),
        SecretCase("netrc", netrc,
                   f"netrc.NetrcParseError: bad follower token 'machine api.wandb.ai login user password {netrc}' "
                   f"(/root/.netrc, line 3)", ("(/root/.netrc, line 3)",), "netrc.py"),
        SecretCase("pypi", pypi, f"RuntimeError: upload failed with TWINE_PASSWORD={pypi}", ("upload failed",),
                   "twine/commands/upload.py"),
        SecretCase("sentry-dsn", sentry,
                   f"RuntimeError: sentry_sdk.init failed: BadDsn: Unsupported scheme 'httpz' in https://{sentry}@"
                   f"o450123.ingest.sentry.io/5512345", ("o450123.ingest.sentry.io/5512345",),
                   "sentry_sdk/utils.py (BadDsn, re-raised)"),
        SecretCase("kaggle", kaggle,
                   f"OSError: Could not read kaggle.json: {{\"username\":\"mlteam\",\"key\":\"{kaggle}\"}}",
                   ("\"username\":\"mlteam\"",), "kaggle/api/kaggle_api_extended.py"),
    ]


# Lines whose every character a diagnosis may need: masking must return them unchanged.
NON_SECRETS: list[str] = [
    "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "PyTorch version: 2.5.1+cu124 (git_version a8d6afb511a69687bbb2b7e88a3cf67917e1697e)",
    "size mismatch for model.embed_tokens.weight: copying a param with shape torch.Size([128256, 4096]) from "
    "checkpoint, the shape in current model is torch.Size([32000, 4096]).",
    "RuntimeError: shape '[4, 2048, 32, 128]' is invalid for input of size 33554432",
    "RuntimeError: CUDA error: an illegal memory access was encountered at 0x7f3a2c000000",
    "NVRM: Xid (PCI:0000:10:1c): 31, pid=48213, name=python, Ch 00000018, intr 10000000. MMU Fault: ENGINE "
    "GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f3a_2c000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ",
    "gpu-node-07:48213:48301 [3] NCCL INFO comm 0x55d1c6b0 rank 3 nRanks 8 nNodes 1 localRanks 8 localRank 3 MNNVL 0",
    "gpu-node-07:48213:48301 [3] NCCL INFO ncclCommInitRank comm 0x55d1c6b0 rank 3 nranks 8 cudaDev 3 nvmlDev 3 "
    "busId 1b000 commId 0x7d5a1e2f3c4b5a69 - Init COMPLETE",
    "gpu-node-07:48213:48301 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.1.2.3<0>",
    "[W socket.cpp:464] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).",
    "MASTER_ADDR=10.1.2.3 MASTER_PORT=29500 WORLD_SIZE=16 RANK=3 LOCAL_RANK=3",
    "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 7/8 clients joined. "
    "(TCPStore host=10.1.2.3, port=29500)",
    "  exitcode  : -9 (pid: 48213)",
    "Sending process 48215 closing signal SIGTERM",
    "OSError: /home/user/.cache/huggingface/hub/models--meta-llama--Llama-3.1-8B/snapshots/"
    "0e9e39f249a16976918f6564b8830bc894c89659/model-00001-of-00004.safetensors: No such file",
    "FileNotFoundError: [Errno 2] No such file or directory: '/mnt/ckpt/run-7Gq2XkP9/step_000500/optimizer.pt'",
    "GOOGLE_APPLICATION_CREDENTIALS=/var/secrets/google/key.json",
    "tokenizer_file=/models/llama/tokenizer.json eos_token: <|endoftext|> pad_token_id=128001",
    "Setting `pad_token_id` to `eos_token_id`:128001 for open-end generation.",
    "Token indices sequence length is longer than the specified maximum sequence length for this model "
    "(131072 > 8192). Running this sequence through the model will result in indexing errors",
    "generated token=128009 after 512 steps, max_new_tokens=512, tokens/s: 34012.5",
    "KeyError: 'model.layers.0.self_attn.q_proj.weight'",
    "Missing key(s) in state_dict: \"module.fc.weight\", \"module.fc.bias\".",
    "wandb: Run data is saved locally in /root/wandb/run-20240512_101010-3k9z2xq1",
    "wandb: Currently logged in as: mlteam (use `wandb login --relogin` to force relogin)",
    "CUDA_VISIBLE_DEVICES=GPU-5f3a8c2e-1b4d-4e6f-9a0b-7c8d9e0f1a2b",
    "psycopg2.OperationalError: FATAL:  password authentication failed for user \"postgres\"",
    "Your token has been saved to /root/.cache/huggingface/token",
    "Login successful",
    "https://pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf",
    "rendezvous endpoint c10d://node01:29400 (tcp://10.1.2.3:29500, env://)",
    "[2024-03-12 02:29:19,487] [INFO] [launch.py:256:main] process 48213 spawned with command: ['/usr/bin/python', "
    "'-u', 'train.py', '--local_rank=0', '--deepspeed', '--deepspeed_config', 'ds_config.json']",
    "/data/Shards/Part0001/Train/ImageNet21k/ValidationSplit2024/Labels",
    "secret_name: hf-token  secretKeyRef: hf-token",
]


@dataclass
class SecretLog:
    """A combined torchrun ``--tee`` log of 4 ranks that embeds every secret of the corpus."""

    text: str
    cases: list[SecretCase]
    line_of: dict[str, int] = field(default_factory=dict)  # kind -> 1-based line of its exception line
    root_cause_kind: str = ""
    root_cause_rank: int = 2


def build_secret_log(cases: list[SecretCase] | None = None) -> SecretLog:
    """A failure log: env dump with secrets, healthy steps, rank 2 raising the first secret-bearing
    exception (the root cause), a chain of secret-bearing exceptions on every rank, NCCL watchdog timeouts
    (collateral) and torchrun's failure summary. Every case's line is an exception line (an event)."""
    cases = list(cases if cases is not None else secret_cases())
    lines: list[str] = []
    log = SecretLog(text="", cases=cases, root_cause_kind=cases[0].kind)

    def add(text: str) -> int:
        lines.append(text)
        return len(lines)

    add("W1129 18:00:01.000000 3900 torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable "
        "for each process to be 1 in default")
    for rank in range(4):  # a job script that prints its environment: the classic way secrets enter logs
        add(f"[default{rank}]:+ env | sort")
        add(f"[default{rank}]:HF_TOKEN={cases[0].secret}")
        add(f"[default{rank}]:MASTER_ADDR=10.1.2.3 MASTER_PORT=29500 WORLD_SIZE=4 RANK={rank}")
    for line in ("-----BEGIN OPENSSH PRIVATE KEY-----", *_pem_body("ssh-dump", 4, 70), "-----END OPENSSH PRIVATE KEY-----"):
        add(f"[default0]:{line}")
    for step in range(1, 11):
        add(f"[default0]:[rank0]: 2024-11-29 18:01:{step:02d},000 step {step} loss {3.2 - step * 0.01:.3f} "
            f"lr 3.0e-4 grad_norm 1.02 tokens/s 34012")
    add("[default2]:[rank2]: Traceback (most recent call last):")
    add('[default2]:[rank2]:   File "/home/user/train.py", line 88, in <module>')
    add("[default2]:[rank2]:     main()")
    for index, case in enumerate(cases):
        rank = 2 if index == 0 else index % 4
        if index:
            add(f"[default{rank}]:[rank{rank}]: ")
            add(f"[default{rank}]:[rank{rank}]: During handling of the above exception, another exception occurred:")
        log.line_of[case.kind] = add(f"[default{rank}]:[rank{rank}]: {case.line}")
    for rank in (0, 1, 3):
        add(f"[default{rank}]:[rank{rank}]:[E1129 18:12:20.{rank}00000000 ProcessGroupNCCL.cpp:616] [Rank {rank}] "
            f"Watchdog caught collective operation timeout: WorkNCCL(SeqNum=404464, OpType=ALLREDUCE, NumelIn=1, "
            f"NumelOut=1, Timeout(ms)=600000) ran for 600025 milliseconds before timing out.")
    add("E1129 18:13:21.000000 3900 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
        "local_rank: 2 (pid: 48215) of binary: /usr/bin/python")
    add("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ")
    add("  rank      : 2 (local_rank: 2)")
    add("  exitcode  : 1 (pid: 48215)")
    log.text = "\n".join(lines) + "\n"
    return log


def find_leaks(text: str, cases: list[SecretCase] | None = None) -> list[str]:
    """Kinds whose secret, or any 12-character piece of it, occurs in ``text``."""
    return [case.kind for case in (cases if cases is not None else secret_cases())
            if any(piece in text for piece in case.pieces())]


def engine_strings(diagnosis: Diagnosis) -> str:
    """Every string of the engine objects a client could show: events, suspects, notes, reasons, files."""
    parts: list[str] = []
    for event in diagnosis.events + diagnosis.collateral + diagnosis.competing + (
            [diagnosis.root_cause] if diagnosis.root_cause else []):
        parts += [event.text, event.message, event.note, event.host or "", event.time_text, *event.fields.values()]
    parts += [s.text for s in diagnosis.suspicious] + diagnosis.notes + [r.text for r in diagnosis.reasons]
    parts += [f.last_text for f in diagnosis.files]
    return "\n".join(parts)
