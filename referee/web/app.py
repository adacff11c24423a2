"""The app factory: the routes, the hot routes in front of them, every error as a problem,
and the services started and stopped with the app."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator

from litestar import Litestar

from .._gc import settle_collector
from ..plugins import load_plugins
from ..service import Services
from ..settings import Settings
from .access import Organizers
from .compression import COMPRESSION
from .contract import docs_assets, finish_contract, openapi_config, openapi_json
from .hot import HotRoutesLitestar
from .league_pages import LEAGUE_PAGES
from .league_routes import LEAGUE_CONTROLLERS
from .pages import PAGES, not_found_page, static_files, warm_replays
from .problems import exception_handlers
from .routes import controllers

__all__ = ["create_app", "openapi_document"]


def create_app(settings: Settings | None = None) -> Litestar:
    """The ASGI app. Without a Redis URL it starts an embedded Valkey for itself."""
    settings = settings or Settings.from_env()
    load_plugins()  # before the routes: they list the registry

    @contextlib.asynccontextmanager
    async def lifespan(app: HotRoutesLitestar) -> AsyncIterator[None]:
        services = Services.start(settings)
        app.state.services = services
        app.hot.limits = services.limits
        warm_replays(services.games)
        if settings.fast_routes:
            app.hot.seats = services.seats
            app.hot.league = services.league
            app.hot.services = services
        # the app, the engines' caches and the pools live as long as the process (see _gc)
        settle_collector()
        try:
            yield
        finally:
            app.hot.seats = app.hot.limits = app.hot.league = app.hot.services = None
            await services.stop()

    app = HotRoutesLitestar(
        route_handlers=[
            *controllers(),
            *LEAGUE_CONTROLLERS,
            docs_assets(),
            openapi_json,
            *PAGES,
            *LEAGUE_PAGES,
            static_files(),
        ],
        lifespan=[lifespan],
        exception_handlers={k: not_found_page(h) for k, h in exception_handlers().items()},
        compression_config=COMPRESSION,
        request_max_body_size=settings.max_body_bytes,
        openapi_config=openapi_config(),
        debug=False,
    )
    app.hot.trusted = settings.trusted_proxies
    app.state.organizers = app.hot.organizers = Organizers(
        settings.organizer_keys, settings.trusted_proxies
    )
    finish_contract(app)
    return app


def openapi_document() -> str:
    """The OpenAPI document of the app, as committed in openapi/openapi.json."""
    schema = create_app(Settings(redis_url="redis://unused")).openapi_schema.to_schema()
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"
