// How a run's parts look: tool calls with their envelopes, errors with their suggestions, links, speech.
// Everything the model or a tool wrote is inserted as text (textContent), never as HTML.

const $ = (id) => document.getElementById(id);
const LONG_LINES = 12;
const LONG_CHARS = 1200;

/** Make an element: `el("p", {className: "x"}, "text", child)`; strings become text nodes. */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null) continue;
    if (name in node && !name.startsWith("aria") && name !== "role") node[name] = value;
    else node.setAttribute(name, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

export function pretty(value) {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

/** One tool call shown live: name, why, arguments, a spinner, then its envelope. */
export class ToolCard {
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
    const data = pretty(envelope.data ?? null);
    const lines = data.split("\n").length;
    const shown = el("pre", { className: "envelope-data" }, data);
    // A long result (a listing, a page) is one click away rather than pushing the conversation off screen.
    const long = lines > LONG_LINES || data.length > LONG_CHARS;
    return el("div", { className: "envelope ok" }, long ? el("details", {}, el("summary", {}, `Result (${lines} lines)`), shown) : shown);
  }
  if (envelope.needs) {
    return el("p", { className: "envelope needs" }, `Needs: ${Object.keys(envelope.needs).join(", ")}`);
  }
  return renderError(envelope.error ?? {}, "envelope error");
}

/** An error as the user can act on it: code, message and, when there is one, the suggestion. */
export function renderError({ code, message, suggestion }, className) {
  return el(
    "div",
    { className },
    el("p", { className: "error-message" }, el("strong", { className: "error-code" }, code || "ERROR"), " ", message || ""),
    suggestion ? el("p", { className: "suggestion" }, el("span", { className: "suggestion-label" }, "Suggestion: "), suggestion) : null,
  );
}

/** A safe link for `open_url`: http(s) only, opened in a new tab that cannot reach back to this page. */
export function renderLink(url) {
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
export function speak(utterance, style) {
  if (!("speechSynthesis" in window) || typeof SpeechSynthesisUtterance !== "function") return false;
  const spoken = new SpeechSynthesisUtterance(utterance);
  Object.assign(spoken, STYLES[String(style ?? "").toLowerCase()] ?? {});
  window.speechSynthesis.speak(spoken);
  return true;
}
