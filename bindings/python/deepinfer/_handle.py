"""NativeHandle: the closing protocol every wrapper of one native object (``self._native``)
shares: ``close()`` releases it (idempotent) and ``with`` closes it on exit."""

from __future__ import annotations


class NativeHandle:
    _native: object

    def close(self) -> None:
        self._native.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
