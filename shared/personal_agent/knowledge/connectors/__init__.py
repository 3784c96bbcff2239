"""Connectors: where a source's documents come from, one module per kind (`s3`, `web` for `sitemap` and `url`).
A connector lists what the source holds now and fetches one item (conditionally, when it can); the sync
(`knowledge/source_sync.py`) compares, adds, updates and removes. Google Drive, SharePoint or Confluence follow as
one more module each, registered in `connector_for`."""

from __future__ import annotations

from personal_agent.knowledge.connectors.base import Connector


def connector_for(kind: str) -> Connector:
    if kind == "s3":
        from personal_agent.knowledge.connectors.s3 import S3Connector

        return S3Connector()
    if kind in ("sitemap", "url"):
        from personal_agent.knowledge.connectors.web import WebConnector

        return WebConnector()
    raise ValueError(f"no connector for {kind!r}")
