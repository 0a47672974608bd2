// The Agent API from the browser: fetch with the stored API key (asked for only after a 401), JSON errors as
// `ApiError`, and a run's Server-Sent Events read from a fetch response (EventSource can neither POST nor
// send the key).

// The API's root: where the page is served (`/`), or its parent when the files are served from `<root>/page/`.
const ROOT = new URL(new URL(import.meta.url).pathname.endsWith("/page/api.js") ? ".." : ".", import.meta.url);
const KEY_STORAGE = "tether.apiKey";

const $ = (id) => document.getElementById(id);

/** An answer of the API that is not a success: `{error: {code, message, suggestion}}` and its status. */
export class ApiError extends Error {
  constructor(status, error) {
    super(error.message || `HTTP ${status}`);
    this.status = status;
    this.code = error.code || `HTTP_${status}`;
    this.suggestion = error.suggestion || null;
  }
}

async function errorOf(response) {
  try {
    const body = await response.json();
    if (body && typeof body.error === "object" && body.error) return body.error;
    if (body && typeof body.detail === "string") return { message: body.detail };
  } catch {
    // not JSON: the status says enough
  }
  return { message: `${response.status} ${response.statusText}`.trim() };
}

let keyPrompt = null; // one dialog for every request that met a 401 at the same time

/** Ask the user for an API key (only ever after a 401); resolves once one is stored, or null if dismissed. */
function askForKey(reason) {
  keyPrompt ??= new Promise((resolve) => {
    const dialog = $("key-dialog");
    const input = $("key-input");
    $("key-reason").textContent = localStorage.getItem(KEY_STORAGE)
      ? `The server refused the stored key: ${reason.message || "unauthorized"}`
      : "This server needs an API key.";
    input.value = "";
    dialog.addEventListener(
      "close",
      () => {
        keyPrompt = null;
        const key = dialog.returnValue === "save" ? input.value.trim() : "";
        if (key) localStorage.setItem(KEY_STORAGE, key);
        resolve(key || null);
      },
      { once: true },
    );
    dialog.returnValue = "";
    dialog.showModal();
    input.focus();
  });
  return keyPrompt;
}

/** fetch() against the API with the stored key; a 401 asks for a key and tries again. */
export async function api(path, { method = "GET", body, accept = "application/json", headers = {} } = {}) {
  for (;;) {
    const sent = { Accept: accept, ...headers };
    const key = localStorage.getItem(KEY_STORAGE);
    if (key) sent.Authorization = `Bearer ${key}`;
    if (body !== undefined) sent["Content-Type"] = "application/json";
    const response = await fetch(new URL(path, ROOT), {
      method,
      headers: sent,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
    });
    if (response.status === 401) {
      if (localStorage.getItem(KEY_STORAGE) !== key) continue; // a key was given meanwhile: try that one
      const error = await errorOf(response);
      if ((await askForKey(error)) === null) throw new ApiError(401, error);
      continue;
    }
    if (!response.ok) throw new ApiError(response.status, await errorOf(response));
    return response;
  }
}

export async function apiJson(path, options) {
  return (await api(path, options)).json();
}

// ------------------------------------------------------------------------------------- Server-Sent Events

/** The SSE messages of a response body, as `{id, event, data}`, as they arrive (the WHATWG parsing rules). */
export async function* serverSentEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let id = null;
  let name = "";
  let data = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n")) >= 0) {
        let line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        if (line.endsWith("\r")) line = line.slice(0, -1);
        if (line === "") {
          if (data.length) yield { id, event: name || "message", data: data.join("\n") };
          name = "";
          data = [];
          continue;
        }
        if (line.startsWith(":")) continue; // a comment: keep-alive pings
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let text = colon < 0 ? "" : line.slice(colon + 1);
        if (text.startsWith(" ")) text = text.slice(1);
        if (field === "data") data.push(text);
        else if (field === "event") name = text;
        else if (field === "id" && !text.includes("\0")) id = text;
      }
    }
  } finally {
    reader.releaseLock();
  }
}
