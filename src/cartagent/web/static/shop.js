// The shopper's page: a guest token, one conversation, the cart beside it, PayPal checkout.
import { ApiError, Chat, callApi, el, money, safeUrl } from "./chat.js";

const GUEST_TOKEN = "cartagent.guestToken"; // localStorage: the shopper comes back as themself
const SESSION = "cartagent.session"; // sessionStorage: survives the round trip to PayPal
const APPROVED = "cartagent.approvedOrder"; // the order PayPal sent this tab back for
const SESSION_ID = /^[A-Za-z0-9_-]{1,100}$/;
const ORDER_ID = /^[A-Za-z0-9-]{1,64}$/;
const AWAITING_APPROVAL = new Set(["CREATED", "PAYER_ACTION_REQUIRED", "SAVED"]);
const STATUS_WORDS = {
  CREATED: "waiting for approval on PayPal",
  PAYER_ACTION_REQUIRED: "waiting for approval on PayPal",
  APPROVED: "approved, not paid yet",
  COMPLETED: "paid",
  VOIDED: "cancelled",
};

const $ = (id) => document.getElementById(id);
let token = null;
let sessionId = null;

async function issueGuestToken() {
  const issued = await callApi("/api/guest", { method: "POST" });
  localStorage.setItem(GUEST_TOKEN, issued.token);
  return issued.token;
}

async function loadHistory(id) {
  return callApi(`/api/sessions/${encodeURIComponent(id)}/messages`, { token });
}

// The session to continue (from PayPal's return or this tab), or a new one.
async function openSession(wanted) {
  if (wanted) {
    try {
      return { id: wanted, history: await loadHistory(wanted) };
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 404) throw error;
    }
  }
  const created = await callApi("/api/sessions", { method: "POST", token });
  return { id: created.id, history: { messages: [] } };
}

function showCart(view) {
  const box = $("cart");
  if (!view.lines.length) {
    box.replaceChildren(el("p", { className: "empty", text: "Your cart is empty." }));
  } else {
    const rows = view.lines.map((line) => {
      const options = Object.values(line.options || {}).join(", ");
      return el(
        "tr",
        {},
        el("td", { text: options ? `${line.title} (${options})` : line.title }),
        el("td", { className: "n", text: String(line.quantity) }),
        el("td", { className: "n", text: money(line.line_price, line.currency) }),
      );
    });
    const table = el(
      "table",
      { className: "lines" },
      el("caption", { className: "sr-only", text: "Cart lines" }),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          el("th", { text: "Product", attrs: { scope: "col" } }),
          el("th", { className: "n", text: "Qty", attrs: { scope: "col" } }),
          el("th", { className: "n", text: "Price", attrs: { scope: "col" } }),
        ),
      ),
      el("tbody", {}, ...rows),
    );
    box.replaceChildren(table);
    if (view.quote) {
      const q = view.quote;
      const shipping = Number(q.shipping) === 0 ? "free" : money(q.shipping, q.currency);
      box.append(
        el(
          "dl",
          { className: "totals" },
          el("dt", { text: "Items" }),
          el("dd", { text: money(q.items, q.currency) }),
          el("dt", { text: "Tax" }),
          el("dd", { text: money(q.tax, q.currency) }),
          el("dt", { text: "Shipping" }),
          el("dd", { text: shipping }),
          el("dt", { className: "total", text: "Total" }),
          el("dd", { className: "total", attrs: { id: "cart-total" }, text: money(q.total, q.currency) }),
        ),
      );
    }
  }
  $("checkout-button").disabled = !view.lines.length;
  $("orders").replaceChildren(...view.orders.map(orderItem));
}

const DAY = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

// One order of the orders panel: when, what, how much, where it stands.
function orderItem(order) {
  const placed = new Date(order.created_at);
  const when = Number.isNaN(placed.getTime()) ? "" : DAY.format(placed);
  const status = STATUS_WORDS[order.status] || order.status;
  const refunded = Number(order.refunded) > 0 ? `, ${money(order.refunded, order.currency)} refunded` : "";
  const lines = (order.lines || []).map((line) => {
    const options = Object.values(line.options || {}).join(", ");
    const name = options ? `${line.title} (${options})` : line.title;
    return el("li", { text: `${line.quantity} × ${name}: ${money(line.line_price, line.currency)}` });
  });
  return el(
    "li",
    { className: "order" },
    el("p", {
      text: `Order ${order.id}${when ? ` · ${when}` : ""}: ${money(order.total, order.currency)}, ${status}${refunded}`,
    }),
    ...(lines.length ? [el("ul", { className: "order-lines" }, ...lines)] : []),
    ...shipping(order),
  );
}

const SHIPMENT_WORDS = {
  SHIPPED: "shipped",
  IN_TRANSIT: "in transit",
  DELIVERED: "delivered",
  ON_HOLD: "on hold",
  CANCELLED: "cancelled",
  RETURNED: "returned",
  LOCAL_PICKUP: "ready for pickup",
};

// Where a paid order's parcels are, as the merchant tracks them.
function shipping(order) {
  if (!order.trackers) return [];
  if (!order.trackers.length) {
    return [el("p", { className: "tracking note", text: "Not shipped yet." })];
  }
  return order.trackers.map((tracker) => {
    const state = SHIPMENT_WORDS[tracker.status] || String(tracker.status || "").toLowerCase();
    const carrier = (tracker.carrier || "").replace(/_/g, " ");
    const how = [
      tracker.shipment_date ? `Shipped ${tracker.shipment_date}` : "Shipment",
      carrier ? ` with ${carrier}` : "",
      tracker.tracking_number ? `, tracking ${tracker.tracking_number}` : "",
    ].join("");
    return el("p", { className: "tracking", text: `${how}: ${state}` });
  });
}

