"""Exceptions raised by deepinfer: one class per di_status error, all under DeepInferError.

Each carries the library's status code and name, its message (which names the field at fault)
and, for rejected API requests, the HTTP status and the API's error body (``detail``).
"""
from __future__ import annotations

import json
from typing import Any, Optional


class DeepInferError(Exception):
    """An error reported by libdeepinfer (a negative di_status)."""

    status: int = 0
    status_name: str = ""

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
        if isinstance(self.detail, dict):
            return self.detail.get("status")
        return None

    @property
    def body(self) -> Any:
        """The API's error body for a request the recipe rejected, else None."""
        if isinstance(self.detail, dict):
            return self.detail.get("body")
        return None

    def __str__(self) -> str:
        return f"{self.status_name}: {self.message}"


class InvalidArgumentError(DeepInferError, ValueError):
    status, status_name = -1, "DI_E_INVALID_ARG"


class OutOfMemoryError(DeepInferError, MemoryError):
    status, status_name = -2, "DI_E_OOM"


class UnsupportedError(DeepInferError, NotImplementedError):
    status, status_name = -3, "DI_E_UNSUPPORTED"


class NotFoundError(DeepInferError, LookupError):
    status, status_name = -4, "DI_E_NOT_FOUND"


class DeepInferIOError(DeepInferError, OSError):
    status, status_name = -5, "DI_E_IO"


class ParseError(DeepInferError, ValueError):
    status, status_name = -6, "DI_E_PARSE"


class CancelledError(DeepInferError):
    status, status_name = -7, "DI_E_CANCELLED"


class InternalError(DeepInferError, RuntimeError):
    status, status_name = -8, "DI_E_INTERNAL"


class LimitError(DeepInferError, ValueError):
    status, status_name = -9, "DI_E_LIMIT"


class StateError(DeepInferError, RuntimeError):
    status, status_name = -10, "DI_E_STATE"


class DeviceError(DeepInferError, RuntimeError):
    status, status_name = -11, "DI_E_DEVICE"


class PermissionDeniedError(DeepInferError, PermissionError):
    status, status_name = -12, "DI_E_PERMISSION"


_BY_STATUS = {cls.status: cls for cls in (
    InvalidArgumentError, OutOfMemoryError, UnsupportedError, NotFoundError, DeepInferIOError,
    ParseError, CancelledError, InternalError, LimitError, StateError, DeviceError,
    PermissionDeniedError)}


def _from_status(status: int, status_name: str, message: str, detail: str) -> DeepInferError:
    """Called by the native module to build the exception for a di_error."""
    parsed: Any = None
    if detail:
        try:
            parsed = json.loads(detail)
        except ValueError:
            parsed = detail
    cls = _BY_STATUS.get(status, DeepInferError)
    return cls(message, status=status, status_name=status_name, detail=parsed)
