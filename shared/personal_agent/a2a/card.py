"""An agent's A2A card: who it is (its name, description, starter prompts as examples), where its JSON-RPC
endpoint is, that it streams, and that every request needs a bearer token (an OIDC access token or a personal
access token, as for the REST API)."""

from __future__ import annotations

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_1_0, TransportProtocol

from personal_agent.agents.service import LaunchAgent

BEARER = "bearer"
TEXT = "text/plain"


def agent_card(agent: LaunchAgent, base_url: str) -> AgentCard:
    """The card of `agent` at its published version, its endpoint under `base_url` (no trailing slash)."""
    config = agent.config
    description = config.description or f"{config.name}, an agent of Personal Agent."
    scheme = HTTPAuthSecurityScheme(
        scheme="Bearer",
        bearer_format="OIDC access token or personal access token",
        description="The same token as the REST API (`Authorization: Bearer …`); `X-Org` picks the org.",
    )
    return AgentCard(
        name=config.name,
        description=description,
        version=str(agent.version),
        supported_interfaces=[
            AgentInterface(
                url=f"{base_url}/api/v1/a2a/{agent.slug}",
                protocol_binding=TransportProtocol.JSONRPC.value,
                protocol_version=PROTOCOL_VERSION_1_0,
            )
        ],
        provider=AgentProvider(organization="Personal Agent", url=base_url),
        capabilities=AgentCapabilities(streaming=True, push_notifications=False, extended_agent_card=False),
        security_schemes={BEARER: SecurityScheme(http_auth_security_scheme=scheme)},
        security_requirements=[SecurityRequirement(schemes={BEARER: StringList()})],
        default_input_modes=[TEXT],
        default_output_modes=[TEXT],
        skills=[
            AgentSkill(
                id=agent.slug,
                name=config.name,
                description=description,
                tags=sorted(config.tools or ["chat"]),
                examples=list(config.starter_prompts),
            )
        ],
    )
