"""The workspace: one knowledge base, its settings and its lazily built services.

Handlers receive a :class:`Workspace`. Heavy services (the index, the embedding
model, the sync queue) are created on first use through :meth:`Workspace.service`,
so starting the server never opens the database or loads a model.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, TypeVar

from .config import Config, Settings
from .errors import PermissionDenied
from .paths import PathGuard

__all__ = ["Workspace"]

T = TypeVar("T")


class Workspace:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root: Path = settings.root
        self.storage_path: Path = settings.storage_path
        self.config: Config = settings.config
        self.guard = PathGuard(settings.root, settings.storage_path)
        self._services: dict[type[Any], Any] = {}
        self._lock = threading.RLock()

    def service(self, cls: type[T]) -> T:
        """Return the workspace's single ``cls(self)``, creating it on first use."""
        with self._lock:
            instance = self._services.get(cls)
            if instance is None:
                instance = cls(self)  # type: ignore[call-arg]
                self._services[cls] = instance
            return instance

    def has_service(self, cls: type[Any]) -> bool:
        return cls in self._services

    def require_writes(self) -> None:
        if not self.config.knowledge_base.allow_writes:
            raise PermissionDenied(
                "Workspace writes are disabled: set knowledgeBase.allowWrites: true in the configuration "
                "(or start the server with --allow-writes) to let tools change files."
            )

    def close(self) -> None:
        with self._lock:
            services = list(self._services.values())
            self._services.clear()
        for service in reversed(services):
            close = getattr(service, "close", None) or getattr(service, "shutdown", None)
            if callable(close):
                close()
