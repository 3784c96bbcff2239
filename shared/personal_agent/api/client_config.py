"""`/api/v1/config`: what the web chat needs before anyone signs in (no auth): how to sign in."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel

from personal_agent.settings import get_settings

router = APIRouter(prefix="/api/v1", tags=["config"])


class OidcClientConfig(BaseModel):
    issuer: str
    client_id: str
    audience: str | None


class ClientConfig(BaseModel):
    oidc: OidcClientConfig | None
    dev_login: bool
    environment: Literal["local", "aws", "test"]


@router.get("/config", operation_id="client_config")
async def client_config() -> ClientConfig:
    """The OIDC issuer and client for authorization code + PKCE (null when none), and whether dev login exists."""
    from personal_agent.identity.dev_issuer import dev_issuer_enabled

    settings = get_settings()
    oidc = None
    if settings.oidc_issuer:
        client_id = settings.oidc_client_id or settings.oidc_audience
        oidc = OidcClientConfig(issuer=settings.oidc_issuer, client_id=client_id, audience=settings.oidc_audience)
    return ClientConfig(oidc=oidc, dev_login=dev_issuer_enabled(settings), environment=settings.environment)
