"""Fast path: an app's routers, included eagerly (tests, `pa dev`, the OpenAPI document) or lazily (the API
Lambda, where importing every router with its services, stores and pydantic models is most of a cold start).

Relies on Starlette's router trying `app.router.routes` in order, each route's `matches`, and
`starlette._utils.get_route_path`; `tests/unit/test_fastpaths.py` checks that a request imports only its group.

Lazily, each router's place in the route list holds a stand-in. For a path under one of the router's prefixes
it imports the router, puts its routes in that very place, and dispatches the request again from the top; a
last stand-in does the same for all routers still missing when nothing else matched (an unknown path, a
method no loaded route takes, a trailing-slash redirect). So every request is answered by the same routes in
the same order as the eager app; the prefixes only decide how much a request loads.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, FastAPI
from starlette._utils import get_route_path  # the path the routes match (root_path taken off), as Starlette's own
from starlette.datastructures import URLPath
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import Receive, Scope, Send


@dataclass(frozen=True)
class RouterGroup:
    module: str
    """Under `package`."""
    prefixes: tuple[str, ...]
    """Every route path of the group starts with one of these (a path-segment prefix; a test checks it)."""
    attributes: tuple[str, ...] = ("router",)
    package: str = "personal_agent.api"

    def routers(self) -> list[APIRouter]:
        module = importlib.import_module(f"{self.package}.{self.module}")
        return [getattr(module, name) for name in self.attributes]

    def covers(self, path: str) -> bool:
        return any(path == prefix or path.startswith(prefix + "/") for prefix in self.prefixes)


class _StandIn(BaseRoute):
    """A not-yet-imported group (or, with `group=None`, every one still missing) in its place in the routes."""

    def __init__(self, loader: LazyRouters, group: RouterGroup | None) -> None:
        self.loader = loader
        self.group = group

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] not in ("http", "websocket"):
            return Match.NONE, {}
        if self.group is None:
            return (Match.FULL if self.loader.missing() else Match.NONE), {}
        loaded = self.group in self.loader.loaded
        return (Match.FULL if not loaded and self.group.covers(get_route_path(scope)) else Match.NONE), {}

    def url_path_for(self, name: str, /, **path_params: object) -> URLPath:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.group is None:
            self.loader.load_all()
        else:
            self.loader.load(self.group)
        await self.loader.app.router.app(scope, receive, send)  # again from the top, the routes now in place


class LazyRouters:
    """The stand-ins of one app, and which groups are in place."""

    def __init__(self, app: FastAPI, groups: tuple[RouterGroup, ...]) -> None:
        self.app = app
        self.groups = groups
        self.loaded: set[RouterGroup] = set()

    def missing(self) -> bool:
        return len(self.loaded) < len(self.groups)

    def load(self, group: RouterGroup) -> None:
        if group in self.loaded:
            return
        routes = self.app.router.routes
        place = next(i for i, r in enumerate(routes) if isinstance(r, _StandIn) and r.group is group)
        before = len(routes)
        for router in group.routers():
            self.app.include_router(router)  # appends; moved into the stand-in's place below
        added = routes[before:]
        del routes[before:]
        routes[place:place] = added
        self.loaded.add(group)

    def load_all(self) -> None:
        for group in self.groups:
            self.load(group)


def include_routers(app: FastAPI, groups: tuple[RouterGroup, ...], *, lazy: bool) -> None:
    """Add every group's routes (eagerly), or stand-ins for them and a last catch-all stand-in (lazily)."""
    if not lazy:
        for group in groups:
            for router in group.routers():
                app.include_router(router)
        return
    loader = LazyRouters(app, groups)
    app.router.routes.extend([*(_StandIn(loader, group) for group in groups), _StandIn(loader, None)])
    app.state.lazy_routers = loader
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        loader.load_all()
        return generate()

    app.openapi = openapi  # type: ignore[method-assign]
