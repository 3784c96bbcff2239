"""Provider keys under envelope encryption: a KMS data key per key, AES-GCM, the org and provider bound in as
authenticated data. Keys are decrypted only where a model is built (the run worker / steps); the API stores and
lists them but never returns one.

A key is bound to one endpoint (its provider's kind and base_url) when it is first attached to a provider: KMS
rewraps its data key with the endpoint in the encryption context (`ReEncrypt`: the plaintext never leaves KMS),
and from then on the key decrypts for that endpoint only. Attaching it to a provider with another endpoint is
refused (409 `key_endpoint_mismatch`), and a provider whose base_url changed afterwards, by whatever path, cannot
open it: the worker asks KMS for the data key with the endpoint it is about to call."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit
from uuid import UUID

from personal_agent.aws_clients import aws_client
from personal_agent.db import org_transaction
from personal_agent.errors import ConfigurationError, Conflict, InvalidInput, NotFound
from personal_agent.governance import key_store
from personal_agent.settings import get_settings

PUBLIC_COLUMNS = key_store.PUBLIC_COLUMNS


class KeyEndpointMismatch(Conflict):
    """The key was entered for another endpoint than the one asking for it."""

    code = "key_endpoint_mismatch"


@dataclass(frozen=True)
class Envelope:
    ciphertext: bytes
    nonce: bytes
    encrypted_data_key: bytes


def endpoint_of(kind: str, base_url: str | None) -> str:
    """What a key is bound to: the provider's kind and its base_url (scheme and host lower-case, no trailing
    slash), or the kind's default endpoint."""
    if not base_url:
        return f"{kind}:default"
    parts = urlsplit(base_url.strip())
    return f"{kind}:{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}"


def _kms() -> Any:
    return aws_client("kms")


def _context(org_id: UUID, provider: str, endpoint: str | None = None) -> dict[str, str]:
    """The KMS encryption context: a data key wrapped with an endpoint opens only with the same one."""
    context = {"org_id": str(org_id), "provider": provider}
    return context if endpoint is None else {**context, "endpoint": endpoint}


def _key_id() -> str:
    key_id = get_settings().kms_key_id
    if not key_id:
        raise ConfigurationError("PA_KMS_KEY_ID is not set: provider keys cannot be stored")
    return key_id


