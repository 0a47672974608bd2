// One session's conversation: its part of the transcript, and the run it follows. A stream that drops before
// `on_chain_end` is followed again from `GET /api/sessions/{id}/events` with the last seen id (the SSE id is
// the event's seq), so nothing is lost; ids at or below it are skipped, so nothing is shown twice.

import { ApiError, api, serverSentEvents } from "./api.js";
import { ToolCard, el, pretty, renderError, renderLink, speak } from "./render.js";

const RECONNECT_MAX_DELAY_MS = 4000;
const MAX_RECONNECTS = 30; // about two minutes of trying
const RELOAD = "Reload the page to see the conversation as the server stored it.";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let fieldCounter = 0;

/** One session's conversation: its own part of the transcript, and the run it is following, if any. */
export class SessionView {
  /**
   * @param session - the API's `{session_id, agent, title}`
   * @param page - what the page does around a view: `isActive(view)`, `changed(view)` (running or not),
   *   `connection(text)` (the connection's state, for people), `shown()` (after new output), `ended()`.
   */
  constructor(session, page) {
    this.page = page;
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
    this.page.changed(this);
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
    if (this.page.isActive(this)) form.querySelector("input")?.focus();
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
          if (response.status === 204) return; // the run has ended and every event of it was shown
          for await (const message of serverSentEvents(response)) {
            failures = 0;
            shown += 1;
            this.page.connection("");
            if (message.id !== null) {
              const seq = Number(message.id);
              if (this.lastSeq !== null && seq <= this.lastSeq) continue; // already shown
              this.lastSeq = seq;
              this.node.dataset.lastSeq = message.id;
            }
            const event = JSON.parse(message.data);
            this.show(event);
            this.page.shown();
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
        this.page.connection(`Connection lost; reconnecting (attempt ${failures})…`);
        await sleep(Math.min(200 * 2 ** (failures - 1), RECONNECT_MAX_DELAY_MS));
      }
    } finally {
      this.setRunning(false);
      this.page.connection("");
      this.page.ended();
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
