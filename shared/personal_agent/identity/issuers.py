"""The trusted issuers, built from settings once per configuration (JWKS caches live as long)."""

from __future__ import annotations

from personal_agent.identity.claims import ClaimMapping
from personal_agent.identity.dev_issuer import DEV_CLAIMS, DevIssuer, dev_issuer_enabled
from personal_agent.identity.jwks import HttpJwksSource, StaticJwksSource
from personal_agent.identity.oidc import Issuer, TokenVerifier
from personal_agent.settings import Settings, get_settings

_verifiers: dict[tuple[object, ...], TokenVerifier] = {}


def _config_key(s: Settings) -> tuple[object, ...]:
    return (
        dev_issuer_enabled(s),
        s.data_dir,
        s.oidc_issuer,
        s.oidc_audience,
        s.oidc_jwks_url,
        s.oidc_audience_claim,
        s.oidc_org_claim,
        s.oidc_org_prefix,
        s.oidc_roles_claim,
        s.oidc_role_prefix,
        s.oidc_leeway_seconds,
        s.oidc_jwks_cache_seconds,
        s.oidc_jwks_min_refresh_seconds,
        s.dev_issuer,
    )


def build_issuers(s: Settings) -> list[Issuer]:
    """The configured OIDC issuer (if any) and, in local and test mode only, the dev issuer."""
    issuers: list[Issuer] = []
    if s.oidc_issuer:
        source = HttpJwksSource(
            s.oidc_issuer,
            s.oidc_jwks_url or None,  # empty (a blank template parameter) means: discover it
            cache_seconds=s.oidc_jwks_cache_seconds,
            min_refresh_seconds=s.oidc_jwks_min_refresh_seconds,
        )
        mapping = ClaimMapping(s.oidc_org_claim, s.oidc_roles_claim, s.oidc_org_prefix, s.oidc_role_prefix)
        issuers.append(
            Issuer(s.oidc_issuer, s.oidc_audience, source, mapping, s.oidc_audience_claim, s.oidc_leeway_seconds)
        )
    if dev_issuer_enabled(s) and s.dev_issuer != s.oidc_issuer:
        dev = DevIssuer.from_settings(s)
        source_dev = StaticJwksSource(dev.public_jwks)
        issuers.append(Issuer(dev.issuer, dev.audience, source_dev, DEV_CLAIMS, "aud", s.oidc_leeway_seconds))
    return issuers


def get_verifier(settings: Settings | None = None) -> TokenVerifier:
    """The process's verifier for the current settings (rebuilt only when identity settings change)."""
    s = settings or get_settings()
    key = _config_key(s)
    verifier = _verifiers.get(key)
    if verifier is None:
        verifier = _verifiers[key] = TokenVerifier(build_issuers(s))
    return verifier
