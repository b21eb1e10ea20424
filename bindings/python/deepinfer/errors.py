"""Exceptions raised by deepinfer: one class per di_status error, all under DeepInferError.

Each carries the library's status code and name, its message (which names the field at fault)
and, for rejected API requests, the HTTP status and the API's error body (``detail``).
"""
from __future__ import annotations

import json
from typing import Any, Dict, Optional


class DeepInferError(Exception):
    """An error reported by libdeepinfer (a negative di_status)."""

    status: int = 0
    status_name: str = ""
    _by_status: Dict[int, type] = {}

    def __init_subclass__(cls, status: Optional[int] = None, status_name: str = "", **kwargs):
        # The one place a subclass's status is set: ``class X(DeepInferError, status=-1,
        # status_name="DI_E_...")`` also makes _from_status raise X for that status.
        super().__init_subclass__(**kwargs)
        if status is not None:
            cls.status, cls.status_name = status, status_name
            DeepInferError._by_status[status] = cls

    def __init__(self, message: str, status: Optional[int] = None,
                 status_name: Optional[str] = None, detail: Any = None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        if status_name is not None:
            self.status_name = status_name
        self.detail = detail

    @property
    def http_status(self) -> Optional[int]:
        """The HTTP status of a request the recipe rejected, else None."""
        return self._detail_field("status")

    @property
    def body(self) -> Any:
        """The API's error body for a request the recipe rejected, else None."""
        return self._detail_field("body")

    def _detail_field(self, key: str) -> Any:
        return self.detail.get(key) if isinstance(self.detail, dict) else None

    def __str__(self) -> str:
        return f"{self.status_name}: {self.message}"


# One subclass per di_status error; each also derives from the built-in exception it means.
class InvalidArgumentError(DeepInferError, ValueError, status=-1, status_name="DI_E_INVALID_ARG"):
    pass


class OutOfMemoryError(DeepInferError, MemoryError, status=-2, status_name="DI_E_OOM"):
    pass


class UnsupportedError(DeepInferError, NotImplementedError, status=-3,
                       status_name="DI_E_UNSUPPORTED"):
    pass


class NotFoundError(DeepInferError, LookupError, status=-4, status_name="DI_E_NOT_FOUND"):
    pass


class DeepInferIOError(DeepInferError, OSError, status=-5, status_name="DI_E_IO"):
    pass


class ParseError(DeepInferError, ValueError, status=-6, status_name="DI_E_PARSE"):
    pass


class CancelledError(DeepInferError, status=-7, status_name="DI_E_CANCELLED"):
    pass


class InternalError(DeepInferError, RuntimeError, status=-8, status_name="DI_E_INTERNAL"):
    pass


class LimitError(DeepInferError, ValueError, status=-9, status_name="DI_E_LIMIT"):
    pass


class StateError(DeepInferError, RuntimeError, status=-10, status_name="DI_E_STATE"):
    pass


class DeviceError(DeepInferError, RuntimeError, status=-11, status_name="DI_E_DEVICE"):
    pass


class PermissionDeniedError(DeepInferError, PermissionError, status=-12,
                            status_name="DI_E_PERMISSION"):
    pass


def _from_status(status: int, status_name: str, message: str, detail: str) -> DeepInferError:
    """Called by the native module to build the exception for a di_error."""
    parsed: Any = None
    if detail:
        try:
            parsed = json.loads(detail)
        except ValueError:
            parsed = detail
    cls = DeepInferError._by_status.get(status, DeepInferError)
    return cls(message, status=status, status_name=status_name, detail=parsed)
