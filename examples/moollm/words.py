"""The Python behind `text.count_words` in tools.yaml."""


def count_words(text: str) -> dict[str, int]:
    return {"words": len(text.split())}
