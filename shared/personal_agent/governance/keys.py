"""Provider keys under envelope encryption: a KMS data key per key, AES-GCM, the org and provider bound
in as authenticated data. Keys are decrypted only where a model is built (the run worker / steps);
the API stores and lists them but never returns one."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from personal_agent.aws_clients import aws_client
from personal_agent.db import org_transaction
from personal_agent.errors import ConfigurationError, InvalidInput, NotFound
from personal_agent.settings import get_settings

PUBLIC_COLUMNS = "id, provider, label, key_hint, created_at"


@dataclass(frozen=True)
class Envelope:
    ciphertext: bytes
    nonce: bytes
    encrypted_data_key: bytes


def _kms() -> Any:
    return aws_client("kms")


def _context(org_id: UUID, provider: str) -> dict[str, str]:
    return {"org_id": str(org_id), "provider": provider}


def seal(org_id: UUID, provider: str, secret: str) -> Envelope:
    """Encrypt `secret` under a fresh KMS data key."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    key_id = get_settings().kms_key_id
    if not key_id:
        raise ConfigurationError("PA_KMS_KEY_ID is not set: provider keys cannot be stored")
    data_key = _kms().generate_data_key(KeyId=key_id, KeySpec="AES_256", EncryptionContext=_context(org_id, provider))
    nonce = os.urandom(12)
    aad = f"{org_id}:{provider}".encode()
    ciphertext = AESGCM(data_key["Plaintext"]).encrypt(nonce, secret.encode(), aad)
    return Envelope(ciphertext, nonce, data_key["CiphertextBlob"])


def unseal(org_id: UUID, provider: str, envelope: Envelope) -> str:
    """Decrypt a stored key (only inside the step that builds a model)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    data_key = _kms().decrypt(CiphertextBlob=envelope.encrypted_data_key, EncryptionContext=_context(org_id, provider))[
        "Plaintext"
    ]
    aad = f"{org_id}:{provider}".encode()
    return AESGCM(data_key).decrypt(envelope.nonce, envelope.ciphertext, aad).decode()


async def store_key(org_id: UUID, user_id: UUID, provider: str, label: str, secret: str) -> dict[str, Any]:
    secret = secret.strip()
    if len(secret) < 8 or len(secret) > 4096:
        raise InvalidInput("a provider key has 8 to 4096 characters", code="invalid_key")
    envelope = await asyncio.to_thread(seal, org_id, provider, secret)
    async with org_transaction(org_id) as conn:
        cur = await conn.execute(
            "INSERT INTO provider_keys (org_id, provider, label, ciphertext, nonce, encrypted_data_key, key_hint,"
            f" created_by) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING {PUBLIC_COLUMNS}",
            [
                org_id,
                provider,
                label,
                envelope.ciphertext,
                envelope.nonce,
                envelope.encrypted_data_key,
                "…" + secret[-4:],
                user_id,
            ],
        )
        row = await cur.fetchone()
    assert row is not None
    return row


async def list_keys(org_id: UUID) -> list[dict[str, Any]]:
    async with org_transaction(org_id) as conn:
        cur = await conn.execute(f"SELECT {PUBLIC_COLUMNS} FROM provider_keys ORDER BY created_at DESC")
        return await cur.fetchall()


async def delete_key(org_id: UUID, key_id: UUID) -> None:
    """Delete a key; the providers that used it are disabled in the same transaction (they never fall back
    to the platform's key, or to no key)."""
    from personal_agent.governance.admin import disable_providers_using_key

    async with org_transaction(org_id) as conn:
        await disable_providers_using_key(conn, key_id)
        cur = await conn.execute("DELETE FROM provider_keys WHERE id = %s RETURNING id", [key_id])
        if await cur.fetchone() is None:
            raise NotFound("key not found", code="key_not_found")


async def decrypt_key(org_id: UUID, key_id: UUID) -> str:
    """The plaintext key for building a model. Never log, emit or return it."""
    async with org_transaction(org_id) as conn:
        cur = await conn.execute(
            "SELECT provider, ciphertext, nonce, encrypted_data_key FROM provider_keys WHERE id = %s", [key_id]
        )
        row = await cur.fetchone()
    if row is None:
        raise NotFound("the provider key is gone", code="key_not_found")
    envelope = Envelope(bytes(row["ciphertext"]), bytes(row["nonce"]), bytes(row["encrypted_data_key"]))
    return await asyncio.to_thread(unseal, org_id, row["provider"], envelope)
