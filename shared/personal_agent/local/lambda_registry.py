"""The project's Lambda handlers keyed by function name, built from the functions `template.yaml` declares."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[3]
TEMPLATE = REPO_ROOT / "template.yaml"

Handler = Callable[[dict[str, Any], Any], Any]


class _CfnLoader(yaml.SafeLoader):
    """YAML loader that keeps CloudFormation short-form tags (`!Ref`, `!Sub`, ...) as plain values."""


def _cfn_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    return {f"Fn::{suffix}" if suffix not in ("Ref", "Condition") else suffix: value}


_CfnLoader.add_multi_constructor("!", _cfn_tag)


def load_template(path: Path = TEMPLATE) -> dict[str, Any]:
    """The SAM template as plain data (intrinsic functions kept as one-key dicts)."""
    with path.open() as f:
        data: dict[str, Any] = yaml.load(f, Loader=_CfnLoader)  # noqa: S506 - our own loader subclasses SafeLoader
    return data


@dataclass(frozen=True)
class FunctionSpec:
    logical_id: str
    folder: str
    module: str
    attribute: str

    @property
    def local_name(self) -> str:
        """The function name used locally (and in the ASL substitutions of the local stack)."""
        return "pa-" + self.folder.replace("_", "-")

    def load(self) -> Handler:
        if not self.module:
            raise KeyError(f"{self.local_name} is an HTTP app under the Lambda Web Adapter; the dev server serves it")
        handler: Handler = getattr(_import_from_repo(self.module), self.attribute)
        return handler


def _import_from_repo(dotted: str) -> ModuleType:
    """Import `functions.<folder>.<module>` from the repo's files, whatever `sys.path` holds: `pa` is a console
    script, so the repo root is not on the path (pytest puts it there, which once hid exactly this)."""
    if dotted in sys.modules:
        return sys.modules[dotted]
    parts = dotted.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        if name in sys.modules:
            continue
        folder = REPO_ROOT.joinpath(*parts[:depth])
        is_package = depth < len(parts)
        path = folder / "__init__.py" if is_package else folder.with_suffix(".py")
        spec = importlib.util.spec_from_file_location(
            name, path, submodule_search_locations=[str(folder)] if is_package else None
        )
        if spec is None or spec.loader is None or not path.exists():
            raise ModuleNotFoundError(f"no module {name!r} at {path}", name=name)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[dotted]


def declared_functions(template: dict[str, Any] | None = None) -> list[FunctionSpec]:
    """Every AWS::Serverless::Function whose CodeUri is a folder under `functions/`."""
    template = template or load_template()
    specs: list[FunctionSpec] = []
    for logical_id, resource in template.get("Resources", {}).items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        props = resource.get("Properties", {})
        code_uri = str(props.get("CodeUri", "")).strip("/")
        if not code_uri.startswith("functions/"):
            continue
        folder = code_uri.split("/", 1)[1]
        handler = str(props.get("Handler", "app.handler"))
        if handler.endswith(".sh"):
            # A Lambda Web Adapter function (the SSE relay): an HTTP app, which the dev server mounts.
            specs.append(FunctionSpec(logical_id, folder, "", ""))
            continue
        module_name, _, attribute = handler.rpartition(".")
        specs.append(FunctionSpec(logical_id, folder, f"functions.{folder}.{module_name}", attribute))
    return specs


class LambdaRegistry:
    """Handlers by function name (local name, logical id or ARN), imported on first use."""

    def __init__(self, specs: list[FunctionSpec]) -> None:
        self._specs: dict[str, FunctionSpec] = {}
        for spec in specs:
            self._specs[spec.local_name] = spec
            self._specs[spec.logical_id] = spec
        self._loaded: dict[str, Handler] = {}
        self.overrides: dict[str, Handler] = {}

    @classmethod
    def from_template(cls, path: Path = TEMPLATE) -> LambdaRegistry:
        return cls(declared_functions(load_template(path)))

    @staticmethod
    def _name(name_or_arn: str) -> str:
        # arn:aws:lambda:region:account:function:NAME[:qualifier]
        parts = name_or_arn.split(":")
        return parts[6] if name_or_arn.startswith("arn:") and len(parts) >= 7 else name_or_arn

    def names(self) -> list[str]:
        return sorted({spec.local_name for spec in self._specs.values()})

    def resolve(self, name_or_arn: str) -> tuple[str, Handler]:
        name = self._name(name_or_arn)
        if name in self.overrides:
            return name, self.overrides[name]
        spec = self._specs.get(name)
        if spec is None:
            raise KeyError(f"no function named {name!r} in template.yaml")
        if spec.local_name not in self._loaded:
            self._loaded[spec.local_name] = spec.load()
        return spec.local_name, self._loaded[spec.local_name]
