"""What every channel hands the one channel layer: an inbound message (or an approval decision) once its request
is verified, as a JSON-able value (on AWS it is handed to an async invoke after the ack), and the replier a channel
answers through."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict

from personal_agent.channels.config_store import ChannelKind


class StagedFile(BaseModel):
    """A file of an inbound e-mail, stored until its sender's chat takes it."""

    model_config = ConfigDict(frozen=True)

    filename: str
    content_type: str
    size: int
    key: str


class RefusedFile(BaseModel):
    """A file of an inbound e-mail not taken, and why (told in the thread)."""

    model_config = ConfigDict(frozen=True)

    filename: str
    reason: str


class Inbound(BaseModel):
    """A message from a channel user, verified to come from the channel."""

    model_config = ConfigDict(frozen=True)

    kind: ChannelKind
    org_id: UUID
    event_id: str
    """The channel's id of the message (its retries carry the same)."""
    sender: str
    """Who sent it in the channel's terms: a Slack user id, a Telegram user id, an e-mail address."""
    sender_label: str = ""
    thread_key: str
    """The conversation it belongs to (a Slack thread, a Telegram chat, an e-mail thread's first Message-ID)."""
    text: str
    verified_sender: bool
    """The channel vouches for the sender (a signed Slack or Telegram request; an e-mail only with passing SPF and
    DKIM verdicts). Otherwise the message enters the run untrusted."""
    reply: dict[str, Any]
    """Where the answer goes, in the channel's terms (Slack channel and thread, Telegram chat, e-mail headers)."""
    files: tuple[StagedFile, ...] = ()
    """Files the message carries, staged until the member's chat takes them (e-mail)."""
    refused: tuple[RefusedFile, ...] = ()
    """Files it carried that are not taken (over the limits, a type that cannot be attached)."""
    codes: tuple[str, ...] = ()
    """An e-mail's answer codes (the sub-addresses of the channel's address it was sent to, `email_proof`): what
    proves it answers the question whose mail it replies to."""
    verdicts: dict[str, str] | None = None
    """SES's receipt verdicts of an e-mail (None: the mail came without, as under `pa dev`)."""


class Decision(BaseModel):
    """An approval answered in a channel (a Slack button, a Telegram inline key, an e-mail reply)."""

    model_config = ConfigDict(frozen=True)

    kind: ChannelKind
    org_id: UUID
    event_id: str
    sender: str
    sender_label: str = ""
    approval_id: UUID | None
    """None: every pending approval of the thread's chat (an e-mail reply)."""
    decision: Literal["approve", "deny"]
    reason: str | None = None
    """Why (a Slack modal's reason for a denial)."""
    thread_key: str = ""
    reply: dict[str, Any]
    codes: tuple[str, ...] = ()
    """An e-mail's answer codes: only a reply to the approval mail's own address (its code) decides that approval;
    a `From` line proves nothing (`email_proof`)."""
    verdicts: dict[str, str] | None = None
    """SES's receipt verdicts of an e-mail (None: none given, as under `pa dev`); where given, SPF and DKIM must
    pass for the reply to decide anything."""


class FollowRun(BaseModel):
    """A channel's run to answer in its thread again: it went on (an approval decided, a question answered, in the
    channel or the web chat) when no follower held its thread (`followers`)."""

    model_config = ConfigDict(frozen=True)

    kind: ChannelKind
    org_id: UUID
    run_id: UUID
    event_id: str = "follow"


class Reaction(BaseModel):
    """A 👍 or 👎 put on (or taken off) a message in a channel (a Slack reaction, a Telegram message reaction)."""

    model_config = ConfigDict(frozen=True)

    kind: ChannelKind
    org_id: UUID
    event_id: str
    sender: str
    message_key: str
    """The message reacted to, as `channel_posts` names the agent's (`channel:ts`, `chat_id:message_id`)."""
    rating: Literal[1, -1] | None
    """The rating it now gives; None: a thumb taken off (`taken_back`)."""
    taken_back: Literal[1, -1] | None = None


class Replier(ABC):
    """How one channel answers in a thread: post a message (and update it as text arrives, where the channel can),
    offer approvals to decide, say something short."""

    streams = True
    """Whether an answer is posted early and updated as it grows (Slack, Telegram), or sent once whole (e-mail)."""

    @abstractmethod
    async def post(self, text: str) -> str:
        """Post `text` in the thread; the handle to update it by."""

    def post_key(self, handle: str) -> str | None:
        """The posted message's name a reaction to it carries (`channel_posts`); None where there are no reactions."""
        return None

    async def update(self, handle: str, text: str) -> None:  # noqa: B027 (only channels that stream update)
        """Replace a posted message's text (channels that stream)."""

    @abstractmethod
    async def ask_approval(self, approval: dict[str, Any]) -> None:
        """Offer an `approval_requested` event's approval to approve or deny."""

    async def ask_question(self, question: dict[str, Any]) -> None:
        """Offer a `question_asked` event's question; a reply in the thread answers it."""
        choices = question.get("choices")
        how = f"Reply with one of: {', '.join(choices)}." if choices else "Reply in this thread to answer."
        await self.post(f"{question.get('question')}\n\n{how}")

    async def close(self) -> None:  # noqa: B027 (most hold nothing)
        """Release what the replier holds (an HTTP client)."""

    async def notice(self, text: str) -> None:
        """A short message of the channel layer's own (connect your account, a refusal)."""
        await self.post(text)
