"""Secrets are masked; what a diagnosis needs (hashes, shapes, addresses) is left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from faultline.lines.normalize import normalize_line
from faultline.masking import mask_secrets

SECRETS = [
    ("export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH12", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH12"),
    ("remote: https://oauth2:s3cr3tpassw0rd@gitlab.example.com/x.git", "s3cr3tpassw0rd"),
    ("token ghp_0123456789abcdefghijABCDEFGHIJ012345", "ghp_0123456789abcdefghijABCDEFGHIJ012345"),
    ("AWS key AKIAIOSFODNN7EXAMPLE used", "AKIAIOSFODNN7EXAMPLE"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef01234567"),
    ("Authorization: Bearer abcdefghijklmnop1234", "abcdefghijklmnop1234"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"),
    ("python train.py --password=hunter2hunter2", "hunter2hunter2"),
    ("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx", "sk-proj-abcdefghijklmnopqrstuvwx"),
    ("-----BEGIN RSA PRIVATE KEY----- MIIEowIBAAKCAQEA -----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA"),
]


@pytest.mark.parametrize(("line", "secret"), SECRETS)
def test_secret_is_masked(line: str, secret: str) -> None:
    masked = mask_secrets(line)
    assert secret not in masked
    assert "****" in masked


@pytest.mark.parametrize(
    "line",
    [
        "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
        "size mismatch for fc.weight: copying a param with shape torch.Size([1024, 4096])",
        "NVRM: Xid (PCI:0000:10:1c): 31, faulted @ 0x0_04687000",
        "[rank0]:[E1129 18:02:21.123456789 ProcessGroupNCCL.cpp:616] Watchdog caught collective operation timeout",
        "CUDA out of memory. Tried to allocate 4.35 GiB",
        "NCCL INFO comm 0x55d1c6b0 rank 3 nranks 8 cudaDev 3 busId 1b000 commId 0x7d5a1e2f3c4b5a69 - Init COMPLETE",
    ],
)
def test_diagnostic_text_is_left_alone(line: str) -> None:
    assert mask_secrets(line) == line


_HF = "hf_" + "Ab3dEfGh1jKlMn0pQrStUvWxYz" + "98765432"  # a real token's shape: 34 letters and digits, mixed case


@pytest.mark.parametrize("line", [f"Tried to allocate 4.35 GiB{_HF}", f"{_HF}exitcode  : -9", f"token {_HF}.",
                                  f"0{_HF}exitcode"])
def test_a_mixed_case_token_glued_to_words_is_masked(line: str) -> None:
    """A cut or joined paste glues a token to the text around it; a body that must mix cases is still a token."""
    assert "Ab3dEfGh" not in mask_secrets(line)


@pytest.mark.parametrize("line", ["disk-abcdefghijklmnopqrstuvwxyzABCDEFGH0123456789",
                                  "misc_ghp_abcdefghijklmnopqrstuvwxyz0123456789"])
def test_a_vendor_prefix_inside_a_longer_word_is_left_alone(line: str) -> None:
    assert mask_secrets(line) == line  # "sk-" in "disk-", "ghp_" after "misc_": names, not tokens


def test_masked_text_is_masked_text() -> None:
    """One pass over this line (found by the fuzzer) left a `token=` value that a second pass masked: masking is
    repeated to its fixed point, so masking what was masked changes nothing."""
    found = Path(__file__).resolve().parents[1] / "hardening" / "fuzz_corpus" / "line_reader" / (
        "34138add295239216868d50efd52b4e2aa7c8803")
    masked = mask_secrets(normalize_line(found.read_bytes()))
    assert "token=****" in masked and mask_secrets(masked) == masked
