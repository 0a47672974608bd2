// tether's chat page: plain modern JavaScript, no build step, nothing loaded from elsewhere.
//
// It speaks the Agent API (docs/serve.md): a run's events arrive as Server-Sent Events over fetch (not
// EventSource, which can neither POST nor send the API key), each with its sequence number as the SSE id. A
// stream that drops before `on_chain_end` is followed again from `GET /api/sessions/{id}/events` with the last
// seen id, so nothing is lost; ids at or below it are skipped, so nothing is shown twice. Everything the model
// or a tool wrote is inserted as text (textContent), never as HTML.

// The API's root: where the page is served (`/`), or its parent when the files are served from `<root>/page/`.
const ROOT = new URL(new URL(import.meta.url).pathname.endsWith("/page/app.js") ? ".." : ".", import.meta.url);
const KEY_STORAGE = "tether.apiKey";
const RECONNECT_MAX_DELAY_MS = 4000;
const MAX_RECONNECTS = 30; // about two minutes of trying
const RELOAD = "Reload the page to see the conversation as the server stored it.";

const $ = (id) => document.getElementById(id);

/** Make an element: `el("p", {className: "x"}, "text", child)`; strings become text nodes. */
function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null) continue;
    if (name in node && !name.startsWith("aria") && name !== "role") node[name] = value;
    else node.setAttribute(name, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

function pretty(value) {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ------------------------------------------------------------------------------------------------ the API

/** An answer of the API that is not a success: `{error: {code, message, suggestion}}` and its status. */
class ApiError extends Error {
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
async function api(path, { method = "GET", body, accept = "application/json", headers = {} } = {}) {
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
      const error = await errorOf(response);
      if ((await askForKey(error)) === null) throw new ApiError(401, error);
      continue;
    }
    if (!response.ok) throw new ApiError(response.status, await errorOf(response));
    return response;
  }
}

async function apiJson(path, options) {
  return (await api(path, options)).json();
}

// ------------------------------------------------------------------------------------- Server-Sent Events

/** The SSE messages of a response body, as `{id, event, data}`, as they arrive (the WHATWG parsing rules). */
async function* serverSentEvents(response) {
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

// ---------------------------------------------------------------------------------------------- rendering

/** One tool call shown live: name, why, arguments, a spinner, then its envelope. */
class ToolCard {
  constructor(call) {
    this.node = $("tool-template").content.firstElementChild.cloneNode(true);
    this.node.dataset.callId = call.id;
    this.node.dataset.tool = call.name;
    this.node.querySelector(".tool-name").textContent = call.name;
    // `why` is the call's own field in dialects that have one (YAML), else an argument (seed 001 §4).
    const { why: argumentWhy, ...args } = call.arguments ?? {};
    const why = call.why ?? (typeof argumentWhy === "string" ? argumentWhy : null);
    const whyNode = this.node.querySelector(".tool-why");
    if (why) whyNode.textContent = why;
    else whyNode.remove();
    this.node.querySelector(".tool-args").textContent = pretty(why === argumentWhy ? args : (call.arguments ?? {}));
    this.node.setAttribute("aria-label", `Tool call ${call.name}`);
  }

  /** The call's envelope: ok data, the information it needs, or an error with its suggestion. */
  ended(envelope, view) {
    this.done(envelope.ok ? "ok" : envelope.needs ? "needs" : "error");
    const result = this.node.querySelector(".tool-result");
    result.replaceChildren(renderEnvelope(envelope));
    if (envelope.needs && view) view.needsForm(this.node.dataset.callId, envelope.needs, result);
  }

  done(state) {
    this.node.setAttribute("aria-busy", "false");
    this.node.dataset.state = state;
    this.node.querySelector(".spinner")?.remove();
    const label = { ok: "✓ ok", needs: "? needs input", error: "✗ error", unanswered: "– no result" }[state];
    this.node.querySelector(".tool-state").textContent = label;
    this.node.querySelector(".tool-state").removeAttribute("aria-hidden");
  }
}

function renderEnvelope(envelope) {
  if (envelope.ok) {
    return el("div", { className: "envelope ok" }, el("pre", { className: "envelope-data" }, pretty(envelope.data ?? null)));
  }
  if (envelope.needs) {
    return el("p", { className: "envelope needs" }, `Needs: ${Object.keys(envelope.needs).join(", ")}`);
  }
  return renderError(envelope.error ?? {}, "envelope error");
}

/** An error as the user can act on it: code, message and, when there is one, the suggestion. */
function renderError({ code, message, suggestion }, className) {
  return el(
    "div",
    { className },
    el("p", { className: "error-message" }, el("strong", { className: "error-code" }, code || "ERROR"), " ", message || ""),
    suggestion ? el("p", { className: "suggestion" }, el("span", { className: "suggestion-label" }, "Suggestion: "), suggestion) : null,
  );
}

/** A safe link for `open_url`: http(s) only, opened in a new tab that cannot reach back to this page. */
function renderLink(url) {
  let parsed = null;
  try {
    parsed = new URL(url);
  } catch {
    // not a URL at all
  }
  if (!parsed || !["http:", "https:"].includes(parsed.protocol)) {
    return el("p", { className: "open-url refused" }, `Not opened (not an http(s) URL): ${url}`);
  }
  return el(
    "p",
    { className: "open-url" },
    "Open: ",
    el("a", { href: parsed.href, target: "_blank", rel: "noopener noreferrer" }, parsed.href),
  );
}

// `say`'s styles (tether.loop's, read by espeak-ng on the server) as the browser's rate, pitch and volume.
const STYLES = {
  cheerful: { rate: 1.1, pitch: 1.3 },
  excited: { rate: 1.25, pitch: 1.5 },
  calm: { rate: 0.9, pitch: 0.8 },
  sad: { rate: 0.8, pitch: 0.7 },
  serious: { rate: 1.0, pitch: 0.8 },
  slow: { rate: 0.75 },
  fast: { rate: 1.4 },
  whisper: { volume: 0.4 },
};

/** Speak with the browser's speech synthesis when it has one; the words are always shown too. */
function speak(utterance, style) {
  if (!("speechSynthesis" in window) || typeof SpeechSynthesisUtterance !== "function") return false;
  const spoken = new SpeechSynthesisUtterance(utterance);
  Object.assign(spoken, STYLES[String(style ?? "").toLowerCase()] ?? {});
  window.speechSynthesis.speak(spoken);
  return true;
}

let fieldCounter = 0;

/** One session's conversation: its own part of the transcript, and the run it is following, if any. */
class SessionView {
  constructor(session) {
    this.id = session.session_id;
    this.agent = session.agent;
    this.title = session.title || "";
    this.node = el("div", { className: "thread" });
    this.node.dataset.sessionId = this.id;
    this.node.dataset.state = "idle";
    this.lastSeq = null; // the SSE id of the last event shown of the run being followed
    this.turn = null;
    this.cards = new Map();
    this.answered = new Set(); // call ids whose `needs` form was shown
  }

  get running() {
    return this.node.dataset.state === "running";
  }

  setRunning(running) {
    this.node.dataset.state = running ? "running" : "idle";
    if (views.active === this) updateComposer();
  }

  add(node) {
    (this.turn ?? this.node).append(node);
    return node;
  }

  userMessage(text) {
    this.turn = null;
    this.add(el("article", { className: "message user", "aria-label": "You" }, el("p", { className: "text" }, text)));
  }

  startTurn() {
    this.turn = null;
    this.turn = this.add(el("article", { className: "message assistant", "aria-label": "Assistant" }));
    this.segment = null;
    this.streamed = "";
    this.chats = []; // what send_chat showed: an end_turn run's output is its last message, shown already
  }

  notice(error) {
    this.turn = null;
    this.add(renderError(error, "notice error"));
  }

  /** Show one agent streaming event (seed 004 names, plus tether's chat, speech, open_url and needs). */
  show(event) {
    if (!this.turn && event.event !== "on_chain_start") this.startTurn();
    switch (event.event) {
      case "on_chain_start":
        this.startTurn();
        break;
      case "on_chat_model_stream":
        if (!this.segment && !event.data.trim()) break; // whitespace around tool calls starts no paragraph
        if (!this.segment) this.segment = this.add(el("p", { className: "text streamed" }));
        this.segment.append(event.data);
        this.segment.normalize();
        this.streamed += event.data;
        break;
      case "on_tool_start": {
        this.segment = null;
        const card = new ToolCard(event.call);
        this.cards.set(event.call.id, card);
        this.add(card.node);
        break;
      }
      case "on_tool_end":
        this.cards.get(event.call_id)?.ended(event.envelope, this);
        break;
      case "needs":
        if (!this.answered.has(event.call_id)) this.needsForm(event.call_id, event.needs, null);
        break;
      case "chat":
        this.segment = null;
        this.chats.push(event.data);
        this.add(el("p", { className: "text chat" }, event.data));
        break;
      case "speech": {
        this.segment = null;
        const spoken = speak(event.utterance, event.style);
        this.add(el("p", { className: "speech" }, el("span", { className: "speech-label" }, spoken ? "Said aloud: " : "Said: "), event.utterance));
        break;
      }
      case "open_url":
        this.segment = null;
        this.add(renderLink(event.url));
        break;
      case "error":
        this.segment = null;
        this.add(
          el(
            "div",
            { className: "run-error", role: "alert" },
            renderError({ code: event.data?.error, message: event.data?.message, suggestion: event.data?.suggestion }, "error"),
          ),
        );
        break;
      case "on_chain_end":
        this.endTurn(event);
        break;
      default:
        break; // on_chat_model_start and events this page does not know yet
    }
  }

  /** Calls still shown as running that no event will answer any more. */
  settle() {
    for (const card of this.cards.values()) if (card.node.getAttribute("aria-busy") === "true") card.done("unanswered");
  }

  endTurn(event) {
    this.settle();
    const shown = typeof event.data === "string" && (Boolean(this.streamed.trim()) || this.chats.includes(event.data));
    if (event.data !== null && event.data !== undefined && !shown) {
      const text = pretty(event.data);
      if (text.trim()) this.add(el(typeof event.data === "string" ? "p" : "pre", { className: "text final" }, text));
    }
    if (event.reason) this.add(el("p", { className: "run-end" }, `Run ended: ${event.reason}`));
    this.turn = null;
  }

  /** A small form for the fields a tool needs; posting it continues the run. */
  needsForm(callId, needs, where) {
    if (this.answered.has(callId)) return;
    this.answered.add(callId);
    const form = el("form", { className: "needs-form", "aria-label": "Information the tool needs" });
    form.dataset.callId = callId;
    for (const [field, question] of Object.entries(needs)) {
      const id = `needs-${++fieldCounter}`;
      form.append(
        el(
          "p",
          { className: "field" },
          el("label", { htmlFor: id }, typeof question === "string" ? question : field),
          el("input", { id, name: field, type: "text", required: true, autocomplete: "off" }),
        ),
      );
    }
    const submit = el("button", { type: "submit" }, "Send");
    form.append(submit);
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const values = Object.fromEntries(new FormData(form).entries());
      for (const input of form.elements) input.disabled = true;
      try {
        const response = await api(`api/sessions/${encodeURIComponent(this.id)}/needs`, {
          method: "POST",
          body: { call_id: callId, values },
          accept: "text/event-stream",
        });
        form.replaceWith(el("p", { className: "needs-answered" }, `Answered: ${Object.keys(values).join(", ")}`));
        await this.follow(response);
      } catch (error) {
        for (const input of form.elements) input.disabled = false;
        form.append(renderError(error, "notice error"));
      }
    });
    if (where) where.append(form);
    else this.add(form);
    if (views.active === this) form.querySelector("input")?.focus();
  }

  /** Read a run's stream to its end, reconnecting from the last event seen whenever the connection drops. */
  async follow(response) {
    this.lastSeq = null; // a new run: its ids are its own
    this.setRunning(true);
    let failures = 0;
    try {
      for (;;) {
        const again = response === null; // following again after a drop
        let shown = 0;
        let ended = false; // the stream ended as a response does, not cut off
        try {
          response ??= await this.reconnect();
          for await (const message of serverSentEvents(response)) {
            failures = 0;
            shown += 1;
            setConnection("");
            if (message.id !== null) {
              const seq = Number(message.id);
              if (this.lastSeq !== null && seq <= this.lastSeq) continue; // already shown
              this.lastSeq = seq;
              this.node.dataset.lastSeq = message.id;
            }
            const event = JSON.parse(message.data);
            this.show(event);
            keepScrolled();
            if (event.event === "on_chain_end") return;
          }
          ended = true;
        } catch (error) {
          if (error instanceof ApiError) {
            // The API answered: nothing to follow (the run is gone, or we may not see it).
            this.notice(error);
            return;
          }
          if (error instanceof SyntaxError) console.warn("tether: an event that is not JSON", error);
        }
        if (again && ended && shown === 0) {
          // The server has nothing more of this run, yet it never ended it: following again would loop.
          this.settle();
          this.notice({ code: "STREAM_ENDED", message: "The run's events stopped before its end.", suggestion: RELOAD });
          return;
        }
        if (failures >= MAX_RECONNECTS) {
          this.settle();
          this.notice({ code: "CONNECTION_LOST", message: "The server cannot be reached.", suggestion: RELOAD });
          return;
        }
        response = null;
        failures += 1;
        setConnection(`Connection lost; reconnecting (attempt ${failures})…`);
        await sleep(Math.min(200 * 2 ** (failures - 1), RECONNECT_MAX_DELAY_MS));
      }
    } finally {
      this.setRunning(false);
      setConnection("");
      refreshSessions();
    }
  }

  reconnect() {
    const after = this.lastSeq === null ? "" : `?after=${encodeURIComponent(this.lastSeq)}`;
    const headers = this.lastSeq === null ? {} : { "Last-Event-ID": String(this.lastSeq) };
    return api(`api/sessions/${encodeURIComponent(this.id)}/events${after}`, { accept: "text/event-stream", headers });
  }

  /** The session's past messages (seed 004 chat_message.v2, with the records of their tool calls). */
  showHistory(messages) {
    for (const message of messages) {
      if (message.role === "user") {
        this.userMessage(message.content);
        continue;
      }
      if (message.role !== "assistant") continue;
      this.startTurn();
      for (const record of message.toolCalls ?? []) {
        const card = new ToolCard({ id: "", name: record.toolName, arguments: record.input });
        const output = record.output;
        const envelope = output && typeof output === "object" && "ok" in output ? output : { ok: true, data: output };
        card.ended(envelope, null);
        this.add(card.node);
      }
      if (message.content) this.add(el("p", { className: "text" }, message.content));
      this.turn = null;
    }
  }
}