def seal(org_id: UUID, provider: str, secret: str, endpoint: str | None = None) -> Envelope:
    """Encrypt `secret` under a fresh KMS data key, bound to `endpoint` when one is given (None: not yet)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    context = _context(org_id, provider, endpoint)
    data_key = _kms().generate_data_key(KeyId=_key_id(), KeySpec="AES_256", EncryptionContext=context)
    nonce = os.urandom(12)
    aad = f"{org_id}:{provider}".encode()
    ciphertext = AESGCM(data_key["Plaintext"]).encrypt(nonce, secret.encode(), aad)
    return Envelope(ciphertext, nonce, data_key["CiphertextBlob"])


def rewrap(org_id: UUID, provider: str, encrypted_data_key: bytes, endpoint: str) -> bytes:
    """The unbound data key, wrapped again with `endpoint` in its context (inside KMS: no plaintext here)."""
    answer = _kms().re_encrypt(
        CiphertextBlob=encrypted_data_key,
        SourceEncryptionContext=_context(org_id, provider),
        DestinationKeyId=_key_id(),
        DestinationEncryptionContext=_context(org_id, provider, endpoint),
    )
    return bytes(answer["CiphertextBlob"])


def unseal(org_id: UUID, provider: str, envelope: Envelope, endpoint: str | None = None) -> str:
    """Decrypt a stored secret for `endpoint` (a key: only inside the step that builds a model); a secret bound
    to another endpoint is `KeyEndpointMismatch`; without an endpoint, KMS's own refusal stands (a secret bound to
    something else, e.g. another workflow)."""
    from botocore.exceptions import ClientError
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        data_key = _kms().decrypt(
            CiphertextBlob=envelope.encrypted_data_key, EncryptionContext=_context(org_id, provider, endpoint)
        )["Plaintext"]
    except ClientError as exc:
        refused = exc.response.get("Error", {}).get("Code") in ("InvalidCiphertextException", "AccessDeniedException")
        if refused and endpoint is not None:
            raise KeyEndpointMismatch("the provider key was entered for another endpoint") from None
        raise
    aad = f"{org_id}:{provider}".encode()
    return AESGCM(data_key).decrypt(envelope.nonce, envelope.ciphertext, aad).decode()


async def store_key(org_id: UUID, user_id: UUID, provider: str, label: str, secret: str) -> dict[str, Any]:
    secret = secret.strip()
    if len(secret) < 8 or len(secret) > 4096:
        raise InvalidInput("a provider key has 8 to 4096 characters", code="invalid_key")
    envelope = await asyncio.to_thread(seal, org_id, provider, secret)
    sealed = (envelope.ciphertext, envelope.nonce, envelope.encrypted_data_key)
    async with org_transaction(org_id) as conn:
        return await key_store.insert(conn, org_id, user_id, provider, label, sealed, "…" + secret[-4:])


async def list_keys(org_id: UUID) -> list[dict[str, Any]]:
    async with org_transaction(org_id) as conn:
        return await key_store.list_public(conn)


async def delete_key(org_id: UUID, key_id: UUID) -> None:
    """Delete a key; the providers that used it are disabled in the same transaction (they never fall back
    to the platform's key, or to no key)."""
    async with org_transaction(org_id) as conn:
        await key_store.disable_providers_of(conn, key_id)
        if not await key_store.delete(conn, key_id):
            raise NotFound("key not found", code="key_not_found")


def _refuse_other_endpoint(bound: str | None, attached: list[dict[str, Any]], endpoint: str) -> None:
    others = {endpoint_of(p["kind"], p["base_url"]) for p in attached} - {endpoint}
    if (bound is not None and bound != endpoint) or others:
        raise KeyEndpointMismatch(
            "this key was entered for another endpoint; store the key again for this provider's base_url"
        )


async def bind_key(org_id: UUID, key_id: UUID, endpoint: str) -> None:
    """Bind the key to `endpoint` (a no-op if it is bound there); 409 `key_endpoint_mismatch` if it is bound to, or
    used by a provider at, another one; 404 `key_not_found`."""
    async with org_transaction(org_id) as conn:
        row = await key_store.sealed_row(conn, key_id)
        attached = await key_store.attached_providers(conn, key_id) if row is not None else []
    if row is None:
        raise NotFound("key not found", code="key_not_found")
    _refuse_other_endpoint(row["endpoint"], attached, endpoint)
    if row["endpoint"] == endpoint:
        return
    wrapped = await asyncio.to_thread(rewrap, org_id, row["provider"], bytes(row["encrypted_data_key"]), endpoint)
    async with org_transaction(org_id) as conn:
        if await key_store.bind(conn, key_id, endpoint, wrapped):
            return
        row = await key_store.sealed_row(conn, key_id)  # someone bound it first: to this endpoint, or refused
    if row is None:
        raise NotFound("key not found", code="key_not_found")
    _refuse_other_endpoint(row["endpoint"], [], endpoint)


async def decrypt_key(org_id: UUID, key_id: UUID, endpoint: str) -> str:
    """The plaintext key for building a model that calls `endpoint`. Never log, emit or return it."""
    async with org_transaction(org_id) as conn:
        row = await key_store.sealed_row(conn, key_id)
    if row is None:
        raise NotFound("the provider key is gone", code="key_not_found")
    if row["endpoint"] is None:  # stored before keys were bound (0027): bound to its provider's endpoint now
        await bind_key(org_id, key_id, endpoint)
        async with org_transaction(org_id) as conn:
            row = await key_store.sealed_row(conn, key_id)
        assert row is not None
    if row["endpoint"] != endpoint:
        raise KeyEndpointMismatch("the provider key was entered for another endpoint")
    envelope = Envelope(bytes(row["ciphertext"]), bytes(row["nonce"]), bytes(row["encrypted_data_key"]))
    return await asyncio.to_thread(unseal, org_id, row["provider"], envelope, endpoint)
