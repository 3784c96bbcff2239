"""The frozen, JSON-serialisable description of a run, built once at launch (the toolset snapshot included)."""

from __future__ import annotations

from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field, model_validator

from personal_agent.spec.project_ref import ProjectRef
from personal_agent.spec.tool_policy import ToolPolicy

RunMode = Literal["inline", "durable"]
RequestedMode = Literal["inline", "durable", "auto"]
TriggerSource = Literal[
    "chat", "agui", "webhook", "schedule", "subagent", "openai_api", "a2a", "slack", "telegram", "email", "eval"
]
ApprovalPolicy = Literal["never", "gate", "always"]
"""Who decides whether a call of an MCP tool runs: nobody, the confidence gate (with `acts`), or a person."""

MAX_TIER = 2  # the highest trust tier (2: internal)

MAX_MESSAGE_CHARS = 32_000
"""The longest user message accepted (characters). Longer input is refused with 413 `message_too_long`."""


class Labels(BaseModel):
    """The two governance labels of a piece of data, a run or a chat (computed in `spec/labels.py`)."""

    model_config = ConfigDict(frozen=True)

    content_tier: int = Field(0, ge=0, le=MAX_TIER)
    """The trust tier every provider that sees this data must have (0: any)."""
    untrusted: bool = False
    """Text from outside is in it: acting tools need a person, and nothing of it is remembered unasked."""

    def join(self, *others: Labels) -> Labels:
        """These labels raised by the others' (never lowered)."""
        tier = max([self.content_tier, *(o.content_tier for o in others)])
        untrusted = self.untrusted or any(o.untrusted for o in others)
        if tier == self.content_tier and untrusted == self.untrusted:
            return self
        return Labels(content_tier=tier, untrusted=untrusted)


class RunLimits(BaseModel):
    """Hard limits of one run, enforced by the engine: past either, the run fails with RUN_ERROR
    `limit_exceeded`. (A durable Task's time budget is the deployment's `PA_STEP_TIME_BUDGET_SECONDS`, tied to
    the steps function's timeout, not a property of the run.)"""

    model_config = ConfigDict(frozen=True)

    max_model_requests: int = Field(25, ge=1, le=200)
    """Model requests the run may send (the router's classification not counted)."""
    max_tool_calls: int = Field(50, ge=0, le=500)
    """Tool calls the model may ask for in the run, all rounds together; a response that goes past it fails the
    run before any of its calls runs."""
    max_depth: int = Field(2, ge=0, le=5)
    """How deep sub-agents may nest below the run a person started (`delegate` past it is a tool error)."""
    max_fanout: int = Field(4, ge=0, le=16)
    """Sub-agents one model response may start; further `delegate` calls in it are refused as tool errors."""
    max_children: int = Field(16, ge=0, le=64)
    """Sub-agents the run may start in all (its children, not their own)."""
    max_tree_runs: int = Field(32, ge=0, le=256)
    """Sub-agents the whole tree may start, every depth together (counted at the root run)."""
    max_tree_model_requests: int = Field(200, ge=1, le=2000)
    """Model requests of the whole tree, the root's and every sub-agent's; past it `delegate` is refused."""
    max_user_active_children: int = Field(16, ge=0, le=256)
    """Sub-agents one user may have running at once, across all their runs."""


class ToolRef(BaseModel):
    """One tool in the run's snapshot: its name, whether a person must approve each call, whether it
    acts on the world, and the trust tier its data needs."""

    model_config = ConfigDict(frozen=True)

    name: str
    requires_approval: bool = False
    acts: bool = False
    required_tier: int = 0
    untrusted: bool = False
    """Its results are untrusted: once one is in the run's context, acting tools need approval."""
    server_id: UUID | None = None
    """The MCP server the tool comes from (one of the spec's `mcp_servers`); None for a first-party tool."""
    remote_name: str | None = None
    """The tool's name on its MCP server (`name` is `{server}_{remote_name}`)."""
    schema_hash: str | None = None
    """sha256 of the MCP tool's input schema at launch: a tool whose schema changed since is refused."""
    trust_tier: int = 2
    """The trust tier of the tool's source (first-party: 2); below the run's routing tier it is gated out."""
    approval: ApprovalPolicy = "gate"