// ------------------------------------------------------------------------------------------- page state

const views = { all: new Map(), active: null };

// The transcript follows new output while the reader is at its end; one who scrolled up is left there.
let following = true;

function keepScrolled() {
  const transcript = $("transcript");
  if (following) transcript.scrollTop = transcript.scrollHeight;
}

function setConnection(text) {
  $("connection").textContent = text;
}

function updateComposer() {
  const running = views.active?.running ?? false;
  $("send-button").disabled = running;
  $("cancel-button").hidden = !running;
}

function activate(view) {
  views.active = view;
  for (const other of views.all.values()) other.node.hidden = other !== view;
  if (view && !view.node.isConnected) $("transcript").append(view.node);
  $("chat-heading").textContent = view ? view.title || `Chat with ${view.agent}` : "New chat";
  for (const button of document.querySelectorAll("#session-list button")) {
    if (button.dataset.sessionId === view?.id) button.setAttribute("aria-current", "page");
    else button.removeAttribute("aria-current");
  }
  if (view) history.replaceState(null, "", `#session=${encodeURIComponent(view.id)}`);
  updateComposer();
}

function viewOf(session) {
  let view = views.all.get(session.session_id);
  if (!view) {
    view = new SessionView(session);
    views.all.set(view.id, view);
  }
  return view;
}

