"""Message encryption for Web Push (RFC 8291) in the `aes128gcm` content coding (RFC 8188), one record.

A new sender key pair per message; the browser's public key (`p256dh`) and auth secret bind the content key to
that browser, so the push service relays ciphertext only. (Written here on `cryptography`: the reference
package, `http-ece`, ships no wheel, and the Lambda layers are built from wheels only; the tests decrypt with it.)
"""

from __future__ import annotations

import hashlib
import hmac
import os

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

RECORD_SIZE = 4096
TAG_BYTES = 16


def _hmac(key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hashlib.sha256).digest()


def encrypt(plaintext: bytes, ua_public: bytes, auth_secret: bytes, salt: bytes | None = None) -> bytes:
    """The request body: salt, record size, the sender's public key, then the one encrypted record."""
    if len(plaintext) + 1 + TAG_BYTES > RECORD_SIZE:
        raise ValueError("a push message is at most 4079 bytes")
    sender = ec.generate_private_key(ec.SECP256R1())
    as_public = sender.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    shared = sender.exchange(ec.ECDH(), ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), ua_public))
    # RFC 8291 §3.4: the input keying material from the ECDH secret and the auth secret (HKDF, one block).
    prk_key = _hmac(auth_secret, shared)
    ikm = _hmac(prk_key, b"WebPush: info\x00" + ua_public + as_public + b"\x01")
    # RFC 8188 §2.2-2.3: content key and nonce from the salt.
    salt = salt or os.urandom(16)
    prk = _hmac(salt, ikm)
    cek = _hmac(prk, b"Content-Encoding: aes128gcm\x00\x01")[:16]
    nonce = _hmac(prk, b"Content-Encoding: nonce\x00\x01")[:12]
    record = AESGCM(cek).encrypt(nonce, plaintext + b"\x02", None)  # 0x02: the last (only) record's delimiter
    header = salt + RECORD_SIZE.to_bytes(4, "big") + bytes([len(as_public)]) + as_public
    return header + record
