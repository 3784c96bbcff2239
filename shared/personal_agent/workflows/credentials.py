"""Webhook credentials: Standard Webhooks signing secrets (sealed at rest, because the HMAC needs the secret
itself) and bearer tokens for senders that cannot sign (stored as SHA-256, like personal access tokens).

On AWS a secret is sealed under a KMS data key (the provider-key envelope of `governance.keys`), with the
org and workflow bound in. Locally it is sealed with a key file under the data dir, so secrets survive a
restart of the dev server (moto's KMS keeps its keys in memory only).
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

from personal_agent.errors import ConfigurationError
from personal_agent.settings import get_settings

SIGNING_PREFIX = "whsec_"
BEARER_PREFIX = "pa_whk_"
HINT_CHARS = 12
_CACHE_SECONDS = 300.0
_opened: dict[UUID, tuple[float, str]] = {}


@dataclass(frozen=True)
class Sealed:
    ciphertext: bytes
    nonce: bytes
    encrypted_data_key: bytes | None  # None: sealed with the local key file


def new_signing_secret() -> str:
    """`whsec_` and 32 random bytes in base64, the Standard Webhooks secret format."""
    return SIGNING_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def new_bearer_token() -> str:
    return BEARER_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _context(workflow_id: UUID) -> str:
    return f"workflow:{workflow_id}"


def _local_key() -> bytes:
    path = Path(get_settings().data_dir) / "workflow-secrets.key"
    try:
        return path.read_bytes()
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it first
            return path.read_bytes()
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(32))
        return path.read_bytes()


def seal(org_id: UUID, workflow_id: UUID, secret: str) -> Sealed:
    """Encrypt a signing secret for storage (blocking: call it in a thread)."""
    if get_settings().is_local:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        nonce = os.urandom(12)
        aad = f"{org_id}:{_context(workflow_id)}".encode()
        return Sealed(AESGCM(_local_key()).encrypt(nonce, secret.encode(), aad), nonce, None)
    from personal_agent.governance.keys import seal as kms_seal

    envelope = kms_seal(org_id, _context(workflow_id), secret)
    return Sealed(envelope.ciphertext, envelope.nonce, envelope.encrypted_data_key)


def unseal(org_id: UUID, workflow_id: UUID, sealed: Sealed) -> str:
    """Decrypt a stored signing secret (blocking). Never log or return it."""
    if sealed.encrypted_data_key is None:
        if not get_settings().is_local:
            raise ConfigurationError("a workflow secret sealed with the local key cannot be opened on AWS")
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        aad = f"{org_id}:{_context(workflow_id)}".encode()
        return AESGCM(_local_key()).decrypt(sealed.nonce, sealed.ciphertext, aad).decode()
    from personal_agent.governance.keys import Envelope
    from personal_agent.governance.keys import unseal as kms_unseal

    envelope = Envelope(sealed.ciphertext, sealed.nonce, sealed.encrypted_data_key)
    return kms_unseal(org_id, _context(workflow_id), envelope)


def unseal_cached(credential_id: UUID, org_id: UUID, workflow_id: UUID, sealed: Sealed) -> str:
    """`unseal`, remembered for a few minutes per credential (a KMS call per webhook is slow and billed)."""
    now = time.monotonic()
    hit = _opened.get(credential_id)
    if hit is not None and hit[0] > now:
        return hit[1]
    secret = unseal(org_id, workflow_id, sealed)
    _opened[credential_id] = (now + _CACHE_SECONDS, secret)
    return secret
