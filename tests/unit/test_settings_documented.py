"""Every environment variable the settings read is documented in the README."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import AliasChoices

from personal_agent.settings import Settings

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_every_setting_env_var_is_in_the_readme() -> None:
    missing = []
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        names = [str(a) for a in alias.choices] if isinstance(alias, AliasChoices) else [name.upper()]
        documented = any(n in README for n in names)
        # Identity settings are documented in docs/identity.md, referenced from the README as PA_OIDC_*.
        if not documented and any(re.match(r"PA_OIDC_", n) for n in names):
            documented = "PA_OIDC_*" in README and all(
                n in (README + (Path(__file__).resolve().parents[2] / "docs" / "identity.md").read_text())
                for n in names
            )
        if not documented:
            missing.append((name, names))
    assert missing == []