async function refreshCart() {
  const view = await callApi(`/api/sessions/${encodeURIComponent(sessionId)}/cart`, { token });
  showCart(view);
  return view;
}

function receipt(order) {
  const rows = [];
  for (const [label, value] of [
    ["Items", order.items],
    ["Tax", order.tax],
    ["Shipping", order.shipping],
    ["Total", order.total],
  ]) {
    if (value !== undefined && value !== null) {
      // Shipping as the chat words it: "free", not "0.00 USD".
      const shown = label === "Shipping" && Number(value) === 0 ? "free" : money(value, order.currency);
      rows.push(el("dt", { text: label }), el("dd", { text: shown }));
    }
  }
  return [
    el("h2", { text: "Paid: thank you!" }),
    el("p", { attrs: { id: "receipt" }, text: `Receipt for order ${order.id}` + (order.capture_id ? ` (payment ${order.capture_id})` : "") }),
    el("dl", { className: "totals" }, ...rows),
  ];
}

function confirmStep(order) {
  const confirm = el("button", {
    text: "Confirm payment",
    attrs: { type: "button", id: "confirm-payment" },
  });
  confirm.addEventListener("click", async () => {
    const reply = await chat.send("yes");
    const paid = reply && reply.data.order && reply.data.order.status === "COMPLETED";
    if (reply && !paid) sessionStorage.removeItem(APPROVED); // PayPal did not approve it
  });
  const total = money(order.total, order.currency);
  return [el("p", { className: "approved", text: `Approved on PayPal — confirm payment of ${total}` }), confirm];
}

function payStep(order, href) {
  const total = money(order.total, order.currency);
  return [
    el("p", {
      text: `Order ${order.id}: ${total}. Approve the payment on PayPal; you come back here to confirm it.`,
    }),
    el("a", { className: "button paypal", text: "Pay with PayPal", attrs: { href, id: "pay-with-paypal" } }),
  ];
}

// The payment step for `order`: a link to PayPal, the confirm button, or the receipt.
function showCheckout(order, { justPaid = false } = {}) {
  const box = $("checkout");
  let step = [];
  if (order && order.status === "COMPLETED") {
    sessionStorage.removeItem(APPROVED);
    if (justPaid) step = receipt(order);
  } else if (order && order.status !== "VOIDED") {
    const href = safeUrl(order.approve_url);
    if (sessionStorage.getItem(APPROVED) === order.id) step = confirmStep(order);
    else if (AWAITING_APPROVAL.has(order.status) && href) step = payStep(order, href);
  }
  box.replaceChildren(...step);
  box.hidden = step.length === 0;
  const confirm = document.getElementById("confirm-payment");
  if (confirm) confirm.focus(); // the one thing left to do on the way back from PayPal
}

async function afterReply(reply) {
  const view = await refreshCart();
  const order = reply.data && reply.data.order;
  if (order) showCheckout(order, { justPaid: order.status === "COMPLETED" });
  else showCheckout(view.orders[0]);
}

const chat = new Chat({
  log: $("log"),
  form: $("composer"),
  input: $("message"),
  status: $("status"),
  token: () => token,
  session: () => sessionId,
  onAdd: (card) => chat.send(`add #${card.rank} to my cart`),
  onReply: (reply) =>
    afterReply(reply).catch((error) => chat.setStatus(`The cart could not be read: ${error.detail}`, true)),
});

// An empty conversation starts with a greeting and requests that work on this store.
async function welcome() {
  let examples = [];
  try {
    examples = (await callApi("/api/examples", {})).examples;
  } catch {
    return; // the chat works without them
  }
  const buttons = examples.map((text) => {
    const button = el("button", { className: "example", text, attrs: { type: "button" } });
    button.addEventListener("click", () => chat.send(text));
    return button;
  });
  $("log").append(
    el(
      "div",
      { className: "welcome", attrs: { id: "welcome" } },
      el("p", { text: "Hi! Tell me what you are looking for, in your own words. For example:" }),
      el("div", { className: "examples" }, ...buttons),
    ),
  );
}

async function start() {
  const params = new URLSearchParams(window.location.search);
  const fromUrl = params.get("session");
  const approvedOrder = params.get("token"); // PayPal's return: ?session=..&token=ORDER&PayerID=..
  const wanted = fromUrl && SESSION_ID.test(fromUrl) ? fromUrl : sessionStorage.getItem(SESSION);
  if (approvedOrder && ORDER_ID.test(approvedOrder)) sessionStorage.setItem(APPROVED, approvedOrder);
  token = localStorage.getItem(GUEST_TOKEN) || (await issueGuestToken());
  let opened;
  try {
    opened = await openSession(wanted);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 401) throw error;
    token = await issueGuestToken(); // the server forgot this token (a new secret)
    opened = await openSession(null);
  }
  sessionId = opened.id;
  sessionStorage.setItem(SESSION, sessionId);
  // PayPal's token and PayerID have done their job; a reload must not replay them.
  window.history.replaceState(null, "", "/shop");
  chat.showHistory(opened.history.messages);
  if (!opened.history.messages.length) await welcome();
  const view = await refreshCart();
  showCheckout(view.orders[0]);
  $("checkout-button").addEventListener("click", () => chat.send("checkout"));
  document.body.dataset.ready = "true";
}

start().catch((error) => {
  chat.setStatus(`The shop could not start: ${error.detail || error.message}`, true);
});
