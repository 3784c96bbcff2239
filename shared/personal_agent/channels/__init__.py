"""Channels in: Slack, Telegram and e-mail reach an agent (issue 34). Each channel is an adapter: it verifies its own
signature, translates the message into the one launch request and reads the run's AG-UI stream back."""
