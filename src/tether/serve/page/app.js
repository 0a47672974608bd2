// tether's chat page: plain modern JavaScript modules, no build step, nothing loaded from elsewhere.
// This module holds the page's state (the session views, which one is shown) and wires its controls;
// api.js speaks the Agent API (docs/serve.md), session.js follows runs, render.js draws their parts.

import { ApiError, api, apiJson } from "./api.js";
import { el, renderError } from "./render.js";
import { SessionView } from "./session.js";

const $ = (id) => document.getElementById(id);

// ------------------------------------------------------------------------------------------- page state

const views = { all: new Map(), active: null };

// The transcript follows new output while the reader is at its end; one who scrolled up is left there.
let following = true;

function keepScrolled() {
  const transcript = $("transcript");
  if (following) transcript.scrollTop = transcript.scrollHeight;
}

/** What a session view asks of the page. */
const PAGE = {
  isActive: (view) => views.active === view,
  changed: (view) => {
    if (views.active === view) updateComposer();
  },
  connection: (text) => setConnection(text),
  shown: () => keepScrolled(),
  ended: () => refreshSessions(),
};

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
    view = new SessionView(session, PAGE);
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

let listings = 0; // refreshes overlap: only the latest one's answer is shown, never an older one after it

async function refreshSessions() {
  const mine = ++listings;
  let listed;
  try {
    listed = await apiJson("api/sessions");
  } catch (error) {
    if (mine === listings) setConnection(`Could not list chats: ${error.message}`);
    return;
  }
  if (mine !== listings) return;
  sessions = listed;
  const list = $("session-list");
  list.replaceChildren(
    ...sessions.map((session) => {
      const title = session.title || views.all.get(session.session_id)?.title;
      const label = title || `${session.agent} · ${when(session.updated_at ?? session.created_at)}`;
      const button = el("button", { type: "button", className: "session" }, label);
      button.dataset.sessionId = session.session_id;
      if (session.session_id === views.active?.id) button.setAttribute("aria-current", "page");
      button.addEventListener("click", () => openSession(session));
      return el("li", {}, button);
    }),
  );
}

let creating = null; // the chat being created: a message sent meanwhile belongs to it, not to the one shown

function newSession(agent) {
  creating = (async () => {
    try {
      const session = await apiJson("api/sessions", { method: "POST", body: { agent } });
      const view = viewOf(session);
      activate(view);
      return view;
    } finally {
      creating = null;
    }
  })();
  creating.then(refreshSessions, () => {});
  return creating;
}

async function send(content) {
  if (creating) await creating.catch(() => {});
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
