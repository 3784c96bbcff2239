"""The local stack's VAPID key pair: made once, kept in the data dir (owner-only), so a browser subscribed
yesterday still gets today's pushes. A deploy sets `PA_VAPID_PUBLIC_KEY`/`PA_VAPID_PRIVATE_KEY` instead."""

from __future__ import annotations

import json
import os
from pathlib import Path

from personal_agent.push.vapid import new_key_pair


def local_vapid_keys(data_dir: Path) -> dict[str, str]:
    path = data_dir / "vapid.json"
    if path.exists():
        keys = json.loads(path.read_text())
    else:
        private, public = new_key_pair()
        keys = {"private": private, "public": public}
        data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(keys, out)
    return {"PA_VAPID_PUBLIC_KEY": keys["public"], "PA_VAPID_PRIVATE_KEY": keys["private"]}