class McpServerRef(BaseModel):
    """An MCP server a run's tools come from, snapshotted at launch (its auth headers by reference: the engine
    step unseals them from the server's row, never from the spec)."""

    model_config = ConfigDict(frozen=True)

    id: UUID
    name: str
    url: str
    transport: Literal["http", "stdio"] = "http"
    trust_tier: int


class GatedTool(BaseModel):
    """A tool the tier gate kept from the run (reported as a CUSTOM `tool_gated` event and on the run view)."""

    model_config = ConfigDict(frozen=True)

    name: str
    server: str
    trust_tier: int
    required_tier: int


class ModelRef(BaseModel):
    """A model the run may call, snapshotted at launch (a BYOK key by reference, never the key)."""

    model_config = ConfigDict(frozen=True)

    id: str
    provider: str
    kind: str
    tier: int
    model_name: str
    base_url: str | None = None
    key_id: UUID | None = None
    input_price: float | None = None  # USD per million tokens, overriding genai-prices when set
    output_price: float | None = None
    platform_key: bool = False
    """Called with the platform's own key, at the platform's own endpoint (set at launch from the catalog):
    never together with a `base_url` or a BYOK `key_id`, and priced at the platform's price."""
    max_output_tokens: int = Field(16_384, ge=1, le=1_000_000)
    """The output token limit of each request (sent as `max_tokens`); budgets reserve a request's cost from it."""
    context_window: int = Field(128_000, ge=512, le=10_000_000)
    """Tokens the model reads in one request: the history sent is trimmed (older turns summarised) to fit."""

    @model_validator(mode="after")
    def _platform_key_stays_home(self) -> ModelRef:
        if self.platform_key and (self.base_url is not None or self.key_id is not None):
            raise ValueError("a model called with the platform key has no base_url and no BYOK key")
        return self


class Delegation(BaseModel):
    """What a child run was asked by its parent's `delegate` call (its only user message is `task`)."""

    model_config = ConfigDict(frozen=True)

    task: str
    tool_call_id: str
    """The parent's `delegate` call this child answers."""
    preset: Literal["explore"] | None = None


class DelegateAgent(BaseModel):
    """An agent the run's agent may hand work to (`delegate(agent=slug)`), its published version at launch."""

    model_config = ConfigDict(frozen=True)

    id: UUID
    slug: str
    version: int
    instructions: str
    tools: tuple[str, ...] | None = None
    """Its tools (None: the parent's); a child gets only those the parent has."""
    model: str | None = None
    """Its model, used when the parent may call it (else the parent's chain)."""


class AgentRef(BaseModel):
    """The agent a run launched with, snapshotted at launch (its published version then): the run's instructions,
    model and tools came from it, so changing the agent never changes a run in flight."""

    model_config = ConfigDict(frozen=True)

    id: UUID
    slug: str
    version: int
    name: str = ""
    model: str | None = None
    """What the agent asked for (`auto`, `provider:model`, or None: the default); the run's `model` is the choice."""
    tools: tuple[str, ...] | None = None
    knowledge: tuple[str, ...] = ()
    memory: bool = True
    delegates: tuple[str, ...] = ()
    """Slugs of the agents `delegate(agent=...)` may start."""
    sample_rate: float = 0.0
    """The share of the agent's production runs sampled into an LLM judge, as the org set it at launch (0: off)."""
    delegate_agents: tuple[DelegateAgent, ...] = ()
    """Those of them the run's user could see at launch, snapshotted (a retried step builds the same child)."""
    approval: dict[str, str] = Field(default_factory=dict)
    classification: str = "standard"
    output_schema: dict[str, Any] | None = None
    """A JSON Schema of an object: the run's final answer is validated structured output."""


