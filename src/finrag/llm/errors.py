"""The errors every LLM backend raises, below the backends so the local-model loader can raise them too."""

from __future__ import annotations


class LLMError(RuntimeError):
    """A backend call failed; the message is one line and never contains a secret."""


class BackendUnavailable(LLMError):
    """The backend cannot run here (library missing, key unset, model file absent)."""


class SpendingCapExceeded(LLMError):
    """Refused before the call: it could push spending over the configured cap."""
