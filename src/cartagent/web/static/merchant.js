// The merchant's dashboard: panels from the payment backend beside the back-office
// assistant; the panels are read again after every turn. An invoice opens in a preview, from
// which a draft is sent.
import { ApiError, Chat, MERCHANT_KEY, callApi, el, money, safeUrl } from "./chat.js";

const SESSION = "cartagent.merchantSession";
const $ = (id) => document.getElementById(id);
const key = sessionStorage.getItem(MERCHANT_KEY);
let sessionId = null;

function signOut() {
  sessionStorage.removeItem(MERCHANT_KEY);
  sessionStorage.removeItem(SESSION);
  window.location.replace("/login");
}

function table(caption, columns, rows) {
  return el(
    "table",
    {},
    el("caption", { className: "sr-only", text: caption }),
    el("thead", {}, el("tr", {}, ...columns.map((c) => el("th", { text: c, attrs: { scope: "col" } })))),
    el(
      "tbody",
      {},
      ...rows.map((row) =>
        el("tr", {}, ...row.map((cell) => (cell instanceof Node ? el("td", {}, cell) : el("td", { text: cell ?? "" })))),
      ),
    ),
  );
}

const TRANSACTION_STATUS = { S: "completed", P: "pending", V: "reversed", D: "denied" };

const PANELS = {
  transactions: {
    caption: "Transactions",
    columns: ["Date", "Type", "Transaction", "Order", "Status", "Amount"],
    query: () => {
      const query = new URLSearchParams();
      for (const [name, id] of [["kind", "transaction-kind"], ["start", "transaction-start"], ["end", "transaction-end"]]) {
        if ($(id).value) query.set(name, $(id).value);
      }
      return query.size ? `?${query}` : "";
    },
    // Which days, and how many of them the totals cover (all of the kind, not only those shown).
    before: (body) => {
      const shown = body.transactions.length;
      $("transaction-range").textContent =
        `${body.start_date} to ${body.end_date}: ${body.matched} transaction${body.matched === 1 ? "" : "s"}` +
        (shown < body.matched ? `, the newest ${shown} shown; the totals cover all ${body.matched}.` : ".") +
        (body.complete ? "" : " The window holds more than can be read at once: narrow it for exact totals.");
    },
    rows: (body) =>
      body.transactions.map((t) => [
        (t.date || "").slice(0, 10),
        t.type,
        t.id,
        t.paypal_reference_id,
        TRANSACTION_STATUS[t.status] || t.status,
        money(t.amount, t.currency),
      ]),
    // What the rows add up to, per currency: in, back out, fees, net.
    after: (body) =>
      Object.entries(body.totals || {}).map(([currency, t]) =>
        el("p", {
          className: "totals-line",
          text:
            `Payments ${money(t.payments, currency)} · Refunds ${money(t.refunds, currency)} · ` +
            `Fees ${money(t.fees, currency)} · Net ${money(t.net, currency)}`,
        }),
      ),
    empty: "No transactions of this kind in the last 31 days.",
  },
  invoices: {
    caption: "Invoices",
    columns: ["Number", "Status", "Total", "Due", "Recipient", "Open"],
    rows: (body) =>
      body.invoices.map((i) => [
        i.number,
        i.status,
        money(i.total, i.currency),
        i.due_date,
        i.recipient,
        openButton(i),
      ]),
    empty: "No invoices yet.",
  },
  plans: {
    caption: "Subscription plans",
    columns: ["Plan", "Status", "Price", "Every"],
    rows: (body) =>
      body.plans.map((p) => {
        const cycles = p.billing_cycles || [];
        const regular = cycles.find((c) => c.tenure === "REGULAR") || cycles[cycles.length - 1] || {};
        return [p.name, p.status, money(regular.price, regular.currency), regular.every];
      }),
    empty: "No subscription plans yet.",
  },
  disputes: {
    caption: "Disputes",
    columns: ["Dispute", "Reason", "Status", "Amount", "Respond by"],
    rows: (body) =>
      body.disputes.map((d) => [
        d.dispute_id,
        d.reason,
        d.status,
        money(d.amount, d.currency),
        (d.seller_response_due_date || "").slice(0, 10),
      ]),
    empty: "No disputes.",
  },
};

