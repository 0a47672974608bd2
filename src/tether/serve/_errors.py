"""The API's one error shape: `{"error": {"code", "message", "suggestion"}}` with its HTTP status."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

__all__ = ["ApiError", "error_body", "install_error_handlers"]


class ApiError(Exception):
    """A request the API refuses; becomes `status` with the error body (never a traceback)."""

    def __init__(self, status: int, code: str, message: str, suggestion: str | None = None, **headers: str):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.suggestion = suggestion
        self.headers = headers


def error_body(code: str, message: str, suggestion: str | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "suggestion": suggestion}}


def _response(
    status: int, code: str, message: str, suggestion: str | None, headers: dict[str, str]
) -> JSONResponse:
    return JSONResponse(error_body(code, message, suggestion), status_code=status, headers=headers or None)


_CODES = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
}


_SEND_JSON = (
    'Send a JSON object as /openapi.json describes, e.g. {"content": "hello"}, with Content-Type: '
    "application/json (nested no more than a few hundred levels)."
)


def install_error_handlers(app: FastAPI) -> None:
    """Every failure answers in the one error shape: refusals, invalid bodies, unknown routes and bugs."""

    async def api_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, ApiError)
        return _response(error.status, error.code, error.message, error.suggestion, error.headers)

    async def invalid(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, RequestValidationError)
        unreadable = next((e for e in error.errors() if e.get("type") == "json_invalid"), None)
        if unreadable is not None:  # not a field's problem: the body is no JSON at all
            where = unreadable.get("ctx", {}).get("error", "invalid JSON")
            message = f"body: not valid JSON ({where} at character {unreadable.get('loc', ('', '?'))[-1]})"
            return _response(422, "INVALID_REQUEST", message, _SEND_JSON, {})
        problems = [
            f"{'.'.join(str(p) for p in e.get('loc', ()) if p != 'body') or 'body'}: {e.get('msg', 'invalid')}"
            for e in error.errors()
        ]
        return _response(
            422,
            "INVALID_REQUEST",
            "; ".join(problems),
            "Fix the fields named above; the API's schema is at /openapi.json.",
            {},
        )

    async def http_error(request: Request, error: Exception) -> JSONResponse:
        assert isinstance(error, HTTPException)
        code = _CODES.get(error.status_code, "HTTP_ERROR")
        suggestion = _SEND_JSON if error.status_code == 400 else None  # FastAPI's "error parsing the body"
        return _response(error.status_code, code, str(error.detail), suggestion, dict(error.headers or {}))

    async def bug(request: Request, error: Exception) -> JSONResponse:
        # a bug in tether: one line for the client, the traceback stays in the server's log
        message = f"Internal error ({type(error).__name__}); the server's log has the details."
        return _response(500, "INTERNAL", message, "Retry; if it keeps failing, report it with the log.", {})

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(Exception, bug)
