"""Unzipped (and zipped) size of every function and layer `make build` produced under .aws-sam/build.

Lambda's hard limit is 250 MB unzipped for a function plus its layers; this project's target is the API
function plus its layer under 50 MB. Prints figures; exits non-zero only when a function and its layers
break the hard limit (`sam deploy` would refuse it anyway) or the API layer carries pydantic-ai or a model SDK.
"""

from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / ".aws-sam" / "build"
MB = 1024 * 1024
HARD_LIMIT_MB = 250
API_TARGET_MB = 50
WORKER_ONLY = ("pydantic_ai", "openai", "anthropic", "mcp", "genai_prices")


def tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def zipped_size(path: Path) -> int:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for p in sorted(path.rglob("*")):
            if p.is_file():
                zf.write(p, p.relative_to(path))
    return buffer.tell()


def largest_packages(layer: Path, count: int = 8) -> list[tuple[str, int]]:
    site = layer / "python"
    sizes = [
        (p.name, tree_size(p) if p.is_dir() else p.stat().st_size) for p in site.iterdir() if "dist-info" not in p.name
    ]
    return sorted(sizes, key=lambda item: -item[1])[:count]


def local_layers(props: dict[str, Any]) -> list[str]:
    """Layers of this stack that a function uses (`!Ref SomeLayer`); public ARNs are not measured."""
    return [layer["Ref"] for layer in props.get("Layers", []) if isinstance(layer, dict) and "Ref" in layer]


def main() -> int:
    from personal_agent.local.lambda_registry import load_template

    built = BUILD / "template.yaml"
    if not built.is_file():
        print("no .aws-sam/build/template.yaml: run `make build` first", file=sys.stderr)
        return 2
    resources = load_template(built)["Resources"]
    sizes: dict[str, int] = {}
    print(f"{'artifact':<22}{'unzipped MB':>14}{'zipped MB':>12}")
    for name in sorted(resources):
        if resources[name]["Type"] in ("AWS::Serverless::Function", "AWS::Serverless::LayerVersion"):
            folder = BUILD / name
            if folder.is_dir():
                sizes[name] = tree_size(folder)
                print(f"{name:<22}{sizes[name] / MB:>14.3f}{zipped_size(folder) / MB:>12.3f}")
    print()
    over = False
    for name, resource in sorted(resources.items()):
        if resource["Type"] != "AWS::Serverless::Function" or name not in sizes:
            continue
        layers = [layer for layer in local_layers(resource.get("Properties", {})) if layer in sizes]
        total = (sizes[name] + sum(sizes[layer] for layer in layers)) / MB
        note = ""
        if name == "ApiFunction":
            note = f"  (target < {API_TARGET_MB} MB: {'met' if total < API_TARGET_MB else 'MISSED'})"
        if total >= HARD_LIMIT_MB:
            note, over = f"  OVER Lambda's {HARD_LIMIT_MB} MB limit", True
        print(f"{name} + {' + '.join(layers) or 'no layer'}: {total:.2f} MB unzipped{note}")
    for layer in ("ApiLayer", "WorkerLayer"):
        if layer in sizes:
            biggest = ", ".join(f"{pkg} {size / MB:.1f}" for pkg, size in largest_packages(BUILD / layer))
            print(f"largest in {layer} (MB): {biggest}")
    carried = [name for name in WORKER_ONLY if (BUILD / "ApiLayer" / "python" / name).exists()]
    if carried:
        print(f"ApiLayer carries {', '.join(carried)}: the API function must not")
    return 1 if over or carried else 0


if __name__ == "__main__":
    sys.exit(main())
