"""Workflows: runs that systems start (webhooks, schedules) through the same launch chokepoint as chats."""
