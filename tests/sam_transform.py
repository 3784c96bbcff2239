"""Expand template.yaml's SAM transform locally, as CloudFormation would, for emulators that do not run it (moto).

Runs under the SAM CLI's own interpreter (`.tools/sam/bin/python`), which carries samtranslator; the app's venv
does not. `transformed_template()` is what tests call: it runs this file as a script and parses its JSON output.
Local code locations (CodeUri, ContentUri, DefinitionUri) become S3 locations, as `sam package` would make them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SAM_PYTHON = ROOT / ".tools" / "sam" / "bin" / "python"
ARTIFACT_BUCKET = "pa-artifacts"
_LOCATIONS = {"CodeUri", "ContentUri", "DefinitionUri"}


def transformed_template(template: Path = ROOT / "template.yaml") -> dict[str, Any]:
    """The template with the SAM transform applied (plain CloudFormation), via the SAM CLI's interpreter."""
    done = subprocess.run(
        [str(SAM_PYTHON), __file__, str(template)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        # The transform reads the region only to fill pseudo parameters it leaves as references anyway.
        env={**os.environ, "AWS_DEFAULT_REGION": os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"},
    )
    if done.returncode != 0:
        raise RuntimeError(f"the SAM transform failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _packaged(template: dict[str, Any]) -> dict[str, Any]:
    for name, resource in template.get("Resources", {}).items():
        props = resource.get("Properties", {})
        for key in _LOCATIONS & set(props):
            if isinstance(props[key], str) and not props[key].startswith("s3://"):
                props[key] = f"s3://{ARTIFACT_BUCKET}/{name}.zip"
    return template


def _main(path: str) -> None:
    from samtranslator.model.exceptions import InvalidDocumentException
    from samtranslator.translator.transform import transform
    from samtranslator.yaml_helper import yaml_parse

    template = _packaged(yaml_parse(Path(path).read_text()))
    try:
        # No managed policy is looked up by name (the template names none), so no IAM call is needed.
        output = transform(template, {}, _NoManagedPolicies())  # type: ignore[arg-type]
    except InvalidDocumentException as exc:
        sys.stderr.write("; ".join(str(cause) for cause in exc.causes))
        raise SystemExit(1) from None
    sys.stdout.write(json.dumps(output))


class _NoManagedPolicies:
    def load(self) -> dict[str, str]:
        return {}


if __name__ == "__main__":
    _main(sys.argv[1])