class ClientTool(BaseModel):
    """A function tool the caller defines and runs itself (`/v1` `tools`): the model may call it, and the run ends
    there with the call for the caller to answer in its next request. It never runs on the platform."""

    model_config = ConfigDict(frozen=True)

    name: str = Field(pattern=r"^[a-zA-Z0-9_-]{1,64}$")
    description: str = Field("", max_length=4000)
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class ModelSettings(BaseModel):
    """Sampling settings the caller chose (`/v1` `temperature`, `max_tokens`, `stop`), passed on to every request of
    the run where the model takes them."""

    model_config = ConfigDict(frozen=True)

    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    max_tokens: int | None = Field(None, ge=1, le=1_000_000)
    stop_sequences: tuple[str, ...] = Field((), max_length=4)
    tool_choice: str | None = Field(None, max_length=64)
    """`required` or a caller's tool's name: what the request answering the caller must call (`engine/tool_choice`)."""

    def as_dict(self) -> dict[str, Any]:
        """pydantic-ai's `ModelSettings` (a TypedDict): only what was set (`tool_choice` is per step)."""
        chosen = self.model_dump(exclude_none=True, exclude_defaults=True, exclude={"tool_choice"})
        if "stop_sequences" in chosen:
            chosen["stop_sequences"] = list(chosen["stop_sequences"])
        return chosen


OUTPUT_TOOL = "final_result"
"""The tool a run with an agent's `output_schema` answers through (its arguments are the structured output)."""


class RunSpec(BaseModel):
    """Everything a driver needs to run, fixed at launch; steps never re-read live config."""

    model_config = ConfigDict(frozen=True)

    run_id: UUID
    org_id: UUID
    user_id: UUID | None
    chat_id: UUID
    model: str
    model_chain: tuple[ModelRef, ...] = ()
    router_model: ModelRef | None = None
    routing_tier: int = 2
    classification: str = "standard"
    confidence_threshold: float = 0.8
    instructions: str
    tools: tuple[ToolRef, ...] = ()
    mcp_servers: tuple[McpServerRef, ...] = ()
    gated_tools: tuple[GatedTool, ...] = ()
    limits: RunLimits = RunLimits()
    mode: RunMode
    trigger_source: TriggerSource = "chat"
    parent_run_id: UUID | None = None
    history: Literal["chat", "none"] = "chat"
    """`chat`: the run sees the chat's earlier messages; `none`: only its own (triggered runs)."""
    approval_timeout_seconds: int = 86_400
    approval_policy: Literal["wait", "deny"] = "wait"
    depth: int = 0
    """0 for a run a person or a trigger started; a sub-agent's is its parent's plus one."""
    root_run_id: UUID | None = None
    """The run at the top of a sub-agent's tree (None for that run itself)."""
    delegation: Delegation | None = None
    parent_message_id: int | None = None
    """The chat message the run continues from: its user turn's parent, or for a regenerate the user turn whose
    answer it rewrites (the run stores no user turn then). None: from the run's own first message's parent."""
    regenerate: bool = False
    recall_memories: bool = True
    """The user's memories go into the run's instructions (a workflow's triggered runs: only if its owner opted in)."""
    agent: AgentRef | None = None
    """The agent the run launched with (None: a run from before agents, or one built outside the launch)."""
    project: ProjectRef | None = None  # the chat's project at launch: its memory scope, its collection
    input_messages: int = 1
    """How many of the run's own stored messages it was given (a user turn; a `/v1` conversation's messages): its
    answer is what follows them."""
    client_tools: tuple[ClientTool, ...] = ()
    """Tools the caller runs itself (`/v1`): a call of one ends the run with the call (`finish_reason: tool_calls`)."""
    model_settings: ModelSettings = ModelSettings()
    output_schema: dict[str, Any] | None = None
    """A JSON Schema the caller asked the answer to match (`/v1` `response_format`); else the agent's."""
    echo: dict[str, Any] | None = None
    """What a `/v1` response repeats of its request (`instructions`, `previous_response_id`, `store`, ...)."""
    labels: Labels = Labels()
    """The run's governance labels at launch (`spec/labels.py`): the chat's, its classification's, an untrusted
    trigger's and those of what entered with the message. The engine raises them from the run's messages."""
    tool_policy: ToolPolicy = ToolPolicy()
    """The org's tool rules and the run's review mode at launch (a sub-agent inherits its parent's)."""
    trace_content: bool = False  # the org let traces carry content, at launch (`otel_export.content_allowed`)

    @property
    def answer_schema(self) -> dict[str, Any] | None:
        """The JSON Schema the run's final answer must match (the caller's, else its agent's), or None for text."""
        if self.output_schema is not None:
            return self.output_schema
        return self.agent.output_schema if self.agent is not None else None
