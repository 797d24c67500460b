"""Which events the consent gate lets through: decided per (app, URL, file path), the traits routes use."""

from __future__ import annotations

from gateway import Gate


class Gatekeeper:
    """The gate's verdicts for one call, remembered per trait triple (a day holds few distinct ones)."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        # Without an apps, urls or paths route no event belongs to a project: one verdict for all.
        self.routed = any(p.apps or p.urls or p.paths for p in gate.projects)
        self.default = gate.allows(())
        self._verdicts: dict[tuple[str | None, str | None, str | None], bool] = {}

    @property
    def uniform(self) -> bool:
        return not self.routed

    def owners(self, app: str | None, url: str | None, path: str | None) -> frozenset[str]:
        return self.gate.owners_of(app=app or None, url=url or None, path=path or None)

    def allows(self, app: str | None, url: str | None, path: str | None) -> bool:
        if not self.routed:
            return self.default
        key = (app, url, path)
        verdict = self._verdicts.get(key)
        if verdict is None:
            verdict = self._verdicts[key] = self.gate.allows(self.owners(app, url, path))
        return verdict
