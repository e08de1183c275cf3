// The chat both pages share: API calls, the streamed turn, and safe rendering.
// Everything shown comes from the server or the user, so it is set with textContent only.

const TURN_TIMEOUT_MS = 90000; // the assistant gives up on a turn after 60 s
const CALL_TIMEOUT_MS = 30000;

// sessionStorage: the merchant's key lives as long as the tab, never in localStorage.
export const MERCHANT_KEY = "cartagent.merchantKey";

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
    this.detail = detail;
  }
}

async function failure(response) {
  let detail = `the server answered ${response.status}`;
  try {
    const body = await response.json();
    if (body && typeof body.detail === "string") detail = body.detail;
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(response.status, detail);
}

export async function callApi(path, { token, method = "GET", body } = {}) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
  } catch {
    throw new ApiError(0, "the server could not be reached; try again");
  }
  if (!response.ok) throw await failure(response);
  return response.json();
}

// el("p", {className: "x", text: "hi", attrs: {id: "y"}}, child...) with no HTML parsing.
export function el(tag, { className, text, attrs } = {}, ...children) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
  node.append(...children);
  return node;
}

// An http(s) address to link to, or null: a javascript: or data: URL must never be a link.
export function safeUrl(value) {
  if (typeof value !== "string") return null;
  try {
    const url = new URL(value, window.location.href);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
  } catch {
    return null;
  }
}

export function money(amount, currency) {
  return [amount, currency].filter((part) => part !== null && part !== undefined).join(" ");
}

function parseEvent(block) {
  let name = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) name = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
  }
  if (!data.length) return null; // a keep-alive comment
  return { name, data: JSON.parse(data.join("\n")) };
}

async function* events(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const event = parseEvent(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (event) yield event;
    }
  }
}