async function openSession(session) {
  const known = views.all.has(session.session_id);
  const view = viewOf(session);
  activate(view);
  if (known) return;
  try {
    const messages = await apiJson(`api/sessions/${encodeURIComponent(view.id)}/messages`);
    // A run in progress, or one waiting for the user's answer to a `needs`, is shown from its events (replayed
    // from the first: they carry the call ids a needs form answers), not from its messages so far.
    let run = null;
    if (session.status === "running" || session.status === "needs") {
      try {
        run = await view.reconnect();
      } catch (error) {
        if (!(error instanceof ApiError)) throw error; // the server no longer has the run: history only
      }
    }
    const last = run ? messages.findLastIndex((m) => m.role === "user") : -1;
    view.showHistory(last >= 0 ? messages.slice(0, last + 1) : messages);
    following = true;
    keepScrolled();
    if (run) view.follow(run);
  } catch (error) {
    view.notice(error);
  }
}

/** A time the API gave as epoch seconds (or an ISO string), for people. */
function when(time) {
  if (time === undefined || time === null) return "";
  return new Date(typeof time === "number" ? time * 1000 : time).toLocaleString();
}

let sessions = [];

async function refreshSessions() {
  try {
    sessions = await apiJson("api/sessions");
  } catch (error) {
    setConnection(`Could not list chats: ${error.message}`);
    return;
  }
  const list = $("session-list");
  list.replaceChildren(
    ...sessions.map((session) => {
      const label = session.title || `${session.agent} · ${when(session.updated_at ?? session.created_at)}`;
      const button = el("button", { type: "button", className: "session" }, label);
      button.dataset.sessionId = session.session_id;
      if (session.session_id === views.active?.id) button.setAttribute("aria-current", "page");
      button.addEventListener("click", () => openSession(session));
      return el("li", {}, button);
    }),
  );
}

