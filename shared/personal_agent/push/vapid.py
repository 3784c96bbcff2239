"""VAPID (RFC 8292): the server's P-256 key pair, and the signed claim each push request carries so a push
service knows who sends. The public key is what browsers subscribe with (`applicationServerKey`); the private
key signs, in the deliver function only, and never leaves it (not logged, not in any event or payload)."""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

CLAIM_SECONDS = 12 * 3600  # RFC 8292: at most 24 h


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def public_key_text(key: ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey) -> str:
    """The uncompressed point, base64url: the form browsers take as `applicationServerKey`."""
    public = key.public_key() if isinstance(key, ec.EllipticCurvePrivateKey) else key
    return b64url(public.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint))


def private_key_text(key: ec.EllipticCurvePrivateKey) -> str:
    """The private scalar, base64url (32 bytes): the form `PA_VAPID_PRIVATE_KEY` takes."""
    return b64url(key.private_numbers().private_value.to_bytes(32, "big"))


def load_private_key(text: str) -> ec.EllipticCurvePrivateKey:
    raw = b64url_decode(text.strip())
    if len(raw) != 32:
        raise ValueError("a VAPID private key is 32 bytes, base64url")
    return ec.derive_private_key(int.from_bytes(raw, "big"), ec.SECP256R1())


def new_key_pair() -> tuple[str, str]:
    """(private, public) in their text forms."""
    key = ec.generate_private_key(ec.SECP256R1())
    return private_key_text(key), public_key_text(key)


@dataclass(frozen=True)
class Vapid:
    private_key: ec.EllipticCurvePrivateKey
    subject: str  # a mailto: or https: contact the push service may use

    def authorization(self, endpoint: str, now: float | None = None) -> str:
        """The `Authorization: vapid t=<JWT>, k=<public key>` header for a request to `endpoint`."""
        parts = urlsplit(endpoint)
        claims = {
            "aud": f"{parts.scheme}://{parts.netloc}",
            "exp": int((now or time.time()) + CLAIM_SECONDS),
            "sub": self.subject,
        }
        header = b64url(json.dumps({"typ": "JWT", "alg": "ES256"}, separators=(",", ":")).encode())
        body = b64url(json.dumps(claims, separators=(",", ":")).encode())
        signing_input = f"{header}.{body}".encode()
        r, s = decode_dss_signature(self.private_key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        signature = b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))
        return f"vapid t={header}.{body}.{signature}, k={public_key_text(self.private_key)}"