// One turn over Server-Sent Events; onDelta(text) as the words arrive. Resolves to the reply
// ({text, domain, cards, data}) or throws ApiError.
export async function streamTurn(sessionId, text, token, onDelta) {
  let response;
  try {
    response = await fetch(`/api/sessions/${encodeURIComponent(sessionId)}/messages/stream`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${token}`,
        "Content-Type": "application/json",
        Accept: "text/event-stream",
      },
      body: JSON.stringify({ text }),
      signal: AbortSignal.timeout(TURN_TIMEOUT_MS),
    });
  } catch {
    throw new ApiError(0, "the server could not be reached; try again");
  }
  if (!response.ok) throw await failure(response);
  const reply = { text: "", domain: null, cards: [], data: {} };
  for await (const event of events(response)) {
    if (event.name === "delta") {
      reply.text += event.data.text;
      onDelta(reply.text);
    } else if (event.name === "card") {
      reply.cards.push(event.data);
    } else if (event.name === "done") {
      reply.domain = event.data.domain;
      reply.data = event.data.data || {};
      return reply;
    } else if (event.name === "error") {
      throw new ApiError(event.data.status, event.data.detail);
    }
  }
  throw new ApiError(0, "the answer was cut off; try again");
}

function describeOptions(options) {
  return Object.entries(options || {})
    .map(([name, value]) => `${name}: ${value}`)
    .join(", ");
}

// A product card; onAdd(card) when its "Add to cart" button is pressed (none without onAdd).
export function productCard(card, onAdd) {
  const options = describeOptions(card.options);
  const name = options ? `${card.title} (${options})` : card.title;
  const drawing = `/static/icon-${card.illustration || "tag"}.svg`;
  const photo = safeUrl(card.image);
  const picture = el("img", {
    className: photo ? "picture photo" : "picture",
    // Decorative: the title and category beside it say what it is.
    attrs: { src: photo || drawing, alt: "", width: 48, height: 48, loading: "lazy" },
  });
  // A picture that does not load gives way to the category's drawing, never a broken image.
  if (photo) picture.addEventListener("error", () => picture.setAttribute("src", drawing), { once: true });
  const article = el(
    "article",
    { className: "card", attrs: { "aria-label": `#${card.rank} ${name}` } },
    picture,
    el("p", { className: "rank", text: `#${card.rank}` }),
    el("h3", { text: card.title }),
  );
  if (card.category) article.append(el("p", { className: "category", text: card.category }));
  if (options) article.append(el("p", { className: "options", text: options }));
  if (card.breaks && card.breaks.length) {
    article.classList.add("near");
    article.append(el("p", { className: "breaks", text: `Not a match: ${card.breaks.join("; ")}` }));
  }
  article.append(
    el("p", { className: "price", text: card.price ? money(card.price, card.currency) : "No price" }),
    el("p", {
      className: card.available ? "stock in" : "stock out",
      text: card.available ? "In stock" : "Out of stock",
    }),
  );
  if (onAdd) {
    const add = el("button", {
      text: "Add to cart",
      // The visible text starts the accessible name, so voice control finds it.
      attrs: { type: "button", "aria-label": `Add to cart: #${card.rank} ${name}` },
    });
    add.disabled = !card.available || !card.price;
    add.addEventListener("click", () => onAdd(card));
    article.append(add);
  }
  return article;
}

// The conversation on a page: the log, the composer form and a status line.
export class Chat {
  constructor({ log, form, input, status, token, session, onAdd, onReply }) {
    this.log = log;
    this.form = form;
    this.input = input;
    this.status = status;
    this.token = token;
    this.session = session;
    this.onAdd = onAdd;
    this.onReply = onReply;
    this.busy = false;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const text = input.value.trim();
      if (text) this.send(text);
    });
  }

  // `added`: the answer confirms an addition to the cart; its card is what was added, so it
  // offers no "Add to cart" (that would invite a double add).
  // `approveUrl`: a PayPal approval link the text gives; the page's "Pay with PayPal" button is
  // the one way to it, so the text names the button instead of printing the address.
  say(role, text, cards = [], added = false, approveUrl = null) {
    if (approveUrl) text = text.split(approveUrl).join("the \u201cPay with PayPal\u201d button");
    const who = role === "user" ? "You" : "Assistant";
    const message = el(
      "div",
      { className: `msg ${role}` },
      el("span", { className: "who", text: `${who}: ` }),
      el("p", { className: "text", text }),
    );
    if (cards.length) {
      const list = el("div", { className: "cards" });
      const onAdd = this.onAdd && !added ? (card) => this.onAdd(card) : null;
      list.append(...cards.map((card) => productCard(card, onAdd)));
      message.append(list);
    }
    this.log.append(message);
    message.scrollIntoView({ block: "end" });
    return message;
  }

  showHistory(messages) {
    this.log.replaceChildren();
    for (const message of messages) {
      this.say(message.role, message.text, message.cards || [], message.added === true, message.approve_url);
    }
  }

  setStatus(text, problem = false) {
    this.status.textContent = text;
    this.status.classList.toggle("problem", problem);
  }

  async send(text) {
    if (this.busy) return null;
    if (!this.session()) {
      this.setStatus("Still starting; send again in a moment.", true);
      return null;
    }
    this.busy = true;
    this.form.setAttribute("aria-busy", "true");
    this.setStatus("The assistant is answering…");
    // On a slow model a turn takes seconds: the status counts them so the wait is visible.
    const started = Date.now();
    const ticker = setInterval(() => {
      const seconds = Math.floor((Date.now() - started) / 1000);
      if (seconds >= 2) this.setStatus(`The assistant is answering… ${seconds} s`);
    }, 1000);
    this.say("user", text);
    this.input.value = "";
    const answer = this.say("assistant", "…");
    answer.classList.add("typing");
    const shown = answer.querySelector(".text");
    try {
      const reply = await streamTurn(this.session(), text, this.token(), (sofar) => {
        answer.classList.remove("typing");
        shown.textContent = sofar;
      });
      clearInterval(ticker);
      answer.remove();
      const data = reply.data || {};
      const approveUrl = data.order ? data.order.approve_url : null;
      this.say("assistant", reply.text, reply.cards, data.added === true, approveUrl);
      this.setStatus("");
      if (this.onReply) await this.onReply(reply, text);
      return reply;
    } catch (error) {
      answer.remove();
      if (!this.input.value) this.input.value = text; // to retry with Enter
      this.setStatus(`Not sent: ${error.detail || "something went wrong"}.`, true);
      return null;
    } finally {
      clearInterval(ticker);
      this.busy = false;
      this.form.removeAttribute("aria-busy");
    }
  }
}