async function loadPanel(name) {
  const panel = PANELS[name];
  const box = $(name);
  box.setAttribute("aria-busy", "true");
  try {
    const query = panel.query ? panel.query() : "";
    const body = await callApi(`/api/merchant/${name}${query}`, { token: key });
    if (panel.before) panel.before(body);
    const rows = panel.rows(body);
    box.replaceChildren(
      rows.length ? table(panel.caption, panel.columns, rows) : el("p", { className: "empty", text: panel.empty }),
      ...(rows.length && panel.after ? panel.after(body) : []),
    );
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) signOut();
    box.replaceChildren(
      el("p", { className: "status problem", text: `Could not load: ${error.detail || error.message}` }),
    );
  } finally {
    box.removeAttribute("aria-busy");
  }
}

// The daily sales and refunds of the last 31 days as a chart (uPlot, vendored), with its
// figures in words for those who do not see it.
let salesChart = null;

async function loadSales() {
  const box = $("sales-chart");
  const summary = $("sales-summary");
  let body;
  try {
    body = await callApi("/api/merchant/sales", { token: key });
  } catch (error) {
    summary.textContent = `Could not load: ${error.detail || error.message}`;
    return;
  }
  const sales = body.sales.map(Number);
  const refunds = body.refunds.map(Number);
  const total = (values) => values.reduce((sum, value) => sum + value, 0);
  const sold = total(sales);
  const back = total(refunds);
  const best = sales.indexOf(Math.max(...sales, 0));
  summary.textContent = body.days.length
    ? `${money(sold.toFixed(2), body.currency)} sold and ${money(back.toFixed(2), body.currency)} ` +
      `refunded from ${body.days[0]} to ${body.days[body.days.length - 1]}` +
      (sold > 0 ? `; the best day was ${body.days[best]} (${money(sales[best].toFixed(2), body.currency)}).` : ".")
    : "No transactions in the last 31 days.";
  if (salesChart) salesChart.destroy();
  salesChart = null;
  if (!body.days.length || typeof window.uPlot !== "function") return;
  const times = body.days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000);
  const width = Math.max(280, box.clientWidth || 480);
  salesChart = new window.uPlot(
    {
      width,
      height: 220,
      series: [
        {},
        { label: `Sales (${body.currency})`, stroke: "#0b5cad", width: 2, fill: "rgba(11,92,173,0.08)" },
        { label: `Refunds (${body.currency})`, stroke: "#b3261e", width: 2 },
      ],
      axes: [{}, { size: 70 }],
    },
    [times, sales, refunds],
    box,
  );
}

// The invoice preview: what the buyer will be billed, line by line, before it is sent.
const preview = $("invoice-preview");
let previewed = null;

function openButton(invoice) {
  const draft = invoice.status === "DRAFT";
  const button = el("button", {
    text: draft ? "Preview" : "View",
    attrs: { type: "button", "aria-label": `${draft ? "Preview" : "View"} invoice #${invoice.number}` },
  });
  button.addEventListener("click", () => showInvoice(invoice.id));
  return button;
}

function facts(pairs) {
  return el(
    "dl",
    { className: "facts" },
    ...pairs.filter(([, value]) => value).flatMap(([name, value]) => [el("dt", { text: name }), el("dd", { text: value })]),
  );
}

function renderInvoice(invoice) {
  const draft = invoice.status === "DRAFT";
  const state = draft ? "draft, not sent yet" : String(invoice.status || "").toLowerCase().replace(/_/g, " ");
  $("preview-title").textContent = `Invoice #${invoice.number} (${state})`;
  const items = invoice.items || [];
  // Tax and discount columns only where some line has one.
  const optional = [
    ["Tax", "tax_percent"],
    ["Discount", "discount_percent"],
  ].filter(([, field]) => items.some((item) => item[field]));
  const lines = items.map((item) => [
    item.name,
    item.quantity,
    money(item.unit_price, invoice.currency),
    ...optional.map(([, field]) => (item[field] ? `${item[field]}%` : "")),
  ]);
  const breakdown = invoice.breakdown || {};
  const amounts = [
    ["Items", breakdown.item_total],
    ["Discount", breakdown.discount ? `-${breakdown.discount}` : null],
    ["Tax", breakdown.tax_total],
    ["Shipping", breakdown.shipping],
  ].filter(([, value]) => value !== undefined && value !== null);
  const totals = el(
    "dl",
    { className: "totals" },
    ...amounts.flatMap(([name, value]) => [el("dt", { text: name }), el("dd", { text: money(value, invoice.currency) })]),
    el("dt", { className: "total", text: "Total" }),
    el("dd", { className: "total", text: money(invoice.total, invoice.currency) }),
  );
  const body = [
    facts([
      ["To", invoice.recipient || "no recipient yet"],
      ["Dated", invoice.invoice_date],
      ["Due", invoice.due_date],
      ["Paid", invoice.paid_amount ? money(invoice.paid_amount, invoice.currency) : null],
    ]),
    table("Invoice lines", ["Item", "Quantity", "Unit price", ...optional.map(([name]) => name)], lines),
    totals,
  ];
  if (invoice.note) body.push(el("p", { className: "note", text: `Note: ${invoice.note}` }));
  const link = safeUrl(invoice.payer_view_url);
  if (link) {
    body.push(el("p", { className: "sent" }, "The buyer pays it at ", el("a", { text: link, attrs: { href: link, target: "_blank", rel: "noopener" } })));
  }
  $("preview-body").replaceChildren(...body);
  $("preview-send").hidden = !draft;
  previewed = invoice;
}

