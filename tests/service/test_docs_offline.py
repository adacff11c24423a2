"""/docs works with no network beyond the referee: the page names no other host, and every
script, style and icon it loads is served by the referee itself (from the swagger-ui-py
package it installs)."""

from __future__ import annotations

import re

import httpx


def test_the_docs_page_loads_everything_from_the_referee(server):
    http = httpx.Client(base_url=server.url)
    page = http.get("/docs")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", page.text), "another host"
    loaded = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert {"js", "css", "png"} <= {url.rsplit(".", 1)[-1] for url in loaded}
    for url in loaded:
        assert url.startswith("/docs/"), url
        asset = http.get(url)
        assert asset.status_code == 200 and len(asset.content) > 1000, url
    assert '"openapi":"3.1.0"' in page.text.replace(" ", "")  # the contract is in the page
