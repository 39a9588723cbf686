"""Browser tests see a page as a student offline would: every request that leaves the allowed places is refused
and recorded, so a test can assert that nothing was fetched from another machine."""

from __future__ import annotations


def keep_offline(page, allowed: tuple[str, ...] = ("file://", "data:")) -> list[str]:
    """Route PAGE's requests (a page, or a browser context: its pages' workers' requests too, which a page's own
    routes never see): those starting with an ALLOWED prefix go through, any other is aborted and listed."""
    remote: list[str] = []

    def guard(route) -> None:
        if route.request.url.startswith(allowed):
            route.continue_()
        else:
            remote.append(route.request.url)
            route.abort()

    page.route("**/*", guard)
    return remote
