"""Serve tether over HTTP (the `serve` extra): the Agent API, the web page and an OpenAI-compatible endpoint."""
