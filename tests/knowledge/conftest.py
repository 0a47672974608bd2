"""Hugging Face Hub access turned off, so a model must come from the cache as a download leaves it."""

import pytest


@pytest.fixture
def hf_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