async function newSession(agent) {
  const session = await apiJson("api/sessions", { method: "POST", body: { agent } });
  const view = viewOf(session);
  activate(view);
  await refreshSessions();
  return view;
}

async function send(content) {
  let view = views.active;
  if (view?.running) return;
  try {
    view ??= await newSession($("agent-select").value);
  } catch (error) {
    showNotice(error);
    return;
  }
  view.userMessage(content);
  following = true;
  keepScrolled();
  let response;
  try {
    response = await api(`api/sessions/${encodeURIComponent(view.id)}/messages`, {
      method: "POST",
      body: { content },
      accept: "text/event-stream",
    });
  } catch (error) {
    view.notice(error);
    return;
  }
  if (!view.title) {
    view.title = content.slice(0, 60);
    if (views.active === view) $("chat-heading").textContent = view.title;
  }
  await view.follow(response);
}

function showNotice(error) {
  $("transcript").append(renderError(error, "notice error"));
}

async function loadAgents() {
  const agents = await apiJson("api/agents");
  $("agent-select").replaceChildren(
    ...agents.map((agent) => el("option", { value: agent.name, title: agent.description || "" }, agent.name)),
  );
}

function wire() {
  const input = $("composer-input");
  const transcript = $("transcript");
  transcript.addEventListener("scroll", () => {
    following = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
  });
  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    const content = input.value.trim();
    if (!content || views.active?.running) return;
    input.value = "";
    send(content);
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      $("composer").requestSubmit();
    }
  });
  $("cancel-button").addEventListener("click", async () => {
    const view = views.active;
    if (!view) return;
    try {
      await api(`api/sessions/${encodeURIComponent(view.id)}/cancel`, { method: "POST" });
    } catch (error) {
      view.notice(error);
    }
  });
  $("new-session").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await newSession($("agent-select").value);
      input.focus();
    } catch (error) {
      showNotice(error);
    }
  });
}

async function start() {
  wire();
  try {
    await Promise.all([loadAgents(), refreshSessions()]);
  } catch (error) {
    showNotice(error);
  }
  const wanted = new URLSearchParams(location.hash.slice(1)).get("session");
  const session = sessions.find((s) => s.session_id === wanted);
  if (session) await openSession(session);
  document.body.dataset.ready = "true";
}

start();
