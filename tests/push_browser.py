"""What a browser holds for a push subscription (its P-256 key pair and auth secret), and what it does with a
message: check the VAPID claim the push service would check, and decrypt the body (RFC 8291)."""

from __future__ import annotations

import base64
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

import http_ece
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class BrowserKeys:
    private_key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    auth: bytes = field(default_factory=lambda: os.urandom(16))

    def subscription(self, endpoint: str) -> dict[str, Any]:
        """`PushSubscription.toJSON()`."""
        point = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {"endpoint": endpoint, "expirationTime": None, "keys": {"p256dh": b64(point), "auth": b64(self.auth)}}

    def decrypt(self, body: bytes) -> dict[str, Any]:
        plain = http_ece.decrypt(body, private_key=self.private_key, auth_secret=self.auth, version="aes128gcm")
        return dict(json.loads(plain))


def verified_vapid_claims(authorization: str, server_public_key: str) -> dict[str, Any]:
    """The claims of `vapid t=<JWT>, k=<key>` once `k` is the server's key and the ES256 signature checks out."""
    scheme, _, params = authorization.partition(" ")
    assert scheme == "vapid", authorization
    fields = dict(part.strip().split("=", 1) for part in params.split(","))
    assert fields["k"] == server_public_key
    header, claims, signature = fields["t"].split(".")
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64(fields["k"]))
    raw = unb64(signature)
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    key.verify(der, f"{header}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))  # raises when forged
    assert json.loads(unb64(header)) == {"typ": "JWT", "alg": "ES256"}
    decoded = dict(json.loads(unb64(claims)))
    assert time.time() < decoded["exp"] <= time.time() + 24 * 3600
    return decoded