async function showInvoice(id) {
  $("preview-status").textContent = "";
  try {
    renderInvoice(await callApi(`/api/merchant/invoices/${encodeURIComponent(id)}`, { token: key }));
  } catch (error) {
    chat.setStatus(`Could not open the invoice: ${error.detail || error.message}`, true);
    return;
  }
  if (!preview.open) preview.showModal();
}

async function sendPreviewed() {
  if (!previewed) return;
  const id = previewed.id;
  const button = $("preview-send");
  button.disabled = true;
  $("preview-status").textContent = "Sending…";
  try {
    await callApi(`/api/merchant/invoices/${encodeURIComponent(id)}/send`, { method: "POST", token: key });
    renderInvoice(await callApi(`/api/merchant/invoices/${encodeURIComponent(id)}`, { token: key }));
    $("preview-status").textContent = previewed.recipient
      ? `Sent to ${previewed.recipient}.`
      : "Sent. It names no recipient: share its link with the buyer.";
    $("preview-close").focus();
    loadPanel("invoices");
  } catch (error) {
    $("preview-status").textContent = `Not sent: ${error.detail || error.message}.`;
  } finally {
    button.disabled = false;
  }
}

function refreshPanels() {
  return Promise.all([...Object.keys(PANELS).map(loadPanel), loadSales()]);
}

const chat = new Chat({
  log: $("log"),
  form: $("composer"),
  input: $("message"),
  status: $("status"),
  token: () => key,
  session: () => sessionId,
  onReply: (reply) => {
    const data = reply.data || {};
    if (data.invoice_draft && data.invoice_id) {
      // A draft was made: offer its preview on the answer, and open it.
      const button = el("button", {
        text: "Preview the invoice",
        attrs: { type: "button", "aria-label": "Preview the draft invoice" },
      });
      button.addEventListener("click", () => showInvoice(data.invoice_id));
      const answers = $("log").querySelectorAll(".msg.assistant");
      answers[answers.length - 1]?.append(button);
      showInvoice(data.invoice_id);
    }
    return refreshPanels();
  },
});

async function start() {
  if (!key) {
    window.location.replace("/login");
    return;
  }
  let who;
  try {
    who = await callApi("/api/merchant/overview", { token: key });
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      signOut();
      return;
    }
    throw error;
  }
  $("who").textContent = `Signed in as ${who.name}` + (who.payments ? "" : " (payments are not configured)");
  $("sign-out").addEventListener("click", signOut);
  $("refresh").addEventListener("click", () => refreshPanels());
  $("transaction-kind").addEventListener("change", () => loadPanel("transactions"));
  $("transaction-filter").addEventListener("submit", (event) => {
    event.preventDefault();
    loadPanel("transactions");
  });
  $("preview-send").addEventListener("click", sendPreviewed);
  $("preview-close").addEventListener("click", () => preview.close());
  const panels = refreshPanels();
  const wanted = sessionStorage.getItem(SESSION);
  let history = { messages: [] };
  sessionId = null;
  if (wanted) {
    try {
      history = await callApi(`/api/sessions/${encodeURIComponent(wanted)}/messages`, { token: key });
      sessionId = wanted;
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 404) throw error;
    }
  }
  if (!sessionId) {
    sessionId = (await callApi("/api/sessions", { method: "POST", token: key })).id;
    sessionStorage.setItem(SESSION, sessionId);
  }
  chat.showHistory(history.messages);
  await panels;
  document.body.dataset.ready = "true";
}

start().catch((error) => chat.setStatus(`The dashboard could not start: ${error.detail || error.message}`, true));
